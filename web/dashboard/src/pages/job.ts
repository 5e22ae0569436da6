import { ApiError, call, type Job } from "../api.js";
import { badge, duration, fill, focusHeading, h, time, type Child } from "../dom.js";
import type { JobChange } from "../live.js";
import type { Page } from "./context.js";

type ActionResult = { outcome: string; job: Job };

/** Words for what an action's answer means, as the API defines its outcomes. */
function explain(e: unknown): string {
  if (!(e instanceof ApiError)) return `Failed: ${(e as Error).message}`;
  switch (e.code) {
    case "too-late":
      return `Too late: the job is already ${e.body.job?.status ?? "past pending"}.`;
    case "version-conflict":
      return `The job changed since this page loaded (now version ${e.body.job?.version ?? "?"}). It has been reloaded; check it and try again.`;
    case "not-found":
      return "No such job (it may have been removed by retention).";
    case "key-conflict":
      return e.message;
    case "invalid":
      return `Invalid: ${e.message}`;
    default:
      return `Failed (${e.status}): ${e.message}`;
  }
}

/**
 * One job: what it holds (payload, target, attempts, last result or error, its times), the
 * changes seen live, and the actions its state allows: cancel (pending), snooze (pending),
 * retry (dead). Every action sends the version shown (If-Match), so acting on a stale view
 * answers 412 instead of overwriting someone else's change.
 */
