import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidJobError } from "../../src/core/errors.js";
import { answerProblem, send, startFuzzService, type FuzzService } from "./fuzz-service.js";

/**
 * What the fuzz suites found outside every other slice of issue 10, fixed at the root and
 * kept here as plain regression tests (each failed before its fix).
 */

let t: FuzzService;
beforeAll(async () => {
  t = await startFuzzService();
});
afterAll(async () => {
  await t?.close();
});

describe("fuzz findings", () => {
  it('an error names an empty field name as "" and cuts a long one (InvalidJobError)', () => {
    const empty = new InvalidJobError("", "no such field", "x");
    expect(empty.field).toBe('""');
    expect(empty.message).toBe('"": expected no such field, received "x"');
    const long = new InvalidJobError("k".repeat(5000), "no such field", 1);
    expect(long.field).toBe(`"${"k".repeat(100)}... (5000 characters)"`);
    expect(new InvalidJobError("jobs[3].dueAt", "a time", 1).field).toBe("jobs[3].dueAt");
    expect(new InvalidJobError("headers.X-Trace_1", "a value", 1).field).toBe("headers.X-Trace_1");
    expect(new InvalidJobError(":", "no such field", 1).message).toBe(
      '":": expected no such field, received 1',
    );
    expect(new InvalidJobError("in 2 weeks", "no such field", 1).field).toBe("in 2 weeks");
    expect(new InvalidJobError(" a\r\nb", "no such field", 1).field).toBe('" a\\r\\nb"');
  });

  it("a query parameter with an empty name is refused naming it (GET /v1/stats?=1, /v1/jobs?=1)", async () => {
    for (const path of [
      "/v1/stats?=1",
      "/v1/jobs?=1&limit=2",
      "/v1/stats?" + "k".repeat(300) + "=1",
    ]) {
      const a = await send(t.svc.url, {
        method: "GET",
        path,
        headers: { authorization: `Bearer ${t.acme.key}` },
      });
      expect(a.status).toBe(400);
      expect(answerProblem(a, "GET")).toBeNull();
      const field = (JSON.parse(a.text) as { error: { field: string } }).error.field;
      expect(field === '""' || field.endsWith('(300 characters)"')).toBe(true);
    }
  });

  it('an MCP argument with an empty name is refused naming it ""', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${t.svc.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${t.acme.key}` } },
    });
    const client = new Client({ name: "findings", version: "1.0.0" });
    await client.connect(transport);
    try {
      for (const [name, shown] of [
        ["", '""'],
        [":", '":"'],
        [",x", '",x"'],
      ]) {
        const r = await client.callTool({
          name: "task.status",
          arguments: { id: "x", [name!]: 1 },
        });
        expect(r.isError).toBe(true);
        const text = (r.content as { text: string }[])[0]!.text;
        expect(text).toContain(
          `${shown}: expected no such field (known fields: job_id, id, idempotency_key)`,
        );
      }
    } finally {
      await client.close();
    }
  });
});
