import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anyJson, anyKey, anyText, dueTime, mutate, oddNumber, wrongType } from "./arbitraries.js";
import {
  fuzz,
  runsFor,
  snapshot,
  startFuzzService,
  timeoutFor,
  type FuzzService,
} from "./fuzz-service.js";

/**
 * Property-based fuzz of the MCP tools through the official SDK client, over the service's
 * /mcp (streamable HTTP, bearer key): every tool with mutated, mistyped and random
 * arguments, and tool names that do not exist. For every call: no internal error; a refused
 * call is a tool error that names the argument at fault in the library's wording
 * (`field: expected X, received Y`) or is a definite outcome (not-found, too-late,
 * version-conflict, key-conflict), and leaves the store unchanged.
 */

const RUNS = runsFor(0.25);
const TOOLS = ["task.create", "task.list", "task.status", "task.cancel", "task.reschedule"];
let t: FuzzService;
let client: Client;

/** A field name as fieldLabel writes one: plain, or quoted as JSON. */
const FIELD = '(?:"(?:[^"\\\\]|\\\\.)*"|[^\\s:",][^:",]*)';
/** A refusal the tools may give: invalid input naming its field, or a definite outcome. */
const REFUSAL = new RegExp(
  [
    // the SDK's own schema check prefixes the tool's message
    "^(?:MCP error -32602: Input validation error: Invalid arguments for tool \\S+: |(?!MCP error))",
    `(?:${FIELD}(?:, ${FIELD})*: expected .+, received `,
    "|(?:not-found|too-late|version-conflict|key-conflict): )",
    // an unknown tool ("disabled": the SDK looks names up in a plain object, so __proto__
    // is found there, not enabled)
    "|^MCP error -32602: Tool .* (?:not found|disabled)$",
  ].join(""),
  "s",
);

/** FUZZ_COLLECT=1: failures are tallied and printed, not thrown. */
const collected = new Map<string, { n: number; example: string }>();
function fail(kind: string, message: string): void {
  if (process.env.FUZZ_COLLECT !== "1") throw new Error(message);
  const c = collected.get(kind) ?? { n: 0, example: message };
  c.n++;
  collected.set(kind, c);
}

interface Call {
  name: string;
  /** Index into the known ids where the arguments carry `id`. */
  known: number;
  args: Record<string, unknown>;
}

function callPlan(now: number, webhook: string): fc.Arbitrary<Call> {
  const id = fc.oneof(fc.constant("KNOWN"), anyText);
  const when = fc.oneof(dueTime(now).map(String), anyText);
  const create = mutate(
    fc.record(
      {
        description: fc.string({ minLength: 1, maxLength: 40 }),
        scheduled_at: when,
        timezone: fc.constantFrom("UTC", "Europe/Paris"),
        webhook_url: fc.constantFrom(webhook, "https://example.com/hook"),
        webhook_headers: fc.constantFrom({ "x-ref": "1" }, { Expect: "100-continue" }),
        payload: anyJson,
        idempotency_key: fc.string({ minLength: 1, maxLength: 20 }),
        max_attempts: fc.oneof(fc.integer({ min: 1, max: 5 }), oddNumber),
        expire_after_ms: fc.integer({ min: 0, max: 86_400_000 }),
      },
      { requiredKeys: ["description", "scheduled_at"] },
    ),
    ["description", "scheduled_at", "timezone", "webhook_url", "webhook_headers", "max_attempts"],
  );
  const list = mutate(
    fc.record(
      {
        status: fc.oneof(
          fc.constantFrom("pending", "dead", "succeeded"),
          fc.array(fc.constantFrom("pending", "claimed", "cancelled"), { maxLength: 3 }),
        ),
        due_from: when,
        due_to: when,
        timezone: fc.constantFrom("UTC", "Not/AZone"),
        cursor: anyText,
        limit: fc.oneof(fc.integer({ min: 1, max: 100 }), oddNumber),
      },
      { requiredKeys: [] },
    ),
    ["status", "due_from", "due_to", "timezone", "cursor", "limit"],
  );
  const byId = mutate(fc.record({ id }), ["id"]);
  const reschedule = mutate(
    fc.record(
      {
        id,
        scheduled_at: when,
        timezone: fc.constantFrom("UTC", "Europe/Paris"),
        expected_version: fc.oneof(fc.integer({ min: 0, max: 5 }), oddNumber),
      },
      { requiredKeys: ["id", "scheduled_at"] },
    ),
    ["id", "scheduled_at", "timezone", "expected_version"],
  );
  const random = fc.dictionary(anyKey, fc.oneof(anyJson, wrongType), { maxKeys: 4 });
  const byTool: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
    "task.create": create,
    "task.list": list,
    "task.status": byId,
    "task.cancel": byId,
    "task.reschedule": reschedule,
  };
  // one record per tool, built once: building arbitraries per value costs milliseconds
  const calls = Object.entries(byTool).map(([name, own]) =>
    fc.record({
      name: fc.constant(name),
      known: fc.nat(),
      args: fc.oneof({ weight: 6, arbitrary: own }, { weight: 1, arbitrary: random }),
    }),
  );
  const unknownTool = fc.record({
    name: fc.constantFrom("task.delete", "task_create", "", "__proto__"),
    known: fc.nat(),
    args: random,
  });
  return fc.oneof(...calls.map((arbitrary) => ({ weight: 12, arbitrary })), {
    weight: 1,
    arbitrary: unknownTool,
  });
}