export const jobPage: Page = (ctx, id = "") => {
  const outcome = h("p", {
    class: "outcome",
    id: "outcome",
    role: "status",
    "aria-live": "polite",
  });
  const body = h("div", { id: "job" }, h("p", { class: "muted" }, "Loading…"));
  fill(
    ctx.root,
    h("p", {}, h("a", { href: "#/jobs" }, "← Jobs")),
    h("h1", { class: "wrap" }, "Job ", h("span", { class: "mono" }, id)),
    outcome,
    body,
  );
  focusHeading(ctx.root);
  let job: Job | null = null;
  let stopped = false;

  async function load(): Promise<void> {
    try {
      const r = await call<{ job: Job }>(`v1/dashboard/jobs/${encodeURIComponent(id)}`);
      if (stopped) return;
      job = r.job;
      draw(r.job);
    } catch (e) {
      if (!stopped) fill(body, h("p", { class: "error", role: "alert" }, explain(e)));
    }
  }

  async function act(
    path: string,
    payload: Record<string, unknown>,
    done: (r: ActionResult) => string,
  ): Promise<void> {
    if (!job) return;
    outcome.className = "outcome";
    outcome.textContent = "Working…";
    try {
      const r = await call<ActionResult>(`v1/dashboard/jobs/${encodeURIComponent(id)}/${path}`, {
        method: "POST",
        body: payload,
        headers: { "if-match": `"${job.version}"` },
      });
      outcome.className = "outcome ok";
      outcome.textContent = done(r);
      job = r.job;
      draw(r.job);
    } catch (e) {
      outcome.className = "outcome bad";
      outcome.textContent = explain(e);
      await load();
    }
  }

  function draw(j: Job): void {
    const row = (label: string, value: Child) =>
      h("div", {}, h("dt", {}, label), h("dd", {}, value));
    const details = h(
      "dl",
      { class: "card details" },
      row("State", h("span", { id: "job-status" }, badge(j.status))),
      row("Due", time(j.dueAt)),
      row("Key", j.key ?? "—"),
      row("Target", h("span", { class: "mono wrap" }, j.target)),
      row(
        "Paused by",
        j.pausedBy === null
          ? "—"
          : h(
              "a",
              { id: "job-paused-by", href: `#/pauses?id=${encodeURIComponent(j.pausedBy)}` },
              `pause ${j.pausedBy} (held: it fires only once resumed)`,
            ),
      ),
      row("Attempts", `${j.attempts} of ${j.maxAttempts}`),
      row(
        "Misfire tolerance",
        j.expireAfterMs === null ? "fire however late" : duration(j.expireAfterMs),
      ),
      row("Version", h("span", { id: "job-version" }, String(j.version))),
      row("Last error", j.lastError ? h("pre", { class: "error-text" }, j.lastError) : "—"),
      row(
        "Last result",
        j.lastResult === null ? "—" : h("pre", {}, JSON.stringify(j.lastResult, null, 2)),
      ),
    );
    fill(
      body,
      h(
        "section",
        { class: "card", "aria-labelledby": "actions-title" },
        h("h2", { id: "actions-title" }, "Actions"),
        actions(j),
      ),
      details,
      h(
        "section",
        { class: "card", "aria-labelledby": "payload-title" },
        h("h2", { id: "payload-title" }, "Payload"),
        h("pre", { class: "payload" }, JSON.stringify(j.payload, null, 2)),
      ),
      history(j),
    );
  }

  function actions(j: Job): HTMLElement {
    const box = h("div", { class: "action-row" });
    if (j.status === "pending") {
      const confirm = h("div", {
        class: "confirm",
        hidden: true,
        role: "group",
        "aria-label": "Confirm cancel",
      });
      const yes = h(
        "button",
        { type: "button", class: "danger", id: "confirm-cancel" },
        "Yes, cancel it",
      );
      const no = h("button", { type: "button", class: "quiet" }, "Keep it");
      confirm.append(yes, no);
      const cancel = h(
        "button",
        { type: "button", class: "danger", id: "cancel", "aria-expanded": "false" },
        "Cancel job…",
      );
      cancel.addEventListener("click", () => {
        confirm.hidden = false;
        cancel.setAttribute("aria-expanded", "true");
        yes.focus();
      });
      no.addEventListener("click", () => {
        confirm.hidden = true;
        cancel.setAttribute("aria-expanded", "false");
        cancel.focus();
      });
      yes.addEventListener("click", () => void act("cancel", {}, () => "Cancelled."));
      const when = h("input", {
        id: "snooze-to",
        name: "dueAt",
        list: "snooze-presets",
        required: true,
        placeholder: "in 1 hour",
        autocomplete: "off",
      });
      const presets = h(
        "datalist",
        { id: "snooze-presets" },
        ...["in 10 minutes", "in 1 hour", "tomorrow 9am", "next monday 9am"].map((v) =>
          h("option", { value: v }),
        ),
      );
      const snooze = h(
        "form",
        { class: "snooze", "aria-label": "Snooze" },
        h("label", { for: "snooze-to" }, "Snooze to"),
        when,
        presets,
        h("button", { type: "submit" }, "Snooze"),
      );
      snooze.addEventListener("submit", (e) => {
        e.preventDefault();
        const dueAt = when.value.trim();
        if (dueAt === "") return;
        const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
        void act(
          "reschedule",
          { dueAt, timeZone },
          (r) => `Snoozed: now due ${new Date(r.job.dueAt).toLocaleString()}.`,
        );
      });
      box.append(h("div", {}, cancel, confirm), snooze);
    } else if (j.status === "dead") {
      const retry = h("button", { type: "button", id: "retry" }, "Retry now");
      retry.addEventListener(
        "click",
        () => void act("retry", {}, () => "Retried: pending again with fresh attempts."),
      );
      box.append(retry);
    } else {
      box.append(
        h(
          "p",
          { class: "muted" },
          j.status === "claimed"
            ? "Firing now: it can no longer be cancelled or snoozed."
            : `This job is ${j.status}; no action applies.`,
        ),
      );
    }
    return box;
  }

  function history(j: Job): HTMLElement {
    const at = Date.parse;
    const items: [number, string][] = [[at(j.createdAt), "created"]];
    if (j.firedAt !== null) {
      items.push([at(j.firedAt), `last attempt started (attempt ${j.attempts})`]);
    }
    if (j.finishedAt !== null) items.push([at(j.finishedAt), `finished: ${j.status}`]);
    if (j.updatedAt !== j.createdAt) items.push([at(j.updatedAt), "last changed"]);
    const live = ctx.live
      .seenFor(j.id)
      .map((c): [number, string] => [c.at, `${c.kind} → ${c.status} (live)`]);
    const all = [...items, ...live].sort((a, b) => a[0] - b[0]);
    return h(
      "section",
      { class: "card", "aria-labelledby": "history-title" },
      h("h2", { id: "history-title" }, "History"),
      h(
        "ol",
        { class: "history", id: "history" },
        ...all.map(([t, what]) => h("li", {}, time(t), " ", what)),
      ),
      h(
        "p",
        { class: "hint" },
        "From the job's stored times, plus the changes this page has seen live.",
      ),
    );
  }

  const off = ctx.live.on((c: JobChange) => {
    if (c.id !== id) return;
    void load();
  });
  void load();
  return () => {
    stopped = true;
    off();
  };
};
