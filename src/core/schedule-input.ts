import { bucketOf } from "./buckets.js";
import { InvalidJobError } from "./errors.js";
import type { JsonValue, NewJob } from "./job.js";
import { shardOf } from "./ids.js";
import { parseDueTime } from "./time-input.js";
import {
  optionalInteger,
  optionalString,
  rejectUnknownFields,
  requireJsonPayload,
  requireObject,
  requireString,
} from "./validate.js";

/** What a caller passes to schedule one job. */
export interface ScheduleInput {
  /**
   * When to fire: epoch ms, a Date, an ISO time with offset, a delay ("in 10 minutes") or
   * natural language ("tomorrow 9am", read in `timeZone`). Exactly one of `dueAt`/`delayMs`.
   */
  readonly dueAt?: number | Date | string;
  /** Fire this many ms from now. */
  readonly delayMs?: number;
  /** IANA time zone for natural-language `dueAt`. Default UTC. */
  readonly timeZone?: string;
  /** Handler name (library) or webhook URL (service). */
  readonly target: string;
  /** Target options such as webhook headers. */
  readonly targetOptions?: Record<string, unknown> | null;
  /** JSON payload handed to the target. Default null. */
  readonly payload?: JsonValue;
  /** Idempotency key: scheduling the same key again returns the live job that has it. */
  readonly key?: string | null;
  /** Tenant owning the job. Default: the scheduler's default tenant. */
  readonly tenant?: string;
  /** Attempts before the job is dead. Default: the scheduler's `maxAttempts`. */
  readonly maxAttempts?: number;
  /** Misfire tolerance in ms: if claimed later than this after dueAt it is expired, not fired. */
  readonly expireAfterMs?: number | null;
}

export const SCHEDULE_INPUT_FIELDS = [
  "dueAt",
  "delayMs",
  "timeZone",
  "target",
  "targetOptions",
  "payload",
  "key",
  "tenant",
  "maxAttempts",
  "expireAfterMs",
] as const;

export interface ScheduleContext {
  readonly now: number;
  readonly newId: () => string;
  readonly bucketWidthMs: number;
  readonly shardCount: number;
  readonly defaultTenant: string;
  readonly defaultMaxAttempts: number;
  readonly maxPayloadBytes: number;
  /** How far in the past a due time may be (ms), or null for no limit. */
  readonly maxPastMs: number | null;
  /** Prefix for field names in errors ("jobs[3]."); the third argument overrides it. */
  readonly fieldPrefix?: string;
}

const TENANT_RULE = {
  max: 64,
  pattern: /^[A-Za-z0-9_.-]+$/,
  patternText: "letters, digits, '_', '.' or '-'",
};
const MAX_DELAY_MS = 100 * 365 * 86_400_000;

/** Validates one schedule input into a NewJob. Throws InvalidJobError on the first bad field. */
export function validateScheduleInput(
  raw: unknown,
  ctx: ScheduleContext,
  fieldPrefix: string = ctx.fieldPrefix ?? "",
): NewJob {
  const p = fieldPrefix;
  const input = requireObject(raw, p === "" ? "job" : p.replace(/\.$/, ""));
  rejectUnknownFields(input, SCHEDULE_INPUT_FIELDS, p);

  let dueAt: number;
  if (input.dueAt !== undefined && input.delayMs !== undefined) {
    throw new InvalidJobError(`${p}delayMs`, "to be absent when dueAt is given", input.delayMs);
  }
  if (input.delayMs !== undefined) {
    dueAt = ctx.now + optionalInteger(input.delayMs, `${p}delayMs`, 0, MAX_DELAY_MS)!;
  } else if (input.dueAt !== undefined) {
    const timeZone = optionalString(input.timeZone, `${p}timeZone`, { max: 64 });
    dueAt = parseDueTime(input.dueAt, {
      now: ctx.now,
      field: `${p}dueAt`,
      timeZoneField: `${p}timeZone`,
      ...(timeZone === undefined ? {} : { timeZone }),
    });
  } else {
    throw new InvalidJobError(`${p}dueAt`, "a due time (or delayMs)", undefined);
  }
  if (ctx.maxPastMs !== null && dueAt < ctx.now - ctx.maxPastMs) {
    throw new InvalidJobError(
      `${p}dueAt`,
      `a time no more than ${ctx.maxPastMs} ms in the past`,
      new Date(dueAt).toISOString(),
    );
  }

  const target = requireString(input.target, `${p}target`, { max: 2048 });
  let targetOptions: Record<string, unknown> | null = null;
  if (input.targetOptions !== undefined && input.targetOptions !== null) {
    targetOptions = requireObject(input.targetOptions, `${p}targetOptions`);
  }
  const payload =
    input.payload === undefined
      ? { value: null, json: "null" }
      : requireJsonPayload(input.payload, `${p}payload`, ctx.maxPayloadBytes);
  const key = optionalString(input.key, `${p}key`, { max: 256 }) ?? null;
  const tenant = optionalString(input.tenant, `${p}tenant`, TENANT_RULE) ?? ctx.defaultTenant;
  const maxAttempts =
    optionalInteger(input.maxAttempts, `${p}maxAttempts`, 1, 1000) ?? ctx.defaultMaxAttempts;
  const expireAfterMs =
    optionalInteger(input.expireAfterMs, `${p}expireAfterMs`, 0, MAX_DELAY_MS) ?? null;

  const id = ctx.newId();
  return {
    id,
    tenant,
    key,
    dueAt,
    bucket: bucketOf(dueAt, ctx.bucketWidthMs),
    shard: shardOf(id, ctx.shardCount),
    payload: payload.value,
    payloadJson: payload.json,
    target,
    targetOptions,
    maxAttempts,
    expireAfterMs,
  };
}

export function validateTenant(value: unknown, field = "tenant"): string {
  return requireString(value, field, TENANT_RULE);
}
