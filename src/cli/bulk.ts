import type { Command } from "commander";
import { operationView, type OperationView } from "../api/operation-view.js";
import type { Scheduler } from "../api/scheduler.js";
import { InvalidJobError, OperationKeyConflictError } from "../core/errors.js";
import type { OperationKind } from "../core/operation.js";
import { validateOperationInput, type OperationInput } from "../core/operation-input.js";
import { parseDelay, parseDueTime } from "../core/time-input.js";
import type { FilterFlags } from "./bulk-options.js";
import { cliTime, out, outJson, resolveTimeZone, withExistingScheduler } from "./context.js";
import { EXIT } from "./errors.js";
import { parseStatuses } from "./option-values.js";
import { ProgressDisplay } from "./progress.js";
import { callApi, remoteWithoutTenant, RemoteOutcome, type Remote } from "./remote.js";
import type { CallInput } from "../client/index.js";

/**
 * `duetime cancel|reschedule|retry|erase` by filter: one bulk operation (docs/managing-
 * jobs.md) created on the local database or on a server (--url), then followed to its end
 * with a progress display, and its final record printed. Loaded only when a filter is given.
 */

/** The kinds a command starts (count is --count of one of them). */
export type BulkKind = Exclude<OperationKind, "count">;

/** What the command line gives beside the filter. */
export interface BulkOptions extends FilterFlags {
  tenant?: string;
  tz?: string;
  json?: boolean;
  /** reschedule, retry: the new due time as typed (`--at`). */
  at?: string;
  /** reschedule: `--shift` as typed. */
  shift?: string;
}

/** How often a server's record is read while following it, ms. */
const POLL_MS = 200;

const VERBS: Readonly<Record<BulkKind, string>> = {
  cancel: "cancelled",
  reschedule: "rescheduled",
  retry: "retried",
  erase: "erased",
};

/** Runs the bulk operation the flags describe; resolves to the exit code. */
export async function runBulk(cmd: Command, kind: BulkKind, o: BulkOptions): Promise<number> {
  const timeZone = resolveTimeZone(o.tz);
  const now = Date.now();
  const input = operationInput(kind, o, timeZone, now);
  // the one validator, before anything is counted or sent: a refusal names the flag
  try {
    validateOperationInput(input, { now, timeZone });
  } catch (err) {
    // `key` is a job's --key elsewhere; here it is the operation's
    if (!(err instanceof InvalidJobError && err.field === "key")) throw err;
    throw new InvalidJobError("--operation-key", err.expected, err.received);
  }
  const remote = remoteWithoutTenant(cmd, o.tenant);
  const display = (total: number | null) =>
    new ProgressDisplay({
      total,
      verb: o.count === true ? `would be ${VERBS[kind]}` : VERBS[kind],
      tty: o.json !== true && process.stdout.isTTY === true,
      write: (t) => (o.json === true ? undefined : process.stdout.write(t)),
      now: () => Date.now(),
    });
  let final: OperationView;
  try {
    final = remote
      ? await followRemote(remote, input, display)
      : await withExistingScheduler(cmd, (s) => followLocal(s, input, o.tenant, display));
  } catch (err) {
    const held = keyConflictOf(err);
    if (held === null) throw err;
    if (o.json !== true) {
      out(`key-conflict: --operation-key started operation ${held} with another filter or kind`);
    }
    return EXIT.versionConflict;
  }
  if (o.json === true) outJson({ operation: final });
  else out(summary(final, kind, o.count === true));
  return final.state === "done" ? EXIT.ok : EXIT.failure;
}

/**
 * The operation input of the flags. Times are read here, in --tz (the scheduler reads the
 * text in its own zone otherwise), and sent as epoch ms.
 */
export function operationInput(
  kind: BulkKind,
  o: BulkOptions,
  timeZone: string,
  now: number,
): OperationInput {
  const time = (v: string | undefined, field: string) =>
    v === undefined
      ? undefined
      : parseDueTime(cliTime(v, field, { epochZero: true }), { now, timeZone, field });
  const dueFrom = time(o.dueFrom, "--due-from");
  const dueTo = time(o.dueTo, "--due-to");
  const dueAt = time(o.at, "--at");
  const shiftMs = o.shift === undefined ? undefined : parseShift(o.shift);
  if (kind === "reschedule" && (dueAt === undefined) === (shiftMs === undefined)) {
    throw new InvalidJobError("--shift", "either --shift or --at (reschedule by filter)", o.shift);
  }
  const filter = {
    ...(o.tag === undefined ? {} : { tags: o.tag }),
    ...(o.target === undefined ? {} : { target: o.target }),
    ...(o.status === undefined ? {} : { status: parseStatuses(o.status) }),
    ...(dueFrom === undefined ? {} : { dueFrom }),
    ...(dueTo === undefined ? {} : { dueTo }),
    ...(o.keyPrefix === undefined ? {} : { keyPrefix: o.keyPrefix }),
  };
  const params = {
    ...(dueAt === undefined ? {} : { dueAt }),
    ...(shiftMs === undefined ? {} : { shiftMs }),
  };
  const key = o.operationKey === undefined ? {} : { key: o.operationKey };
  if (o.count === true) return { kind: "count", of: kind, filter, ...key };
  return { kind, filter, ...params, ...key };
}

