import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routesOf } from "../../src/service/server.js";
import { startTestService, type TestService } from "./helpers.js";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.close();
});

describe("/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const r = await t.api("GET", "/openapi.json", { key: null });
    expect(r.status).toBe(200);
    const validator = new Validator();
    const res = await validator.validate(r.body);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(r.body.openapi).toBe("3.1.0");
  });

  it("lists exactly the routes the server has", async () => {
    const doc = (await t.api("GET", "/openapi.json", { key: null })).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.keys(ops)
          .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
          .map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`),
      )
      .sort();
    expect(routesOf(t.svc.app).sort()).toEqual(documented);
  });

  it("every documented operation answers with a status it documents", async () => {
    const doc = (await t.api("GET", "/openapi.json", { key: null })).body as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>
      >;
    };
    const created = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 3_600_000, target: "https://a.example/hook" },
    });
    const id = created.body.job.id as string;
    const bodies: Record<string, unknown> = {
      "POST /v1/jobs": { delayMs: 3_600_000, target: "https://a.example/hook" },
      "POST /v1/jobs/batch": { jobs: [{ delayMs: 3_600_000, target: "https://a.example/hook" }] },
      "POST /v1/jobs/{id}/reschedule": { delayMs: 7_200_000 },
      "POST /mcp": { jsonrpc: "2.0", id: 1, method: "tools/list" },
      "POST /v1/schedules": { cron: "0 9 * * *", target: "https://a.example/hook" },
      "POST /v1/schedules/preview": { cron: "0 9 * * *", count: 2 },
      "POST /v1/pauses": { scope: { tag: "openapi-check" } },
      "POST /v1/dashboard/jobs/{id}/reschedule": { dueAt: "in 3 hours" },
      "POST /v1/dashboard/jobs/{id}/retry": {},
      "POST /v1/dashboard/pauses": { scope: { tag: "openapi-dashboard-check" } },
    };
    let streams = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        const body = bodies[name];
        const url = path.replace("{id}", id);
        // A stream never ends: its status is read from the headers, then the stream is closed.
        const streaming = Object.values(op.responses).some(
          (res) => res.content?.["text/event-stream"] !== undefined,
        );
        const status = streaming
          ? await streamStatus(url)
          : (
              await t.api(method.toUpperCase(), url, {
                ...(body === undefined ? {} : { body }),
                headers: { accept: "application/json, text/event-stream" },
              })
            ).status;
        if (streaming) streams++;
        expect(Object.keys(op.responses), `${name} answered ${status}`).toContain(String(status));
      }
    }
    expect(streams).toBe(1);
  });

  /** Status of a GET that answers a stream, read from its headers (200 checked to stream). */
  async function streamStatus(path: string): Promise<number> {
    const abort = new AbortController();
    try {
      const res = await fetch(t.svc.url + path, {
        headers: { authorization: `Bearer ${t.acme.key}` },
        signal: abort.signal,
      });
      if (res.status === 200) {
        expect(res.headers.get("content-type")).toContain("text/event-stream");
        const first = await res.body!.getReader().read();
        expect(first.done).toBe(false);
      } else {
        await res.text();
      }
      return res.status;
    } finally {
      abort.abort();
    }
  }
});
