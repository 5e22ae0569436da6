import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_JOB_FIELDS } from "../../src/service/job-input.js";
import { CALLBACK_FIELDS } from "../../src/core/callbacks.js";
import { HTTP_SCHEDULE_FIELDS } from "../../src/service/schedule-input.js";
import { startTestService, type ApiResult, type TestService } from "./helpers.js";

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ bodyLimit: 100_000, batchBodyLimit: 200_000 });
});
afterAll(async () => {
  await t.close();
});

const TARGET = "https://hooks.example.com/x";

function expectError(r: ApiResult, status: number, field?: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body.error).sort()).toEqual([
    "code",
    "expected",
    "field",
    "message",
    "received",
  ]);
  for (const v of Object.values(r.body.error)) expect(typeof v).toBe("string");
  if (field !== undefined) expect(r.body.error.field).toBe(field);
}

async function totalJobs(): Promise<number> {
  const c = (await t.api("GET", "/v1/stats")).body.counts as Record<string, number>;
  return Object.values(c).reduce((a, b) => a + b, 0);
}

describe("malformed requests get a 4xx naming the field, and store nothing", () => {
  const cases: [
    string,
    { raw?: string; body?: unknown; headers?: Record<string, string> },
    number,
    string,
  ][] = [
    ["bad JSON", { raw: '{"dueAt": "in 1 hour",' }, 400, "body"],
    ["JSON that is not an object", { body: [1, 2] }, 400, "body"],
    ["a string body", { body: "hello" }, 400, "body"],
    ["no due time", { body: { target: TARGET } }, 400, "dueAt"],
    ["wrong type of dueAt", { body: { dueAt: true, target: TARGET } }, 400, "dueAt"],
    ["unparseable time", { body: { dueAt: "when pigs fly", target: TARGET } }, 400, "dueAt"],
    [
      "ISO date that does not exist",
      { body: { dueAt: "2030-02-30T10:00:00", target: TARGET } },
      400,
      "dueAt",
    ],
    [
      "past beyond tolerance",
      { body: { dueAt: "2020-01-01T00:00:00Z", target: TARGET } },
      400,
      "dueAt",
    ],
    [
      "bad zone",
      { body: { dueAt: "tomorrow 9am", timeZone: "Mars/Olympus", target: TARGET } },
      400,
      "timeZone",
    ],
    [
      "dueAt and delayMs",
      { body: { dueAt: "in 1 hour", delayMs: 5, target: TARGET } },
      400,
      "delayMs",
    ],
    ["negative delay", { body: { delayMs: -5, target: TARGET } }, 400, "delayMs"],
    ["unknown field", { body: { delayMs: 5, target: TARGET, color: "red" } }, 400, "color"],
    ["missing target", { body: { delayMs: 5 } }, 400, "target"],
    ["non-http target", { body: { delayMs: 5, target: "file:///etc/passwd" } }, 400, "target"],
    ["javascript target", { body: { delayMs: 5, target: "javascript:alert(1)" } }, 400, "target"],
    [
      "target with credentials",
      { body: { delayMs: 5, target: "https://u:p@example.com/" } },
      400,
      "target",
    ],
    ["number target", { body: { delayMs: 5, target: 42 } }, 400, "target"],
    [
      "reserved header",
      { body: { delayMs: 5, target: TARGET, headers: { "Duetime-Signature": "x" } } },
      400,
      "headers.Duetime-Signature",
    ],
    [
      "header with newline",
      { body: { delayMs: 5, target: TARGET, headers: { "x-a": "a\r\nb: c" } } },
      400,
      "headers.x-a",
    ],
    [
      "bad header name",
      { body: { delayMs: 5, target: TARGET, headers: { "a b": "c" } } },
      400,
      "headers.a b",
    ],
    ["maxAttempts 0", { body: { delayMs: 5, target: TARGET, maxAttempts: 0 } }, 400, "maxAttempts"],
    [
      "maxAttempts text",
      { body: { delayMs: 5, target: TARGET, maxAttempts: "3" } },
      400,
      "maxAttempts",
    ],
    [
      "expireAfterMs float",
      { body: { delayMs: 5, target: TARGET, expireAfterMs: 1.5 } },
      400,
      "expireAfterMs",
    ],
    ["key too long", { body: { delayMs: 5, target: TARGET, key: "k".repeat(300) } }, 400, "key"],
    [
      "oversized payload",
      { body: { delayMs: 5, target: TARGET, payload: "x".repeat(70_000) } },
      400,
      "payload",
    ],
    [
      "body over the limit",
      { body: { delayMs: 5, target: TARGET, payload: "x".repeat(120_000) } },
      413,
      "body",
    ],
    [
      "__proto__ pollution",
      { raw: '{"delayMs":5,"target":"https://a.example/","__proto__":{"x":1}}' },
      400,
      "",
    ],
    [
      "not JSON content type",
      { raw: "delayMs=5", headers: { "content-type": "application/x-www-form-urlencoded" } },
      415,
      "content-type",
    ],
  ];
  for (const [name, req, status, field] of cases) {
    it(name, async () => {
      const r = await t.api("POST", "/v1/jobs", req);
      expectError(r, status, field === "" ? undefined : field);
      expect(await totalJobs()).toBe(0);
    });
  }

  it("bad list, stats, reschedule and route inputs", async () => {
    expectError(await t.api("GET", "/v1/jobs?status=sleeping"), 400, "status");
    expectError(await t.api("GET", "/v1/jobs?limit=0"), 400, "limit");
    expectError(await t.api("GET", "/v1/jobs?limit=abc"), 400, "limit");
    expectError(await t.api("GET", "/v1/jobs?cursor=nope"), 400, "cursor");
    expectError(await t.api("GET", "/v1/jobs?dueFrom=whenever"), 400, "dueFrom");
    expectError(await t.api("GET", "/v1/jobs?limit=1&limit=2"), 400, "limit");
    expectError(await t.api("GET", "/v1/jobs?color=red"), 400, "color");
    expectError(await t.api("GET", "/v1/stats?buckets=-1"), 400, "buckets");
    const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    expectError(await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: {} }), 400, "dueAt");
    expectError(
      await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: { dueAt: "nope" } }),
      400,
      "dueAt",
    );
    expectError(
      await t.api("POST", `/v1/jobs/${id}/reschedule`, { body: { when: 1 } }),
      400,
      "when",
    );
    expectError(
      await t.api("POST", `/v1/jobs/${id}/cancel`, { body: { force: true } }),
      400,
      "force",
    );
    expectError(await t.api("GET", "/v1/nothing-here"), 404, "path");
    expectError(await t.api("GET", `/v1/jobs/${"x".repeat(500)}`), 414, "path");
    expectError(await t.api("GET", "/v1/jobs/%E0%A4%A"), 400, "path");
    expectError(await t.api("PUT", "/v1/jobs"), 404, "path");
  });
});

