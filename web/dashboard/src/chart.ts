import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { FutureView, MinuteActivity } from "./api.js";
import { dateText, num } from "./dom.js";

const BLUE = "#2563eb";
const ORANGE = "#d97706";
const RED = "#dc2626";

function heightFor(width: number): number {
  return width < 500 ? 200 : 280;
}

/** Keeps a chart as wide as its container; returns a disposer. */
function fitWidth(u: uPlot, box: HTMLElement): () => void {
  const ro = new ResizeObserver(() => {
    const w = box.clientWidth;
    if (w > 0 && w !== u.width) u.setSize({ width: w, height: heightFor(w) });
  });
  ro.observe(box);
  return () => {
    ro.disconnect();
    u.destroy();
  };
}

/**
 * Pending jobs per bin as bars. Dragging across the chart asks for that range (`onZoom`),
 * so the server re-bins it finer: zooming reads counters, never rows.
 */
export function futureChart(
  box: HTMLElement,
  view: FutureView,
  onZoom: (from: number, to: number) => void,
): () => void {
  const xs = view.bins.map((b) => b.start + view.binMs / 2);
  const ys = view.bins.map((b) => b.pending);
  const width = Math.max(box.clientWidth, 280);
  const u = new uPlot(
    {
      width,
      height: heightFor(width),
      ms: 1,
      cursor: { drag: { x: true, y: false, setScale: false } },
      select: { show: true, left: 0, top: 0, width: 0, height: 0 },
      legend: { show: false },
      scales: {
        x: { time: true, range: [view.from, view.to] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
      },
      axes: [
        { stroke: "currentColor", grid: { stroke: "rgba(127,127,127,0.2)" } },
        {
          stroke: "currentColor",
          grid: { stroke: "rgba(127,127,127,0.2)" },
          size: 60,
          values: (_u, vals) => vals.map((v) => num(v)),
        },
      ],
      series: [
        {},
        {
          label: "Pending",
          stroke: BLUE,
          fill: "rgba(37,99,235,0.55)",
          paths: uPlot.paths.bars!({ size: [0.9, 80], align: 0 }),
          points: { show: false },
        },
      ],
      hooks: {
        setSelect: [
          (self) => {
            if (self.select.width < 4) return;
            const from = self.posToVal(self.select.left, "x");
            const to = self.posToVal(self.select.left + self.select.width, "x");
            self.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            onZoom(Math.floor(from), Math.ceil(to));
          },
        ],
      },
    },
    [xs, ys],
    box,
  );
  return fitWidth(u, box);
}

/** Succeeded per minute (bars, left axis) and lateness p50/p99 (lines, right axis, ms). */
export function activityChart(
  box: HTMLElement,
  minutes: MinuteActivity[],
): {
  update(m: MinuteActivity[]): void;
  dispose(): void;
} {
  const data = (m: MinuteActivity[]): uPlot.AlignedData => [
    m.map((x) => x.minute + 30_000),
    m.map((x) => x.succeeded),
    m.map((x) => (x.succeeded > 0 ? x.latenessP50 : null)),
    m.map((x) => (x.succeeded > 0 ? x.latenessP99 : null)),
  ];
  const width = Math.max(box.clientWidth, 280);
  const u = new uPlot(
    {
      width,
      height: heightFor(width),
      ms: 1,
      legend: { show: true, live: false },
      scales: {
        // Whole minutes on both sides, so the current minute's bar is not cut in half.
        x: {
          time: true,
          range: (u) => {
            const xs = u.data[0];
            const first = xs[0] ?? 0;
            return [first - 30_000, (xs[xs.length - 1] ?? first) + 30_000];
          },
        },
        y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
        ms: { range: (_u, _min, max) => [0, Math.max(10, max) * 1.1] },
      },
      axes: [
        { stroke: "currentColor", grid: { stroke: "rgba(127,127,127,0.2)" } },
        {
          stroke: "currentColor",
          label: "succeeded / min",
          size: 60,
          grid: { stroke: "rgba(127,127,127,0.2)" },
        },
        {
          side: 1,
          scale: "ms",
          stroke: "currentColor",
          label: "lateness ms",
          size: 60,
          grid: { show: false },
        },
      ],
      series: [
        { value: (_u, v) => (v === null ? "" : dateText(v)) },
        {
          label: "Succeeded",
          stroke: BLUE,
          fill: "rgba(37,99,235,0.35)",
          paths: uPlot.paths.bars!({ size: [0.8, 60] }),
          points: { show: false },
        },
        { label: "Lateness p50", scale: "ms", stroke: ORANGE, width: 2, spanGaps: true },
        { label: "Lateness p99", scale: "ms", stroke: RED, width: 2, dash: [6, 4], spanGaps: true },
      ],
    },
    data(minutes),
    box,
  );
  const dispose = fitWidth(u, box);
  return { update: (m) => u.setData(data(m)), dispose };
}
