/**
 * Recurrence rules (issue 12 §1): what next() costs per call, the figure a series engine
 * pays for every fired occurrence, beside the libraries it stands in for measured in the
 * same run on the same rules and zone (croner's nextRun in the zone, rrule-temporal's next
 * with TZID) and one Intl offset look-up. Also compile costs (a cache miss, a hit), a
 * never-matching rule's refusal and the lazy loads of croner and rrule-temporal.
 * `tsx bench/recurrence.ts` (BENCH_SCALE=tiny for the smoke size).
 */
import { createRequire } from "node:module";
import type * as CronerModule from "croner";
import type * as RruleModule from "rrule-temporal";
import { compileRecurrence, type RecurrenceRule } from "../src/core/recurrence/index.js";
import { tzOffsetMinutes } from "../src/core/wall-time.js";
import { machineFacts } from "./lib/machine.js";
import { note } from "./lib/progress.js";
import { fmt, renderResult, type BenchResult } from "./lib/report.js";
import { sizesFromEnv, type Sizes } from "./lib/scale.js";

const requireModule = createRequire(import.meta.url);
/** The next() figure the series engine needs (issue 12: "a few microseconds"), in us. */
const GOAL_US = 5;
const ZONE = "Europe/Paris";
const START = Date.UTC(2026, 0, 1);
/** Calls are spread over this week, as a node firing many series computes them near now. */
const FROM = Date.UTC(2026, 5, 1);

interface Case {
  readonly name: string;
  readonly rule: RecurrenceRule;
  /** The same rule for the baseline library (croner for cron, rrule-temporal for RRULE). */
  readonly baseline: () => (after: number) => number;
}

function cronBaseline(expr: string): () => (after: number) => number {
  return () => {
    const { Cron } = requireModule("croner") as typeof CronerModule;
    const c = new Cron(expr, { timezone: ZONE });
    return (after) => c.nextRun(new Date(after))!.getTime();
  };
}

function rruleBaseline(rrule: string): () => (after: number) => number {
  return () => {
    const { RRuleTemporal } = requireModule("rrule-temporal") as typeof RruleModule;
    const r = new RRuleTemporal({
      rruleString: `DTSTART;TZID=${ZONE}:20260101T010000\nRRULE:${rrule}`,
    });
    return (after) => r.next(new Date(after))!.epochMilliseconds;
  };
}

const cron = (name: string, expr: string): Case => ({
  name: `cron ${expr} (${name})`,
  rule: { cron: expr },
  baseline: cronBaseline(expr),
});
const rrule = (name: string, text: string): Case => ({
  name: `RRULE ${name}`,
  rule: { rrule: text },
  baseline: rruleBaseline(text),
});

const CASES: readonly Case[] = [
  cron("weekdays", "0 9 * * 1-5"),
  cron("every 5 min", "*/5 * * * *"),
  cron("last day", "0 18 L * *"),
  cron("croner path", "0 9 * * FRI#2"),
  rrule("weekly MO,WE 09:00", "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0;BYSECOND=0"),
  rrule(
    "every 2 weeks MO 17:30 (library path)",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=17;BYMINUTE=30;BYSECOND=0",
  ),
];

/** CPU microseconds this process has used: under load, wall time counts other processes too. */
function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * CPU microseconds per call of fn over `n` calls, after a warm-up, the min of `rounds`
 * rounds (the machines this runs on are shared: wall time would carry their load).
 */
function perCall(fn: (i: number) => number, n: number, rounds = 3): number {
  let sink = 0;
  for (let i = 0; i < Math.min(n, 2000); i++) sink += fn(i);
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const t = cpuUs();
    for (let i = 0; i < n; i++) sink += fn(i);
    best = Math.min(best, (cpuUs() - t) / n);
  }
  if (sink === 0.5) note("unreachable");
  return best;
}

/** The after-instants: spread over a week, 10 minutes apart, as a node firing many series. */
const afterOf = (i: number) => FROM + (i % 1008) * 600_000;

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

