import { STATUSES, type OperationKind } from "../api.js";
import { h, isoToLocal, localToIso } from "../dom.js";

/** The kinds the bulk page starts (each counted first by a `count` of that kind). */
const ACTIONS: readonly Exclude<OperationKind, "count">[] = [
  "cancel",
  "reschedule",
  "retry",
  "erase",
];

/** What the form chose: an operation input as POST /v1/dashboard/operations takes it. */
export type OperationChoice = {
  kind: OperationKind;
  of?: OperationKind;
  filter: Record<string, unknown>;
  dueAt?: string;
  shiftMs?: number;
};

/** A labelled form field. */
export function field(id: string, label: string, input: HTMLElement): HTMLElement {
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

/**
 * The bulk page's form: an action and the filter's fields (tags, target, state, due range,
 * key prefix; a new time or a shift for reschedule), filled from the route's parameters.
 * On submit, `chosen` gets the operation input read from it (empty fields left out: the
 * scheduler refuses an empty filter, naming it).
 */
export function operationForm(
  p: URLSearchParams,
  chosen: (input: OperationChoice) => void,
): { form: HTMLFormElement; focus: () => void } {
  const text = (id: string, value: string | null, attrs: Record<string, string | number> = {}) =>
    h("input", { id, name: id, type: "text", value: value ?? "", autocomplete: "off", ...attrs });
  const when = (id: string, value: string | null) =>
    h("input", { id, name: id, type: "datetime-local", value: isoToLocal(value) });

  const kind = h(
    "select",
    { id: "bulk-kind", name: "kind" },
    ...ACTIONS.map((k) => h("option", { value: k, selected: p.get("kind") === k }, k)),
  );
  const tags = text("bulk-tags", p.get("tags"), { placeholder: "user:42, campaign:spring" });
  const target = text("bulk-target", p.get("target"), { maxlength: 2048 });
  const status = h(
    "select",
    { id: "bulk-status", name: "status" },
    h("option", { value: "" }, "Any state"),
    ...STATUSES.map((s) => h("option", { value: s, selected: p.get("status") === s }, s)),
  );
  const dueFrom = when("bulk-due-from", p.get("dueFrom"));
  const dueTo = when("bulk-due-to", p.get("dueTo"));
  const keyPrefix = text("bulk-key-prefix", p.get("keyPrefix"));
  const moveTo = when("bulk-move-to", null);
  const shift = h("input", { id: "bulk-shift", name: "shift", type: "number", step: 1 });
  const move = h(
    "div",
    { class: "filters", id: "bulk-move" },
    field("bulk-move-to", "Move to", moveTo),
    field("bulk-shift", "Or shift by minutes (negative: earlier)", shift),
  );
  const form = h(
    "form",
    { class: "card", "aria-label": "Choose jobs and an action" },
    h(
      "div",
      { class: "filters" },
      field("bulk-kind", "Action", kind),
      field("bulk-tags", "Tags (comma-separated, all of them)", tags),
      field("bulk-target", "Target", target),
      field("bulk-status", "State", status),
      field("bulk-due-from", "Due from", dueFrom),
      field("bulk-due-to", "Due before", dueTo),
      field("bulk-key-prefix", "Key starts with", keyPrefix),
    ),
    move,
    h("div", { class: "bulk-actions" }, h("button", { type: "submit" }, "Count matching jobs")),
  );
  const showMove = () => (move.hidden = kind.value !== "reschedule");
  kind.addEventListener("change", showMove);
  showMove();

  function read(): OperationChoice {
    const list = tags.value
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    const filter: Record<string, unknown> = {};
    if (list.length > 0) filter.tags = list;
    if (target.value.trim() !== "") filter.target = target.value.trim();
    if (status.value !== "") filter.status = [status.value];
    if (dueFrom.value !== "") filter.dueFrom = localToIso(dueFrom.value);
    if (dueTo.value !== "") filter.dueTo = localToIso(dueTo.value);
    if (keyPrefix.value !== "") filter.keyPrefix = keyPrefix.value;
    const k = kind.value as OperationKind;
    const out: OperationChoice = { kind: k, filter };
    if (k === "reschedule" && moveTo.value !== "") out.dueAt = localToIso(moveTo.value);
    else if (k === "reschedule" && shift.value !== "") out.shiftMs = Number(shift.value) * 60_000;
    return out;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    chosen(read());
  });
  return { form, focus: () => kind.focus() };
}
