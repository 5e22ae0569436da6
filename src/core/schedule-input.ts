import { InvalidJobError, InvalidJobsError, type InvalidItem } from "./errors.js";
import { KEY_MODES, type JsonValue, type KeyMode, type NewJob } from "./job.js";
import { MAX_DELAY_MS, resolveDueTime } from "./due-time.js";
import { optionalTags } from "./tags.js";
import {
  isObject,
  optionalInteger,
  optionalOneOf,
  optionalString,
  prefixText,
  rejectUnknownFields,
  requireJsonPayload,
  requireObject,
  requireString,
  type FieldPrefix,
  type StringRule,
  TARGET_RULE,
} from "./validate.js";
import { optionalCallbacks, type JobCallbacks } from "./callbacks.js";

/** What a caller passes to schedule one job. */
export interface ScheduleInput {
  /**
   * When to fire: epoch ms, a Date, an ISO time with offset, a delay ("in 10 minutes") or
   * natural language ("tomorrow 9am", read in `timeZone`). Exactly one of `dueAt`/`delayMs`.
   */
  readonly dueAt?: number | Date | string;
  /** Fire this many ms from now. */
  readonly delayMs?: number;
  /**
   * IANA time zone a wall time ("2026-12-03T10:00:00") or natural language in `dueAt` is read
   * in. Default: the scheduler's `timeZone` (UTC unless set).
   */
  readonly timeZone?: string;
  /** Language of natural-language `dueAt` ("fr": "demain à 9h"). Default English. */
  readonly locale?: string;
  /** Handler name (library) or webhook URL (service). */
  readonly target: string;
  /** Target options such as webhook headers. */
  readonly targetOptions?: Record<string, unknown> | null;
  /** JSON payload handed to the target. Default null. */
  readonly payload?: JsonValue;
  /** Idempotency key: what scheduling it again does while a live job holds it is `keyMode`'s. */
  readonly key?: string | null;
  /**
   * `keep` (default: the live job comes back), `replace` (the pending holder takes this
   * job's due time, payload and options) or `debounce` (as replace, bounded by `maxWaitMs`).
   * Needs `key`.
   */
  readonly keyMode?: KeyMode;
  /**
   * `debounce` only: the job fires at most this many ms after the first call that scheduled
   * it, however often it is pushed back. Default: no bound.
   */
  readonly maxWaitMs?: number | null;
  /** Tenant owning the job. Default: the scheduler's default tenant. */
  readonly tenant?: string;
  /** Attempts before the job is dead. Default: the scheduler's `maxAttempts`. */
  readonly maxAttempts?: number;
  /** Misfire tolerance in ms: if claimed later than this after dueAt it is expired, not fired. */
  readonly expireAfterMs?: number | null;
  /**
   * Labels to find and act on the job by (`user:42`): at most 16, each 1 to 64 printable
   * characters without spaces, none repeated. Default none.
   */
  readonly tags?: readonly string[] | null;
  /**
   * Webhook URLs called when an attempt settles (src/core/callbacks.ts): `onSuccess`,
   * `onFailure` (an attempt failed, another follows), `onDead`. Each is delivered as a signed
   * webhook job written with the outcome. Default none.
   */
  readonly callbacks?: JobCallbacks | null;
}

export const SCHEDULE_INPUT_FIELDS = [
  "dueAt",
  "delayMs",
  "timeZone",
  "locale",
  "target",
  "targetOptions",
  "payload",
  "key",
  "keyMode",
  "maxWaitMs",
  "tenant",
  "maxAttempts",
  "expireAfterMs",
  "tags",
  "callbacks",
] as const;

export interface ScheduleContext {
  readonly now: number;
  readonly newId: () => string;
  readonly defaultTenant: string;
  readonly defaultMaxAttempts: number;
  readonly maxPayloadBytes: number;
  /** How far in the past a due time may be (ms), or null for no limit. */
  readonly maxPastMs: number | null;
  /** Zone for wall times and natural language when the input names none. Default UTC. */
  readonly defaultTimeZone?: string;
  /** Prefix for field names in errors ("jobs[3]."); the third argument overrides it. */
  readonly fieldPrefix?: string;
}

const TENANT_RULE: StringRule = {
  max: 64,
  pattern: /^[A-Za-z0-9_.-]+$/,
  patternText: "letters, digits, '_', '.' or '-'",
};
export { TARGET_RULE };
/**
 * Largest `targetOptions`, in bytes of JSON. Above what the service's webhook headers can
 * reach (20 headers of 128 + 4096 characters); it bounds what a library caller stores.
 */
export const MAX_TARGET_OPTIONS_BYTES = 131_072;
/** Longest idempotency key, in characters. */
export const MAX_KEY_LENGTH = 256;
const KEY_RULE: StringRule = { max: MAX_KEY_LENGTH };

/**
 * The one reader of an idempotency key, a job's (a series' is its template's) and a bulk
 * operation's: text of 1 to MAX_KEY_LENGTH characters, or null when absent.
 */
export function optionalKey(raw: unknown, prefix: FieldPrefix = ""): string | null {
  return optionalString(raw, "key", KEY_RULE, prefix) ?? null;
}

const NULL_PAYLOAD = Object.freeze({ value: null, json: "null" });

/** Validates one schedule input into a NewJob. Throws InvalidJobError on the first bad field. */
export function validateScheduleInput(
  raw: unknown,
  ctx: ScheduleContext,
  fieldPrefix: string = ctx.fieldPrefix ?? "",
): NewJob {
  return validate(raw, ctx, fieldPrefix);
}

