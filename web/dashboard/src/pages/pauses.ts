import { ApiError, call, query, type Pause, type PauseScope, type PausesPage } from "../api.js";
import { badge, fill, focusHeading, h, num, time } from "../dom.js";
import type { Page } from "./context.js";
import { cursorPager } from "./pager.js";
import { field } from "./operation-form.js";

/** How often the list is read again while a pause is still holding or giving jobs back, in ms. */
const POLL_MS = 1000;

/** What the held jobs due while paused do on resume, in words, by policy. */
const ON_RESUME_WORDS: Record<Pause["onResume"], string> = {
  fire: "fire late",
  expire: "expire",
  shift: "shift by the paused time",
};

type Choice = { scope: PauseScope; onResume: Pause["onResume"]; words: string };

/** A pause still changing: finding the jobs it holds, or giving them back. */
function settling(p: Pause): boolean {
  return p.state === "resuming" || (p.state === "active" && !p.holdComplete);
}

function heldText(p: Pause): string {
  if (p.state === "active" && !p.holdComplete) return `${num(p.heldJobs)} (finding more…)`;
  if (p.state === "resuming") return `${num(p.heldJobs)} (giving back…)`;
  return num(p.heldJobs);
}

/** Words for a refused pause or resume, as the API defines its errors. */
function explain(e: unknown): string {
  if (!(e instanceof ApiError)) return `Failed: ${(e as Error).message}`;
  if (e.code === "invalid") return `Invalid ${e.body.error?.field ?? "input"}: ${e.message}`;
  if (e.code === "not-found") return "No such pause (it may have been removed by retention).";
  return `Failed (${e.status}): ${e.message}`;
}

/**
 * Pauses: hold a target's, a tag's or the whole tenant's jobs (nothing they cover fires) until
 * resumed, with what their overdue jobs do then. The form asks to confirm in words before it
 * pauses, as the bulk page does; each active pause has a Resume button. The list is read again
 * while a pause is finding its jobs or giving them back. `#/pauses?id=<id>` marks one (the job
 * page links a held job's pause here). The open pauses (active, resuming) always show first;
 * the resumed ones follow 100 a page, `cursor` turning to the next.
 */
