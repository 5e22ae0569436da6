import { call, query, type MinuteActivity, type NowView } from "../api.js";
import { activityChart } from "../chart.js";
import { badge, dateText, duration, fill, focusHeading, h, num, time } from "../dom.js";
import type { JobChange } from "../live.js";
import type { Page } from "./context.js";
import { stat } from "./future.js";

const MINUTES = 30;
const REFRESH_MS = 10_000;

/**
 * What is happening now: backlog, overdue, in flight, dead today, and a live chart of jobs
 * succeeded per minute with lateness p50/p99. The counts move with the live stream; the lateness
 * percentiles and counters come from a refresh every 10 s.
 */
export const nowPage: Page = (ctx) => {
  const summary = h("dl", { class: "stats" });
  const chartBox = h("div", { class: "chart", id: "now-chart", role: "img" });
  const feed = h("ol", { class: "feed", id: "feed" });
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" }, "Loading…");
  fill(
    ctx.root,
    h("h1", {}, "Now"),
    h(
      "p",
      { class: "lede" },
      `The last ${MINUTES} minutes of firing by this server, and the changes of every node as they happen.`,
    ),
    summary,
    status,
    h(
      "figure",
      { class: "card" },
      chartBox,
      h(
        "figcaption",
        { class: "hint" },
        "Bars: jobs succeeded per minute. Lines: lateness p50 and p99 (right axis).",
      ),
    ),
    h(
      "section",
      { class: "card", "aria-labelledby": "feed-title" },
      h("h2", { id: "feed-title" }, "Live changes"),
      h("div", { "aria-live": "polite", "aria-relevant": "additions" }, feed),
    ),
  );
  focusHeading(ctx.root);

  let chart: ReturnType<typeof activityChart> | null = null;
  let minutes: MinuteActivity[] = [];
  let stopped = false;

  async function load(): Promise<void> {
    try {
      const v = await call<NowView>(`v1/dashboard/now${query({ minutes: MINUTES })}`);
      if (stopped) return;
      minutes = v.minutes;
      drawSummary(v);
      drawChart();
      status.textContent = "";
    } catch (e) {
      if (!stopped) status.textContent = `Could not load: ${(e as Error).message}`;
    }
  }

  function drawSummary(v: NowView): void {
    const last = v.minutes[v.minutes.length - 1];
    const overdue = v.oldestOverdue
      ? h(
          "a",
          { href: `#/jobs/${v.oldestOverdue.id}` },
          `${duration(v.oldestOverdue.lateByMs)} late`,
        )
      : "none";
    fill(
      summary,
      stat("Backlog (pending)", num(v.backlog), "now-backlog"),
      stat("Oldest overdue", overdue, "now-overdue"),
      stat("In flight", num(v.inFlight), "now-inflight"),
      stat(
        v.deadLastDay.since > v.now - 86_400_000 + 60_000
          ? `Dead since ${dateText(v.deadLastDay.since)}`
          : "Dead, last 24 h",
        num(v.deadLastDay.count),
        "now-dead",
      ),
      stat("Dead, kept in history", num(v.counts.dead), "now-dead-kept"),
      stat("Succeeded this minute", num(last?.succeeded ?? 0), "now-succeeded"),
      stat(
        `Lateness p50 / p99 / max (${MINUTES} min)`,
        v.lateness.count === 0
          ? "no firings"
          : `${duration(v.lateness.p50)} / ${duration(v.lateness.p99)} / ${duration(v.lateness.max)}`,
        "now-lateness",
      ),
    );
  }

  function drawChart(): void {
    const succeeded = minutes.reduce((n, m) => n + m.succeeded, 0);
    chartBox.setAttribute(
      "aria-label",
      `${num(succeeded)} jobs succeeded in the last ${MINUTES} minutes.`,
    );
    if (chart) chart.update(minutes);
    else chart = activityChart(chartBox, minutes);
  }

  // Live: a firing bumps the current minute's bar at once; the next refresh corrects it.
  const off = ctx.live.on((c: JobChange) => {
    addToFeed(c);
    if (c.kind !== "succeeded" && c.kind !== "failed" && c.kind !== "dead") return;
    const minute = Math.floor(c.at / 60_000) * 60_000;
    const slot = minutes.find((m) => m.minute === minute);
    if (!slot) return;
    if (c.kind === "succeeded") slot.succeeded++;
    else if (c.kind === "failed") slot.failed++;
    else slot.dead++;
    drawChart();
  });

  function addToFeed(c: JobChange): void {
    feed.prepend(
      h(
        "li",
        { "data-id": c.id, "data-kind": c.kind },
        time(c.at),
        " ",
        h("a", { href: `#/jobs/${c.id}` }, c.id),
        " ",
        c.kind,
        " → ",
        badge(c.status),
      ),
    );
    while (feed.children.length > 20) feed.lastElementChild?.remove();
  }

  void load();
  const timer = setInterval(() => void load(), REFRESH_MS);
  return () => {
    stopped = true;
    off();
    clearInterval(timer);
    chart?.dispose();
  };
};
