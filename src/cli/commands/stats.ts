import type { Command } from "commander";
import type { Scheduler } from "../../index.js";
import { JOB_STATUSES } from "../../core/job.js";
import { EXIT } from "../errors.js";
import {
  action,
  out,
  outJson,
  parseIntFlag,
  resolveTimeZone,
  withExistingScheduler,
} from "../context.js";
import {
  bar,
  formatDuration,
  formatInZone,
  formatLateness,
  percentile,
  plural,
  table,
} from "../format.js";
import { callApi, remoteWithoutTenant, type Remote } from "../remote.js";

interface StatsOptions {
  buckets?: string;
  latenessLimit?: string;
  tenant?: string;
  tz?: string;
  json?: boolean;
}

/** How far back `stats` looks for fired jobs to measure lateness. */
const LATENESS_WINDOW_MS = 86_400_000;
/**
 * Default of --lateness-limit: most finished jobs read for lateness (bounded: stats must
 * stay cheap on a busy database). When more fired, the output says the figures are partial.
 */
const LATENESS_LIMIT = 10_000;

/** `duetime stats`: counts by state, the pending histogram by bucket, recent lateness. */
export function registerStats(program: Command): void {
  program
    .command("stats")
    .description("job counts by state, pending jobs per time bucket, recent lateness")
    .option("--buckets <n>", "buckets ahead of now to show", "48")
    .option("--tenant <tenant>", "only this tenant's jobs")
    .option("--tz <iana>", "time zone for bucket labels (default: the system's)")
    .option(
      "--lateness-limit <n>",
      "most fired jobs to read for lateness, earliest due first",
      String(LATENESS_LIMIT),
    )
    .option("--json", "print the stats as JSON")
    .action(
      action(async (o: StatsOptions, cmd: Command) => {
        const timeZone = resolveTimeZone(o.tz);
        const buckets = parseIntFlag(o.buckets, "--buckets", 1, 10_000)!;
        const latenessLimit = parseIntFlag(o.latenessLimit, "--lateness-limit", 1, 10_000_000)!;
        const remote = remoteWithoutTenant(cmd, o.tenant);
        if (remote) {
          return remoteStats(remote, buckets, timeZone, o.json === true);
        }
        const tenant = o.tenant === undefined ? {} : { tenant: o.tenant };
        const now = Date.now();
        const [stats, lateness] = await withExistingScheduler(cmd, async (s) =>
          Promise.all([
            s.stats({ ...tenant, buckets }),
            firedLateness(s, now, tenant, latenessLimit),
          ]),
        );
        const shown = stats.buckets.reduce((n, b) => n + b.pending, 0);
        const beyond = Math.max(0, stats.counts.pending - shown);
        if (o.json) {
          outJson({
            counts: stats.counts,
            bucketWidthMs: stats.bucketWidthMs,
            buckets: stats.buckets,
            pendingBeyondBuckets: beyond,
            lateness,
          });
          return EXIT.ok;
        }
        out("jobs by state");
        out(
          indent(
            table(
              ["STATE", "COUNT"],
              JOB_STATUSES.map((st) => [st, String(stats.counts[st])]),
              ["l", "r"],
            ),
          ),
        );
        out("");
        out(`pending jobs per bucket (${bucketName(stats.bucketWidthMs)} buckets, ${timeZone})`);
        if (stats.buckets.length === 0) out("  (none)");
        const max = Math.max(0, ...stats.buckets.map((b) => b.pending));
        const width = String(max).length;
        for (const b of stats.buckets) {
          const overdue = b.bucket + stats.bucketWidthMs <= now ? "  overdue" : "";
          const label = formatInZone(b.bucket, timeZone).replace(/:\d\d\.\d{3}/, "");
          out(`  ${label}  ${String(b.pending).padStart(width)}  ${bar(b.pending, max)}${overdue}`);
        }
        if (beyond > 0) out(`  + ${beyond} pending further ahead (see --buckets)`);
        out("");
        if (lateness.count === 0) {
          out("lateness: no job due in the last 24 h has fired yet");
        } else {
          const partial = lateness.complete
            ? ""
            : `; only the earliest due ${lateness.count}: more fired, see --lateness-limit`;
          out(
            `lateness of ${plural(lateness.count, "job")} due in the last 24 h and fired (succeeded or dead${partial}): ` +
              `p50 ${formatLateness(lateness.p50)}, p99 ${formatLateness(lateness.p99)}, ` +
              `max ${formatLateness(lateness.max)}, early ${lateness.early}`,
          );
        }
        return EXIT.ok;
      }),
    );
}

