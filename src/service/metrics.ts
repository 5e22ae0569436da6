import client from "prom-client";
import type { Scheduler } from "../api/scheduler.js";
import type { Store } from "../stores/open-store.js";
import { JOB_STATUSES } from "../core/job.js";
import type { DeliveryAttempt } from "./webhook/deliver.js";

/** The scheduler events counted in duetime_job_outcomes_total. */
const OUTCOMES = ["succeeded", "failed", "deferred", "dead", "expired"] as const;

/**
 * Prometheus metrics of one server (prom-client, a registry of its own so two servers in
 * one process, as in tests, never collide). Outcomes and lateness come from the scheduler's
 * events, claim batch sizes from the store (see observeClaims), counts by state and the
 * backlog are read from the store's counters at scrape time (no row counting).
 */
export class ServiceMetrics {
  readonly registry = new client.Registry();
  private readonly outcomes: client.Counter<"outcome">;
  private readonly lateness: client.Histogram;
  private readonly claimBatch: client.Histogram;
  private readonly deliveries: client.Counter<"outcome">;
  private readonly deliverySeconds: client.Histogram<"outcome">;
  readonly httpRequests: client.Counter<"method" | "route" | "status">;
  readonly httpSeconds: client.Histogram<"method" | "route">;
  private readonly readinessProbes: client.Counter<"result">;

  constructor() {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: "duetime_process_" });
    this.outcomes = new client.Counter({
      name: "duetime_job_outcomes_total",
      help:
        "Attempts settled by this process, by outcome (succeeded, failed = will retry, dead, expired; " +
        "deferred = handed back unattempted because a dependency such as the database was down)",
      labelNames: ["outcome"],
      registers,
    });
    for (const o of OUTCOMES) this.outcomes.inc({ outcome: o }, 0);
    this.lateness = new client.Histogram({
      name: "duetime_fire_lateness_seconds",
      help: "How late attempts started after their due time",
      buckets: [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
      ],
      registers,
    });
    this.claimBatch = new client.Histogram({
      name: "duetime_claim_batch_size",
      help: "Jobs per non-empty claim statement",
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000],
      registers,
    });
    this.deliveries = new client.Counter({
      name: "duetime_webhook_deliveries_total",
      help: "Webhook attempts by outcome (delivered, retry, permanent, refused, unavailable)",
      labelNames: ["outcome"],
      registers,
    });
    this.deliverySeconds = new client.Histogram({
      name: "duetime_webhook_duration_seconds",
      help: "Webhook attempt duration, by outcome",
      labelNames: ["outcome"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.httpRequests = new client.Counter({
      name: "duetime_http_requests_total",
      help: "HTTP requests answered, by route and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.httpSeconds = new client.Histogram({
      name: "duetime_http_request_duration_seconds",
      help: "HTTP request duration, by route",
      labelNames: ["method", "route"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.readinessProbes = new client.Counter({
      name: "duetime_readiness_probes_total",
      help: "Store probes run for /readyz (answers in between come from the cached probe), by result",
      labelNames: ["result"],
      registers,
    });
    for (const r of ["ready", "unavailable"]) this.readinessProbes.inc({ result: r }, 0);
  }

  observeReadiness(ready: boolean): void {
    this.readinessProbes.inc({ result: ready ? "ready" : "unavailable" });
  }

  /** Counts the scheduler's outcomes and reads its backlog at scrape time. */
  watch(scheduler: Scheduler): void {
    const onOutcome =
      (outcome: string) =>
      ({ latenessMs }: { latenessMs: number }): void => {
        this.outcomes.inc({ outcome });
        // Expired and deferred jobs did not start an attempt: no lateness of theirs.
        if (outcome !== "expired" && outcome !== "deferred") {
          this.lateness.observe(Math.max(0, latenessMs) / 1000);
        }
      };
    for (const o of OUTCOMES) scheduler.on(o, onOutcome(o));
    const registers = [this.registry];
    const jumps = new client.Counter({
      name: "duetime_clock_jumps_total",
      help: "Steps of the wall clock against the monotonic clock noticed by this process, by direction (forward, back)",
      labelNames: ["direction"],
      registers,
    });
    for (const d of ["forward", "back"]) jumps.inc({ direction: d }, 0);
    const jumpSize = new client.Histogram({
      name: "duetime_clock_jump_seconds",
      help: "Size of the wall-clock jumps noticed (absolute)",
      buckets: [1, 2, 5, 10, 30, 60, 300, 3600],
      registers,
    });
    scheduler.on("clockJump", ({ jumpMs }) => {
      jumps.inc({ direction: jumpMs > 0 ? "forward" : "back" });
      jumpSize.observe(Math.abs(jumpMs) / 1000);
    });
    // Only for a store with a clock of its own (PostgreSQL); SQLite shares this machine's.
    if (scheduler.storeInfo().ownClock) {
      new client.Gauge({
        name: "duetime_clock_skew_seconds",
        help: "This node's clock minus the database's at the latest check (NaN before the first)",
        registers,
        async collect() {
          this.set(((await stats()).clock.skewMs ?? NaN) / 1000);
        },
      });
    }
    // One read of the store's counters per scrape, shared by the gauges below.
    let snapshot: { at: number; stats: ReturnType<Scheduler["stats"]> } | null = null;
    const stats = (): ReturnType<Scheduler["stats"]> => {
      const now = Date.now();
      if (!snapshot || now - snapshot.at > 250) {
        snapshot = { at: now, stats: scheduler.stats({ buckets: 0 }) };
      }
      return snapshot.stats;
    };
    new client.Gauge({
      name: "duetime_jobs",
      help: "Jobs in the store by state (all tenants), from the store's counters",
      labelNames: ["status"],
      registers,
      async collect() {
        const s = await stats();
        for (const st of JOB_STATUSES) this.set({ status: st }, s.counts[st]);
      },
    });
    new client.Gauge({
      name: "duetime_backlog_overdue",
      help: "Pending jobs in buckets that ended before now (the catch-up backlog)",
      registers,
      async collect() {
        const s = await stats();
        const now = scheduler.now();
        let n = 0;
        for (const b of s.buckets) if (b.bucket + s.bucketWidthMs <= now) n += b.pending;
        this.set(n);
      },
    });
    new client.Gauge({
      name: "duetime_paused_jobs",
      help: "Jobs held by pauses (all tenants; counted in duetime_jobs pending too), from the store's counters",
      registers,
      async collect() {
        this.set((await stats()).paused.jobs);
      },
    });
    new client.Gauge({
      name: "duetime_active_pauses",
      help: "Pauses active now (all tenants)",
      registers,
      async collect() {
        this.set((await stats()).paused.activePauses);
      },
    });
    new client.Gauge({
      name: "duetime_in_flight",
      help: "Jobs claimed by this process and not yet settled",
      registers,
      async collect() {
        this.set((await stats()).inFlight);
      },
    });
  }

  observeClaim(size: number): void {
    if (size > 0) this.claimBatch.observe(size);
  }

  observeDelivery(a: DeliveryAttempt): void {
    this.deliveries.inc({ outcome: a.outcome });
    this.deliverySeconds.observe({ outcome: a.outcome }, a.durationMs / 1000);
  }
}

/**
 * The store as is, except that each claim's batch size is reported: the engine's claim loop
 * is internal, and the store interface is where a claim is visible from outside.
 */
export function observeClaims(store: Store, onClaim: (size: number) => void): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "jobsClaimDue") {
        return async (params: Parameters<Store["jobsClaimDue"]>[0]) => {
          const jobs = await target.jobsClaimDue(params);
          onClaim(jobs.length);
          return jobs;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
