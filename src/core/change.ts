import { InvalidJobError } from "./errors.js";
import type { JobStatus } from "./job.js";

/**
 * What happened to a job, as the durable change feed records it: one row per transition,
 * written by the store in the transaction that makes the transition (docs/managing-jobs.md
 * lists them with the state they lead to).
 */
export type ChangeKind =
  /** Stored (pending). */
  | "scheduled"
  /** Leased to a node to fire (claimed). */
  | "claimed"
  | "succeeded"
  /** An attempt threw with attempts left: pending again at the retry time. */
  | "failed"
  /** Nothing could be attempted (infrastructure down): pending at the retry time, attempt given back. */
  | "deferred"
  /** A claim handed back unstarted (a node stopping, or restarting after a crash): pending. */
  | "released"
  /** A lease ran out before the outcome was recorded: pending at its due time. */
  | "requeued"
  | "dead"
  | "expired"
  | "cancelled"
  | "rescheduled"
  /** A dead job put back to pending. */
  | "retried"
  /** A pending job's definition replaced by a schedule with the same key. */
  | "replaced"
  /** A pending job held by a pause (src/core/pause.ts): still pending, never claimed while held. */
  | "paused"
  /** A held job given back by its pause's resume: pending at its due time (shifted by `shift`). */
  | "resumed";

export const CHANGE_KINDS: readonly ChangeKind[] = Object.freeze([
  "scheduled",
  "claimed",
  "succeeded",
  "failed",
  "deferred",
  "released",
  "requeued",
  "dead",
  "expired",
  "cancelled",
  "rescheduled",
  "retried",
  "replaced",
  "paused",
  "resumed",
]);

/** One row of the change feed. */
export interface StoredChange {
  /** Position in the feed: pass it as `after` to read what came next (opaque to callers). */
  readonly cursor: string;
  readonly kind: ChangeKind;
  /** The job's id. */
  readonly id: string;
  readonly tenant: string;
  /** The job's state after the change. */
  readonly status: JobStatus;
  /** Its due time after the change (epoch ms; the retry time of `failed` and `deferred`). */
  readonly dueAt: number;
  /** Attempts spent after the change. */
  readonly attempts: number;
  /** The error of `failed`, `deferred`, `requeued`, `dead`; null otherwise. */
  readonly error: string | null;
  /** When the change was made (epoch ms, the writer's clock). */
  readonly at: number;
}

/** A page of the feed and where the next one starts. */
export interface ChangesPage {
  readonly changes: readonly StoredChange[];
  /**
   * The cursor to read on from: the last change's, or the `after` given when nothing came
   * (the feed's head when `after` was absent and nothing is kept).
   */
  readonly next: string;
}

/**
 * A position in the feed. SQLite has one writer, so its row ids follow commit order and
 * `tx` is 0. PostgreSQL orders by (transaction id, row id) and reads only transactions older
 * than every one still in flight (postgres/changes.ts), so no reader steps over a row that
 * commits later.
 */
export interface ChangePosition {
  readonly tx: bigint;
  readonly seq: bigint;
}

export const FEED_START: ChangePosition = Object.freeze({ tx: 0n, seq: 0n });

const CURSOR = /^(?:(\d{1,19})\.)?(\d{1,19})$/;
const MAX_INT64 = 2n ** 63n - 1n;

/**
 * The one reader of cursors, for every surface (library, HTTP `after`, SSE `Last-Event-ID`):
 * `<seq>` or `<tx>.<seq>`, decimal, each at most a signed 64-bit integer.
 */
export function parseChangeCursor(text: unknown, field = "after"): ChangePosition {
  const m = typeof text === "string" ? CURSOR.exec(text) : null;
  const tx = m ? BigInt(m[1] ?? "0") : -1n;
  const seq = m ? BigInt(m[2]!) : -1n;
  if (!m || tx > MAX_INT64 || seq > MAX_INT64) {
    throw new InvalidJobError(
      field,
      "a change cursor from this feed (digits, or digits.digits)",
      text,
    );
  }
  return { tx, seq };
}

export function formatChangeCursor(p: ChangePosition): string {
  return p.tx === 0n ? String(p.seq) : `${p.tx}.${p.seq}`;
}

/** Feed order: negative when `a` comes first. */
export function compareChangePositions(a: ChangePosition, b: ChangePosition): number {
  if (a.tx !== b.tx) return a.tx < b.tx ? -1 : 1;
  return a.seq === b.seq ? 0 : a.seq < b.seq ? -1 : 1;
}

/**
 * A cursor to read on after (parseChangeCursor), refused past the feed's `head`: the feed
 * never gave it, and reading after it would skip every change until the feed reached it.
 * The one check of the feed page (library, HTTP) and of a resumed event stream.
 */
export function parseResumeCursor(text: unknown, field: string, head: string): ChangePosition {
  const pos = parseChangeCursor(text, field);
  if (compareChangePositions(pos, parseChangeCursor(head)) > 0) {
    throw new InvalidJobError(field, `a cursor this feed gave (at most its head ${head})`, text);
  }
  return pos;
}
