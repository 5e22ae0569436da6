import type { Clock } from "../core/clock.js";
import { InvalidJobError, ScheduleNotFoundError, VersionConflictError } from "../core/errors.js";
import type { JobStatus, NewJob } from "../core/job.js";
import { MAX_PREVIEW, type Occurrence } from "../core/recurrence/index.js";
import type { ScheduleContext } from "../core/schedule-input.js";
import {
  newSeriesRecord,
  recurrenceOf,
  SCHEDULE_STATES,
  skipOccurrence,
  withNext,
  type Schedule,
  type ScheduleState,
} from "../core/series.js";
import { mergePatch, validateRecurringInput, type RecurringInput } from "../core/series-input.js";
import { assertTimeZone, parseDueTime } from "../core/time-input.js";
import { optionalInteger, optionalString, requireObject, requireString } from "../core/validate.js";
import type { ScheduleChangeResult, Store } from "../store/store.js";
import type { SchedulerOptions } from "../engine/options.js";

export type { RecurringInput } from "../core/series-input.js";
export type { Schedule, ScheduleState, MisfirePolicy } from "../core/series.js";

/** A series as the API answers it: the record and what its last occurrence did. */
export type ScheduleInfo = Schedule & {
  /** The last claimed occurrence's state (its job's status), or null before the first. */
  readonly lastOutcome: { readonly jobId: string; readonly status: JobStatus } | null;
};

export interface ScheduleRecurringResult {
  readonly schedule: ScheduleInfo;
  /** False when the idempotency key matched a stored series, returned instead. */
  readonly created: boolean;
}

export interface SchedulesPage {
  readonly schedules: ScheduleInfo[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/** Options of the calls that change one series. */
export interface ScheduleChangeOptions {
  readonly tenant?: string;
  /** Apply only while the series is at this version (If-Match). */
  readonly expectedVersion?: number;
}

/** What `previewOccurrences` takes: a stored series' id, or a rule and zone not yet stored. */
export interface PreviewInput {
  readonly scheduleId?: string;
  readonly cron?: string;
  readonly rrule?: string;
  /** Zone of a rule given here. Default: the scheduler's `timeZone`. */
  readonly timeZone?: string;
  readonly tenant?: string;
  /**
   * Occurrences strictly after this (epoch ms, Date or ISO time). Default: now, or for an
   * active stored series its pending occurrence (included), so a skipped one is not shown.
   */
  readonly from?: number | Date | string;
  /** How many, 1 to 100. Default 10. */
  readonly count?: number;
  readonly gap?: "skip" | "shift";
  readonly overlap?: "first" | "both";
}

/** Attempts at a change when a claim advanced the series under it (`moved`). */
const MAX_CHANGE_ATTEMPTS = 5;

/**
 * The operations of recurring series behind the Scheduler's methods: validation (one
 * validator, series-input.ts), the series' next occurrence computed here, and the store's
 * one-transaction writes (record and pending occurrence together).
 */
export class SeriesOperations {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly context: () => ScheduleContext,
    private readonly newId: () => string,
    /** Wakes the watcher for an occurrence due earlier than it knows. */
    private readonly wakeFor: (dueAt: number) => void,
    /** The scheduler's admission hook (the service's tenant quotas), as schedule() uses it. */
    private readonly admit?: SchedulerOptions["admit"],
  ) {}

  async create(input: RecurringInput): Promise<ScheduleRecurringResult> {
    const ctx = this.context();
    const def = validateRecurringInput(input, ctx);
    if (def.key !== null) {
      const held = await this.store.scheduleGetByKey({ tenant: def.tenant, key: def.key });
      if (held) return { schedule: await this.info(held), created: false };
    }
    // a series is one live job (its pending occurrence) and one create, for the quotas
    if (this.admit) await this.admit({ tenant: def.tenant, jobs: 1 });
    const now = ctx.now;
    const fresh = newSeriesRecord(def, now);
    const first = recurrenceOf(fresh).next(Math.max(now, (fresh.startAt ?? now) - 1));
    const { schedule, job } = withNext(fresh, first, this.newId, now);
    const r = await this.store.schedulesInsert({ schedule, job, now });
    if (r.created && job) this.wakeFor(job.dueAt);
    return { schedule: await this.info(r.schedule), created: r.created };
  }

  async get(id: string, opts: { tenant?: string } = {}): Promise<ScheduleInfo | null> {
    const s = await this.read(id, opts.tenant);
    return s ? this.info(s) : null;
  }

  async list(
    q: { tenant?: string; state?: ScheduleState; cursor?: string; limit?: number } = {},
  ): Promise<SchedulesPage> {
    requireObject(q, "query");
    const limit = optionalInteger(q.limit, "limit", 1, 1000) ?? 100;
    const state = q.state;
    if (state !== undefined && !SCHEDULE_STATES.includes(state)) {
      throw new InvalidJobError("state", `one of ${SCHEDULE_STATES.join(", ")}`, state);
    }
    const after = optionalString(q.cursor, "cursor", { max: 64 });
    const rows = await this.store.schedulesList({
      limit: limit + 1,
      ...(q.tenant === undefined ? {} : { tenant: q.tenant }),
      ...(state === undefined ? {} : { state }),
      ...(after === undefined ? {} : { afterId: after }),
    });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      schedules: await Promise.all(page.map((s) => this.info(s))),
      nextCursor: more ? page[page.length - 1]!.id : null,
    };
  }

