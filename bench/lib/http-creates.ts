/**
 * Creates that keep arriving during a chaos run: writers POST batches of webhook jobs
 * (`/v1/jobs/batch`, one request at a time each) to `duetime serve` nodes (round robin) at a
 * steady pace, each job due a few seconds after its create, and record what was
 * acknowledged (201) and when. A refused or failed request
 * (the database away, a timeout) is counted and not retried: only acknowledged jobs count.
 */
import { sleepUntil } from "../chaos-common.js";

/** A create the service acknowledged. */
export interface AckedCreate {
  readonly id: string;
  readonly dueAt: number;
  /** When the 201 arrived (epoch ms). */
  readonly ackedAt: number;
}

export interface HttpCreatesOptions {
  /** Base URLs of the serve nodes (`http://127.0.0.1:port`). */
  readonly nodes: readonly string[];
  readonly apiKey: string;
  /** The webhook target of every job. */
  readonly target: string;
  /** Writers running at once (one request each at a time). */
  readonly writers: number;
  /** Jobs per request. */
  readonly batch: number;
  /** Each writer's pace: one create per this many ms (fewer when a request takes longer). */
  readonly everyMs: number;
  /** A job is due this many ms after its create, plus up to `leadMs` more at random. */
  readonly leadMs: number;
  /** No create is due after this (epoch ms): the writers stop when it is `leadMs` away. */
  readonly dueBy: number;
}

export class HttpCreates {
  readonly acked: AckedCreate[] = [];
  /** Jobs of requests answered with something else than 201, or not answered. */
  failed = 0;
  private stopped = false;
  private readonly running: Promise<void>[];

  constructor(private readonly o: HttpCreatesOptions) {
    this.running = Array.from({ length: o.writers }, (_, w) => this.write(w));
  }

  /** Stops the writers and resolves once their last requests have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  private async write(writer: number): Promise<void> {
    const { nodes, everyMs, leadMs, dueBy } = this.o;
    // Writers start spread across one pace period, so their requests interleave.
    let next = Date.now() + (writer * everyMs) / this.o.writers;
    for (let n = writer; !this.stopped; n += this.o.writers) {
      await sleepUntil(next);
      next += everyMs;
      const dueAt = Date.now() + leadMs + Math.floor(Math.random() * leadMs);
      if (dueAt + leadMs > dueBy) return;
      await this.createOne(nodes[n % nodes.length]!, dueAt, n);
    }
  }

  private async createOne(node: string, dueAt: number, n: number): Promise<void> {
    try {
      const jobs = Array.from({ length: this.o.batch }, (_, i) => ({
        dueAt: new Date(dueAt).toISOString(),
        target: this.o.target,
        payload: { http: n, i },
      }));
      const res = await fetch(`${node}/v1/jobs/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.o.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ jobs }),
        signal: AbortSignal.timeout(5000),
      });
      const answer = (await res.json()) as { jobs?: { job?: { id?: string } }[] };
      const ids = (answer.jobs ?? []).flatMap((j) =>
        typeof j.job?.id === "string" ? [j.job.id] : [],
      );
      if (res.status === 201 && ids.length === this.o.batch) {
        const ackedAt = Date.now();
        for (const id of ids) this.acked.push({ id, dueAt, ackedAt });
      } else {
        this.failed += this.o.batch;
      }
    } catch {
      this.failed += this.o.batch;
    }
  }
}
