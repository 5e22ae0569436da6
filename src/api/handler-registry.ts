import { InvalidJobError } from "../core/errors.js";
import type { Handler } from "../engine/dispatcher.js";
import type { FairShare } from "../engine/fair-queue.js";

/**
 * The handlers registered on a Scheduler, checked as they are registered: one per target
 * name, and one for every other target (with how its jobs share slots). The engine reads
 * them when it dispatches, so a handler registered after `start` is used from then on.
 */
export class HandlerRegistry {
  readonly named = new Map<string, Handler>();
  private otherHandler: Handler | undefined;
  private otherShare: FairShare | undefined;

  add(name: string, handler: Handler): void {
    if (typeof name !== "string" || name === "") {
      throw new InvalidJobError("name", "a non-empty handler name", name);
    }
    if (typeof handler !== "function") throw new InvalidJobError("handler", "a function", handler);
    this.named.set(name, handler);
  }

  addOther(handler: Handler, share: FairShare | undefined): void {
    if (typeof handler !== "function") throw new InvalidJobError("handler", "a function", handler);
    if (share !== undefined) {
      if (typeof share.keyOf !== "function") {
        throw new InvalidJobError("fairShare.keyOf", "a function", share.keyOf);
      }
      if (!Number.isInteger(share.concurrency) || share.concurrency < 1) {
        throw new InvalidJobError(
          "fairShare.concurrency",
          "an integer of at least 1",
          share.concurrency,
        );
      }
    }
    this.otherHandler = handler;
    this.otherShare = share;
  }

  /** The handler of targets with no named one, if registered. */
  get other(): Handler | undefined {
    return this.otherHandler;
  }

  /** How the other handler's jobs share slots within a tenant, if given. */
  get fairShare(): FairShare | undefined {
    return this.otherShare;
  }
}
