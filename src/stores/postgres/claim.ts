import type pg from "pg";
import { bucketOf } from "../../core/buckets.js";
import type { Job } from "../../core/job.js";
import { BatchShare, claimNeedsShare, rotateTenants, type ClaimParams } from "../../store/store.js";
import { inTransaction, withRetry } from "./connection.js";
import { byDue, rowToJob, type JobRow } from "./rows.js";
import type { Statements } from "./statements.js";

/** A claimed row, with whether a pause held when its statement began. */
type PausedRow = JobRow & { paused: boolean };

/**
 * A row of claimDueAlone: a claimed job, or (id null) the one row saying nothing moved;
 * `alone` false when the claim must be made in a transaction instead.
 */
type AloneRow = (JobRow | { [K in keyof JobRow]: null }) & { alone: boolean };

export interface ClaimsDeps {
  readonly pool: pg.Pool;
  readonly sql: Statements;
  readonly bucketWidthMs: number;
  /** Shards of the schema (settings.shardCount): a claim over all of them filters none. */
  readonly shardCount: number;
  /** The store's error mapping (a full disk becomes StorageFullError; context added). */
  readonly run: <T>(what: string, fn: () => Promise<T>) => Promise<T>;
  /** Advances the series of claimed occurrences, in the claim's transaction (series.ts). */
  readonly advance: (client: pg.ClientBase, jobs: readonly Job[], now: number) => Promise<void>;
  /**
   * Holds the claimed jobs an active pause covers instead, in the claim's transaction, and
   * returns the others (pauses.ts); called only when the claim statement said a pause held.
   */
  readonly hold: (client: pg.ClientBase, jobs: readonly Job[], now: number) => Promise<Job[]>;
}

/**
 * The claim. Without a tenant near its cap it is one statement over the due prefix of index
 * (due_at, id) (claimDue). When tenants must take turns (claimNeedsShare), the batch is
 * shared out among the tenants with work in the due buckets (BatchShare), one statement per
 * round with every tenant's part in it (claimTenantsDue: a range read of each tenant's due
 * prefix). The rotation cursor (the last tenant served) is this node's own. The claim and
 * the advance of the series its occurrences belong to are one transaction; so is holding
 * the jobs a pause made before the claim began covers (each row says whether one held).
 *
 * A claim of one-shot jobs with no pause open needs neither, so without tenant turns it is
 * first tried as claimDueAlone, one statement on its own: BEGIN and COMMIT are two round
 * trips of a claim's three (bench/postgres-claim-tx.ts: 1.67x the statement's time). That
 * statement moves nothing when its due prefix holds an occurrence, or holds rows while a
 * pause is open; the claim is then made in the transaction, and so are the next ones until
 * a claim in it takes neither (a series-heavy or paused deployment pays the extra statement
 * once per change). A claim that finds nothing due is answered by claimDueAlone whatever is
 * paused: an idle node costs the same with a pause open as without.
 */
export class Claims {
  private cursor = "";
  /** The last claim needed its transaction: the next one goes straight to it. */
  private needsTransaction = false;

  constructor(private readonly d: ClaimsDeps) {}

  async claim(params: ClaimParams): Promise<Job[]> {
    if (params.limit <= 0 || (params.shards !== undefined && params.shards.length === 0)) return [];
    const tenants = claimNeedsShare(params) ? await this.dueTenants(params) : null;
    if (tenants === null && !this.needsTransaction) {
      const jobs = await this.claimAlone(params);
      if (jobs !== null) return jobs;
    }
    return this.d.run("claiming due jobs", () =>
      withRetry(() =>
        inTransaction(this.d.pool, async (c) => {
          const took = await this.claimIn(c, params, tenants);
          if (tenants === null) {
            this.needsTransaction = took.paused || took.jobs.some((j) => j.scheduleId !== null);
          }
          const jobs = took.paused ? await this.d.hold(c, took.jobs, params.now) : took.jobs;
          await this.d.advance(c, jobs, params.now);
          return jobs;
        }),
      ),
    );
  }

