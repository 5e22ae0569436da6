import { afterEach, beforeEach, expect } from "vitest";
import type { Scheduler } from "../../src/api/scheduler.js";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
import type { PauseStore } from "../../src/store/pause-store.js";
import type { Store } from "../../src/store/store.js";

/** Builds valid NewJobs with ids made from `idTime` on (the store places them). */
export function jobMaker(idTime: number) {
  let t = idTime;
  const newId = createIdGenerator(() => t++);
  return (dueAt: number, over: Partial<NewJob> = {}): NewJob => {
    return {
      id: over.id ?? newId(),
      tenant: "default",
      key: null,
      dueAt,
      payload: null,
      target: "t",
      targetOptions: null,
      maxAttempts: 3,
      expireAfterMs: null,
      ...over,
    };
  };
}

/**
 * A fresh store from `makeStore` for every test of the calling `describe`, closed after it:
 * read `.store` inside the tests.
 */
export function freshStorePerTest(makeStore: () => Promise<Store>): { readonly store: Store } {
  let store: Store | undefined;
  beforeEach(async () => {
    store = await makeStore();
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  return {
    get store(): Store {
      if (!store) throw new Error("the store is made per test: read it inside a test");
      return store;
    },
  };
}

/**
 * freshStorePerTest for a store's pauses: every test of the calling `describe` is skipped
 * where the store has no `pauses` member (its capability is undeclared).
 */
export function pausingStorePerTest(makeStore: () => Promise<Store>): {
  readonly store: Store;
  readonly pauses: PauseStore;
} {
  const fresh = freshStorePerTest(makeStore);
  beforeEach((ctx) => {
    if (!fresh.store.pauses) ctx.skip();
  });
  return {
    get store(): Store {
      return fresh.store;
    },
    get pauses(): PauseStore {
      const pauses = fresh.store.pauses;
      if (!pauses) throw new Error(`store ${fresh.store.kind} has no pauses`);
      return pauses;
    },
  };
}

/**
 * A job left claimed by a node that stopped without recording it: it stays claimed until its
 * lease runs out (a sweep a millisecond before puts nothing back), and a sweep at the expiry
 * makes it pending again. Resolves to the job as it was found, still claimed.
 */
export async function expectHeldUntilLease(store: Store, id: string) {
  const row = await store.jobGet({ id });
  expect(row?.status).toBe("claimed");
  const expiry = row!.leaseExpiresAt!;
  expect(await store.leasesExpire({ now: expiry - 1, limit: 10 })).toEqual({
    requeued: 0,
    dead: 0,
    nextExpiresAt: expiry,
  });
  expect(await store.leasesExpire({ now: expiry, limit: 10 })).toEqual({
    requeued: 1,
    dead: 0,
    nextExpiresAt: null,
  });
  expect((await store.jobGet({ id }))?.status).toBe("pending");
  return row!;
}

/**
 * Registers a handler for `target` that holds each job until `finish()` is called:
 * `started` resolves when the first job has begun, so a test can act while it runs.
 */
export function gatedHandler(scheduler: Scheduler, target = "t") {
  let finish: () => void = () => undefined;
  const gate = new Promise<void>((r) => (finish = r));
  const started = new Promise<void>((resolve) =>
    scheduler.handle(target, async () => {
      resolve();
      await gate;
      return "done";
    }),
  );
  return { started, finish: () => finish() };
}
