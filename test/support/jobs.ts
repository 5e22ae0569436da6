import { afterEach, beforeEach } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import type { NewJob } from "../../src/core/job.js";
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
