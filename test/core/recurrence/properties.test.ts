import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type * as CronerModule from "croner";
import type * as RruleModule from "rrule-temporal";
import {
  compileRecurrence,
  type GapPolicy,
  type OverlapPolicy,
} from "../../../src/core/recurrence/index.js";
import { compileCron } from "../../../src/core/recurrence/cron-rule.js";
import { parseRrule } from "../../../src/core/recurrence/rrule-parse.js";
import { compileRrule } from "../../../src/core/recurrence/rrule-rule.js";
import {
  isoInZone,
  tzOffsetMinutes,
  wallTimeInstants,
  type WallTime,
} from "../../../src/core/wall-time.js";

const requireModule = createRequire(import.meta.url);
const { Cron } = requireModule("croner") as typeof CronerModule;
const { RRuleTemporal } = requireModule("rrule-temporal") as typeof RruleModule;

// [zone, from]: around each zone's changes (the day before, just after a gap, inside each pass
// of a repeated hour, where next() must look back and ahead), Sao Paulo's last change (2018),
// and zones without any
const PLACES = (
  [
    ["Europe/Paris", "2026-03-28T12:00:00Z"],
    ["Europe/Paris", "2026-03-29T01:10:00Z"],
    ["Europe/Paris", "2026-10-24T12:00:00Z"],
    ["Europe/Paris", "2026-10-25T00:50:00Z"],
    ["Europe/Paris", "2026-10-25T01:15:00Z"],
    ["America/New_York", "2026-03-07T12:00:00Z"],
    ["America/New_York", "2026-03-08T07:10:00Z"],
    ["America/New_York", "2026-10-31T12:00:00Z"],
    ["America/New_York", "2026-11-01T05:50:00Z"],
    ["America/New_York", "2026-11-01T06:15:00Z"],
    ["Australia/Lord_Howe", "2026-10-03T00:00:00Z"],
    ["Australia/Lord_Howe", "2026-10-03T15:35:00Z"],
    ["Australia/Lord_Howe", "2026-04-04T00:00:00Z"],
    ["Australia/Lord_Howe", "2026-04-04T14:55:00Z"],
    ["Australia/Lord_Howe", "2026-04-04T15:05:00Z"],
    ["America/Sao_Paulo", "2018-11-03T12:00:00Z"],
    ["America/Sao_Paulo", "2018-11-04T03:10:00Z"],
    ["Pacific/Chatham", "2026-04-04T12:00:00Z"],
    ["Pacific/Chatham", "2026-09-26T12:00:00Z"],
    ["Asia/Kathmandu", "2026-06-01T00:00:00Z"],
    ["UTC", "2026-06-01T00:00:00Z"],
  ] as const
).map(([zone, from]) => [zone, Date.parse(from)] as const);

function list(max: number, min = 0) {
  return fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 4 });
}
const field = (max: number, min = 0) =>
  fc.oneof(
    fc.constant("*"),
    list(max, min).map((v) => v.join(",")),
    fc.integer({ min: 2, max: Math.min(max, 30) }).map((s) => `*/${s}`),
  );
// hours 0-3 often: the changes of these zones happen then
const hours = fc.oneof(
  field(23),
  list(3).map((v) => v.join(",")),
);
const cronExpr = fc
  .tuple(field(59), hours, field(28, 1), field(12, 1), field(6))
  .map((parts) => parts.join(" "));

function wallOf(nominal: string): WallTime {
  const [year, month, day, hour, minute, second] = nominal.split(/[-T:]/).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { year, month, day, hour, minute, second, millisecond: 0 };
}

/** The rule compiled, or null for a random expression that never matches (day 31 in February). */
function compiledOrNull(cron: string, timeZone: string, gap: GapPolicy, overlap: OverlapPolicy) {
  try {
    return compileRecurrence({ rule: { cron }, timeZone, gap, overlap });
  } catch {
    return null;
  }
}