  /** Changes the rule or template; the pending occurrence is replaced in the same write. */
  update(id: string, changes: unknown, opts: ScheduleChangeOptions = {}): Promise<ScheduleInfo> {
    return this.change(id, opts, (s, now) => {
      const ctx = this.context();
      const def = validateRecurringInput(mergePatch(s, changes), ctx);
      const next: Schedule = { ...s, ...def, id: s.id, version: s.version + 1, updatedAt: now };
      if (s.state !== "active") return { schedule: next, job: null };
      const ruleMoved =
        JSON.stringify([s.rule, s.timeZone, s.gap, s.overlap, s.startAt, s.endAt]) !==
        JSON.stringify([
          next.rule,
          next.timeZone,
          next.gap,
          next.overlap,
          next.startAt,
          next.endAt,
        ]);
      const occurrence: Occurrence | null =
        !ruleMoved && s.nextAt !== null && s.nextNominal !== null
          ? { at: s.nextAt, nominal: s.nextNominal, key: s.nextNominal, mapping: "exact" }
          : recurrenceOf(next).next(now);
      return withNext(next, occurrence, this.newId, now);
    });
  }

  /** Pauses: the pending occurrence is cancelled; nothing fires until resume. */
  pause(id: string, opts: ScheduleChangeOptions = {}): Promise<ScheduleInfo> {
    return this.change(id, opts, (s, now) => {
      if (s.state !== "active") return null;
      return {
        schedule: {
          ...s,
          state: "paused",
          version: s.version + 1,
          nextJobId: null,
          nextAt: null,
          nextNominal: null,
          updatedAt: now,
        },
        job: null,
      };
    });
  }

  /**
   * Resumes from the first occurrence after now (those due while paused are not fired). The
   * occurrence it writes is a new live job, held to the admission hook (the tenant quotas) as
   * a create is: a paused series holds none.
   */
  resume(id: string, opts: ScheduleChangeOptions = {}): Promise<ScheduleInfo> {
    const plan = (s: Schedule, now: number) => {
      if (s.state !== "paused") return null;
      const bumped = { ...s, version: s.version + 1, catchUpFired: 0 };
      const done = s.count !== null && s.firedCount >= s.count;
      return withNext(bumped, done ? null : recurrenceOf(s).next(now), this.newId, now);
    };
    return this.change(id, opts, plan, { admitsJob: true });
  }

  /** Skips the pending occurrence: it is cancelled and the one after it written. */
  skipNext(id: string, opts: ScheduleChangeOptions = {}): Promise<ScheduleInfo> {
    return this.change(id, opts, (s, now) => {
      if (s.state !== "active" || s.nextAt === null) return null;
      return skipOccurrence(s, now, this.newId);
    });
  }

  /** Deletes the series; its pending occurrence is cancelled. */
  async delete(id: string, opts: ScheduleChangeOptions = {}): Promise<ScheduleInfo> {
    requireString(id, "id", { max: 64 });
    const r = await this.store.scheduleDelete({
      id,
      now: this.clock.now(),
      ...changeFilter(opts),
    });
    return this.info(resultSchedule(r, id, opts));
  }

