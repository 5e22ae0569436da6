import { expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { Job } from "../../src/core/job.js";
import { WheelDriver } from "../../src/engine/wheel-driver.js";

/**
 * WheelDriver.quietFor answers for the earliest held job, not for the wheel's next timer: a
 * job beyond level 0 (256 ms) sits in a coarser slot whose timer expires at the slot's start
 * only to cascade it down. Work that waited for that fire ran over the jobs' instant.
 */
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0); // a multiple of 256 ms

function job(id: string, dueAt: number): Job {
  return { id, dueAt } as unknown as Job;
}

function driver(clock: ManualClock, fired: string[]): WheelDriver {
  return new WheelDriver(clock, (jobs) => {
    for (const j of jobs) fired.push(`${j.id}@${clock.now() - T0}`);
  });
}

it("work asking 20 ms before a cascade, 36 ms before the jobs are due, starts at once", async () => {
  const clock = new ManualClock(T0);
  const fired: string[] = [];
  const wheel = driver(clock, fired);
  wheel.add([job("a", T0 + 10_000)]); // level-1 slot from 9984: its timer cascades at 9984
  await clock.advanceTo(T0 + 9964);
  // on the old code (next timer 9984 <= 9964 + 30): a wait for the cascade, then the work
  expect(wheel.quietFor(30)).toBeNull();
  expect(wheel.quietFor(36)).not.toBeNull();
});

it("a wait is not ended by a cascade, only by the fire that hands the jobs out", async () => {
  const clock = new ManualClock(T0);
  const fired: string[] = [];
  const wheel = driver(clock, fired);
  wheel.add([job("a", T0 + 10_000), job("b", T0 + 10_000)]);
  await clock.advanceTo(T0 + 9900);
  const log: string[] = [];
  const waiting = wheel.quietFor(200)!;
  expect(waiting).not.toBeNull();
  void waiting.then(() => log.push(`quiet@${clock.now() - T0}`));
  await clock.advanceTo(T0 + 9999); // the cascade at 9984 went by
  expect(log).toEqual([]); // on the old code: quiet@9984, 16 ms before the jobs' fire
  await clock.advanceTo(T0 + 10_000);
  expect(fired).toEqual(["a@10000", "b@10000"]);
  expect(log).toEqual(["quiet@10000"]);
});

it("a wait ends when the wheel is drained", async () => {
  const clock = new ManualClock(T0);
  const wheel = driver(clock, []);
  wheel.add([job("a", T0 + 5000)]);
  let over = false;
  void wheel.quietFor(10_000)!.then(() => (over = true));
  expect(wheel.drain().map((j) => j.id)).toEqual(["a"]);
  await clock.advance(0);
  expect(over).toBe(true);
  expect(wheel.quietFor(10_000)).toBeNull();
});

it("does not make work wait for the next fire while the wheel fires more often than it lasts", async () => {
  const clock = new ManualClock(T0);
  const fired: string[] = [];
  const dense = driver(clock, fired);
  // jobs due every 10 ms: after two fires the wheel is known to fire every 10 ms
  dense.add([0, 1, 2, 3, 4].map((i) => job(`d${i}`, T0 + 10 + 10 * i)));
  await clock.advanceTo(T0 + 20);
  expect(fired).toEqual(["d0@10", "d1@20"]);
  expect(dense.quietFor(32)).not.toBeNull(); // the fire at +30 is within 32 ms
  expect(dense.quietForUnlessDense(32)).toBeNull(); // but waiting for it buys nothing
  expect(dense.quietForUnlessDense(10)).not.toBeNull(); // work no longer than the gap still waits
  // a wheel that fired 1 s apart makes 32 ms of work wait for its next fire
  const sparse = driver(clock, fired);
  sparse.add([job("s0", T0 + 1020), job("s1", T0 + 2020), job("s2", T0 + 2040)]);
  await clock.advanceTo(T0 + 2020);
  expect(sparse.quietForUnlessDense(32)).not.toBeNull();
  dense.drain();
  sparse.drain();
});
