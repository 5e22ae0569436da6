import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../service/helpers.js";
import { tempDir } from "../support/temp-dir.js";
import { cliEnv, startNode, type Watched } from "./processes.js";

/**
 * A real `duetime serve` traced as docs/tracing.md says to: the SDK registered before it
 * starts with `node --import ./examples/tracing/register.mjs` (the real
 * @opentelemetry/sdk-trace-base, spans printed as JSON lines), delivering to a receiver on
 * 127.0.0.1. The webhook's traceparent is the attempt's span, which links to the schedule span
 * of the POST that created the job.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/cli/main.js");
const run = promisify(execFile);
const dir = tempDir("duetime-tracing-");
const db = join(dir.path, "jobs.db");

interface ExportedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  links: { traceId: string; spanId: string }[];
  status: number;
  attributes: Record<string, unknown>;
}

let serve: Watched;
let rx: Receiver;
let api = "";
let key = "";

beforeAll(async () => {
  const created = await run(
    process.execPath,
    [CLI, "keys", "create", "--tenant", "acme", "--db", db, "--json"],
    { env: cliEnv() },
  );
  key = (JSON.parse(created.stdout) as { key: string }).key;
  serve = startNode(
    [
      "--import",
      "./examples/tracing/register.mjs",
      CLI,
      "serve",
      "--db",
      db,
      "--port",
      "0",
      "--allow-private-targets",
      "--log-level",
      "warn",
    ],
    ROOT,
    cliEnv(),
  );
  api = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  rx = await startReceiver();
}, 60_000);

afterAll(async () => {
  await serve?.stop();
  await rx?.close();
  dir.cleanup();
});

/** Every span `duetime serve` exported so far. */
function spans(): ExportedSpan[] {
  return [...serve.output().matchAll(/^otel-span (.+)$/gm)].map(
    (m) => JSON.parse(m[1]!) as ExportedSpan,
  );
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${api}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("duetime serve with an OpenTelemetry SDK registered", () => {
  it("a batch's webhooks carry their attempt's traceparent, each attempt linked to the one schedule span", async () => {
    const res = await post("/v1/jobs/batch", {
      jobs: [
        { delayMs: 0, target: rx.url, payload: { n: 1 } },
        { delayMs: 0, target: rx.url, payload: { n: 2 } },
      ],
    });
    expect(res.status).toBe(201);
    const ids = ((await res.json()) as { jobs: { job: { id: string } }[] }).jobs.map(
      (j) => j.job.id,
    );
    const deliveries = await Promise.all([rx.nth(1), rx.nth(2)]);
    // A span is exported when it ends, after the receiver's answer is read: wait for both.
    const isFire = (s: ExportedSpan) => s.name === `fire ${new URL(rx.url).origin}`;
    for (let i = 0; i < 400 && spans().filter(isFire).length < 2; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const all = spans();
    const schedule = all.filter((s) => s.name === "schedule");
    expect(schedule).toHaveLength(1);
    expect(schedule[0]!.attributes["messaging.batch.message_count"]).toBe(2);
    const fires = all.filter(isFire);
    expect(fires.map((f) => f.attributes["messaging.message.id"]).sort()).toEqual([...ids].sort());
    for (const d of deliveries) {
      const fire = fires.find((f) => d.headers.traceparent === `00-${f.traceId}-${f.spanId}-01`);
      expect(fire, `a fire span for traceparent ${String(d.headers.traceparent)}`).toBeDefined();
      expect(fire!.attributes["duetime.tenant"]).toBe("acme");
      expect(fire!.parentSpanId).toBeNull();
      expect(fire!.traceId).not.toBe(schedule[0]!.traceId);
      expect(fire!.links).toEqual([{ traceId: schedule[0]!.traceId, spanId: schedule[0]!.spanId }]);
    }
  }, 60_000);
});
