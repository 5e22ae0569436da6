// Registers an OpenTelemetry SDK before duetime starts, so `duetime serve` (or any program
// using the library) records its spans. duetime itself only calls @opentelemetry/api.
//
//   node --import ./examples/tracing/register.mjs node_modules/duetime/dist/cli/main.js serve --db jobs.db
//
// Spans are printed to stdout, one JSON line each ("otel-span {...}"), so this runs with
// nothing but the SDK's base packages; in production register @opentelemetry/sdk-node with
// an OTLP exporter instead (docs/tracing.md). The W3C propagator is what puts `traceparent`
// on webhook deliveries.
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** A span exporter writing one JSON line per finished span. */
const jsonLines = {
  export(spans, done) {
    for (const s of spans) {
      const { traceId, spanId } = s.spanContext();
      const line = {
        name: s.name,
        traceId,
        spanId,
        parentSpanId: s.parentSpanContext?.spanId ?? null,
        links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
        status: s.status.code,
        attributes: s.attributes,
      };
      process.stdout.write(`otel-span ${JSON.stringify(line)}\n`);
    }
    done({ code: ExportResultCode.SUCCESS });
  },
  shutdown: async () => undefined,
};

trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(jsonLines)] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
