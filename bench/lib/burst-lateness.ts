import type { Table } from "./report.js";
import { ascending, percentile } from "./stats.js";

/**
 * Lateness by due instant: a window whose jobs come due many at one instant (daily cron on
 * whole seconds) is late as a whole when something holds the event loop over that instant,
 * which one percentile of the window hides. Each instant's jobs, first calls only.
 */
export class BurstLateness {
  private readonly byInstant = new Map<number, number[]>();

  /** A job due at `dueAt` was first called at `firedAt` (both epoch ms). */
  record(dueAt: number, firedAt: number): void {
    let late = this.byInstant.get(dueAt);
    if (!late) this.byInstant.set(dueAt, (late = []));
    late.push(firedAt - dueAt);
  }

  table(title: string): Table {
    const instants = [...this.byInstant.keys()].sort((a, b) => a - b);
    const first = instants[0] ?? 0;
    return {
      title,
      headers: ["instant", "jobs", "first", "p50", "p99", "max"],
      rows: instants.map((at) => {
        const late = ascending(this.byInstant.get(at)!);
        const ms = (v: number) => `${v} ms`;
        return [
          `+${((at - first) / 1000).toFixed(0)} s`,
          late.length.toLocaleString("en-US"),
          ms(late[0]!),
          ms(percentile(late, 50)),
          ms(percentile(late, 99)),
          ms(late[late.length - 1]!),
        ];
      }),
    };
  }
}
