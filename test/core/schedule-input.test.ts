import { describe, expect, it } from "vitest";
import { createIdGenerator, idTime, isJobId, shardOf } from "../../src/core/ids.js";
import {
  validateScheduleInput,
  validateScheduleInputs,
  type ScheduleContext,
} from "../../src/core/schedule-input.js";

const NOW = Date.UTC(2026, 2, 1, 10, 0, 0);
const ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const ctx: ScheduleContext = {
  now: NOW,
  newId: createIdGenerator(() => NOW),
  defaultTenant: "default",
  defaultMaxAttempts: 3,
  maxPayloadBytes: 65_536,
  maxPastMs: null,
};

describe("validateScheduleInput", () => {
  it("fills defaults and leaves placement to the store", () => {
    const j = validateScheduleInput({ dueAt: NOW + 90 * 60_000, target: "t" }, ctx);
    expect(j).toMatchObject({
      tenant: "default",
      key: null,
      dueAt: NOW + 90 * 60_000,
      payload: null,
      maxAttempts: 3,
      expireAfterMs: null,
    });
    expect(j).not.toHaveProperty("bucket");
    expect(j).not.toHaveProperty("shard");
    expect(isJobId(j.id)).toBe(true);
  });

  it.each([
    [{ target: "t" }, "dueAt: expected a due time (or delayMs), received undefined"],
    [{ delayMs: null, target: "t" }, "delayMs: expected an integer from 0 to"],
    [
      { dueAt: NOW, delayMs: 5, target: "t" },
      "delayMs: expected to be absent when dueAt is given, received 5",
    ],
    [
      { dueAt: NOW, target: "" },
      "target: expected a string of 1 to 2048 characters, received 0 characters",
    ],
    [{ dueAt: NOW, target: 7 }, "target: expected a string of 1 to 2048 characters, received 7"],
    [
      { dueAt: NOW, target: "t", maxAttempts: 0 },
      "maxAttempts: expected an integer from 1 to 1000, received 0",
    ],
    [
      { dueAt: NOW, target: "t", tenant: "a b" },
      `tenant: expected letters, digits, '_', '.' or '-', received "a b"`,
    ],
    [{ dueAt: NOW, target: "t", expireAfterMs: -1 }, /^expireAfterMs: expected an integer from 0/],
    [
      { dueAt: NOW, target: "t", targetOptions: [] },
      "targetOptions: expected an object, received an array of 0",
    ],
    [
      { dueAt: NOW, target: "t", extra: 1 },
      /^extra: expected no such field \(known fields: dueAt, /,
    ],
    ["soon", 'job: expected an object, received "soon"'],
  ])("rejects %j", (input, message) => {
    expect(() => validateScheduleInput(input, ctx)).toThrow(message);
  });

  it.each([
    [{ target: "t" }, "jobs[1].dueAt: expected a due time (or delayMs), received undefined"],
    [{ dueAt: "soonish", target: "t" }, /^jobs\[1\]\.dueAt: expected an ISO time with offset/],
    [{ dueAt: -1, target: "t" }, /^jobs\[1\]\.dueAt: expected an epoch-ms integer/],
    [
      { dueAt: "tomorrow 9am", timeZone: "Nowhere/Else", target: "t" },
      /^jobs\[1\]\.timeZone: expected an IANA time zone/,
    ],
    [{ delayMs: 1.5, target: "t" }, "jobs[1].delayMs: expected an integer from 0 to"],
    [{ dueAt: NOW, target: "" }, "jobs[1].target: expected a string of 1 to 2048 characters"],
    [{ dueAt: NOW, target: "t", payload: () => 1 }, "jobs[1].payload: expected a JSON value"],
    [{ dueAt: NOW, target: "t", tenant: "a b" }, "jobs[1].tenant: expected letters, digits"],
    [{ dueAt: NOW, target: "t", targetOptions: 3 }, "jobs[1].targetOptions: expected an object"],
    [{ dueAt: NOW, target: "t", extra: 1 }, /^jobs\[1\]\.extra: expected no such field/],
    ["soon", 'jobs[1]: expected an object, received "soon"'],
  ])("names the item of a list in errors: %j", (input, message) => {
    const list = [{ dueAt: NOW, target: "ok" }, input];
    expect(() => validateScheduleInputs(list, ctx, "jobs")).toThrow(message);
  });

  it("validates a list into the same jobs as one at a time", () => {
    const input = { delayMs: 5000, target: "t", key: "k", tenant: "acme", payload: { a: [1] } };
    const [a] = validateScheduleInputs([input], { ...ctx, newId: () => ID }, "jobs");
    expect(a).toEqual(validateScheduleInput(input, { ...ctx, newId: () => ID }));
  });

  it("rejects due times too far in the past when the caller sets a tolerance", () => {
    expect(() =>
      validateScheduleInput({ dueAt: NOW - 120_000, target: "t" }, { ...ctx, maxPastMs: 60_000 }),
    ).toThrow(
      'dueAt: expected a time no more than 60000 ms in the past, received "2026-03-01T09:58:00.000Z"',
    );
  });

  it("prefixes field names for items of a batch", () => {
    expect(() =>
      validateScheduleInput(
        { dueAt: NOW, target: "t", key: "" },
        { ...ctx, fieldPrefix: "jobs[4]." },
      ),
    ).toThrow(/^jobs\[4\]\.key: expected a string of 1 to 256 characters/);
  });
});

describe("ids", () => {
  it("are time-sortable and strictly increasing within one millisecond", () => {
    let t = NOW;
    const gen = createIdGenerator(() => t);
    const ids = Array.from({ length: 1000 }, (_, i) => {
      if (i % 100 === 0) t++;
      return gen();
    });
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    expect(idTime(ids[0]!)).toBe(NOW + 1);
    expect(idTime(ids[999]!)).toBe(NOW + 10);
  });

  it("carry an increment across digits and keep the ULID alphabet", () => {
    let t = NOW;
    const gen = createIdGenerator(() => t);
    // several pool refills (256 milliseconds each), each with a run of increments
    const ids: string[] = [];
    for (let ms = 0; ms < 600; ms++, t++) for (let i = 0; i < 40; i++) ids.push(gen());
    expect(ids.every(isJobId)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id, i) => idTime(id) === NOW + Math.floor(i / 40))).toBe(true);
  });

  it("hash to stable shards spread over the shard count", () => {
    const gen = createIdGenerator();
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[shardOf(gen(), 8)]++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(shardOf("01ARZ3NDEKTSV4RRFFQ69G5FAV", 8)).toBe(shardOf("01ARZ3NDEKTSV4RRFFQ69G5FAV", 8));
    expect(shardOf("01ARZ3NDEKTSV4RRFFQ69G5FAV", 1)).toBe(0);
  });
});
