import { MAX_DELAY_MS } from "./due-time.js";
import { InvalidJobError } from "./errors.js";
import { JOB_STATUSES, type JobStatus } from "./job.js";
import {
  OPERATION_KIND_NAMES,
  type OperationFilter,
  type OperationKind,
  type OperationParams,
} from "./operation.js";
import { MAX_KEY_LENGTH, optionalKey, TARGET_RULE } from "./schedule-input.js";
import { MAX_TAGS, TAG_RULE } from "./tags.js";
import { parseDueTime } from "./time-input.js";
import {
  optionalInteger,
  optionalOneOf,
  optionalString,
  rejectUnknownFields,
  requireObject,
  requireString,
} from "./validate.js";

/** What startOperation takes (library, HTTP body, CLI flags, dashboard form). */
export interface OperationInput {
  readonly kind: OperationKind;
  readonly filter: Omit<OperationFilter, "dueFrom" | "dueTo" | "status"> & {
    /** Epoch ms, Date or time text, as a job's due time. */
    readonly dueFrom?: number | string | Date;
    readonly dueTo?: number | string | Date;
    /** One state or several. */
    readonly status?: JobStatus | readonly JobStatus[];
  };
  /** reschedule: the new due time (epoch ms, Date or time text); retry: default now. */
  readonly dueAt?: number | string | Date;
  /** reschedule: move each job by this many ms instead. */
  readonly shiftMs?: number;
  /** count: the kind whose changes to count. */
  readonly of?: Exclude<OperationKind, "count">;
  /**
   * Idempotency key (as a job's): a start with a key one of the tenant's operations holds
   * answers that operation instead of starting another, when it is the same request.
   */
  readonly key?: string | null;
}

/** A validated operation input. */
export interface OperationDefinition {
  readonly key: string | null;
  readonly kind: OperationKind;
  readonly filter: OperationFilter;
  readonly params: OperationParams;
}

const INPUT_FIELDS = ["kind", "filter", "dueAt", "shiftMs", "of", "key"] as const;
const FILTER_FIELDS = ["tags", "target", "status", "dueFrom", "dueTo", "keyPrefix", "all"] as const;
/** Most tags in a filter: those of a job; each tag is checked by a job tag's TAG_RULE. */
const MAX_FILTER_TAGS = MAX_TAGS;
const KEY_PREFIX_RULE = { max: MAX_KEY_LENGTH } as const;

/**
 * The one validator of an operation input. An empty filter is refused (naming `filter`)
 * unless it says `all: true`, so a typo never becomes "every job of the tenant".
 */
export function validateOperationInput(
  raw: unknown,
  ctx: { readonly now: number; readonly timeZone?: string },
): OperationDefinition {
  const input = requireObject(raw, "operation");
  rejectUnknownFields(input, INPUT_FIELDS, "");
  const kind = optionalOneOf(input.kind, "kind", OPERATION_KIND_NAMES);
  if (kind === undefined) {
    throw new InvalidJobError("kind", `one of ${OPERATION_KIND_NAMES.join(", ")}`, input.kind);
  }
  const filter = validateFilter(input.filter, ctx);
  const key = optionalKey(input.key);
  return { key, kind, filter, params: validateParams(kind, input, ctx) };
}

/**
 * Whether `raw`, given again with the key `held` was started with, asks for the same
 * operation: the same kind, filter and parameters once its times are read as they were
 * when `held` was started (so "in 1 hour" sent twice is the same request). A raw input that
 * no longer validates is not the same request.
 */
export function sameOperationRequest(
  raw: unknown,
  held: Pick<OperationDefinition, "kind" | "filter" | "params"> & { readonly createdAt: number },
  ctx: { readonly timeZone?: string },
): boolean {
  let again: OperationDefinition;
  try {
    again = validateOperationInput(raw, { ...ctx, now: held.createdAt });
  } catch {
    return false;
  }
  const text = (d: Pick<OperationDefinition, "kind" | "filter" | "params">) =>
    JSON.stringify([d.kind, d.filter, d.params]);
  return text(again) === text(held);
}

