import { call, query, STATUSES, type Job, type JobsPage } from "../api.js";
import { badge, fill, focusHeading, h, isoToLocal, localToIso, time } from "../dom.js";
import type { Page } from "./context.js";

/** Cursors of the pages before the current one, for "Previous page". */
let previous: string[] = [];

/** A job's tags as chips, each a link to the jobs carrying it; "—" when it has none. */
function tagChips(tags: readonly string[]): HTMLElement | string {
  if (tags.length === 0) return "—";
  return h(
    "ul",
    { class: "chips", "aria-label": "Tags" },
    ...tags.map((t) =>
      h("li", {}, h("a", { class: "chip", href: `#/jobs${query({ tag: t })}` }, t)),
    ),
  );
}

/** From a tag's listing to the bulk page, its filter filled in (the count comes first there). */
function bulkLink(args: Record<string, string | null>): HTMLElement {
  const filter = { tags: args.tag, status: args.status, dueFrom: args.dueFrom, dueTo: args.dueTo };
  return h(
    "p",
    {},
    h(
      "a",
      { href: `#/operations${query(filter)}`, id: "bulk-link" },
      "Cancel, move or erase the jobs tagged ",
      h("span", { class: "mono" }, args.tag ?? ""),
      "…",
    ),
  );
}

/**
 * Jobs: look one up by id or idempotency key, or list by state, due range and tag, a page at
 * a time (cursor paging in due order; by tag, in job id order from the tag index). Rows follow
 * the live stream.
 */
export const jobsPage: Page = (ctx) => {
  const p = ctx.params;
  const field = (id: string, label: string, input: HTMLElement) =>
    h("div", { class: "field" }, h("label", { for: id }, label), input);
  const q = h("input", {
    id: "q",
    name: "q",
    type: "search",
    value: p.get("q") ?? "",
    placeholder: "01J… or a key",
    autocomplete: "off",
  });
  const status = h(
    "select",
    { id: "status", name: "status" },
    h("option", { value: "" }, "Any state"),
    ...STATUSES.map((s) => h("option", { value: s, selected: p.get("status") === s }, s)),
  );
  const dueFrom = h("input", {
    id: "due-from",
    name: "dueFrom",
    type: "datetime-local",
    value: isoToLocal(p.get("dueFrom")),
  });
  const dueTo = h("input", {
    id: "due-to",
    name: "dueTo",
    type: "datetime-local",
    value: isoToLocal(p.get("dueTo")),
  });
  const tag = h("input", {
    id: "tag",
    name: "tag",
    type: "text",
    value: p.get("tag") ?? "",
    placeholder: "user:42",
    maxlength: 64,
    autocomplete: "off",
  });
  const form = h(
    "form",
    { class: "card filters", role: "search", "aria-label": "Find jobs" },
    field("q", "Job id or idempotency key", q),
    field("status", "State", status),
    field("due-from", "Due from", dueFrom),
    field("due-to", "Due before", dueTo),
    field("tag", "Tag", tag),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit" }, "Search"),
      h("a", { href: "#/jobs", class: "button quiet" }, "Clear"),
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    previous = [];
    ctx.go(
      `#/jobs${query({ q: q.value.trim(), status: status.value, dueFrom: localToIso(dueFrom.value), dueTo: localToIso(dueTo.value), tag: tag.value.trim() })}`,
    );
  });
  const result = h("div", { class: "card", id: "results" });
  const message = h("p", { class: "muted", role: "status", "aria-live": "polite" }, "Loading…");
  fill(ctx.root, h("h1", {}, "Jobs"), form, message, result);
  if (!p.has("cursor")) previous = [];
  focusHeading(ctx.root);

  const rows = new Map<string, HTMLTableRowElement>();
  let stopped = false;

  async function load(): Promise<void> {
    const args = {
      q: p.get("q"),
      status: p.get("status"),
      dueFrom: p.get("dueFrom"),
      dueTo: p.get("dueTo"),
      tag: p.get("tag"),
      cursor: p.get("cursor"),
    };
    try {
      const page = await call<JobsPage>(`v1/dashboard/jobs${query(args)}`);
      if (stopped) return;
      draw(page, args);
    } catch (e) {
      if (!stopped) message.textContent = `Could not search: ${(e as Error).message}`;
    }
  }

  function draw(page: JobsPage, args: Record<string, string | null>): void {
    rows.clear();
    if (page.match === null) message.textContent = `No job has the id or key “${args.q ?? ""}”.`;
    else if (page.match) message.textContent = `Found by ${page.match}.`;
    else
      message.textContent =
        page.jobs.length === 0 ? "No jobs match." : `${page.jobs.length} jobs on this page.`;
    const byTag = args.tag !== null && args.tag !== undefined;
    const table = h(
      "table",
      { id: "jobs-table" },
      h("caption", { class: "sr-only" }, byTag ? `Jobs tagged ${args.tag}` : "Jobs in due order"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Job", "Key", "State", "Due", "Target", "Tags", "Attempts"].map((c) =>
            h("th", { scope: "col" }, c),
          ),
        ),
      ),
      h("tbody", {}, ...page.jobs.map(row)),
    );
    const nav = h("nav", { class: "pager", "aria-label": "Pages" });
    if (previous.length > 0) {
      nav.append(
        h(
          "button",
          {
            type: "button",
            class: "quiet",
            onclick: () => {
              const before = previous.pop();
              ctx.go(`#/jobs${query({ ...args, cursor: before === "" ? null : before })}`);
            },
          },
          "Previous page",
        ),
      );
    }
    if (page.nextCursor) {
      const next = page.nextCursor;
      nav.append(
        h(
          "button",
          {
            type: "button",
            onclick: () => {
              previous.push(args.cursor ?? "");
              ctx.go(`#/jobs${query({ ...args, cursor: next })}`);
            },
          },
          "Next page",
        ),
      );
    }
    fill(
      result,
      byTag && !args.q ? bulkLink(args) : null,
      page.jobs.length > 0 ? h("div", { class: "table-wrap" }, table) : null,
      nav.childElementCount > 0 ? nav : null,
    );
  }

  function row(j: Job): HTMLTableRowElement {
    const tr = h(
      "tr",
      { "data-id": j.id },
      h("td", { class: "mono" }, h("a", { href: `#/jobs/${j.id}` }, j.id)),
      h("td", { class: "mono" }, j.key ?? "—"),
      h("td", { class: "state" }, badge(j.status)),
      h("td", { class: "due" }, time(j.dueAt)),
      h("td", { class: "mono truncate", title: j.target }, j.target),
      h("td", { class: "tags" }, tagChips(j.tags)),
      h("td", { class: "n" }, `${j.attempts} / ${j.maxAttempts}`),
    );
    rows.set(j.id, tr);
    return tr;
  }

  const off = ctx.live.on((c) => {
    const tr = rows.get(c.id);
    if (!tr) return;
    tr.querySelector(".state")?.replaceChildren(badge(c.status));
    tr.querySelector(".due")?.replaceChildren(time(c.dueAt));
    tr.classList.add("flash");
  });

  void load();
  return () => {
    stopped = true;
    off();
  };
};
