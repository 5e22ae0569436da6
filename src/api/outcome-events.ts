import type { EventEmitter } from "node:events";
import type { Clock } from "../core/clock.js";
import type { Job, JobStatus } from "../core/job.js";
import type { DispatchOutcome } from "../engine/dispatcher.js";
import type { Logger } from "../engine/logger.js";
import type { ActivityRecorder } from "./activity.js";
import type { LatenessRecorder } from "./lateness.js";
import type { JobChange, SchedulerEvents } from "./scheduler-events.js";

/** What the mapping needs of the Scheduler: its clock, logger and recorders. */
export interface OutcomeEventsDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly lateness: LatenessRecorder;
  readonly activity: ActivityRecorder;
}

/**
 * The Scheduler's events from what happened to a job: the engine's dispatch outcomes become
 * `succeeded` (and its `fired` alias), `failed`, `deferred`, `dead` and `expired`, each with
 * its `changed` entry; the API's own writes report theirs through `changed`. An outcome whose
 * claim was lost was not recorded: it is logged, and no event says otherwise.
 */
export class OutcomeEvents {
  constructor(
    private readonly emitter: EventEmitter<SchedulerEvents>,
    private readonly deps: OutcomeEventsDeps,
  ) {}

  /** One `changed` entry (nothing built when nobody listens). */
  changed(kind: JobChange["kind"], job: Job, status: JobStatus = job.status): void {
    if (this.emitter.listenerCount("changed") === 0) return;
    this.emitter.emit("changed", {
      kind,
      id: job.id,
      tenant: job.tenant,
      status,
      dueAt: job.dueAt,
      at: this.deps.clock.now(),
    });
  }

  /** Records a dispatch outcome's lateness and activity and emits its events. */
  report(o: DispatchOutcome): void {
    const { lateness, activity, logger, clock } = this.deps;
    if (o.kind === "succeeded" || o.kind === "failed" || o.kind === "dead") {
      lateness.record(o.latenessMs);
    }
    if (!o.applied) {
      logger.warn(
        { id: o.job.id, kind: o.kind },
        "outcome not recorded: the claim was lost (lease expired)",
      );
      return;
    }
    activity.record({ kind: o.kind, tenant: o.job.tenant, at: clock.now() }, o.latenessMs);
    this.emitOutcome(o);
  }

  private emitOutcome(o: DispatchOutcome): void {
    const { job, latenessMs } = o;
    switch (o.kind) {
      case "succeeded": {
        const done = { job, latenessMs, result: o.result };
        this.emitter.emit("succeeded", done);
        // The deprecated alias, emitted beside it until the next release (see SchedulerEvents).
        this.emitter.emit("fired", done);
        this.changed("succeeded", job, "succeeded");
        break;
      }
      case "failed":
        this.emitter.emit("failed", { job, latenessMs, error: o.error, retryAt: o.retryAt });
        this.changed("failed", { ...job, dueAt: o.retryAt }, "pending");
        break;
      case "deferred":
        this.emitter.emit("deferred", { job, latenessMs, error: o.error, retryAt: o.retryAt });
        this.changed("deferred", { ...job, dueAt: o.retryAt }, "pending");
        break;
      case "dead":
        this.emitter.emit("dead", { job, latenessMs, error: o.error });
        this.changed("dead", job, "dead");
        break;
      case "expired":
        this.emitter.emit("expired", { job, latenessMs });
        this.changed("expired", job, "expired");
        break;
    }
  }
}