describe("occurrence properties (fast-check)", () => {
  it("ordered, unique, each at its rule's wall time or a documented gap shift", () => {
    fc.assert(
      fc.property(
        cronExpr,
        fc.constantFrom(...PLACES),
        fc.constantFrom<GapPolicy>("shift", "skip"),
        fc.constantFrom<OverlapPolicy>("first", "both"),
        (cron, [timeZone, from], gap, overlap) => {
          const r = compiledOrNull(cron, timeZone, gap, overlap);
          if (r === null) return;
          const matcher = new Cron(cron, { utcOffset: 0 });
          const got = r.preview(from, 30);
          const keys = new Set<string>();
          for (let i = 0; i < got.length; i++) {
            const o = got[i]!;
            if (i > 0) expect(o.at).toBeGreaterThan(got[i - 1]!.at);
            expect(keys.has(o.key)).toBe(false);
            keys.add(o.key);
            // the nominal wall time is one the rule names (croner, read in floating UTC)
            expect(matcher.match(new Date(`${o.nominal}Z`))).toBe(true);
            const mapped = wallTimeInstants(wallOf(o.nominal), timeZone);
            if (o.mapping === "gap-shifted") {
              expect(gap).toBe("shift");
              expect(mapped.kind).toBe("gap");
              expect(o.at).toBe(mapped.kind === "gap" ? mapped.shifted : NaN);
            } else {
              // exact and overlap times read back as their nominal wall time
              expect(isoInZone(o.at, timeZone).slice(0, 19)).toBe(o.nominal);
              expect(mapped.kind).toBe(o.mapping === "exact" ? "exact" : "overlap");
              if (o.mapping === "overlap-second") expect(overlap).toBe("both");
            }
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it("misses nothing: every minute whose wall time the rule names fires (brute force)", () => {
    fc.assert(
      fc.property(
        cronExpr,
        fc.constantFrom(...PLACES),
        fc.constantFrom<OverlapPolicy>("first", "both"),
        (cron, [timeZone, from], overlap) => {
          const r = compiledOrNull(cron, timeZone, "skip", overlap);
          if (r === null) return;
          const matcher = new Cron(cron, { utcOffset: 0 });
          const until = from + 26 * 3_600_000;
          // every instant (whole minutes) in 26 hours whose wall reading the rule names;
          // with "first" a repeated reading counts on its first instant only, so the scan
          // starts 3 hours early to have seen the first pass of a repeat inside the window
          const expected: number[] = [];
          const seen = new Set<string>();
          for (let t = from - 3 * 3_600_000; t <= until; t += 60_000) {
            const wall = isoInZone(t, timeZone).slice(0, 19);
            if (!matcher.match(new Date(`${wall}Z`))) continue;
            const repeat = seen.has(wall);
            seen.add(wall);
            if (t <= from || (overlap === "first" && repeat)) continue;
            expected.push(t);
          }
          const got: number[] = [];
          for (let o = r.next(from); o !== null && o.at <= until; o = r.next(o.at)) got.push(o.at);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
  it("every policy: the same occurrences as mapping every matching wall minute (model)", () => {
    fc.assert(
      fc.property(
        cronExpr,
        fc.constantFrom(...PLACES),
        fc.constantFrom<GapPolicy>("shift", "skip"),
        fc.constantFrom<OverlapPolicy>("first", "both"),
        (cron, [timeZone, from], gap, overlap) => {
          const r = compiledOrNull(cron, timeZone, gap, overlap);
          if (r === null) return;
          const matcher = new Cron(cron, { utcOffset: 0 });
          const until = from + 26 * 3_600_000;
          // the model: map every wall minute from 3 hours before the window's wall times to 3
          // hours after (more than any change), keep the instants in it, one per instant
          const byInstant = new Map<number, string>();
          const wallFrom = from + tzOffsetMinutes(timeZone, from) * 60_000 - 3 * 3_600_000;
          const wallUntil = until + tzOffsetMinutes(timeZone, until) * 60_000 + 3 * 3_600_000;
          for (let w = wallFrom; w <= wallUntil; w += 60_000) {
            const wall = new Date(Math.floor(w / 60_000) * 60_000);
            if (!matcher.match(wall)) continue;
            const nominal = wall.toISOString().slice(0, 19);
            const m = wallTimeInstants(wallOf(nominal), timeZone);
            const instants =
              m.kind === "gap"
                ? gap === "shift"
                  ? [m.shifted]
                  : []
                : overlap === "both"
                  ? m.instants
                  : [m.instants[0]];
            for (const t of instants) {
              if (t > from && t <= until && !byInstant.has(t)) byInstant.set(t, nominal);
            }
          }
          const expected = [...byInstant.entries()].sort((a, b) => a[0] - b[0]);
          const got: [number, string][] = [];
          for (let o = r.next(from); o !== null && o.at <= until; o = r.next(o.at))
            got.push([o.at, o.nominal]);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("the field search agrees with the libraries it stands in for", () => {
  it("cron field sets: the same wall times as croner", () => {
    fc.assert(
      fc.property(
        cronExpr,
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }),
        (cron, from) => {
          const { sequence, fields } = compileCron(cron);
          expect(fields).not.toBeNull();
          const croner = new Cron(cron, { utcOffset: 0 });
          let a: number | null = from;
          let b: number | null = from;
          for (let i = 0; i < 10 && a !== null; i++) {
            a = sequence.after(a);
            const next = croner.nextRun(new Date(b!));
            b = next === null ? null : next.getTime();
            expect(a).toBe(b);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  const days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
  const rrule = fc
    .record({
      freq: fc.constantFrom("DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY"),
      byDay: fc.option(fc.uniqueArray(fc.constantFrom(...days), { minLength: 1, maxLength: 3 })),
      byMonthDay: fc.option(
        fc.uniqueArray(fc.constantFrom(1, 13, 28, 30, 31, -1), { minLength: 1, maxLength: 2 }),
      ),
      byMonth: fc.option(list(12, 1)),
      byHour: fc.option(list(23)),
      byMinute: fc.option(list(59)),
    })
    .filter((r) => !(r.freq === "WEEKLY" && r.byMonthDay !== null))
    .map((r) =>
      [
        `FREQ=${r.freq}`,
        r.byDay && `BYDAY=${r.byDay.join(",")}`,
        r.byMonthDay && `BYMONTHDAY=${r.byMonthDay.join(",")}`,
        r.byMonth && `BYMONTH=${r.byMonth.join(",")}`,
        r.byHour && `BYHOUR=${r.byHour.join(",")}`,
        r.byMinute && `BYMINUTE=${r.byMinute.join(",")}`,
      ]
        .filter(Boolean)
        .join(";"),
    );

  it("RRULE field rules: the same wall times as rrule-temporal, DTSTART defaults included", () => {
    fc.assert(
      fc.property(
        rrule,
        fc
          .integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) })
          .map((t) => Math.floor(t / 1000) * 1000),
        (text, dtstart) => {
          let compiled;
          try {
            compiled = compileRrule(parseRrule(text), text, dtstart);
          } catch {
            return; // BYMONTH and BYMONTHDAY leave no date (BYMONTH=4;BYMONTHDAY=31): refused
          }
          const { sequence, fields } = compiled;
          expect(fields).not.toBeNull();
          const ics = new Date(dtstart).toISOString().slice(0, 19).replace(/[-:]/g, "");
          const lib = new RRuleTemporal({ rruleString: `DTSTART;TZID=UTC:${ics}\nRRULE:${text}` });
          let a: number | null = dtstart - 1000;
          for (let i = 0; i < 8 && a !== null; i++) {
            let expected: number | null;
            try {
              const n = lib.next(new Date(a));
              expected = n === null ? null : n.epochMilliseconds;
            } catch {
              return; // the library's own search cap: nothing to compare
            }
            a = sequence.after(a);
            expect(a).toBe(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
