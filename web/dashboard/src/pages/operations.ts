import { call, type Operation } from "../api.js";
import { fill, focusHeading, h, num } from "../dom.js";
import type { Page } from "./context.js";
import { field, operationForm, type OperationChoice as Input } from "./operation-form.js";
import {
  drawRecent,
  followOperation,
  isActive,
  jobsText,
  KIND_WORDS,
} from "./operation-progress.js";

/**
 * Bulk operations: choose jobs by filter (tags, target, state, due range, key prefix) and an
 * action; the page counts first (a `count` operation of that action), asks to confirm with
 * the number ("Cancel 1,234 jobs tagged user:42?"; erase wants the tag typed), then starts
 * the operation and follows its progress, with a Cancel button. Recent operations below.
 * `#/operations?id=<id>` follows one; the filter fields may come in the route (from the jobs
 * page's tag listing).
 */
export const operationsPage: Page = (ctx) => {
  const p = ctx.params;
  const chooser = operationForm(p, (chosen) => void count(chosen));
  const { form } = chooser;

  const step = h("div", { class: "card", id: "bulk-step", role: "region", "aria-live": "polite" });
  step.hidden = true;
  const panel = h("section", { class: "card", id: "bulk-panel", "aria-label": "Progress" });
  panel.hidden = true;
  const recent = h("div", { id: "bulk-recent" }, "Loading…");
  fill(
    ctx.root,
    h("h1", {}, "Bulk operations"),
    form,
    step,
    panel,
    h("section", { class: "card" }, h("h2", {}, "Recent operations"), recent),
  );
  focusHeading(ctx.root);

  let stopped = false;
  let stopFollow: () => void = () => undefined;

  /** The dry run: how many jobs the action would change, polled when it runs in the background. */
  async function count(chosen: Input): Promise<void> {
    stopFollow();
    step.hidden = false;
    fill(step, h("p", { role: "status" }, "Counting…"));
    try {
      const countInput = { ...chosen, kind: "count", of: chosen.kind };
      delete countInput.dueAt;
      delete countInput.shiftMs;
      let { operation } = await call<{ operation: Operation }>("v1/dashboard/operations", {
        method: "POST",
        body: countInput,
      });
      while (isActive(operation) && !stopped) {
        fill(step, h("p", { role: "status" }, `Counting… ${num(operation.scanned)} read`));
        await new Promise((r) => setTimeout(r, 400));
        ({ operation } = await call<{ operation: Operation }>(
          `v1/dashboard/operations/${operation.id}`,
        ));
      }
      if (!stopped) confirmStep(chosen, operation);
    } catch (e) {
      if (!stopped) fill(step, h("p", { class: "error", role: "alert" }, (e as Error).message));
    }
  }

  /** The question with the number; erase also wants the tag (or "erase") typed. */
  function confirmStep(chosen: Input, counted: Operation): void {
    const n = counted.changed;
    const words = KIND_WORDS[chosen.kind];
    const what = jobsText(counted.filter, n);
    if (n === 0) {
      fill(step, h("p", { id: "bulk-count" }, `No job would change: 0 of the matching jobs.`));
      return;
    }
    const yes = h(
      "button",
      {
        type: "button",
        class: chosen.kind === "cancel" || chosen.kind === "erase" ? "danger" : "",
      },
      `Yes, ${words.verb.toLowerCase()} ${num(n)} ${n === 1 ? "job" : "jobs"}`,
    );
    const no = h("button", { type: "button", class: "quiet" }, "No, go back");
    no.addEventListener("click", () => {
      step.hidden = true;
      chooser.focus();
    });
    yes.addEventListener("click", () => void start(chosen, n, yes));
    let typed: HTMLElement | null = null;
    if (chosen.kind === "erase") {
      const word = counted.filter.tags?.[0] ?? "erase";
      const box = h("input", { id: "bulk-erase-check", type: "text", autocomplete: "off" });
      yes.disabled = true;
      box.addEventListener("input", () => (yes.disabled = box.value !== word));
      typed = h(
        "div",
        {},
        h("p", {}, "Erased jobs are deleted with their history; only the counts are kept."),
        field("bulk-erase-check", `Type ${word} to confirm`, box),
      );
    }
    fill(
      step,
      h(
        "p",
        { id: "bulk-count" },
        `${num(n)} jobs would change; ${num(counted.skipped)} matching jobs would be left as they are.`,
      ),
      h("p", { id: "bulk-question", class: "outcome" }, `${words.verb} ${what}?`),
      typed,
      h("div", { class: "confirm" }, yes, no),
    );
    (typed?.querySelector("input") ?? yes).focus();
  }

  async function start(chosen: Input, expected: number, yes: HTMLButtonElement): Promise<void> {
    yes.disabled = true;
    try {
      const { operation } = await call<{ operation: Operation }>("v1/dashboard/operations", {
        method: "POST",
        body: chosen,
      });
      if (stopped) return;
      step.hidden = true;
      follow(operation.id, expected);
    } catch (e) {
      yes.disabled = false;
      fill(step, h("p", { class: "error", role: "alert" }, (e as Error).message));
    }
  }

  function follow(id: string, expected: number | null): void {
    stopFollow();
    void drawRecent(recent);
    stopFollow = followOperation(panel, id, expected, () => void drawRecent(recent));
  }

  const id = p.get("id");
  if (id) follow(id, null);
  else void drawRecent(recent);
  return () => {
    stopped = true;
    stopFollow();
  };
};
