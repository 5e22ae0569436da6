import { ApiError, call, query, type Schedule, type SchedulesPage } from "../api.js";
import { badge, fill, focusHeading, h } from "../dom.js";
import type { Page } from "./context.js";
import { cursorPager } from "./pager.js";

type ChangeAnswer = { outcome: string; schedule: Schedule };

/**
 * An occurrence on the clocks of the series' zone (what the rule speaks in: "09:00 Paris"),
 * with the exact instant for machines and the offset in its title.
 */
function inZone(o: { at: string; atLocal: string }, timeZone: string): HTMLElement {
  const text = new Intl.DateTimeFormat(undefined, {
    timeZone,
    weekday: "short",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  }).format(Date.parse(o.at));
  return h("time", { datetime: o.at, title: o.atLocal }, text);
}

/** Words for a refused pause or resume, as the API defines its outcomes. */
function explain(e: unknown, s: Schedule): string {
  if (!(e instanceof ApiError)) return `Failed: ${(e as Error).message}`;
  switch (e.code) {
    case "version-conflict":
      return `Schedule ${s.id} changed since this page loaded (now version ${e.body.schedule?.version ?? "?"}). It has been reloaded; check it and try again.`;
    case "not-found":
      return `No schedule ${s.id} (it may have been deleted).`;
    default:
      return `Failed (${e.status}): ${e.message}`;
  }
}

/**
 * Recurring series: each one's rule in words, zone, state, next occurrences and the last
 * occurrence's outcome, with pause (active) and resume (paused). An action sends the version
 * shown (If-Match), as the job actions do, so acting on a stale row answers 412 instead of
 * undoing someone else's change. Rows reload when one of their occurrences changes live.
 */
export const schedulesPage: Page = (ctx) => {
  const cursor = ctx.params.get("cursor");
  const outcome = h("p", {
    class: "outcome",
    id: "outcome",
    role: "status",
    "aria-live": "polite",
  });
  const message = h("p", { class: "muted", role: "status", "aria-live": "polite" }, "Loading…");
  const result = h("div", { class: "card", id: "schedules" });
  fill(ctx.root, h("h1", {}, "Schedules"), outcome, message, result);
  focusHeading(ctx.root);
  /** Job ids (pending and last occurrences) of the rows shown, to follow them live. */
  const watched = new Set<string>();
  let stopped = false;

  async function load(): Promise<void> {
    try {
      const page = await call<SchedulesPage>(`v1/dashboard/schedules${query({ cursor })}`);
      if (!stopped) draw(page);
    } catch (e) {
      if (!stopped) message.textContent = `Could not load schedules: ${(e as Error).message}`;
    }
  }

  async function act(s: Schedule, verb: "pause" | "resume"): Promise<void> {
    outcome.className = "outcome";
    outcome.textContent = "Working…";
    try {
      const r = await call<ChangeAnswer>(
        `v1/dashboard/schedules/${encodeURIComponent(s.id)}/${verb}`,
        { method: "POST", body: {}, headers: { "if-match": `"${s.version}"` } },
      );
      outcome.className = "outcome ok";
      outcome.textContent =
        r.outcome === "paused"
          ? `Paused ${r.schedule.description}: nothing fires until it is resumed.`
          : `Resumed ${r.schedule.description}.`;
    } catch (e) {
      outcome.className = "outcome bad";
      outcome.textContent = explain(e, s);
    }
    await load();
  }

  function draw(page: SchedulesPage): void {
    watched.clear();
    message.textContent =
      page.schedules.length === 0
        ? "No recurring schedules."
        : `${page.schedules.length} schedules on this page.`;
    const table = h(
      "table",
      { id: "schedules-table" },
      h("caption", { class: "sr-only" }, "Recurring schedules in creation order"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Rule", "Zone", "State", "Next occurrences", "Last outcome", "Fired", "Action"].map(
            (c) => h("th", { scope: "col" }, c),
          ),
        ),
      ),
      h("tbody", {}, ...page.schedules.map(row)),
    );
    fill(
      result,
      page.schedules.length > 0 ? h("div", { class: "table-wrap" }, table) : null,
      cursorPager("#/schedules", cursor, page.nextCursor),
    );
  }

  function row(s: Schedule): HTMLTableRowElement {
    if (s.nextJobId) watched.add(s.nextJobId);
    if (s.lastOutcome) watched.add(s.lastOutcome.jobId);
    const next =
      s.nextOccurrences.length === 0
        ? "—"
        : h(
            "ol",
            { class: "occurrences" },
            ...s.nextOccurrences.map((o) => h("li", {}, inZone(o, s.timeZone))),
          );
    const last =
      s.lastOutcome === null
        ? "—"
        : h(
            "a",
            { href: `#/jobs/${s.lastOutcome.jobId}`, title: `Job ${s.lastOutcome.jobId}` },
            badge(s.lastOutcome.status),
          );
    return h(
      "tr",
      { "data-id": s.id, "data-state": s.state, "data-version": s.version },
      h(
        "td",
        { class: "rule" },
        h("span", {}, s.description),
        h("br", {}),
        h("span", { class: "mono muted" }, s.cron ?? s.rrule ?? ""),
      ),
      h("td", { class: "zone" }, s.timeZone),
      h("td", { class: "state" }, badge(s.state)),
      h("td", { class: "next" }, next),
      h("td", { class: "last" }, last),
      h("td", { class: "n" }, String(s.firedCount)),
      h("td", { class: "action" }, action(s)),
    );
  }

  function action(s: Schedule): HTMLElement | string {
    if (s.state === "ended") return "—";
    const verb = s.state === "active" ? "pause" : "resume";
    return h(
      "button",
      {
        type: "button",
        class: verb === "pause" ? "quiet" : "",
        "data-action": verb,
        "aria-label": `${verb === "pause" ? "Pause" : "Resume"} ${s.description}`,
        onclick: () => void act(s, verb),
      },
      verb === "pause" ? "Pause" : "Resume",
    );
  }

  const off = ctx.live.on((c) => {
    if (watched.has(c.id)) void load();
  });
  void load();
  return () => {
    stopped = true;
    off();
  };
};
