import { InvalidJobError, DuetimeError } from "./errors.js";
import type { Job } from "./job.js";
import { isObject, rejectUnknownFields, requireString } from "./validate.js";
import { TARGET_RULE } from "./schedule-input.js";

/**
 * Pauses (issue 13 §4): a durable record that holds a tenant's jobs, or those of one target
 * or one tag, until it is resumed. While a pause is active its pending jobs are held: out of
 * the due-time index, so they are never claimed and cost the watcher nothing; jobs scheduled
 * meanwhile are stored held. A held job's status stays `pending` and its `pausedBy` names the
 * pause. On resume, `onResume` decides what the held jobs that came due meanwhile do.
 *
 * Which jobs a pause covers is written once here (pauseMatches) and used by every store.
 */

/**
 * What a pause holds, within its tenant: every job (`tenant`), the jobs of one target (a
 * handler name, or a webhook origin such as `https://hooks.example.com` covering every URL
 * under it), or the jobs carrying one tag.
 */
export type PauseScope =
  { readonly tenant: true } | { readonly target: string } | { readonly tag: string };

/**
 * What the held jobs due before the resume do then: `fire` late (default), `expire` (finished
 * as expired, recorded), or `shift` (each due time moved later by how long the pause lasted).
 * Held jobs due after the resume fire at their due time under every policy.
 */
export type OnResume = "fire" | "expire" | "shift";
export const ON_RESUME_POLICIES: readonly OnResume[] = Object.freeze(["fire", "expire", "shift"]);

/**
 * `active`: holding. `resuming`: resumed, its held jobs being given back in bounded batches
 * (they stay held, so never claimed, until their policy is applied). `resumed`: done.
 */
export type PauseState = "active" | "resuming" | "resumed";
export const PAUSE_STATES: readonly PauseState[] = Object.freeze(["active", "resuming", "resumed"]);

/** A pause as every store returns it. Times are epoch ms. */
export interface Pause {
  /** Time-sortable id (ULID). */
  readonly id: string;
  readonly tenant: string;
  readonly scope: PauseScope;
  readonly onResume: OnResume;
  readonly state: PauseState;
  readonly pausedAt: number;
  readonly resumedAt: number | null;
  /** Jobs held by it now. */
  readonly heldJobs: number;
  /** Whether the jobs pending when it was made have all been found and held. */
  readonly holdComplete: boolean;
}

/** A validated pause ready to be stored. */
export interface NewPause {
  readonly id: string;
  readonly tenant: string;
  readonly scope: PauseScope;
  readonly onResume: OnResume;
}

/** Longest tag a tag pause names, in characters (the tag rule of issue 13 §2). */
export const MAX_PAUSE_TAG_LENGTH = 64;

/** A pause's scope as its store columns: kind and value ("" for a tenant pause). */
export function scopeColumns(scope: PauseScope): { kind: string; value: string } {
  if ("target" in scope) return { kind: "target", value: scope.target };
  if ("tag" in scope) return { kind: "tag", value: scope.tag };
  return { kind: "tenant", value: "" };
}

/** The scope stored as columns, back. */
export function scopeFromColumns(kind: string, value: string): PauseScope {
  if (kind === "target") return { target: value };
  if (kind === "tag") return { tag: value };
  return { tenant: true };
}

/**
 * Whether a pause of this tenant covers a job. A target scope covers the handler of that
 * name, and a webhook origin covers every URL under it (the origin followed by `/`, `?` or
 * `#`), never another host that merely starts the same way.
 */
export function pauseMatches(
  pause: { readonly tenant: string; readonly scope: PauseScope },
  job: Pick<Job, "tenant" | "target"> & { readonly tags?: readonly string[] },
): boolean {
  if (pause.tenant !== job.tenant) return false;
  const scope = pause.scope;
  if ("target" in scope) {
    const t = scope.target;
    if (job.target === t) return true;
    if (!job.target.startsWith(t)) return false;
    const next = job.target.charAt(t.length);
    return isOrigin(t) && (next === "/" || next === "?" || next === "#");
  }
  if ("tag" in scope) return job.tags?.includes(scope.tag) ?? false;
  return true;
}

/** The first pause of `pauses` covering the job, or undefined. */
export function pauseCovering<P extends { readonly tenant: string; readonly scope: PauseScope }>(
  pauses: readonly P[],
  job: Pick<Job, "tenant" | "target"> & { readonly tags?: readonly string[] },
): P | undefined {
  for (const p of pauses) if (pauseMatches(p, job)) return p;
  return undefined;
}