interface FiredLateness {
  /** Jobs measured: all that fired in the window when `complete`, else the first `limit`. */
  count: number;
  /** False when more jobs fired in the window than were read (`limit` was reached). */
  complete: boolean;
  /** Most jobs read (--lateness-limit), earliest due first. */
  limit: number;
  /** The window, in ms before now, whose due jobs are measured. */
  windowMs: number;
  p50: number;
  p99: number;
  max: number;
  /** Jobs whose last attempt started before their due time (must be 0). */
  early: number;
}

/**
 * Lateness (start of the last attempt minus due time) of finished jobs due in the last 24 h,
 * read from the jobs themselves: the scheduler's own lateness recorder only knows what this
 * process fired, and `stats` fires nothing.
 */
async function firedLateness(
  s: Scheduler,
  now: number,
  tenant: { tenant?: string },
  limit: number,
): Promise<FiredLateness> {
  const values: number[] = [];
  let cursor: string | undefined;
  let complete = true;
  for (;;) {
    const page = await s.list({
      status: ["succeeded", "dead"],
      dueFrom: now - LATENESS_WINDOW_MS,
      dueTo: now + 1,
      // one more than is wanted, so a full sample also tells whether anything was left out
      limit: Math.min(1000, limit - values.length + 1),
      ...tenant,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const j of page.jobs) {
      if (j.firedAt === null) continue;
      if (values.length === limit) {
        complete = false;
        break;
      }
      values.push(j.firedAt - j.dueAt);
    }
    cursor = page.nextCursor ?? undefined;
    if (!complete || cursor === undefined) break;
  }
  values.sort((a, b) => a - b);
  return {
    count: values.length,
    complete,
    limit,
    windowMs: LATENESS_WINDOW_MS,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values[values.length - 1] ?? 0,
    early: values.filter((v) => v < 0).length,
  };
}

function bucketName(widthMs: number): string {
  const names: Record<number, string> = { 60_000: "minute", 3_600_000: "hour", 86_400_000: "day" };
  return names[widthMs] ?? formatDuration(widthMs);
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

interface RemoteStats {
  counts: Record<string, number>;
  bucketWidthMs: number;
  buckets: { bucket: string; pending: number; overdue: boolean }[];
  pendingBeyondBuckets: number;
  lateness: { windowMinutes: number; count: number; p50: number; p99: number; max: number };
  perMinute: RemoteMinute[];
}

/** One minute of a server's GET /v1/stats; a server of 0.1 sends `fired` for `succeeded`. */
export interface RemoteMinute {
  minute: string;
  succeeded?: number;
  fired?: number;
  failed: number;
  dead: number;
  expired: number;
}

/** Jobs succeeded over these minutes, from a server of this release or of 0.1. */
export function succeededIn(minutes: readonly RemoteMinute[]): number {
  return minutes.reduce((n, m) => n + (m.succeeded ?? m.fired ?? 0), 0);
}

/** `stats --url`: the server's GET /v1/stats for the key's tenant. */
async function remoteStats(
  remote: Remote,
  buckets: number,
  timeZone: string,
  json: boolean,
): Promise<number> {
  // RemoteStats reads both this release's answer and 0.1's (`fired` for `succeeded`).
  const s = (await callApi(remote, (c) => c.getStats({ buckets }))) as RemoteStats;
  if (json) {
    outJson(s);
    return EXIT.ok;
  }
  out("jobs by state");
  out(
    indent(
      table(
        ["STATE", "COUNT"],
        JOB_STATUSES.map((st) => [st, String(s.counts[st] ?? 0)]),
        ["l", "r"],
      ),
    ),
  );
  out("");
  out(`pending jobs per bucket (${bucketName(s.bucketWidthMs)} buckets, ${timeZone})`);
  if (s.buckets.length === 0) out("  (none)");
  const max = Math.max(0, ...s.buckets.map((b) => b.pending));
  const width = String(max).length;
  for (const b of s.buckets) {
    const label = formatInZone(Date.parse(b.bucket), timeZone).replace(/:\d\d\.\d{3}/, "");
    out(
      `  ${label}  ${String(b.pending).padStart(width)}  ${bar(b.pending, max)}${b.overdue ? "  overdue" : ""}`,
    );
  }
  if (s.pendingBeyondBuckets > 0)
    out(`  + ${s.pendingBeyondBuckets} pending further ahead (see --buckets)`);
  out("");
  const succeeded = succeededIn(s.perMinute);
  const l = s.lateness;
  out(
    l.count === 0
      ? `lateness: the server fired nothing in the last ${l.windowMinutes} min`
      : `lateness of the ${plural(l.count, "job")} the server fired in the last ${l.windowMinutes} min: ` +
          `p50 ${formatLateness(l.p50)}, p99 ${formatLateness(l.p99)}, max ${formatLateness(l.max)}`,
  );
  out(`succeeded in the last ${s.perMinute.length} min: ${succeeded}`);
  return EXIT.ok;
}