describe("fuzz: no input produces a 500", () => {
  function randomValue(depth = 0): unknown {
    const pick = Math.floor(Math.random() * (depth > 2 ? 7 : 9));
    switch (pick) {
      case 0:
        return null;
      case 1:
        return Math.random() < 0.5;
      case 2:
        return [0, -1, 1.5, 1e308, -1e308, 2 ** 53, Date.now(), 1e21][
          Math.floor(Math.random() * 8)
        ];
      case 3:
        return [
          "",
          "in 10 minutes",
          "tomorrow 9am",
          "2030-01-01T00:00:00Z",
          "x".repeat(3000),
          "\u0000",
          "💥",
          "https://a.example/",
          "Europe/Paris",
          "__proto__",
        ][Math.floor(Math.random() * 10)];
      case 4:
        return randomBytes(8).toString("latin1");
      case 5:
        return -0;
      case 6:
        return "constructor";
      case 7:
        return Array.from({ length: Math.floor(Math.random() * 4) }, () => randomValue(depth + 1));
      default: {
        // The API's own lists of job and schedule fields, a batch's, and one it does not know.
        const keys = [...HTTP_JOB_FIELDS, ...HTTP_SCHEDULE_FIELDS, ...CALLBACK_FIELDS, "jobs", "x"];
        const o: Record<string, unknown> = {};
        for (let i = Math.floor(Math.random() * 6); i > 0; i--) {
          o[keys[Math.floor(Math.random() * keys.length)]!] = randomValue(depth + 1);
        }
        return o;
      }
    }
  }

  it("random bodies on every write route answer 2xx or 4xx with the error shape", async () => {
    const before = await totalJobs();
    let created = 0;
    const paths = [
      "/v1/jobs",
      "/v1/jobs/batch",
      "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/reschedule",
      "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel",
      "/v1/schedules",
      "/v1/schedules/preview",
    ];
    const scheduleFields = ["cron", "rrule", "timeZone", "start", "misfire", "headers", "count"];
    for (let i = 0; i < 360; i++) {
      const path = paths[i % paths.length]!;
      const mode = i % 3;
      const req =
        mode === 0
          ? { body: randomValue() }
          : mode === 1 && path.startsWith("/v1/schedules")
            ? {
                body: {
                  cron: "0 9 * * *",
                  ...(path === "/v1/schedules" ? { target: TARGET } : {}),
                  [scheduleFields[i % scheduleFields.length]!]: randomValue(),
                },
              }
            : mode === 1
              ? {
                  body: {
                    delayMs: 3_600_000,
                    target: TARGET,
                    [["payload", "key", "headers", "timeZone", "maxAttempts"][i % 5]!]:
                      randomValue(),
                  },
                }
              : { raw: randomBytes(1 + (i % 40)).toString(i % 2 ? "latin1" : "base64") };
      const r = await t.api("POST", path, req);
      expect(r.status, `${path} ${JSON.stringify(req)} -> ${JSON.stringify(r.body)}`).toBeLessThan(
        500,
      );
      if (r.status >= 400) {
        expect(typeof r.body.error.field).toBe("string");
        expect(typeof r.body.error.expected).toBe("string");
      } else if (r.status === 201) {
        // a series stores its first occurrence as one job
        created += path === "/v1/jobs/batch" ? r.body.jobs.length : 1;
      }
    }
    expect(await totalJobs()).toBe(before + created);
  });
});
