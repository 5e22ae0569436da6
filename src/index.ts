/**
 * duetime: a durable scheduler for millions of future one-shot jobs.
 *
 *   import { createScheduler } from "duetime";
 *   const scheduler = await createScheduler({ db: "jobs.db" });
 */
export { Scheduler } from "./api/scheduler.js";
export { jobView, outcomeView } from "./api/job-view.js";
export type { JobView, OutcomeView } from "./api/job-view.js";
export type {
  ScheduleResult,
  ListPage,
  SchedulerStats,
  ClockStats,
  SchedulerEvents,
  JobChange,
  MisfirePolicy,
  Occurrence,
  PreviewInput,
  RecurringInput,
  Schedule,
  ScheduleChangeOptions,
  ScheduleInfo,
  ScheduleRecurringResult,
  ScheduleState,
  SchedulesPage,
  Operation,
  OperationFilter,
  OperationInput,
  OperationKind,
  OperationParams,
  OperationState,
  OperationsPage,
  OperationsQuery,
  StartedOperation,
  StartOperationOptions,
} from "./api/scheduler.js";
export type { CountQuery, ListQuery } from "./api/list-query.js";
export type { LatenessSummary } from "./api/lateness.js";
export { ActivityRecorder } from "./api/activity.js";
export type { MinuteActivity } from "./api/activity.js";
export type { SchedulerOptions } from "./engine/options.js";
export type { Handler, HandlerContext } from "./engine/dispatcher.js";
export type { FairShare } from "./engine/fair-queue.js";
export type { Logger } from "./engine/logger.js";
export type { ClockJump, ClockJumpSummary } from "./engine/clock-jumps.js";
export type { ClockSkewReading } from "./engine/clock-skew.js";
export {
  InfrastructureError,
  PermanentJobError,
  RetryLaterError,
} from "./engine/handler-errors.js";
export { TimingWheel } from "./engine/timing-wheel.js";
export type { ScheduleInput } from "./core/schedule-input.js";
export { validateScheduleInput } from "./core/schedule-input.js";
export { parseDueTime } from "./core/time-input.js";
export type {
  Job,
  JobStateInfo,
  JobStatus,
  JobTransition,
  JsonValue,
  KeyMode,
  NewJob,
} from "./core/job.js";
export {
  JOB_STATES,
  JOB_STATUSES,
  JOB_TRANSITIONS,
  LIVE_STATUSES,
  FINISHED_STATUSES,
  KEY_MODES,
} from "./core/job.js";
export { ManualClock, systemClock } from "./core/clock.js";
export { CHANGE_KINDS } from "./core/change.js";
export {
  ON_RESUME_POLICIES,
  PAUSE_STATES,
  PauseNotFoundError,
  parsePauseInput,
  type OnResume,
  type Pause,
  type PauseInput,
  type PauseScope,
  type PauseState,
} from "./core/pause.js";
export type { PauseCallOptions } from "./api/pauses.js";
export type { PauseStore } from "./store/pause-store.js";
export type { ChangeKind, ChangePosition, ChangesPage, StoredChange } from "./core/change.js";
export type { Clock, ManualClockOptions, TimerHandle } from "./core/clock.js";
export type { BucketGranularity } from "./core/buckets.js";
export {
  ChangeCursorExpiredError,
  DuetimeError,
  InvalidJobError,
  InvalidOptionError,
  JobNotFoundError,
  JobNotPendingError,
  QuotaExceededError,
  ScheduleNotFoundError,
  OperationKeyConflictError,
  OperationNotFoundError,
  SettingMismatchError,
  StorageFullError,
  OutcomesNotRecordedError,
  VersionConflictError,
  storageFullIn,
} from "./core/errors.js";
export type * from "./store/store.js";
export { SqliteStore } from "./stores/sqlite/sqlite-store.js";
export type { SqliteStoreOptions } from "./stores/sqlite/sqlite-store.js";
export { PostgresStore } from "./stores/postgres/postgres-store.js";
export type { PostgresStoreOptions } from "./stores/postgres/options.js";
export { ShardLeases } from "./stores/postgres/shard-leases.js";
export type { ShardLeasesOptions, HeartbeatResult } from "./stores/postgres/shard-leases.js";
export type { PostgresContext } from "./stores/postgres/context.js";
export { PartitionMaintenance } from "./stores/postgres/partition-maintenance.js";
export type {
  PartitionMaintenanceOptions,
  MaintenanceResult,
} from "./stores/postgres/partition-maintenance.js";
export { openStore } from "./stores/open-store.js";
export type { OpenStoreOptions } from "./stores/open-store.js";
export { createScheduler } from "./create-scheduler.js";
export type { CreateSchedulerOptions } from "./create-scheduler.js";
