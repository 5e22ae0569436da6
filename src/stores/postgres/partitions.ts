import type pg from "pg";

/**
 * Range partitions of `jobs_live` (by due_at, one per bucket) and `jobs_history` (by
 * finished_at, one per history period): listing, creating (moving any rows the DEFAULT
 * partition holds for the new range), and dropping. Every DDL transaction takes a
 * transaction-level advisory lock (one partition changer per schema at a time) and a
 * short lock_timeout, so DDL gives way to traffic and is retried later instead of queueing
 * claims behind it.
 */
export type PartitionedTable = "jobs_live" | "jobs_history";

const COLUMN: Record<PartitionedTable, string> = {
  jobs_live: "due_at",
  jobs_history: "finished_at",
};

export interface PartitionInfo {
  readonly name: string;
  /** Inclusive lower bound (epoch ms). */
  readonly from: number;
  /** Exclusive upper bound (epoch ms). */
  readonly to: number;
}

export function partitionName(table: PartitionedTable, start: number): string {
  return `${table}_p${start < 0 ? `m${-start}` : String(start)}`;
}

export class Partitions {
  /** Partition starts known to exist, per table (refreshed from the catalog on a miss). */
  private readonly known: Record<PartitionedTable, Set<number>> = {
    jobs_live: new Set(),
    jobs_history: new Set(),
  };

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly widthMs: Record<PartitionedTable, number>,
    private readonly lockTimeoutMs: number,
  ) {}

  private q(name: string): string {
    return `"${this.schema}"."${name}"`;
  }

  /** Range partitions of `table` (the default partition excluded), by start. */
  async list(table: PartitionedTable, client?: pg.ClientBase): Promise<PartitionInfo[]> {
    const runner = client ?? this.pool;
    const { rows } = await runner.query<{ name: string; bound: string }>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass`,
      [this.q(table)],
    );
    const out: PartitionInfo[] = [];
    for (const r of rows) {
      const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
      if (m) out.push({ name: r.name, from: Number(m[1]), to: Number(m[2]) });
    }
    out.sort((a, b) => a.from - b.from);
    this.known[table] = new Set(out.map((p) => p.from));
    return out;
  }

  /**
   * Makes sure a partition exists for each start (a multiple of the width). Cheap when
   * they are known; otherwise one catalog read, then DDL for the missing ones.
   */
  async ensure(table: PartitionedTable, starts: Iterable<number>): Promise<number> {
    const missing = [...new Set(starts)].filter((s) => !this.known[table].has(s));
    if (missing.length === 0) return 0;
    await this.list(table);
    const still = missing.filter((s) => !this.known[table].has(s)).sort((a, b) => a - b);
    let created = 0;
    for (const start of still) {
      if (await this.create(table, start)) created++;
    }
    return created;
  }

  /** Creates the partition [start, start + width), moving rows out of the default one. */
  private async create(table: PartitionedTable, start: number): Promise<boolean> {
    const width = this.widthMs[table];
    const end = start + width;
    const col = COLUMN[table];
    const name = partitionName(table, start);
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await this.lockForDdl(client);
      const exists = await client.query(`SELECT to_regclass($1) AS r`, [this.q(name)]);
      if (exists.rows[0]?.r !== null) {
        await client.query("COMMIT");
        this.known[table].add(start);
        return false;
      }
      const stray = await client.query(
        `SELECT 1 FROM ${this.q(`${table}_default`)} WHERE ${col} >= $1 AND ${col} < $2 LIMIT 1`,
        [start, end],
      );
      if (stray.rowCount === 0) {
        await client.query(
          `CREATE TABLE ${this.q(name)} PARTITION OF ${this.q(table)} FOR VALUES FROM (${start}) TO (${end})`,
        );
      } else {
        // Rows that landed in the default partition for this range move into the new table
        // before it is attached: the parent's statement triggers do not fire for DML on a
        // partition or a detached table, so counters stay as they are (the jobs only move).
        await client.query(
          `CREATE TABLE ${this.q(name)} (LIKE ${this.q(table)} INCLUDING DEFAULTS)`,
        );
        await client.query(
          `WITH m AS (DELETE FROM ${this.q(`${table}_default`)} WHERE ${col} >= $1 AND ${col} < $2 RETURNING *)
           INSERT INTO ${this.q(name)} SELECT * FROM m`,
          [start, end],
        );
        await client.query(
          `ALTER TABLE ${this.q(name)} ADD CONSTRAINT "${name}_range" CHECK (${col} >= ${start} AND ${col} < ${end})`,
        );
        await client.query(
          `ALTER TABLE ${this.q(table)} ATTACH PARTITION ${this.q(name)} FOR VALUES FROM (${start}) TO (${end})`,
        );
        await client.query(`ALTER TABLE ${this.q(name)} DROP CONSTRAINT "${name}_range"`);
      }
      await client.query("COMMIT");
      this.known[table].add(start);
      return true;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw new Error(`creating partition ${name}`, { cause: err });
    } finally {
      client.release();
    }
  }

  private async lockForDdl(client: pg.ClientBase): Promise<void> {
    await client.query(`SET LOCAL lock_timeout = ${this.lockTimeoutMs}`);
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `duetime:partitions:${this.schema}`,
    ]);
  }

  /**
   * Drops live partitions whose whole range is before `before` and that hold no row. The
   * parent is locked first (the order DML takes), then each candidate is checked for rows
   * under that lock, so a concurrent insert can neither slip in nor deadlock with the drop.
   */
  async dropEmptyLive(before: number): Promise<string[]> {
    const candidates = (await this.list("jobs_live")).filter((p) => p.to <= before);
    if (candidates.length === 0) return [];
    const counted = await this.pool.query<{ bucket: number }>(
      `SELECT DISTINCT bucket FROM ${this.q("bucket_counts")} WHERE bucket < $1 AND pending > 0`,
      [before],
    );
    const busy = new Set(counted.rows.map((r) => r.bucket));
    const empty = candidates.filter((p) => ![...busy].some((b) => b >= p.from && b < p.to));
    if (empty.length === 0) return [];
    return this.dropWhere("jobs_live", empty, async (client, p) => {
      const r = await client.query(`SELECT 1 FROM ${this.q(p.name)} LIMIT 1`);
      return r.rowCount === 0;
    });
  }

  /**
   * Drops history partitions wholly before `before`; returns how many rows went with them
   * (from history_counts, whose period is the partition start) and removes their counters
   * and their jobs' tag entries.
   */
  async dropHistoryBefore(before: number, maxPartitions = 100): Promise<number> {
    const old = (await this.list("jobs_history"))
      .filter((p) => p.to <= before)
      .slice(0, maxPartitions);
    if (old.length === 0) return 0;
    let rows = 0;
    await this.dropWhere("jobs_history", old, async (client, p) => {
      // The partition's tag entries first, in the drop's transaction: found through the
      // partial index jobs_history_tagged, so a partition of untagged jobs costs one descent.
      await client.query(
        `DELETE FROM ${this.q("job_tags")} t USING ${this.q(p.name)} h
           CROSS JOIN LATERAL json_array_elements_text(h.tags::json) AS g(tag)
         WHERE h.tags IS NOT NULL AND t.tenant = h.tenant AND t.tag = g.tag AND t.job_id = h.id`,
      );
      const r = await client.query<{ n: number | null }>(
        `DELETE FROM ${this.q("history_counts")} WHERE period >= $1 AND period < $2 RETURNING n`,
        [p.from, p.to],
      );
      for (const x of r.rows) rows += Number(x.n ?? 0);
      return true;
    });
    return rows;
  }

  private async dropWhere(
    table: PartitionedTable,
    parts: readonly PartitionInfo[],
    check: (client: pg.ClientBase, p: PartitionInfo) => Promise<boolean>,
  ): Promise<string[]> {
    const client = await this.pool.connect();
    const dropped: string[] = [];
    try {
      await client.query("BEGIN");
      await this.lockForDdl(client);
      await client.query(`LOCK TABLE ${this.q(table)} IN ACCESS EXCLUSIVE MODE`);
      for (const p of parts) {
        if (!(await check(client, p))) continue;
        await client.query(`DROP TABLE ${this.q(p.name)}`);
        dropped.push(p.name);
      }
      await client.query("COMMIT");
      for (const p of parts) if (dropped.includes(p.name)) this.known[table].delete(p.from);
      return dropped;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw new Error(`dropping partitions of ${table}`, { cause: err });
    } finally {
      client.release();
    }
  }

  /** Whether a known partition of `table` ends at or before `before` (no catalog read). */
  hasKnownBefore(table: PartitionedTable, before: number): boolean {
    const width = this.widthMs[table];
    for (const from of this.known[table]) if (from + width <= before) return true;
    return false;
  }

  /** Forgets cached partitions (after another node may have dropped some). */
  forget(): void {
    this.known.jobs_live.clear();
    this.known.jobs_history.clear();
  }
}