export const pausesPage: Page = (ctx) => {
  const marked = ctx.params.get("id");
  const cursor = ctx.params.get("cursor");
  const outcome = h("p", {
    class: "outcome",
    id: "outcome",
    role: "status",
    "aria-live": "polite",
  });
  const step = h("div", { class: "card", id: "pause-step", role: "region", "aria-live": "polite" });
  step.hidden = true;
  const list = h("div", { class: "card", id: "pauses" }, h("p", { class: "muted" }, "Loading…"));
  const chooser = pauseForm((c) => confirmStep(c));
  fill(ctx.root, h("h1", {}, "Pauses"), outcome, chooser.form, step, list);
  focusHeading(ctx.root);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function load(): Promise<void> {
    clearTimeout(timer);
    try {
      // the open pauses in full (bounded by the tenant's maxOpenPauses), then a page of the
      // resumed ones: the pauses that hold jobs, and the one a job page links to, always show
      const [open, resumed] = await Promise.all([
        call<PausesPage>(`v1/dashboard/pauses${query({ state: "active,resuming", limit: 1000 })}`),
        call<PausesPage>(`v1/dashboard/pauses${query({ state: "resumed", cursor })}`),
      ]);
      if (stopped) return;
      draw({ pauses: [...open.pauses, ...resumed.pauses], nextCursor: resumed.nextCursor });
      if (open.pauses.some(settling)) timer = setTimeout(() => void load(), POLL_MS);
    } catch (e) {
      if (!stopped) fill(list, h("p", { class: "error", role: "alert" }, explain(e)));
    }
  }

  function confirmStep(c: Choice): void {
    step.hidden = false;
    const yes = h("button", { type: "button", class: "danger" }, `Yes, pause ${c.words}`);
    const no = h("button", { type: "button", class: "quiet" }, "No, go back");
    no.addEventListener("click", () => {
      step.hidden = true;
      chooser.focus();
    });
    yes.addEventListener("click", () => void pause(c, yes));
    fill(
      step,
      h(
        "p",
        { id: "pause-question", class: "outcome" },
        `Pause ${c.words}? Nothing it covers fires until it is resumed; then the jobs that came due meanwhile ${ON_RESUME_WORDS[c.onResume]}.`,
      ),
      h("div", { class: "confirm" }, yes, no),
    );
    yes.focus();
  }

  async function pause(c: Choice, yes: HTMLButtonElement): Promise<void> {
    yes.disabled = true;
    try {
      const r = await call<{ pause: Pause }>("v1/dashboard/pauses", {
        method: "POST",
        body: { scope: c.scope, onResume: c.onResume },
      });
      step.hidden = true;
      outcome.className = "outcome ok";
      outcome.textContent = `Paused ${r.pause.description}.`;
    } catch (e) {
      yes.disabled = false;
      fill(step, h("p", { class: "error", role: "alert" }, explain(e)));
    }
    await load();
  }

  async function resume(p: Pause): Promise<void> {
    outcome.className = "outcome";
    outcome.textContent = "Working…";
    try {
      const r = await call<{ pause: Pause; releasing: { jobs: number } }>(
        `v1/dashboard/pauses/${encodeURIComponent(p.id)}/resume`,
        { method: "POST", body: {} },
      );
      const n = r.releasing.jobs;
      outcome.className = "outcome ok";
      outcome.textContent = `Resumed ${r.pause.description}: ${num(n)} held ${n === 1 ? "job" : "jobs"} ${ON_RESUME_WORDS[r.pause.onResume]} if due.`;
    } catch (e) {
      outcome.className = "outcome bad";
      outcome.textContent = explain(e);
    }
    await load();
  }

  function draw(page: PausesPage): void {
    const pauses = page.pauses;
    if (pauses.length === 0 && cursor === null) {
      fill(list, h("p", { class: "muted" }, "No pauses: every job fires when due."));
      return;
    }
    const cols = ["Scope", "State", "Held jobs", "On resume", "Since", "Resumed", "Action"];
    const table = h(
      "table",
      { id: "pauses-table" },
      h("caption", { class: "sr-only" }, "Open pauses, then resumed ones, each in creation order"),
      h("thead", {}, h("tr", {}, ...cols.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, ...pauses.map(row)),
    );
    fill(
      list,
      h("div", { class: "table-wrap" }, table),
      cursorPager("#/pauses", cursor, page.nextCursor),
    );
    if (marked) list.querySelector('tr[aria-current="true"]')?.scrollIntoView({ block: "nearest" });
  }

  function row(p: Pause): HTMLTableRowElement {
    const action =
      p.state === "active"
        ? h(
            "button",
            {
              type: "button",
              "data-action": "resume",
              "aria-label": `Resume ${p.description}`,
              onclick: () => void resume(p),
            },
            "Resume",
          )
        : "—";
    return h(
      "tr",
      {
        "data-id": p.id,
        "data-state": p.state,
        "data-held": p.heldJobs,
        ...(p.id === marked ? { "aria-current": "true", class: "flash" } : {}),
      },
      h("td", { class: "scope" }, p.description),
      h("td", { class: "state" }, badge(p.state)),
      h("td", { class: "n held" }, heldText(p)),
      h("td", { class: "policy" }, ON_RESUME_WORDS[p.onResume]),
      h("td", { class: "since" }, time(p.pausedAt)),
      h("td", { class: "resumed" }, time(p.resumedAt)),
      h("td", { class: "action" }, action),
    );
  }

  void load();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
};

/** The pause form: what to hold (a target, a tag, the whole tenant) and the resume policy. */
function pauseForm(chosen: (c: Choice) => void): { form: HTMLFormElement; focus: () => void } {
  const kind = h(
    "select",
    { id: "pause-kind", name: "kind" },
    h("option", { value: "target" }, "a target"),
    h("option", { value: "tag" }, "a tag"),
    h("option", { value: "tenant" }, "every job of the tenant"),
  );
  const value = h("input", {
    id: "pause-value",
    name: "value",
    type: "text",
    autocomplete: "off",
    maxlength: 2048,
    placeholder: "mail, or https://hooks.example.com",
  });
  const valueField = field("pause-value", "Target or tag", value);
  const onResume = h(
    "select",
    { id: "pause-on-resume", name: "onResume" },
    ...Object.entries(ON_RESUME_WORDS).map(([k, words]) => h("option", { value: k }, words)),
  );
  const form = h(
    "form",
    { class: "card", "aria-label": "Pause jobs" },
    h(
      "div",
      { class: "filters" },
      field("pause-kind", "Pause", kind),
      valueField,
      field("pause-on-resume", "On resume, overdue jobs", onResume),
    ),
    h("div", { class: "bulk-actions" }, h("button", { type: "submit" }, "Pause…")),
  );
  const showValue = () => (valueField.hidden = kind.value === "tenant");
  kind.addEventListener("change", showValue);
  showValue();
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const v = value.value.trim();
    const policy = onResume.value as Pause["onResume"];
    // An empty target or tag is sent as it is: the server's one validator names the field.
    if (kind.value === "tenant") {
      chosen({ scope: { tenant: true }, onResume: policy, words: "every job of the tenant" });
    } else if (kind.value === "tag") {
      chosen({ scope: { tag: v }, onResume: policy, words: `the jobs tagged ${v}` });
    } else {
      chosen({ scope: { target: v }, onResume: policy, words: `target ${v}` });
    }
  });
  return { form, focus: () => kind.focus() };
}