beforeAll(async () => {
  t = await startFuzzService();
  const transport = new StreamableHTTPClientTransport(new URL(`${t.svc.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${t.acme.key}` } },
  });
  client = new Client({ name: "fuzz", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("fuzz: MCP tools (official SDK client over /mcp)", () => {
  it("lists the five tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...TOOLS].sort());
  });

  it(
    `answers ${RUNS} random tool calls with no internal error, a named field or outcome for every refusal, and no change on refusal`,
    async () => {
      let before = await snapshot(t);
      const tally = new Map<string, number>();
      const r = await fuzz(
        "mcp-tools",
        callPlan(t.clock.now(), t.receiver.url),
        RUNS,
        async (c) => {
          const args = { ...c.args };
          if (args.id === "KNOWN") args.id = t.knownIds[c.known % t.knownIds.length];
          const what = `${c.name}(${JSON.stringify(args).slice(0, 400)})`;
          let result: Awaited<ReturnType<Client["callTool"]>>;
          try {
            result = await client.callTool({ name: c.name, arguments: args });
          } catch (err) {
            // The HTTP layer may refuse the request itself (a prototype key in the arguments
            // fails the JSON parser): allowed when it answers in the one error shape.
            const m = (err as Error).message;
            const refusedByHttp =
              /Error POSTing to endpoint: \{"error":\{"code":"[^"]+","field":"[^"]+"/.test(m);
            const after = await snapshot(t);
            if (!refusedByHttp) {
              fail(
                `${c.name} threw ${m.slice(0, 60)}`,
                `${what}\n  -> the call failed: ${m.slice(0, 500)}`,
              );
            } else if (after !== before) {
              fail(`${c.name} changed`, `${what}\n  -> refused, but the store changed: ${m}`);
            }
            tally.set(
              `${c.name} refused-by-http`,
              (tally.get(`${c.name} refused-by-http`) ?? 0) + 1,
            );
            before = after;
            return;
          }
          const content = result.content as { type: string; text?: string }[];
          const text = content[0]?.text ?? "";
          const after = await snapshot(t);
          const kind = result.isError ? "refused" : "ok";
          tally.set(`${c.name} ${kind}`, (tally.get(`${c.name} ${kind}`) ?? 0) + 1);
          if (result.isError) {
            if (!REFUSAL.test(text)) {
              fail(
                `${c.name} unnamed ${text.slice(0, 60)}`,
                `${what}\n  -> an error that names no field or outcome: ${text.slice(0, 500)}`,
              );
            } else if (after !== before) {
              fail(`${c.name} changed`, `${what}\n  -> refused, but the store changed: ${text}`);
            }
          } else {
            const id = (result.structuredContent as { task?: { id?: unknown } } | undefined)?.task
              ?.id;
            if (typeof id === "string" && t.knownIds.length < 200 && !t.knownIds.includes(id)) {
              t.knownIds.push(id);
            }
          }
          before = after;
        },
      );
      const total = [...tally.values()].reduce((a, b) => a + b, 0);
      console.log(
        [
          `fuzz mcp-tools: ${total} calls in ${(r.ms / 1000).toFixed(1)} s (${Math.round(total / (r.ms / 1000))}/s), 0 invariant failures`,
          "| tool | answer | calls |",
          "|---|---|---|",
          ...[...tally.entries()].sort().map(([k, n]) => `| ${k.replace(" ", " | ")} | ${n} |`),
        ].join("\n"),
      );
      for (const [k, v] of collected) console.log(`${v.n}x ${k}\n${v.example}\n`);
      expect(tally.get("task.create ok") ?? 0).toBeGreaterThan(0);
      expect(tally.get("task.create refused") ?? 0).toBeGreaterThan(0);
    },
    timeoutFor(RUNS),
  );
});
