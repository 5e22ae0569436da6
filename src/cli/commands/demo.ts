import type { Command } from "commander";
import type { Job, Scheduler, ScheduleInput } from "../../index.js";
import { InvalidJobError } from "../../core/errors.js";
import { EXIT } from "../errors.js";
import { action, openScheduler, out, outJson, parseIntFlag } from "../context.js";
import type { GlobalOptions } from "../context.js";
import { percentile, table } from "../format.js";

interface DemoOptions {
  count?: string;
  lead?: string;
  spread?: string;
  quiet?: boolean;
  json?: boolean;
}

const DEMO_TARGET = "demo.reminder";
const DEFAULT_DB = "./duetime-demo.db";
/** How long after the last due time the demo waits before calling the rest lost. */
const GRACE_MS = 5000;

/** What the demo measured; also its `--json` output. */
interface DemoSummary {
  db: string;
  scheduled: number;
  scheduleMs: number;
  fired: number;
  early: number;
  lost: number;
  duplicated: number;
  storedSucceeded: number;
  latenessMs: { p50: number; p99: number; max: number };
  wallMs: number;
}

/** `duetime demo`: schedules a burst of reminders seconds ahead and shows them firing on time. */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      `zero-setup showcase: schedule a burst of reminders a few seconds ahead on a local SQLite file (default ${DEFAULT_DB}) and watch them fire on time`,
    )
    .option("--count <n>", "reminders to schedule", "200")
    .option("--lead <ms>", "how far ahead the first reminder is due", "2000")
    .option("--spread <ms>", "window the due times are spread over", "3000")
    .option("--quiet", "one progress line every 50 firings instead of one per firing")
    .option("--json", "print only the summary, as JSON")
    .action(
      action(async (o: DemoOptions, cmd: Command) => {
        const count = parseIntFlag(o.count, "--count", 1, 10_000)!;
        const lead = parseIntFlag(o.lead, "--lead", 0, 60_000)!;
        const spread = parseIntFlag(o.spread, "--spread", 0, 60_000)!;
        const db = cmd.optsWithGlobals<GlobalOptions>().db ?? DEFAULT_DB;
        const say = o.json ? (_: string): void => undefined : out;
        const scheduler = await openScheduler(cmd, {}, db);
        try {
          await refuseForeignJobs(scheduler, db);
          const summary = await runDemo(scheduler, {
            db,
            count,
            lead,
            spread,
            say,
            quiet: !!o.quiet,
          });
          if (o.json) outJson(summary);
          else printSummary(summary);
          return summary.early === 0 && summary.lost === 0 ? EXIT.ok : EXIT.failure;
        } finally {
          await scheduler.close();
        }
      }),
    );
}

/**
 * The demo fires everything due in its database; on a database holding real work it would
 * run (and, lacking their handlers, kill) other jobs. It refuses such a file.
 */
async function refuseForeignJobs(s: Scheduler, db: string): Promise<void> {
  const page = await s.list({ status: ["pending", "claimed"], limit: 1000 });
  const foreign = page.jobs.some((j) => j.target !== DEMO_TARGET);
  if (foreign || page.nextCursor !== null) {
    throw new InvalidJobError(
      "--db",
      `a database without pending jobs other than the demo's (the demo fires all due jobs)`,
      db,
    );
  }
}

interface DemoRun {
  db: string;
  count: number;
  lead: number;
  spread: number;
  say: (l: string) => void;
  quiet: boolean;
}

