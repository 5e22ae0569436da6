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
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
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
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        const body = bodies[name];
        const r = await t.api(method.toUpperCase(), path.replace("{id}", id), {
          ...(body === undefined ? {} : { body }),
          headers: { accept: "application/json, text/event-stream" },
        });
        expect(Object.keys(op.responses), `${name} answered ${r.status}`).toContain(
          String(r.status),
        );
      }
    }
  });
});
