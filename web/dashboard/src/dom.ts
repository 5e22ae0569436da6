/** A tiny element builder: h("button", { type: "button", onclick }, "Cancel"). */
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;
export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") {
      el.addEventListener(name.replace(/^on/, ""), value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: Element, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

const numberFormat = new Intl.NumberFormat();
export function num(n: number): string {
  return numberFormat.format(n);
}

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/**
 * A <time> element showing `t` in local time, with the exact instant for machines: epoch ms
 * (charts, live changes) or an ISO text (a job's times, as the one job view sends them).
 */
export function time(t: number | string | null): HTMLElement | string {
  if (t === null) return "—";
  const ms = typeof t === "string" ? Date.parse(t) : t;
  // A stored time no Date can hold (a row older than the due-time range check) comes as
  // "invalid time (epoch ms N)": shown as that text instead of throwing and blanking the page.
  if (typeof t === "string" && Number.isNaN(ms)) return t;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return `invalid time (epoch ms ${ms})`;
  const iso = new Date(ms).toISOString();
  return h("time", { datetime: iso, title: iso }, dateTime.format(ms));
}

export function dateText(t: number): string {
  return dateTime.format(t);
}

/** "850 ms", "1.2 s", "3 min", "2 h 5 min", "4 d 3 h": the two largest units, zeros dropped. */
export function duration(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(ms)} ms`;
  if (a < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (a < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  const [big, unit, small, smallUnit, smallMs] =
    a < 86_400_000
      ? [Math.floor(a / 3_600_000), "h", a % 3_600_000, "min", 60_000]
      : [Math.floor(a / 86_400_000), "d", a % 86_400_000, "h", 3_600_000];
  const rest = Math.round(small / smallMs);
  return `${sign}${big} ${unit}${rest > 0 ? ` ${rest} ${smallUnit}` : ""}`;
}

/** A status badge; the text carries the meaning, colour only helps. */
export function badge(status: string): HTMLElement {
  return h("span", { class: `badge s-${status}`, "data-status": status }, status);
}

/** Moves focus to the page's heading after navigation, so screen readers announce it. */
export function focusHeading(root: Element): void {
  const heading = root.querySelector("h1");
  if (heading instanceof HTMLElement) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
}

/** A `datetime-local` value (local wall time) as an ISO instant, or "". */
export function localToIso(local: string): string {
  if (local === "") return "";
  const t = new Date(local).getTime();
  return Number.isNaN(t) ? "" : new Date(t).toISOString();
}

/** An ISO instant as a `datetime-local` value in local time, or "". */
export function isoToLocal(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}
