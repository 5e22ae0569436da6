import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type ApiResult, type TestService } from "./helpers.js";

/** The one error shape (docs/http-api.md) with this status, code and field. */
function expectError(r: ApiResult, status: number, code: string, field: string): void {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.body).toEqual({
    error: {
      code,
      field,
      expected: expect.any(String),
      received: expect.any(String),
      message: expect.any(String),
    },
  });
}

const JOB = { delayMs: 3_600_000, target: "http://127.0.0.1:9/hook" };

describe("errors keep one shape: media types, assets", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it("answers a text/plain body 415 naming content-type, as documented, and stores nothing", async () => {
    const r = await t.api("POST", "/v1/jobs", {
      raw: JSON.stringify(JOB),
      headers: { "content-type": "text/plain" },
    });
    expectError(r, 415, "unsupported-media-type", "content-type");
    expect(r.body.error.received).toBe('"text/plain"');
    expect((await t.api("GET", "/v1/jobs")).body.jobs).toEqual([]);
  });

  it("refuses a charset other than UTF-8 instead of reading the body as UTF-8 anyway", async () => {
    for (const type of ["application/json; charset=utf-16", "application/json;charset=latin1"]) {
      const r = await t.api("POST", "/v1/jobs", {
        raw: JSON.stringify(JOB),
        headers: { "content-type": type },
      });
      expectError(r, 415, "unsupported-media-type", "content-type");
      expect(r.body.error.expected).toContain("UTF-8");
    }
    expect((await t.api("GET", "/v1/jobs")).body.jobs).toEqual([]);
  });

  it("accepts JSON with no charset or with charset=utf-8 in any case", async () => {
    for (const type of [
      "application/json",
      "application/json; charset=utf-8",
      'application/json; charset="UTF-8"',
    ]) {
      const r = await t.api("POST", "/v1/jobs", {
        raw: JSON.stringify(JOB),
        headers: { "content-type": type },
      });
      expect(r.status).toBe(201);
    }
  });

  it("answers the dashboard's 415 exactly as the API's", async () => {
    const created = await t.api("POST", "/v1/jobs", { body: JOB });
    const id = created.body.job.id as string;
    const api = await t.api("POST", `/v1/jobs/${id}/reschedule`, {
      raw: '{"dueAt":"in 2 hours"}',
      headers: { "content-type": "text/plain" },
    });
    const dashboard = await t.api("POST", `/v1/dashboard/jobs/${id}/reschedule`, {
      raw: '{"dueAt":"in 2 hours"}',
      headers: { "content-type": "text/plain" },
    });
    expectError(api, 415, "unsupported-media-type", "content-type");
    expectError(dashboard, 415, "unsupported-media-type", "content-type");
    expect(dashboard.body).toEqual(api.body);
    const utf16 = await t.api("POST", `/v1/dashboard/jobs/${id}/reschedule`, {
      raw: '{"dueAt":"in 2 hours"}',
      headers: { "content-type": "application/json; charset=utf-16" },
    });
    expectError(utf16, 415, "unsupported-media-type", "content-type");
    expect(utf16.body.error.expected).toBe(api.body.error.expected);
    expect(utf16.body.error.received).toBe('"application/json; charset=utf-16"');
    expect((await t.api("GET", `/v1/jobs/${id}`)).body.job.version).toBe(created.body.job.version);
  });

  it("answers an unknown dashboard asset 404 in the error shape, not plain text", async () => {
    const r = await t.api("GET", "/assets/no-such-file.js", { key: null });
    expectError(r, 404, "no-route", "path");
    expect(r.body.error.received).toBe('"/assets/no-such-file.js"');
    const unsafe = await t.api("GET", "/assets/..%2Fpackage.json", { key: null });
    expect(unsafe.status).toBe(404);
    expect(unsafe.body.error.code).toBe("no-route");
  });
});
