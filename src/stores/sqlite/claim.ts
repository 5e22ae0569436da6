import type { Job } from "../../core/job.js";
import { bucketOf } from "../../core/buckets.js";
import { BatchShare, claimNeedsShare, rotateTenants, type ClaimParams } from "../../store/store.js";
import type { SqliteContext } from "./context.js";
import { holdCovered } from "./held.js";
import { advanceClaimed } from "./series-advance.js";
import { asClaimed, CounterDeltas, rowSeq, rowToJob, type JobTuple } from "./rows.js";

/** A hot-index entry as read: [due_at, seq]. */
type Entry = [number, number];

/**
 * The claim, in one write transaction. Without a tenant near its cap it reads the due prefix
 * of the hot primary key (due_at, seq), deletes exactly that range, reads those jobs (still
 * pending) and gives each a lease row: no write to the jobs rows themselves (see
 * migrations.ts). When tenants must take turns (claimNeedsShare), the batch is shared out
 * among the tenants with work in the due buckets (BatchShare), each tenant's part read from
 * its own prefix of `hot_tenant (tenant, due_at, seq)`: a tenant with a large due backlog
 * costs that prefix's read, never a read past its backlog to reach a neighbour's due job.
 * `cursor` carries the rotation across claims (the last tenant served). A job an active pause
 * covers is held instead (holdCovered), whichever node claims.
 */
export function claimDue(ctx: SqliteContext, params: ClaimParams, cursor: TenantCursor): Job[] {
  if (params.shards !== undefined && params.shards.length === 0) return [];
  const shards = ctx.shardsFilter(params.shards);
  const due = claimNeedsShare(params)
    ? takeShared(ctx, params, cursor, shards)
    : takeDue(ctx, params.limit, (want) =>
        shards === null
          ? {
              read: () => ctx.s.hotDuePrefix.all(params.dueBefore, want) as Entry[],
              drop: (entries) => dropPrefix(ctx, entries),
            }
          : {
              read: () =>
                ctx.s.hotDuePrefixOfShards.all({
                  dueBefore: params.dueBefore,
                  limit: want,
                  shards,
                }) as Entry[],
              drop: (entries) => dropEach(ctx, entries),
            },
      );
  // Jobs an active pause covers that were in hot before it was made are held, not claimed.
  const rows = holdCovered(ctx, due, params.now);
  if (rows.length === 0) return [];
  const lease = { owner: params.owner, leaseUntil: params.now + params.leaseMs, now: params.now };
  ctx.s.claimInsert.run({ seqs: JSON.stringify(rows.map(rowSeq)), ...lease });
  const deltas = new CounterDeltas();
  const jobs = rows.map((r) => {
    const job = rowToJob(asClaimed(r, lease));
    deltas.move(job.tenant, "pending", "claimed", job.bucket, job.bucket);
    ctx.record(
      {
        tenant: job.tenant,
        id: job.id,
        kind: "claimed",
        status: "claimed",
        dueAt: job.dueAt,
        attempts: job.attempts,
      },
      params.now,
    );
    return job;
  });
  // the series' next occurrences count in the same deltas: one write of each counter
  advanceClaimed(ctx, jobs, params.now, () => ctx.newId(params.now), deltas);
  ctx.flush(deltas);
  return jobs.sort(byDue);
}

/** Where the last shared claim stopped in the tenant order; the next one starts after it. */
export interface TenantCursor {
  after: string;
}

function takeShared(
  ctx: SqliteContext,
  params: ClaimParams,
  cursor: TenantCursor,
  shards: string | null,
): JobTuple[] {
  const tenants = dueTenants(ctx, params, cursor);
  const share = new BatchShare(tenants, params.limit, params.tenantShare!);
  const rows: JobTuple[] = [];
  for (let asks = share.next(); asks.length > 0; asks = share.next()) {
    const counts = new Map<string, number>();
    for (const { tenant, n } of asks) {
      const at = { tenant, dueBefore: params.dueBefore };
      const got = takeDue(ctx, n, (want) =>
        shards === null
          ? {
              read: () => ctx.s.hotTenantDuePrefix.all({ ...at, limit: want }) as Entry[],
              drop: (entries) => {
                const last = entries[entries.length - 1]!;
                ctx.s.hotTenantDeletePrefix.run({ tenant, dueAt: last[0], seq: last[1] });
              },
            }
          : {
              read: () =>
                ctx.s.hotTenantDuePrefixOfShards.all({ ...at, limit: want, shards }) as Entry[],
              drop: (entries) => dropEach(ctx, entries),
            },
      );
      counts.set(tenant, got.length);
      rows.push(...got);
    }
    share.got(asks, counts);
  }
  cursor.after = share.lastServed() ?? cursor.after;
  return rows;
}

/** Tenants with pending work in the buckets up to the claim's, at most a batch (rotateTenants). */
function dueTenants(ctx: SqliteContext, params: ClaimParams, cursor: TenantCursor): string[] {
  const bucket = bucketOf(params.dueBefore, ctx.bucketWidthMs);
  const read = (after: string, limit: number): string[] =>
    (ctx.s.dueTenantsAfter.all({ bucket, after, limit }) as { tenant: string }[]).map(
      (r) => r.tenant,
    );
  const first = read(cursor.after, params.limit);
  return rotateTenants(first, cursor.after, params.limit, () =>
    read("", params.limit - first.length),
  );
}

/** Deletes a whole prefix of the hot primary key, up to the last entry read. */
function dropPrefix(ctx: SqliteContext, entries: readonly Entry[]): void {
  const last = entries[entries.length - 1]!;
  ctx.s.hotDeletePrefix.run(last[0], last[1]);
}

/**
 * Deletes exactly the entries read, one by one: of a shard set's read, which stepped over
 * other shards' entries (they stay for their owners).
 */
function dropEach(ctx: SqliteContext, entries: readonly Entry[]): void {
  for (const [dueAt, seq] of entries) ctx.s.hotDelete.run({ dueAt, seq });
}

/**
 * Takes up to `limit` still-pending jobs from a prefix of the hot index: reads entries, deletes
 * exactly those, keeps the jobs still pending and due when their entry says. Entries of
 * jobs cancelled, moved or retried since they were staged are dropped; it reads on until the
 * batch is full, nothing due is left, or a bounded number of entries has been read.
 */
function takeDue(
  ctx: SqliteContext,
  limit: number,
  prefix: (want: number) => { read: () => Entry[]; drop: (entries: Entry[]) => void },
): JobTuple[] {
  const rows: JobTuple[] = [];
  const taken = new Set<number>();
  const maxRead = Math.max(4 * limit, 2000);
  let read = 0;
  for (;;) {
    const want = limit - rows.length;
    const p = prefix(want);
    const entries = p.read();
    if (entries.length === 0) break;
    p.drop(entries);
    read += entries.length;
    const found = ctx.s.claimRead.all({ entries: JSON.stringify(entries) }) as JobTuple[];
    for (const r of found) {
      const seq = rowSeq(r);
      if (taken.has(seq)) continue;
      taken.add(seq);
      rows.push(r);
    }
    if (entries.length < want || found.length === entries.length || read >= maxRead) break;
  }
  return rows;
}

function byDue(a: Job, b: Job): number {
  return a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