async function runDemo(s: Scheduler, o: DemoRun): Promise<DemoSummary> {
  const started = Date.now();
  const burst = await scheduleBurst(s, o);
  o.say("firing each at its millisecond (lateness = start of the handler minus due time):");
  const recorder = new FiringRecorder(burst.ours, o);
  s.handle(DEMO_TARGET, (job: Job) => recorder.handlerStarted(job));
  s.on("succeeded", ({ job }) => recorder.recorded(job));
  s.start();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    recorder.allRecorded,
    new Promise<void>((r) => {
      timer = setTimeout(r, burst.lastDue - Date.now() + GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  await s.stop();
  const storedSucceeded = await countSucceeded(s, burst.ours, burst.firstDue, burst.lastDue);
  const values = [...recorder.lateness.values()].sort((a, b) => a - b);
  return {
    db: o.db,
    scheduled: o.count,
    scheduleMs: Math.round(burst.scheduleMs * 10) / 10,
    fired: recorder.lateness.size,
    early: values.filter((v) => v < 0).length,
    lost: o.count - recorder.lateness.size,
    duplicated: recorder.duplicated,
    storedSucceeded,
    latenessMs: {
      p50: percentile(values, 50),
      p99: percentile(values, 99),
      max: values[values.length - 1] ?? 0,
    },
    wallMs: Date.now() - started,
  };
}

/** Schedules the reminders, spread evenly over `spread` ms starting `lead` ms from now. */
async function scheduleBurst(
  s: Scheduler,
  o: DemoRun,
): Promise<{ ours: Map<string, Job>; firstDue: number; lastDue: number; scheduleMs: number }> {
  const firstDue = Date.now() + o.lead;
  const inputs: ScheduleInput[] = Array.from({ length: o.count }, (_, i) => ({
    dueAt: firstDue + Math.round((i * o.spread) / Math.max(1, o.count - 1)),
    target: DEMO_TARGET,
    payload: { n: i + 1, text: `reminder #${i + 1}` },
  }));
  const t0 = performance.now();
  const results = await s.scheduleMany(inputs);
  const scheduleMs = performance.now() - t0;
  const lastDue = Math.max(...results.map((r) => r.job.dueAt));
  o.say(
    `scheduled ${o.count} reminders in one transaction (${scheduleMs.toFixed(1)} ms) on ${o.db},` +
      ` due from ${new Date(firstDue).toISOString()} to ${new Date(lastDue).toISOString()}`,
  );
  return { ours: new Map(results.map((r) => [r.job.id, r.job])), firstDue, lastDue, scheduleMs };
}

/**
 * Measures lateness in the handler itself, unclamped, so a job fired early would show up
 * as negative (the engine's own figure is clamped at 0), and prints each firing once the
 * scheduler has recorded it.
 */
class FiringRecorder {
  /** Lateness of the first run of each of this demo's jobs, by id. */
  readonly lateness = new Map<string, number>();
  duplicated = 0;
  readonly allRecorded: Promise<void>;
  private readonly recordedIds = new Set<string>();
  private finish: () => void = () => undefined;

  constructor(
    private readonly ours: ReadonlyMap<string, Job>,
    private readonly o: Pick<DemoRun, "count" | "say" | "quiet">,
  ) {
    this.allRecorded = new Promise((resolve) => (this.finish = resolve));
  }

  handlerStarted(job: Job): void {
    const late = Date.now() - job.dueAt;
    if (!this.ours.has(job.id)) return; // left over from an interrupted earlier run
    if (this.lateness.has(job.id)) this.duplicated++;
    else this.lateness.set(job.id, late);
  }

  recorded(job: Job): void {
    if (!this.ours.has(job.id)) return;
    this.recordedIds.add(job.id);
    const done = this.recordedIds.size;
    const n = (job.payload as { n?: number } | null)?.n ?? 0;
    const late = this.lateness.get(job.id) ?? 0;
    if (!this.o.quiet) {
      const due = new Date(job.dueAt).toISOString().slice(11, 23);
      this.o.say(
        `  #${String(n).padStart(4)}  due ${due}  lateness ${String(late).padStart(3)} ms`,
      );
    } else if (done % 50 === 0 || done === this.o.count) {
      this.o.say(`  fired ${done}/${this.o.count}`);
    }
    if (done >= this.o.count) this.finish();
  }
}

/** How many of this run's jobs the store records as succeeded. */
async function countSucceeded(
  s: Scheduler,
  ours: ReadonlyMap<string, Job>,
  from: number,
  to: number,
): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await s.list({
      status: "succeeded",
      dueFrom: from,
      dueTo: to + 1,
      limit: 1000,
      ...(cursor === undefined ? {} : { cursor }),
    });
    n += page.jobs.filter((j) => ours.has(j.id)).length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return n;
}

function printSummary(r: DemoSummary): void {
  out("");
  out("summary");
  const rows: [string, string][] = [
    ["scheduled", String(r.scheduled)],
    ["fired", String(r.fired)],
    ["early", String(r.early)],
    ["lost", String(r.lost)],
    ["duplicated", String(r.duplicated)],
    ["succeeded in store", String(r.storedSucceeded)],
    ["lateness p50", `${r.latenessMs.p50} ms`],
    ["lateness p99", `${r.latenessMs.p99} ms`],
    ["lateness max", `${r.latenessMs.max} ms`],
    ["wall time", `${(r.wallMs / 1000).toFixed(1)} s`],
  ];
  out(
    table(
      ["METRIC", "VALUE"],
      rows.map(([k, v]) => [k, v]),
      ["l", "r"],
    )
      .split("\n")
      .map((l) => `  ${l}`)
      .join("\n"),
  );
  out(
    r.early === 0 && r.lost === 0
      ? "every reminder fired, none early, none lost."
      : "PROBLEM: some reminders fired early or were lost.",
  );
}
