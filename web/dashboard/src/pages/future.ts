import { call, query, type FutureView } from "../api.js";
import { futureChart } from "../chart.js";
import { dateText, duration, fill, focusHeading, h, num } from "../dom.js";
import type { Page } from "./context.js";

const ZOOMS: readonly [string, string][] = [
  ["1h", "Next hour"],
  ["6h", "6 hours"],
  ["1d", "Day"],
  ["7d", "Week"],
  ["30d", "Month"],
  ["90d", "3 months"],
  ["365d", "Year"],
];

/**
 * The future by bucket: pending jobs per time bin from now forward, zoomable with the range
 * buttons or by dragging across the chart. A table of the same numbers follows the chart for
 * screen readers and anyone who prefers numbers.
 */
export const futurePage: Page = (ctx) => {
  const zoom = ctx.params.get("zoom") ?? (ctx.params.has("from") ? null : "1d");
  const from = ctx.params.get("from");
  const to = ctx.params.get("to");
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" }, "Loading…");
  const summary = h("dl", { class: "stats" });
  const chartBox = h("div", { class: "chart", id: "future-chart" });
  const figure = h(
    "figure",
    { class: "card" },
    chartBox,
    h("figcaption", { class: "hint" }, "Drag across the chart to zoom into a range."),
  );
  const table = h("div", { class: "table-wrap" });
  const buttons = h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Time range" },
    ...ZOOMS.map(([z, label]) =>
      h(
        "a",
        {
          href: `#/future?zoom=${z}`,
          class: "seg",
          "aria-current": z === zoom ? "true" : undefined,
        },
        label,
      ),
    ),
    zoom === null ? h("a", { href: "#/future?zoom=1d", class: "seg" }, "Reset zoom") : null,
  );
  fill(
    ctx.root,
    h("h1", {}, "The future, by bucket"),
    h(
      "p",
      { class: "lede" },
      "Pending jobs per time bin from now forward, read from per-bucket counters.",
    ),
    buttons,
    summary,
    status,
    figure,
    h("details", { class: "card" }, h("summary", {}, "Show the numbers as a table"), table),
  );
  focusHeading(ctx.root);

  let disposeChart: () => void = () => undefined;
  let stopped = false;
  async function load(): Promise<void> {
    try {
      const v = await call<FutureView>(
        `v1/dashboard/future${query(zoom === null ? { from, to } : { zoom })}`,
      );
      if (stopped) return;
      draw(v);
      status.textContent = "";
    } catch (e) {
      if (!stopped) status.textContent = `Could not load: ${(e as Error).message}`;
    }
  }

  function draw(v: FutureView): void {
    fill(
      summary,
      stat("Pending in range", num(v.total), "future-total"),
      stat("Overdue (earlier buckets)", num(v.overdue), "future-overdue"),
      stat("Bin width", duration(v.binMs), "future-bin"),
    );
    const range = `${dateText(v.from)} to ${dateText(v.to)}`;
    chartBox.setAttribute("role", "img");
    chartBox.setAttribute(
      "aria-label",
      `Bar chart of ${num(v.total)} pending jobs from ${range}, in ${v.bins.length} bins of ${duration(v.binMs)}. The table below lists each bin.`,
    );
    disposeChart();
    chartBox.replaceChildren();
    disposeChart = futureChart(chartBox, v, (a, b) => ctx.go(`#/future?from=${a}&to=${b}`));
    const nonEmpty = v.bins.filter((b) => b.pending > 0);
    fill(
      table,
      h(
        "table",
        { id: "future-table" },
        h("caption", {}, `Pending jobs per bin (${nonEmpty.length} non-empty of ${v.bins.length})`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Bin starts"),
            h("th", { scope: "col", class: "n" }, "Pending"),
          ),
        ),
        h(
          "tbody",
          {},
          ...nonEmpty.map((b) =>
            h(
              "tr",
              { "data-bin": new Date(b.start).toISOString(), "data-pending": b.pending },
              h("td", {}, dateText(b.start)),
              h("td", { class: "n" }, num(b.pending)),
            ),
          ),
        ),
      ),
    );
  }

  void load();
  const timer = setInterval(() => void load(), 30_000);
  return () => {
    stopped = true;
    clearInterval(timer);
    disposeChart();
  };
};

/** One figure of a `<dl class="stats">`. */
export function stat(label: string, value: string | Node, id: string): HTMLElement {
  return h("div", { class: "stat" }, h("dt", {}, label), h("dd", { id }, value));
}
