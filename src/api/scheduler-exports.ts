/**
 * The types the Scheduler's methods take and answer, re-exported by src/api/scheduler.ts
 * (adapters import them from there, beside the Scheduler).
 */
export type { JobChange, SchedulerEvents } from "./scheduler-events.js";
export type { ChangesQuery } from "./change-feed.js";
export type { ChangesPage, ChangeKind, StoredChange } from "../core/change.js";
export type {
  MisfirePolicy,
  PreviewInput,
  RecurringInput,
  Schedule,
  ScheduleChangeOptions,
  ScheduleInfo,
  ScheduleRecurringResult,
  ScheduleState,
  SchedulesPage,
} from "./series.js";
export type { Occurrence } from "../core/recurrence/index.js";
export type {
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
} from "./operations.js";
export type { BucketCount, CancelResult, InsertOutcome, RescheduleResult } from "../store/store.js";
export type {
  ClockStats,
  DueTime,
  ListPage,
  MoveOptions,
  PastTimePolicy,
  ScheduleManyOptions,
  ScheduleResult,
  SchedulerStats,
  StoreInfo,
} from "./scheduler-types.js";