  /** claimDueAlone: the claimed jobs, or null when the claim must take its transaction. */
  private async claimAlone(params: ClaimParams): Promise<Job[] | null> {
    const shards = shardFilter(params.shards, this.d.shardCount);
    const { rows } = await this.d.run("claiming due jobs", () =>
      withRetry(() =>
        this.d.pool.query<AloneRow>(this.d.sql.claimDueAlone, [
          params.dueBefore,
          params.limit,
          params.owner,
          params.now,
          shards,
          params.leaseMs,
        ]),
      ),
    );
    if (rows[0]?.alone !== true) {
      this.needsTransaction = true;
      return null;
    }
    const jobs: Job[] = [];
    for (const r of rows) if (r.id !== null) jobs.push(rowToJob(r as JobRow));
    return jobs.sort(byDue);
  }

  private async claimIn(
    c: pg.ClientBase,
    params: ClaimParams,
    tenants: string[] | null,
  ): Promise<{ jobs: Job[]; paused: boolean }> {
    const shards = shardFilter(params.shards, this.d.shardCount);
    const lease = [params.owner, params.now, shards, params.leaseMs];
    if (tenants === null) {
      const { rows } = await c.query<PausedRow>(this.d.sql.claimDue, [
        params.dueBefore,
        params.limit,
        ...lease,
      ]);
      return { jobs: rows.map(rowToJob).sort(byDue), paused: rows[0]?.paused === true };
    }
    const share = new BatchShare(tenants, params.limit, params.tenantShare!);
    const jobs: Job[] = [];
    let paused = false;
    for (let asks = share.next(); asks.length > 0; asks = share.next()) {
      const { rows } = await c.query<PausedRow>(this.d.sql.claimTenantsDue, [
        params.dueBefore,
        asks.map((a) => a.tenant),
        ...lease,
        asks.map((a) => a.n),
      ]);
      const counts = new Map<string, number>();
      if (rows[0]?.paused === true) paused = true;
      for (const r of rows) {
        const job = rowToJob(r);
        counts.set(job.tenant, (counts.get(job.tenant) ?? 0) + 1);
        jobs.push(job);
      }
      share.got(asks, counts);
    }
    this.cursor = share.lastServed() ?? this.cursor;
    return { jobs: jobs.sort(byDue), paused };
  }

  /** Tenants with pending work in the buckets up to the claim's, at most a batch (rotateTenants). */
  private async dueTenants(params: ClaimParams): Promise<string[]> {
    const bucket = bucketOf(params.dueBefore, this.d.bucketWidthMs);
    const read = async (after: string, limit: number): Promise<string[]> => {
      const { rows } = await this.d.run("finding tenants with due jobs", () =>
        withRetry(() =>
          this.d.pool.query<{ tenant: string }>(this.d.sql.dueTenantsAfter, [bucket, after, limit]),
        ),
      );
      return rows.map((r) => r.tenant);
    };
    const cursor = this.cursor;
    const first = await read(cursor, params.limit);
    const second =
      first.length < params.limit && cursor !== ""
        ? await read("", params.limit - first.length)
        : null;
    return rotateTenants(first, cursor, params.limit, () => second);
  }
}

/**
 * The claim statements' shard parameter ($5): null (no filter) when the claimer may take
 * every shard, as a single node does. A filter on all shards selects every row, but on a
 * partition never analysed (a bulk load just written, say) the planner estimates it at 64 x
 * 0.005 of the rows and reads the whole partition and sorts it instead of the due prefix of
 * (due_at, id): 342 ms against 80 ms for a claim of 500 among 60,000 due rows (EXPLAIN
 * ANALYZE, bench/postgres-dispatch.ts's drain), so a node drained a fresh backlog at half
 * the rate of the same statement without the filter until autovacuum analysed the partition.
 */
export function shardFilter(
  shards: readonly number[] | undefined,
  shardCount: number,
): number[] | null {
  if (shards === undefined) return null;
  if (shards.length >= shardCount) {
    const all = new Set(shards.filter((s) => Number.isInteger(s) && s >= 0 && s < shardCount));
    if (all.size === shardCount) return null;
  }
  return [...shards];
}