/** The id of the operation holding --operation-key when `err` says another request has it. */
function keyConflictOf(err: unknown): string | null {
  if (err instanceof OperationKeyConflictError) return err.held.id;
  if (!(err instanceof RemoteOutcome) || err.code !== "key-conflict") return null;
  const op = err.body.operation as { id?: unknown } | undefined;
  return typeof op?.id === "string" ? op.id : "?";
}

/**
 * `--shift`: a signed duration, "1h", "-30m", "2 days", "1h 30m", or milliseconds ("90000").
 * The duration words are the delay grammar of due times ("in 1h").
 */
export function parseShift(raw: string): number {
  const text = raw.trim();
  const negative = text.startsWith("-");
  const body = negative || text.startsWith("+") ? text.slice(1).trim() : text;
  const ms = /^\d+$/.test(body) ? Number(body) : parseDelayText(body);
  if (ms === null || !Number.isSafeInteger(ms) || ms === 0) {
    throw new InvalidJobError(
      "--shift",
      'a non-zero duration such as "1h", "-30m", "2 days" or milliseconds',
      raw,
    );
  }
  return negative ? -ms : ms;
}

function parseDelayText(body: string): number | null {
  // the grammar wants the "in" of "in 1h"; a number with no unit is not a delay
  return body === "" ? null : parseDelay(`in ${body}`);
}

/** Starts the operation on the local database and runs its batches here to the end. */
async function followLocal(
  s: Scheduler,
  input: OperationInput,
  tenant: string | undefined,
  display: (total: number | null) => ProgressDisplay,
): Promise<OperationView> {
  const opts = tenant === undefined ? {} : { tenant };
  const total = await expectedLocal(s, input, tenant);
  const bar = display(total);
  // a key already held answers its operation: followed from where it is, not started again
  const { operation: op } = await s.startOperation(input, opts);
  bar.update(op);
  const active = op.state === "queued" || op.state === "running";
  const final = active ? await s.runOperation(op.id, (p) => bar.update(p)) : op;
  bar.finish();
  return operationView(final);
}

/**
 * The jobs the operation will read, for the bar: a tag's index entries (what a tag walk
 * reads), else the tenant's jobs from the counters.
 */
async function expectedLocal(
  s: Scheduler,
  input: OperationInput,
  tenant: string | undefined,
): Promise<number> {
  const opts = tenant === undefined ? {} : { tenant };
  const tag = input.filter.tags?.[0];
  if (tag !== undefined) return s.countJobs({ tag, ...opts });
  const counts = (await s.stats({ ...opts, buckets: 0 })).counts;
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Starts the operation on the server and reads its record until it ends. */
async function followRemote(
  remote: Remote,
  input: OperationInput,
  display: (total: number | null) => ProgressDisplay,
): Promise<OperationView> {
  const tag = input.filter.tags?.[0];
  const total = await callApi(remote, async (c) => {
    if (tag !== undefined) return (await c.call("countJobs", { query: { tag } })).count;
    const counts = (await c.getStats({ buckets: 0 })).counts as Record<string, number>;
    return Object.values(counts).reduce((a, b) => a + b, 0);
  });
  const bar = display(total);
  // the same fields the library takes; epoch ms times are valid on the wire too
  const body = input as unknown as NonNullable<CallInput<"startOperation">["body"]>;
  let op = (await callApi(remote, (c) => c.call("startOperation", { body }))).operation;
  bar.update(op);
  while (op.state === "queued" || op.state === "running") {
    await new Promise((r) => setTimeout(r, POLL_MS));
    const id = op.id;
    op = (await callApi(remote, (c) => c.call("getOperation", { path: { id } }))).operation;
    bar.update(op);
  }
  bar.finish();
  return op as OperationView;
}

/** The last line: what was done (or would be, for --count). */
function summary(op: OperationView, kind: BulkKind, count: boolean): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const jobs = (x: number) => `${n(x)} job${x === 1 ? "" : "s"}`;
  const read = `${n(op.scanned)} read, operation ${op.id}`;
  if (op.state !== "done") {
    return `${op.state}: ${kind} stopped after ${n(op.changed)} ${VERBS[kind]} (${read})${op.error === null ? "" : `: ${op.error}`}`;
  }
  if (count) {
    return `count: ${jobs(op.changed)} would be ${VERBS[kind]}, ${n(op.skipped)} matching left as they are (${read})`;
  }
  return `${kind} done: ${jobs(op.changed)} ${VERBS[kind]}, ${n(op.skipped)} matching left as they are (${read})`;
}