function isOrigin(text: string): boolean {
  return /^https?:\/\/[^/?#]+$/i.test(text);
}

/**
 * What a held job does when its pause is given back at `resumedAt`: fire as it is, expire,
 * or take a later due time. Only jobs due at or before the resume are affected.
 */
export function resumeAction(
  pause: Pick<Pause, "onResume" | "pausedAt">,
  dueAt: number,
  resumedAt: number,
):
  | { readonly kind: "fire" }
  | { readonly kind: "expire" }
  | { readonly kind: "shift"; readonly dueAt: number } {
  if (dueAt > resumedAt || pause.onResume === "fire") return { kind: "fire" };
  if (pause.onResume === "expire") return { kind: "expire" };
  return { kind: "shift", dueAt: dueAt + Math.max(0, resumedAt - pause.pausedAt) };
}

/** The error a job expired by its pause's policy carries. */
export function pauseExpiredError(pauseId: string): string {
  return `expired: due while paused (pause ${pauseId}, onResume expire)`;
}

/** The fields of a pause request, and of its scope (the HTTP fuzzer builds bodies from them). */
export const PAUSE_FIELDS: readonly string[] = Object.freeze(["scope", "onResume"]);
export const PAUSE_SCOPE_FIELDS: readonly string[] = Object.freeze(["tenant", "target", "tag"]);

/** What `pause()` takes, as every surface gives it. */
export interface PauseInput {
  readonly scope: PauseScope;
  /** Default "fire". */
  readonly onResume?: OnResume;
}

/**
 * The one validator of a pause request (library, HTTP, CLI): throws InvalidJobError naming
 * the field, what was expected and what was received.
 */
export function parsePauseInput(input: unknown): { scope: PauseScope; onResume: OnResume } {
  if (!isObject(input)) throw new InvalidJobError("pause", "an object", input);
  rejectUnknownFields(input, PAUSE_FIELDS, "");
  const raw = input.scope;
  const expected = 'one of { "tenant": true }, { "target": "..." }, { "tag": "..." }';
  if (!isObject(raw)) throw new InvalidJobError("scope", expected, raw);
  const keys = Object.keys(raw);
  if (keys.length !== 1) throw new InvalidJobError("scope", expected, raw);
  rejectUnknownFields(raw, PAUSE_SCOPE_FIELDS, "scope.");
  let scope: PauseScope;
  if ("tenant" in raw) {
    if (raw.tenant !== true) throw new InvalidJobError("scope.tenant", "true", raw.tenant);
    scope = { tenant: true };
  } else if ("target" in raw) {
    const target = requireString(raw.target, "scope.target", TARGET_RULE);
    scope = { target: target };
  } else {
    scope = { tag: requireString(raw.tag, "scope.tag", { max: MAX_PAUSE_TAG_LENGTH }) };
  }
  const onResume = input.onResume ?? "fire";
  if (typeof onResume !== "string" || !ON_RESUME_POLICIES.includes(onResume as OnResume)) {
    throw new InvalidJobError("onResume", `one of ${ON_RESUME_POLICIES.join(", ")}`, onResume);
  }
  return { scope, onResume: onResume as OnResume };
}

/** No pause with this id (for this tenant). */
export class PauseNotFoundError extends DuetimeError {
  override readonly name = "PauseNotFoundError";
  constructor(readonly id: string) {
    super(`pause ${id} not found`);
  }
}

/** The store has no pauses (the `pauses` capability): nothing was written. */
export class PausesUnsupportedError extends DuetimeError {
  override readonly name = "PausesUnsupportedError";
  constructor(readonly storeKind: string) {
    super(`the ${storeKind} store has no pauses (both built-in stores have)`);
  }
}

/** `Store.pauseResume`'s answer. */
/**
 * What storing a pause did (`PauseStore.pauseInsert`): stored, or refused because its
 * tenant already has `maxOpen` open (active or resuming) pauses, `open` of them.
 */
export type PauseInsertResult =
  | { readonly outcome: "inserted"; readonly pause: Pause }
  | { readonly outcome: "too-many"; readonly open: number };

export type PauseResumeResult =
  | { readonly outcome: "resumed" | "already-resumed"; readonly pause: Pause }
  | { readonly outcome: "not-found" };

/** What one bounded step of pause work did (`Store.pausesWork`). */
export interface PauseWorkResult {
  /** Pending jobs moved out of the due-time index into held. */
  readonly held: number;
  /** Held jobs given back by a resume (fired, shifted or expired). */
  readonly released: number;
  /** True when some pause has work left: call again. */
  readonly more: boolean;
}