  /** The next occurrences of a stored series or of a rule not yet stored. */
  async preview(input: PreviewInput): Promise<Occurrence[]> {
    requireObject(input, "preview");
    const p = input;
    const now = this.clock.now();
    const count = optionalInteger(p.count, "count", 1, MAX_PREVIEW) ?? 10;
    let spec: Pick<Schedule, "rule" | "timeZone" | "gap" | "overlap" | "startAt" | "endAt">;
    let zone: string;
    // Without `from`, a stored series' preview starts at its pending occurrence: one skipped
    // (skipNextOccurrence) is not shown as coming, and the first shown is the one that fires.
    let defaultFrom = now;
    if (p.scheduleId !== undefined) {
      const id = requireString(p.scheduleId, "scheduleId", { max: 64 });
      const s = await this.read(id, p.tenant);
      if (!s) throw new ScheduleNotFoundError(id);
      spec = s;
      zone = s.timeZone;
      if (s.state === "active" && s.nextAt !== null) defaultFrom = s.nextAt - 1;
    } else {
      const def = validateRecurringInput(
        {
          target: "preview",
          ...(p.cron === undefined ? {} : { cron: p.cron }),
          ...(p.rrule === undefined ? {} : { rrule: p.rrule }),
          ...(p.timeZone === undefined ? {} : { timeZone: p.timeZone }),
          ...(p.gap === undefined ? {} : { gap: p.gap }),
          ...(p.overlap === undefined ? {} : { overlap: p.overlap }),
        },
        this.context(),
      );
      spec = def;
      zone = def.timeZone;
    }
    if (p.timeZone !== undefined) assertTimeZone(p.timeZone, "timeZone");
    const from =
      p.from === undefined
        ? defaultFrom
        : parseDueTime(p.from, { now, field: "from", timeZone: zone });
    return recurrenceOf(spec).preview(from, count);
  }

  private async read(id: string, tenant: string | undefined): Promise<Schedule | null> {
    requireString(id, "id", { max: 64 });
    return this.store.scheduleGet({ id, ...(tenant === undefined ? {} : { tenant }) });
  }

  /**
   * Read, compute, write with the pending occurrence the read saw: a claim that advanced the
   * series meanwhile (`moved`) makes it read and compute again. `plan` null: nothing to do.
   */
  private async change(
    id: string,
    opts: ScheduleChangeOptions,
    plan: (s: Schedule, now: number) => { schedule: Schedule; job: NewJob | null } | null,
    /** The planned job is a new live one (not a replacement): ask the admission hook first. */
    { admitsJob = false }: { admitsJob?: boolean } = {},
  ): Promise<ScheduleInfo> {
    if (opts.expectedVersion !== undefined) {
      optionalInteger(opts.expectedVersion, "expectedVersion", 0, Number.MAX_SAFE_INTEGER);
    }
    for (let attempt = 1; ; attempt++) {
      const s = await this.read(id, opts.tenant);
      if (!s) throw new ScheduleNotFoundError(id);
      if (opts.expectedVersion !== undefined && s.version !== opts.expectedVersion) {
        throw new VersionConflictError(id, opts.expectedVersion, s.version);
      }
      const now = this.clock.now();
      const planned = plan(s, now);
      if (planned === null) return this.info(s);
      if (admitsJob && planned.job && this.admit) {
        await this.admit({ tenant: planned.job.tenant, jobs: 1 });
      }
      const r = await this.store.scheduleReplace({
        id,
        expectedNextJobId: s.nextJobId,
        schedule: planned.schedule,
        job: planned.job,
        now,
        ...changeFilter(opts),
      });
      if (r.outcome === "moved" && attempt < MAX_CHANGE_ATTEMPTS) continue;
      const changed = resultSchedule(r, id, opts);
      if (planned.job) this.wakeFor(planned.job.dueAt);
      return this.info(changed);
    }
  }

  /**
   * The series as its surfaces show it: the last occurrence's outcome, and `nextAt` the
   * pending occurrence's due time as its job has it. The record keeps the occurrence's rule
   * time (the claim steps the rule from it); a reschedule of the occurrence by its job id
   * moves only the job, and the view shows when it will fire.
   */
  private async info(s: Schedule): Promise<ScheduleInfo> {
    const [last, next] = await Promise.all([
      s.lastJobId === null ? null : this.store.jobGet({ id: s.lastJobId }),
      s.nextJobId === null ? null : this.store.jobGet({ id: s.nextJobId }),
    ]);
    const nextAt = next?.status === "pending" ? next.dueAt : s.nextAt;
    return { ...s, nextAt, lastOutcome: last ? { jobId: last.id, status: last.status } : null };
  }
}

function changeFilter(opts: ScheduleChangeOptions): { tenant?: string; expectedVersion?: number } {
  return {
    ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
    ...(opts.expectedVersion === undefined ? {} : { expectedVersion: opts.expectedVersion }),
  };
}

function resultSchedule(
  r: ScheduleChangeResult,
  id: string,
  opts: ScheduleChangeOptions,
): Schedule {
  switch (r.outcome) {
    case "not-found":
      throw new ScheduleNotFoundError(id);
    case "version-conflict":
      throw new VersionConflictError(id, opts.expectedVersion ?? 0, r.schedule.version);
    case "moved":
      throw new Error(`changing schedule ${id}: its occurrences kept moving under the change`);
    default:
      return r.schedule;
  }
}