export function recurrence(sizes: Sizes): BenchResult {
  const n = sizes.scale === "tiny" ? 2000 : 50_000;
  const loads = {
    croner: time(() => compileRecurrence({ rule: { cron: "0 9 * * 1-5" }, timeZone: ZONE })),
    rrule: time(() =>
      compileRecurrence({
        rule: { rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO" },
        timeZone: ZONE,
        start: START,
      }),
    ),
  };
  const rows: (string | number)[][] = [];
  let worstCommon = 0;
  for (const c of CASES) {
    const r = compileRecurrence({ rule: c.rule, timeZone: ZONE, start: START });
    const ours = perCall((i) => r.next(afterOf(i))!.at, n);
    const lib = c.baseline();
    const theirs = perCall((i) => lib(afterOf(i)), Math.max(200, n / 20));
    if (!c.name.includes("path")) worstCommon = Math.max(worstCommon, ours);
    rows.push([c.name, fmt(ours), fmt(theirs), `${fmt(theirs / ours)}x`]);
  }
  const intl = perCall((i) => tzOffsetMinutes(ZONE, afterOf(i) + i), Math.max(200, n / 10));

  let k = 0;
  const compileMiss = perCall(
    () =>
      compileRecurrence({
        rule: { cron: `0 9 * * 1-5` },
        timeZone: ZONE,
        start: START + ++k * 1000,
      }).spec.timeZone.length,
    Math.max(100, n / 50),
    1,
  );
  const compileHit = perCall(
    () => compileRecurrence({ rule: { cron: "0 9 * * 1-5" }, timeZone: ZONE }).spec.gap.length,
    n,
  );
  const never = (rule: RecurrenceRule) =>
    time(() => {
      try {
        compileRecurrence({ rule, timeZone: ZONE, start: START });
      } catch {
        // refused, as it must be
      }
    });
  const refusals = [
    ["cron 0 0 30 2 *", never({ cron: "0 0 30 2 *" })],
    [
      "RRULE FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
      never({ rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30" }),
    ],
    [
      "RRULE FREQ=MONTHLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=30 (date check)",
      never({ rrule: "FREQ=MONTHLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=30" }),
    ],
    // every other month from January never reaches February: rrule-temporal's bounded search
    [
      "RRULE FREQ=MONTHLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=1 (library search)",
      never({ rrule: "FREQ=MONTHLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=1" }),
    ],
    ["cron 0 0 30 2 +FRI#5 (croner path)", never({ cron: "0 0 30 2 +FRI#5" })],
  ] as const;

  return {
    name: "recurrence",
    title: `Recurrence rules: next() per call in ${ZONE}`,
    goals: [
      {
        metric: "next() per call, worst of the common rules (field search)",
        value: `${fmt(worstCommon)} us`,
        goal: `< ${GOAL_US} us`,
        baseline: `${fmt(intl)} us (one Intl offset look-up)`,
        ratio: `${fmt(worstCommon / intl)}x`,
        pass: worstCommon < GOAL_US,
      },
    ],
    details: [
      {
        title: `next() per call, CPU us (min of 3 rounds of ${n.toLocaleString("en-US")} calls spread over a week; baseline: the same rule and zone in the library named)`,
        headers: ["rule", "duetime next()", "croner / rrule-temporal", "library / duetime"],
        rows,
      },
      {
        title: "Compiling, ms unless said",
        headers: ["what", "cost"],
        rows: [
          ["first cron rule (loads croner)", `${fmt(loads.croner)} ms`],
          ["first library RRULE (loads rrule-temporal)", `${fmt(loads.rrule)} ms`],
          ["a new spec (cache miss), per compile", `${fmt(compileMiss)} us`],
          ["the same spec again (cache hit), per compile", `${fmt(compileHit)} us`],
          ...refusals.map(([name, ms]) => [`refusing never-matching ${name}`, `${fmt(ms)} ms`]),
        ],
      },
    ],
    notes: [
      "one process, sequential; min of rounds is the cost with the least interference from other processes on the machine",
      "croner's nextRun with a timezone and rrule-temporal's next with a TZID do the zone arithmetic themselves; duetime enumerates wall times and maps them through a per-day offset table",
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = sizesFromEnv();
  process.stdout.write(
    `## duetime recurrence benchmark (scale ${sizes.scale})\n\n${machineFacts()}\n\n`,
  );
  process.stdout.write(renderResult(recurrence(sizes)));
  note("done");
}