function validateFilter(
  raw: unknown,
  ctx: { readonly now: number; readonly timeZone?: string },
): OperationFilter {
  const f = requireObject(raw, "filter");
  rejectUnknownFields(f, FILTER_FIELDS, "filter.");
  const time = (v: unknown, field: string): number | undefined =>
    v === undefined || v === null
      ? undefined
      : parseDueTime(v, { now: ctx.now, field, ...zone(ctx) });
  const tags = validateTags(f.tags);
  const target = optionalString(f.target, "target", TARGET_RULE, "filter.");
  const status = validateStatus(f.status);
  const dueFrom = time(f.dueFrom, "filter.dueFrom");
  const dueTo = time(f.dueTo, "filter.dueTo");
  const keyPrefix = optionalString(f.keyPrefix, "keyPrefix", KEY_PREFIX_RULE, "filter.");
  if (f.all !== undefined && f.all !== null && f.all !== true) {
    throw new InvalidJobError("filter.all", "true (or leave it out)", f.all);
  }
  if (dueFrom !== undefined && dueTo !== undefined && dueTo <= dueFrom) {
    throw new InvalidJobError("filter.dueTo", `a time after dueFrom (${dueFrom})`, dueTo);
  }
  const out: OperationFilter = {
    ...(tags === undefined ? {} : { tags }),
    ...(target === undefined ? {} : { target }),
    ...(status === undefined ? {} : { status }),
    ...(dueFrom === undefined ? {} : { dueFrom }),
    ...(dueTo === undefined ? {} : { dueTo }),
    ...(keyPrefix === undefined ? {} : { keyPrefix }),
  };
  if (Object.keys(out).length === 0 && f.all !== true) {
    throw new InvalidJobError(
      "filter",
      "at least one of tags, target, status, dueFrom, dueTo, keyPrefix (or all: true for every job)",
      raw,
    );
  }
  return f.all === true ? { ...out, all: true } : out;
}

function validateTags(raw: unknown): readonly string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = typeof raw === "string" ? [raw] : raw;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_FILTER_TAGS) {
    throw new InvalidJobError("filter.tags", `a list of 1 to ${MAX_FILTER_TAGS} tags`, raw);
  }
  return [...new Set(list.map((t, i) => requireString(t, `tags[${i}]`, TAG_RULE, "filter.")))];
}

function validateStatus(raw: unknown): readonly JobStatus[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list: unknown[] = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) {
    throw new InvalidJobError("filter.status", `one or more of ${JOB_STATUSES.join(", ")}`, raw);
  }
  return [
    ...new Set(
      list.map(
        (s, i) => optionalOneOf(s, `status[${i}]`, JOB_STATUSES, "filter.") ?? missing(i, s),
      ),
    ),
  ];
}

function missing(i: number, s: unknown): never {
  throw new InvalidJobError(`filter.status[${i}]`, `one of ${JOB_STATUSES.join(", ")}`, s);
}

function validateParams(
  kind: OperationKind,
  input: Record<string, unknown>,
  ctx: { readonly now: number; readonly timeZone?: string },
): OperationParams {
  const has = (k: string): boolean => input[k] !== undefined && input[k] !== null;
  const dueAt = has("dueAt")
    ? parseDueTime(input.dueAt, { now: ctx.now, field: "dueAt", ...zone(ctx) })
    : undefined;
  const shiftMs = optionalInteger(input.shiftMs, "shiftMs", -MAX_DELAY_MS, MAX_DELAY_MS);
  const of = optionalOneOf(
    input.of,
    "of",
    OPERATION_KIND_NAMES.filter((k): k is Exclude<OperationKind, "count"> => k !== "count"),
  );
  const allowed: Record<OperationKind, readonly string[]> = {
    count: ["of"],
    cancel: [],
    reschedule: ["dueAt", "shiftMs"],
    retry: ["dueAt"],
    erase: [],
  };
  for (const k of ["dueAt", "shiftMs", "of"]) {
    if (has(k) && !allowed[kind].includes(k)) {
      throw new InvalidJobError(k, `nothing (kind ${kind} takes no ${k})`, input[k]);
    }
  }
  if (kind === "reschedule" && (dueAt === undefined) === (shiftMs === undefined)) {
    throw new InvalidJobError("dueAt", "either dueAt or shiftMs (kind reschedule)", input.dueAt);
  }
  if (shiftMs === 0) throw new InvalidJobError("shiftMs", "a non-zero number of ms", 0);
  return {
    ...(dueAt === undefined ? {} : { dueAt }),
    ...(shiftMs === undefined ? {} : { shiftMs }),
    ...(of === undefined ? {} : { of }),
  };
}

function zone(ctx: { readonly timeZone?: string }): { timeZone?: string } {
  return ctx.timeZone === undefined ? {} : { timeZone: ctx.timeZone };
}
