import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { isoInstant } from "../../src/core/instant-text.js";
import { MAX_INSTANT, MAX_TIME_TEXT, parseDelay, parseDueTime } from "../../src/core/time-input.js";
import { makeHarness } from "../support/harness.js";

/**
 * Issue 10 §1, on the library: hostile time text is refused by its length before a parser
 * sees it, every due time is inside one documented range before anything is written, and the
 * delay reader keeps its grammar after being made linear.
 */

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const HOSTILE = `in 1${" ".repeat(2000)}x`;
const OVERFLOWS = [
  "in 99999999999 weeks",
  "in 14300000 weeks",
  `in ${"9".repeat(190)} ms`,
  "9999-12-31T23:59:59-23:59",
];

function errorOf(fn: () => unknown): InvalidJobError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidJobError) return err;
    throw err;
  }
  throw new Error("expected an InvalidJobError");
}

describe("parseDueTime", () => {
  it("refuses a text longer than MAX_TIME_TEXT by its length, naming the field", () => {
    const e = errorOf(() => parseDueTime(HOSTILE, { now: NOW, field: "dueFrom" }));
    expect(e.field).toBe("dueFrom");
    expect(e.expected).toBe(`a time text of at most ${MAX_TIME_TEXT} characters`);
    expect(e.message).toMatch(/received 2005 characters$/);
    // at the cap the text is read (and here refused as no time, not for its length)
    const atCap = `in 1${" ".repeat(MAX_TIME_TEXT - 5)}x`;
    expect(errorOf(() => parseDueTime(atCap, { now: NOW })).expected).toMatch(/^an ISO time/);
  });

  it.each(OVERFLOWS)("refuses %j as outside the due-time range", (text) => {
    const e = errorOf(() => parseDueTime(text, { now: NOW }));
    expect(e.field).toBe("dueAt");
    expect(e.expected).toMatch(/^an epoch-ms integer from 0 to 253402300799999 \(1970/);
  });

  it("refuses numbers and Dates outside the range; takes both ends", () => {
    expect(parseDueTime(0, { now: NOW })).toBe(0);
    expect(parseDueTime(MAX_INSTANT, { now: NOW })).toBe(MAX_INSTANT);
    expect(parseDueTime("9999-12-31T23:59:59.999Z", { now: NOW })).toBe(MAX_INSTANT);
    for (const v of [MAX_INSTANT + 1, -1, 1e300, Infinity, NaN, 1.5]) {
      expect(errorOf(() => parseDueTime(v, { now: NOW })).field).toBe("dueAt");
    }
    const e = errorOf(() => parseDueTime(new Date(8.64e15), { now: NOW }));
    expect(e.message).toMatch(/received \+275760-09-13T00:00:00\.000Z$/);
  });

  it("refuses a delay that lands past the range from a late clock", () => {
    expect(() => parseDueTime("in 2 days", { now: MAX_INSTANT - 86_400_000 })).toThrow(
      /dueAt: expected an epoch-ms integer from 0/,
    );
  });

  it("refuses a time zone name longer than 64 characters before Intl reads it", () => {
    const e = errorOf(() => parseDueTime("tomorrow 9am", { now: NOW, timeZone: "A".repeat(5000) }));
    expect(e.field).toBe("timeZone");
  });
});

describe("parseDelay keeps its grammar", () => {
  it.each([
    ["in 10 minutes", 600_000],
    ["in 2h 30m", 9_000_000],
    ["in 2h, 30m", 9_000_000],
    ["in 2h , 30m", 9_000_000],
    ["in 1 day and 2 hours", 93_600_000],
    ["in 1 day, and 2 hours", null],
    ["IN 1.5 Days", 129_600_000],
    ["+90s", 90_000],
    ["+ 90s", 90_000],
    ["in 10minutes", 600_000],
    ["  in 1 w  ", 604_800_000],
    ["in 1 fortnight", null],
    ["in 2h,30m", null],
    ["in 2h and", null],
    ["in", null],
    ["in ", null],
    ["tomorrow", null],
    ["in 1 h x", null],
    [HOSTILE, null],
  ] as const)("%j -> %j", (text, ms) => {
    expect(parseDelay(text)).toBe(ms);
  });
});

describe("the library refuses out-of-range due times before writing", () => {
  let h: ReturnType<typeof makeHarness>;
  beforeEach(() => {
    h = makeHarness({ start: NOW });
  });
  afterEach(async () => {
    await h.close();
  });

  async function total(): Promise<number> {
    const c = await h.store.jobsCountByStatus({});
    return Object.values(c).reduce((a, b) => a + b, 0);
  }

  it("on schedule, scheduleMany, reschedule, retry and list", async () => {
    for (const dueAt of [...OVERFLOWS, HOSTILE]) {
      await expect(h.scheduler.schedule({ dueAt, target: "t", key: "k" })).rejects.toThrow(
        InvalidJobError,
      );
      await expect(
        h.scheduler.scheduleMany([
          { dueAt: "in 1 hour", target: "t" },
          { dueAt, target: "t" },
        ]),
      ).rejects.toThrow(/^jobs\[1\]\.dueAt: /);
      await expect(h.scheduler.list({ dueFrom: dueAt })).rejects.toThrow(/^dueFrom: /);
    }
    await expect(
      h.scheduler.schedule({ dueAt: "tomorrow 9am", target: "t", timeZone: "x".repeat(65) }),
    ).rejects.toThrow(/^timeZone: /);
    expect(await total()).toBe(0);
    // the key of a refused job is free
    const { job, created } = await h.scheduler.schedule({
      dueAt: "in 1 hour",
      target: "t",
      key: "k",
    });
    expect(created).toBe(true);
    for (const dueAt of [...OVERFLOWS, HOSTILE, MAX_INSTANT + 1]) {
      await expect(h.scheduler.reschedule(job.id, dueAt)).rejects.toThrow(/^dueAt: /);
      await expect(h.scheduler.retry(job.id, { dueAt })).rejects.toThrow(/^dueAt: /);
    }
    // a version no store can hold is bad input, not a query (PostgreSQL: a bigint error)
    await expect(
      h.scheduler.reschedule(job.id, "in 2 hours", { expectedVersion: 1e300 }),
    ).rejects.toThrow(/^expectedVersion: expected an integer from 0/);
    const after = await h.scheduler.get(job.id);
    expect(after?.dueAt).toBe(job.dueAt);
    expect(after?.version).toBe(job.version);
  });
});

describe("isoInstant", () => {
  it("shows every stored number without throwing", () => {
    expect(isoInstant(0)).toBe("1970-01-01T00:00:00.000Z");
    expect(isoInstant(MAX_INSTANT + 1)).toBe("+010000-01-01T00:00:00.000Z");
    expect(isoInstant(8.64e15 + 1)).toBe("invalid time (epoch ms 8640000000000001)");
    expect(isoInstant(Infinity)).toBe("invalid time (epoch ms Infinity)");
  });
});

describe("schedule bounds targetOptions like the payload", () => {
  it("refuses targetOptions over 128 KiB of JSON, naming the field", async () => {
    const h = makeHarness({ start: NOW });
    try {
      const big = { headers: { "x-big": "v".repeat(140_000) } };
      await expect(
        h.scheduler.schedule({ dueAt: "in 1 hour", target: "t", targetOptions: big }),
      ).rejects.toThrow(
        /^targetOptions: expected JSON of at most 131072 bytes, received 14\d{4} bytes$/,
      );
      const ok = await h.scheduler.schedule({
        dueAt: "in 1 hour",
        target: "t",
        targetOptions: { headers: { "x-small": "v" } },
      });
      expect(ok.job.targetOptions).toEqual({ headers: { "x-small": "v" } });
    } finally {
      await h.close();
    }
  });
});