/**
 * Turns one raw list item into a ScheduleInput before it is validated (the HTTP service maps
 * its own body shape here); `prefix` is the item's field prefix (`jobs[3].`) for its errors.
 */
export type PrepareItem = (raw: unknown, prefix: string) => ScheduleInput;

/**
 * Validates a list of inputs, all before any is stored. Every bad item is reported at once:
 * an InvalidJobsError lists each item's error, each naming the item and field
 * (`jobs[3].dueAt`), a name built only when there is an error.
 */
export function validateScheduleInputs(
  raws: readonly unknown[],
  ctx: ScheduleContext,
  listField: string,
  prepare?: PrepareItem,
): NewJob[] {
  const jobs: NewJob[] = [];
  let bad: InvalidItem[] | undefined;
  let i = 0;
  // one prefix function for the whole list: it is only called while item i is validated
  const prefix = (): string => `${listField}[${i}].`;
  for (; i < raws.length; i++) {
    try {
      const raw = prepare ? prepare(raws[i], prefix()) : raws[i];
      jobs.push(validate(raw, ctx, prefix));
    } catch (err) {
      if (!(err instanceof InvalidJobError)) throw err;
      (bad ??= []).push({ index: i, error: err });
    }
  }
  if (bad) throw new InvalidJobsError(bad, raws.length);
  return jobs;
}

/**
 * The field checks of both entry points. They run on every job of the bulk path, where this
 * was measured: each check builds nothing for a valid value (field names come from `prefix`
 * only for an error), and an epoch-ms `dueAt` skips the parser's options object.
 */
function validate(raw: unknown, ctx: ScheduleContext, prefix: FieldPrefix): NewJob {
  const input = isObject(raw) ? raw : requireObject(raw, objectName(prefixText(prefix)));
  rejectUnknownFields(input, SCHEDULE_INPUT_FIELDS, prefix);

  const dueAt = resolveDueTime(input, ctx, prefix);

  const target = requireString(input.target, "target", TARGET_RULE, prefix);
  let targetOptions: Record<string, unknown> | null = null;
  if (input.targetOptions !== undefined && input.targetOptions !== null) {
    requireObject(input.targetOptions, "targetOptions", prefix);
    // bounded like the payload: it is stored with the job and read on every delivery
    const json = requireJsonPayload(
      input.targetOptions,
      "targetOptions",
      MAX_TARGET_OPTIONS_BYTES,
      prefix,
    );
    targetOptions = json.value as Record<string, unknown>;
  }
  const payload =
    input.payload === undefined
      ? NULL_PAYLOAD
      : requireJsonPayload(input.payload, "payload", ctx.maxPayloadBytes, prefix);
  const key = optionalKey(input.key, prefix);
  const tenant = optionalString(input.tenant, "tenant", TENANT_RULE, prefix) ?? ctx.defaultTenant;
  const maxAttempts =
    optionalInteger(input.maxAttempts, "maxAttempts", 1, 1000, prefix) ?? ctx.defaultMaxAttempts;
  const expireAfterMs =
    optionalInteger(input.expireAfterMs, "expireAfterMs", 0, MAX_DELAY_MS, prefix) ?? null;

  const modes = keyModeFields(input, key, prefix);
  const tags = optionalTags(input.tags, prefix);
  const callbacks = optionalCallbacks(input.callbacks, prefix);

  return {
    id: ctx.newId(),
    tenant,
    key,
    // a debounced job's first call bounds it too: never later than maxWaitMs from now
    dueAt: modes.maxWaitMs === undefined ? dueAt : Math.min(dueAt, ctx.now + modes.maxWaitMs),
    ...modes,
    payload: payload.value,
    payloadJson: payload.json,
    target,
    targetOptions,
    maxAttempts,
    expireAfterMs,
    ...(tags === undefined ? {} : { tags }),
    ...(callbacks === undefined ? {} : { callbacks }),
  };
}

/** `keyMode` and `maxWaitMs`, checked against each other and the key; `keep` is left out. */
function keyModeFields(
  input: Record<string, unknown>,
  key: string | null,
  prefix: FieldPrefix,
): { keyMode?: KeyMode; maxWaitMs?: number } {
  const keyMode = optionalOneOf(input.keyMode, "keyMode", KEY_MODES, prefix);
  const maxWaitMs = optionalInteger(input.maxWaitMs, "maxWaitMs", 0, MAX_DELAY_MS, prefix);
  if (keyMode !== undefined && keyMode !== "keep" && key === null) {
    throw new InvalidJobError(
      prefixText(prefix) + "key",
      `a key (keyMode ${keyMode} replaces the job holding it)`,
      input.key,
    );
  }
  if (maxWaitMs !== undefined && keyMode !== "debounce") {
    throw new InvalidJobError(
      prefixText(prefix) + "keyMode",
      "debounce (maxWaitMs bounds a debounce)",
      input.keyMode,
    );
  }

  return {
    ...(keyMode === undefined || keyMode === "keep" ? {} : { keyMode }),
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
  };
}

/** The name of the input itself: "job" alone, "jobs[3]" in a list. */
function objectName(prefix: string): string {
  return prefix === "" ? "job" : prefix.replace(/\.$/, "");
}

export function validateTenant(value: unknown, field = "tenant"): string {
  return requireString(value, field, TENANT_RULE);
}
