/**
 * `duetime/client`: a typed client of the duetime HTTP API (docs/client.md). Its types are
 * generated from the server's OpenAPI document.
 */
export {
  createClient,
  DuetimeClient,
  type BatchCreated,
  type CallInput,
  type ClientOptions,
  type Job,
  type JobCreated,
  type JobInput,
  type JobOutcome,
  type JobPage,
  type ListJobsQuery,
  type ListSchedulesQuery,
  type NextOccurrencesQuery,
  type OccurrencePage,
  type ListPausesQuery,
  type Pause,
  type PauseInput,
  type PauseResumed,
  type PreviewInput,
  type Schedule,
  type ScheduleCreated,
  type ScheduleInput,
  type SchedulePage,
  type SchedulePatch,
  type RescheduleInput,
  type Stats,
  type StatsQuery,
} from "./client.js";
export { DuetimeApiError, DuetimeConnectionError, DuetimeResponseError } from "./errors.js";
export type { components, operations, paths } from "./api-types.js";
