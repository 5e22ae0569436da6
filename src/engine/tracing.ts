import type * as OtelApi from "@opentelemetry/api";
import type { Span, SpanContext } from "@opentelemetry/api";
import { createRequire } from "node:module";
import type { Job, NewJob } from "../core/job.js";

/**
 * OpenTelemetry instrumentation through `@opentelemetry/api` only: a no-op unless the
 * application registers an SDK (docs/tracing.md). A span for each schedule call, one for
 * each attempt when a job fires; the trace context active at schedule time is stored with
 * the job (its own column, `traceContext`: a W3C traceparent, 55 bytes) and comes back with
 * the claimed job as a span link of each attempt, not its parent: a job may fire months after
 * the request that scheduled it. Attribute names follow the messaging semantic conventions
 * where they fit.
 */

/**
 * The API and duetime's tracer, loaded on first use. Synchronous (require of the package's
 * CommonJS build, the same module an ESM `import` of it resolves to, so the application's
 * registered SDK is seen), and not at import: a CLI command that schedules nothing
 * (`duetime --version`, `--help`) never loads it (docs/benchmarks.md, CLI start-up).
 */
let loaded: { readonly api: typeof OtelApi; readonly tracer: OtelApi.Tracer } | null = null;

function otel(): { readonly api: typeof OtelApi; readonly tracer: OtelApi.Tracer } {
  if (loaded === null) {
    const api = createRequire(import.meta.url)("@opentelemetry/api") as typeof OtelApi;
    loaded = { api, tracer: api.trace.getTracer("duetime") };
  }
  return loaded;
}

// Off only for the benchmark's same-run baseline (bench/tracing-overhead.ts).
let enabled = true;

/** Turns the instrumentation off (true) or back on; for the overhead benchmark only. */
export function setTracingDisabled(disabled: boolean): void {
  enabled = !disabled;
}

/** Runs `fn` inside a `schedule` span counting `count` jobs; errors are recorded on it. */
export function inScheduleSpan<T>(count: number, fn: () => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const { api, tracer } = otel();
  const span = tracer.startSpan("schedule", { kind: api.SpanKind.PRODUCER });
  // Without an SDK the span records nothing: no attributes, no context switch, no promise
  // of its own around the call.
  if (!span.isRecording()) return fn();
  span.setAttributes({
    "messaging.system": "duetime",
    "messaging.operation.type": "create",
    "messaging.operation.name": "schedule",
    "messaging.batch.message_count": count,
  });
  return inSpan(api, span, fn);
}

async function inSpan<T>(api: typeof OtelApi, span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await api.context.with(api.trace.setSpan(api.context.active(), span), fn);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The jobs carrying the active span's context (`traceContext`); the same array when no span
 * is recording (no SDK: nothing is stored, the column stays NULL).
 */
export function withTraceContext(jobs: NewJob[]): NewJob[] {
  if (!enabled) return jobs;
  const span = otel().api.trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return jobs;
  const traceparent = formatTraceparent(span.spanContext());
  if (jobs.length === 1) span.setAttribute("messaging.message.id", jobs[0]!.id);
  return jobs.map((j) => ({ ...j, traceContext: traceparent }));
}

/** An attempt's span, started as the handler is about to run; null when tracing is off. */
export interface AttemptTrace {
  readonly span: Span;
  /** Runs `fn` with the attempt's span active (a webhook carries it as `traceparent`). */
  run<T>(fn: () => T): T;
}

/** Starts the span of one attempt of `job`, linked to the span that scheduled it. */
export function startAttemptSpan(job: Job, latenessMs: number): AttemptTrace | null {
  if (!enabled) return null;
  const { api, tracer } = otel();
  // A root: the attempt belongs to no request of its own, only to the job's link.
  const span = tracer.startSpan("fire", { kind: api.SpanKind.CONSUMER, root: true });
  // Without an SDK the span records nothing: no name, link or attributes built.
  if (!span.isRecording()) return null;
  const destination = job.target.startsWith("http") ? safeOrigin(job.target) : job.target;
  span.updateName(`fire ${destination}`);
  const stored = parseTraceparent(api, job.traceContext);
  if (stored) span.addLink({ context: stored });
  span.setAttributes({
    "messaging.system": "duetime",
    "messaging.operation.type": "process",
    "messaging.operation.name": "fire",
    "messaging.message.id": job.id,
    "messaging.destination.name": destination,
    "duetime.tenant": job.tenant,
    "duetime.attempt": job.attempts,
    "duetime.max_attempts": job.maxAttempts,
    "duetime.lateness_ms": latenessMs,
  });
  const active = api.trace.setSpan(api.context.active(), span);
  return { span, run: (fn) => api.context.with(active, fn) };
}

/** Ends an attempt's span with its outcome; a failure records the error and the retry time. */
export function endAttemptSpan(
  t: AttemptTrace | null,
  outcome: "succeeded" | "retry" | "dead" | "released",
  err: unknown,
  extra: { retryAt?: number } = {},
): void {
  if (t === null) return;
  t.span.setAttribute("duetime.outcome", outcome);
  if (extra.retryAt !== undefined) t.span.setAttribute("duetime.retry_at", extra.retryAt);
  if (err !== null && err !== undefined) failed(t.span, err);
  else t.span.setStatus({ code: otel().api.SpanStatusCode.OK });
  t.span.end();
}

/** W3C trace context headers (`traceparent`, `tracestate`) of the active span, added to `headers`. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if (!enabled) return;
  const { api } = otel();
  api.propagation.inject(api.context.active(), headers);
}

function failed(span: Span, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: otel().api.SpanStatusCode.ERROR, message: error.message });
}

/** `00-<trace id>-<span id>-<flags>` (W3C Trace Context, version 00). */
function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function parseTraceparent(api: typeof OtelApi, value: string | null): SpanContext | null {
  if (value === null) return null;
  const m = TRACEPARENT.exec(value);
  if (!m) return null;
  const sc: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16),
    isRemote: true,
  };
  return api.isSpanContextValid(sc) ? sc : null;
}

/** A URL target's origin (no path or query, which may carry tokens), or "webhook". */
function safeOrigin(target: string): string {
  try {
    return new URL(target).origin;
  } catch {
    return "webhook";
  }
}
