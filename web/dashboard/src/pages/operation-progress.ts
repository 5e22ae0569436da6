import { call, type Operation, type OperationKind, type OperationsPage, ApiError } from "../api.js";
import { badge, dateText, fill, h, num, time } from "../dom.js";

/** How often a running operation is read again, in ms. */
const POLL_MS = 400;

/** The verb of each kind, for questions ("Cancel 12 jobs…?") and outcomes ("12 cancelled"). */
export const KIND_WORDS: Readonly<Record<OperationKind, { verb: string; done: string }>> = {
  count: { verb: "Count", done: "counted" },
  cancel: { verb: "Cancel", done: "cancelled" },
  reschedule: { verb: "Move", done: "moved" },
  retry: { verb: "Retry", done: "retried" },
  erase: { verb: "Erase", done: "erased" },
};

export function isActive(op: Operation): boolean {
  return op.state === "queued" || op.state === "running";
}

/** "12 pending jobs tagged user:42 with target noop, due before …": the jobs a filter selects. */
export function jobsText(f: Operation["filter"], n: number | null): string {
  const parts: string[] = [];
  if (n !== null) parts.push(num(n));
  if (f.status) parts.push(f.status.join(" or "));
  parts.push(n === 1 ? "job" : "jobs");
  if (f.tags) parts.push(`tagged ${f.tags.join(" and ")}`);
  if (f.target) parts.push(`with target ${f.target}`);
  if (f.keyPrefix) parts.push(`with a key starting “${f.keyPrefix}”`);
  if (f.dueFrom) parts.push(`due from ${dateText(Date.parse(f.dueFrom))}`);
  if (f.dueTo) parts.push(`due before ${dateText(Date.parse(f.dueTo))}`);
  if (f.all) parts.push("(every job of this tenant)");
  return parts.join(" ");
}

/**
 * Follows one operation in `panel`: its state, a progress bar against `expected` (the count
 * shown before it started, when known), the counts, and a Cancel button while it runs. Reads
 * it every POLL_MS until it ends, then calls `ended`. Returns a stop function.
 */
export function followOperation(
  panel: HTMLElement,
  id: string,
  expected: number | null,
  ended: (op: Operation) => void,
): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const note = h("p", { class: "outcome", id: "bulk-outcome", role: "status" });

  async function tick(): Promise<void> {
    try {
      const { operation } = await call<{ operation: Operation }>(`v1/dashboard/operations/${id}`);
      if (stopped) return;
      draw(operation);
      if (isActive(operation)) timer = setTimeout(() => void tick(), POLL_MS);
      else ended(operation);
    } catch (e) {
      if (stopped) return;
      note.textContent = `Could not read the operation: ${(e as Error).message}`;
      timer = setTimeout(() => void tick(), POLL_MS * 5);
    }
  }

  async function cancel(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const { operation } = await call<{ operation: Operation }>(
        `v1/dashboard/operations/${id}/cancel`,
        { method: "POST", body: {} },
      );
      if (!stopped) draw(operation);
    } catch (e) {
      note.textContent = `Could not cancel: ${(e as ApiError).message}`;
      button.disabled = false;
    }
  }

  function draw(op: Operation): void {
    const words = KIND_WORDS[op.kind];
    const bar = h("progress", {
      id: "bulk-progress",
      "aria-label": "Progress",
      ...(expected !== null && expected > 0 ? { max: expected, value: op.changed } : {}),
      ...(isActive(op) ? {} : { max: 1, value: 1 }),
    });
    const stop = h("button", { type: "button", class: "danger" }, "Cancel operation");
    stop.addEventListener("click", () => void cancel(stop));
    note.textContent = outcomeText(op);
    fill(
      panel,
      h("h2", {}, `${words.verb} ${jobsText(op.filter, null)}`),
      h(
        "p",
        { id: "bulk-state" },
        badge(op.state),
        ` ${num(op.changed)} ${words.done}`,
        expected === null ? "" : ` of ${num(expected)}`,
        `, ${num(op.skipped)} left as they were, ${num(op.scanned)} read`,
      ),
      bar,
      note,
      isActive(op) ? stop : null,
    );
    panel.dataset.state = op.state;
  }

  panel.hidden = false;
  void tick();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}

function outcomeText(op: Operation): string {
  const done = KIND_WORDS[op.kind].done;
  switch (op.state) {
    case "queued":
      return "Queued: it starts with the next pass of the scheduler.";
    case "running":
      return "Running in batches…";
    case "done":
      return `Done: ${num(op.changed)} jobs ${done}.`;
    case "cancelled":
      return `Cancelled after ${num(op.changed)} jobs ${done}.`;
    case "failed":
      return `Failed: ${op.error ?? "unknown error"}.`;
  }
}

/** The tenant's recent operations, newest first, into `box`; each row links to its progress. */
export async function drawRecent(box: HTMLElement): Promise<void> {
  try {
    const page = await call<OperationsPage>("v1/dashboard/operations?limit=20");
    if (page.operations.length === 0) {
      fill(box, h("p", { class: "muted" }, "No operations yet."));
      return;
    }
    const head = ["Started", "Action", "Jobs", "State", "Changed", "Read"];
    fill(
      box,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { id: "operations-table" },
          h("caption", { class: "sr-only" }, "Recent bulk operations, newest first"),
          h("thead", {}, h("tr", {}, ...head.map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, ...page.operations.map(recentRow)),
        ),
      ),
    );
  } catch (e) {
    fill(box, h("p", { class: "muted" }, `Could not list operations: ${(e as Error).message}`));
  }
}

function recentRow(op: Operation): HTMLTableRowElement {
  const action = op.kind === "count" && op.of ? `count (${op.of})` : op.kind;
  return h(
    "tr",
    { "data-id": op.id, "data-state": op.state },
    h("td", {}, h("a", { href: `#/operations?id=${op.id}` }, time(op.createdAt))),
    h("td", {}, action),
    h("td", { class: "wrap" }, jobsText(op.filter, null)),
    h("td", { class: "state" }, badge(op.state)),
    h("td", { class: "n" }, num(op.changed)),
    h("td", { class: "n" }, num(op.scanned)),
  );
}
