import type { Pause } from "../../core/pause.js";
import { pauseCovering } from "../../core/pause.js";
import type { SqliteContext } from "./context.js";
import { activePauses, holdJobs, type Holdable } from "./held.js";
import { INSERT_BATCH_ROWS, jobInsertRows } from "./insert-statements.js";
import type { CounterDeltas } from "./rows.js";

/**
 * The next occurrences a claim's series step writes (series-advance.ts), and what insertJobs
 * does for a new job after its row (none has a key, tags or callbacks: core/series.ts
 * occurrenceJob): the counters as each group's rows are added, then at the end one statement
 * of feed rows for them all and each group's placement: in the hot index when its bucket is
 * staged, or held when an active pause covers it (the pauses and each bucket's state read
 * once a claim). A group's rows are a seq range: seq is the rowid, new rows take the next
 * ones (see insert-statements.ts jobInsertRows).
 */
export class NextOccurrences {
  private first: number | null = null;
  private readonly placed: Placed[] = [];
  private pauses: Pause[] | null = null;
  private readonly staged = new Map<number, boolean>();
  /** Row-wise occurrences (writeRows), as jobInsertRows' positional values. */
  private readonly values: unknown[] = [];
  private readonly rowGroups: RowGroup[] = [];

  constructor(
    private readonly ctx: SqliteContext,
    private readonly now: number,
    private readonly deltas: CounterDeltas,
  ) {}

  /** `n` rows of one group inserted, seqs `after` + 1 to `after` + n. */
  inserted(group: OccurrenceGroup, after: number, n: number): void {
    if (n === 0) return;
    this.first ??= after;
    this.deltas.pending(group.bucket, group.tenant, n);
    this.deltas.status(group.tenant, "pending", n);
    this.placed.push({
      tenant: group.tenant,
      target: group.target,
      dueAt: group.dueAt,
      bucket: group.bucket,
      after,
      last: after + n,
    });
  }

  /**
   * One occurrence of `group` to insert row-wise (writeRows: a group too small for a statement
   * of its own), series `seriesId`'s template as read.
   */
  addRow(
    group: RowGroup,
    seriesId: string,
    jobId: string,
    shard: number,
    template: { payload: string; targetOptions: string | null; maxAttempts: number },
  ): void {
    // jobInsertRows' column order (insert-statements.ts)
    this.values.push(
      jobId,
      group.tenant,
      null,
      group.dueAt,
      group.bucket,
      shard,
      template.payload,
      group.target,
      template.targetOptions,
      template.maxAttempts,
      group.expireAfterMs,
      this.now,
      this.now,
      null,
      seriesId,
      group.nominal,
      null,
      null,
      null,
    );
    this.rowGroups.push(group);
  }

  /** Inserts the rows added, up to INSERT_BATCH_ROWS a statement; each group's seqs follow. */
  writeRows(): void {
    const rows = this.rowGroups.length;
    if (rows === 0) return;
    let last = 0;
    for (let i = 0; i < rows; i += INSERT_BATCH_ROWS) {
      const n = Math.min(INSERT_BATCH_ROWS, rows - i);
      const params = this.values.slice(i * JOB_VALUES, (i + n) * JOB_VALUES);
      const statement = n === 1 ? this.ctx.s.jobInsert : jobInsertRows(this.ctx.db, n);
      last = Number(statement.run(params).lastInsertRowid);
    }
    let after = last - rows;
    for (let i = 0; i < rows;) {
      const group = this.rowGroups[i]!;
      let n = 1;
      while (i + n < rows && this.rowGroups[i + n] === group) n++;
      this.inserted(group, after, n);
      after += n;
      i += n;
    }
    this.values.length = 0;
    this.rowGroups.length = 0;
  }

  /** The feed rows of every occurrence inserted, then each group's placement. */
  finish(): void {
    this.writeRows();
    if (this.first === null) return;
    const ctx = this.ctx;
    ctx.recordJobsAfter({ kind: "scheduled", status: "pending" }, this.first, this.now);
    for (const p of this.placed) {
      const pause = this.pauseOf(p.tenant, p.target);
      if (pause !== undefined) {
        const rows = ctx.s.jobsSeqIdRange.all(p.after, p.last) as { seq: number; id: string }[];
        const held: Holdable[] = rows.map((j) => ({
          ...j,
          tenant: p.tenant,
          dueAt: p.dueAt,
          attempts: 0,
        }));
        holdJobs(ctx, new Map([[pause.id, held]]), this.now);
      } else if (this.isStaged(p.bucket)) {
        ctx.s.hotInsertJobsRange.run(p.after, p.last);
      }
    }
  }

  private pauseOf(tenant: string, target: string): Pause | undefined {
    this.pauses ??= activePauses(this.ctx);
    return this.pauses.length === 0 ? undefined : pauseCovering(this.pauses, { tenant, target });
  }

  private isStaged(bucket: number): boolean {
    let staged = this.staged.get(bucket);
    if (staged === undefined) {
      staged = this.ctx.isStaged(bucket);
      this.staged.set(bucket, staged);
    }
    return staged;
  }
}

/** Values of a job row, as jobInsertRows binds them (insert-statements.ts). */
const JOB_VALUES = 19;

/** What the occurrences of one group share. */
export interface OccurrenceGroup {
  readonly tenant: string;
  readonly target: string;
  readonly dueAt: number;
  readonly bucket: number;
}

/** A group's occurrences written row-wise: the rest of their shared values. */
export interface RowGroup extends OccurrenceGroup {
  readonly nominal: string;
  readonly expireAfterMs: number | null;
}

/** A group's inserted occurrences: seqs after `after` through `last`. */
interface Placed extends OccurrenceGroup {
  readonly after: number;
  readonly last: number;
}
