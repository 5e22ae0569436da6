import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { validateScheduleInput } from "../../src/core/schedule-input.js";
import { openStore } from "../../src/stores/open-store.js";
import { call } from "../mcp/helpers.js";
import { freshSchema, startPostgres, type PostgresServer } from "../support/postgres-server.js";
import { startTestService, type ApiResult, type TestService } from "./helpers.js";

/**
 * Issue 10 §1 over real HTTP and a real MCP client: hostile time text is refused by its
 * length before any parser runs, a due time outside the documented range (1970 to the end
 * of 9999) is refused before anything is written, and a row that holds such a time anyway
 * (written before the rule) does not turn reads into 500s.
 */

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const TARGET = "https://hooks.example.com/x";
/** The overflows: each answered 500 after storing the job. */
const OVERFLOWS = [
  "in 99999999999 weeks",
  "in 14300000 weeks",
  `in ${"9".repeat(190)} ms`,
  "9999-12-31T23:59:59-23:59",
];
/** "in 1" + 2,000 spaces + "x" held the event loop for 4.9 s in parseDelay. */
const HOSTILE = `in 1${" ".repeat(2000)}x`;

describe.each(["sqlite", "postgres"] as const)("on %s", (kind) => {
  let t: TestService;
  let clock: ManualClock;
  let mcp: Client;

  let pg: PostgresServer | undefined;

  beforeAll(async () => {
    clock = new ManualClock(T0);
    if (kind === "postgres") pg = await startPostgres();
    t = await startTestService({
      clock,
      ...(pg ? { db: `${pg.url}?schema=${freshSchema("hostile")}` } : {}),
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${t.svc.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${t.acme.key}` } },
    });
    mcp = new Client({ name: "hostile-time", version: "1.0.0" });
    await mcp.connect(transport);
  });
  afterAll(async () => {
    await mcp?.close();
    await t?.close();
    await pg?.stop();
  });

  function expectFieldError(r: ApiResult, field: string, expected: RegExp): void {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.field).toBe(field);
    expect(r.body.error.expected).toMatch(expected);
  }

  async function storedJobs(): Promise<number> {
    const counts = await t.svc.scheduler.counts();
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  const RANGE = /epoch-ms integer from 0 to 253402300799999/;

  describe("due times outside the range are refused before anything is written", () => {
    it.each(OVERFLOWS)(
      "POST /v1/jobs %j: 400 naming dueAt, nothing stored, key free",
      async (dueAt) => {
        const before = await storedJobs();
        const r = await t.api("POST", "/v1/jobs", {
          body: { dueAt, target: TARGET, key: "k-over" },
        });
        expectFieldError(r, "dueAt", dueAt.length > 200 ? /at most 200 characters/ : RANGE);
        expect(await storedJobs()).toBe(before);
        const list = await t.api("GET", "/v1/jobs");
        expect(list.status).toBe(200);
        // the key is not held by an invisible job: the next create with it is a new job
        const ok = await t.api("POST", "/v1/jobs", {
          body: { dueAt: "in 1 hour", target: TARGET, key: "k-over" },
        });
        expect(ok.status).toBe(201);
        expect((await t.api("POST", `/v1/jobs/${ok.body.job.id}/cancel`)).status).toBe(200);
      },
    );

    it("a batch with one overflowing item stores none of it", async () => {
      const before = await storedJobs();
      const r = await t.api("POST", "/v1/jobs/batch", {
        body: {
          jobs: [
            { dueAt: "in 1 hour", target: TARGET },
            { dueAt: OVERFLOWS[0], target: TARGET },
          ],
        },
      });
      expectFieldError(r, "jobs[1].dueAt", RANGE);
      expect(await storedJobs()).toBe(before);
    });

    it("reschedule (REST and dashboard) refuses it and leaves the job as it was", async () => {
      const job = (
        await t.api("POST", "/v1/jobs", { body: { dueAt: "in 1 hour", target: TARGET } })
      ).body.job;
      for (const dueAt of OVERFLOWS.slice(0, 2).concat(OVERFLOWS[3]!)) {
        expectFieldError(
          await t.api("POST", `/v1/jobs/${job.id}/reschedule`, { body: { dueAt } }),
          "dueAt",
          RANGE,
        );
        expectFieldError(
          await t.api("POST", `/v1/dashboard/jobs/${job.id}/reschedule`, { body: { dueAt } }),
          "dueAt",
          RANGE,
        );
      }
      const after = await t.api("GET", `/v1/jobs/${job.id}`);
      expect(after.status).toBe(200);
      expect(after.body.job.dueAt).toBe(job.dueAt);
      expect(after.body.job.version).toBe(job.version);
    });

    it("a list bound beyond the range is a 400, not a query", async () => {
      expectFieldError(
        await t.api("GET", "/v1/jobs?dueFrom=in%2099999999999%20weeks"),
        "dueFrom",
        RANGE,
      );
      expectFieldError(
        await t.api("GET", "/v1/dashboard/jobs?dueTo=9999-12-31T23:59:59-23:59"),
        "dueTo",
        RANGE,
      );
      // a forged cursor past the safe integers (PostgreSQL: a bigint error, a 500)
      const id = "01M8RDMG8WDC91MR6E7G09W1H4";
      const cursor = Buffer.from(JSON.stringify([1e300, id])).toString("base64url");
      for (const path of ["/v1/jobs", "/v1/dashboard/jobs"]) {
        const r = await t.api("GET", `${path}?cursor=${cursor}`);
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body.error.field).toBe("cursor");
      }
    });

    it("MCP task.create and task.reschedule answer a tool error and store nothing", async () => {
      const before = await storedJobs();
      for (const scheduled_at of [OVERFLOWS[0], OVERFLOWS[1], OVERFLOWS[3]]) {
        const r = await call(mcp, "task.create", { description: "far", scheduled_at });
        expect(r.isError, r.text).toBe(true);
        expect(r.structured.field).toBe("scheduled_at");
        expect(r.structured.expected).toMatch(RANGE);
      }
      expect(await storedJobs()).toBe(before);
      const list = await call(mcp, "task.list", {});
      expect(list.isError, list.text).toBe(false);
      const made = await call(mcp, "task.create", {
        description: "near",
        scheduled_at: "in 1 hour",
      });
      const id = (made.structured.task as { id: string }).id;
      const moved = await call(mcp, "task.reschedule", { id, scheduled_at: OVERFLOWS[0] });
      expect(moved.isError, moved.text).toBe(true);
      expect(moved.structured.field).toBe("scheduled_at");
      const status = await call(mcp, "task.status", { id });
      expect(status.isError, status.text).toBe(false);
      expect((status.structured.task as { scheduled_at: string }).scheduled_at).toBe(
        new Date(T0 + 3_600_000).toISOString(),
      );
    });
  });

  describe("hostile time text is refused by its length before any parser runs", () => {
    it("on every HTTP path that reads a time", async () => {
      const before = await storedJobs();
      const long = /a time text of at most 200 characters/;
      expectFieldError(
        await t.api("POST", "/v1/jobs", { body: { dueAt: HOSTILE, target: TARGET } }),
        "dueAt",
        long,
      );
      const q = encodeURIComponent(HOSTILE);
      expectFieldError(
        await t.api("GET", `/v1/jobs?dueFrom=${q}`),
        "dueFrom",
        /at most 200 characters/,
      );
      expectFieldError(
        await t.api("GET", `/v1/dashboard/jobs?dueFrom=${q}`),
        "dueFrom",
        /at most 200/,
      );
      expectFieldError(await t.api("GET", `/v1/dashboard/future?from=${q}`), "from", /at most 200/);
      const job = (
        await t.api("POST", "/v1/jobs", { body: { dueAt: "in 1 hour", target: TARGET } })
      ).body.job;
      expectFieldError(
        await t.api("POST", `/v1/jobs/${job.id}/reschedule`, { body: { dueAt: HOSTILE } }),
        "dueAt",
        long,
      );
      expectFieldError(
        await t.api("POST", `/v1/dashboard/jobs/${job.id}/reschedule`, {
          body: { dueAt: HOSTILE },
        }),
        "dueAt",
        long,
      );
      expect(await storedJobs()).toBe(before + 1);
    });
  });

  describe("a stored row holding an out-of-range time does not break reads", () => {
    it("lists, gets, MCP task.list/task.status and the dashboard answer 200; cancel works", async () => {
      // What the old validator let through: a second connection to the service's database
      // hands its store the job as it was then.
      const store = await openStore(t.db);
      // "in 14300000 weeks" (past what a Date holds), year 10000, and on SQLite "in 99999999999
      // weeks" (a REAL there; PostgreSQL's bigint refused it with an error, also a 500)
      const times = [T0 + 14_300_000 * 604_800_000, 253_402_300_800_000 + 82_739_000];
      if (kind === "sqlite") times.push(6.048e22);
      const legacy = times.map((dueAt, i) => {
        const job = validateScheduleInput(
          { dueAt: T0 + 60_000, target: TARGET, tenant: "acme", key: `legacy-${i}` },
          {
            now: T0,
            newId: () => `01LEGACY00000000000000000${i}`,
            defaultTenant: "default",
            defaultMaxAttempts: 3,
            maxPayloadBytes: 65_536,
            maxPastMs: null,
          },
        );
        return { ...job, dueAt };
      });
      await store.jobsInsert({ jobs: legacy, now: T0 });
      await store.close();

      const list = await t.api("GET", "/v1/jobs?limit=1000");
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      const shown = list.body.jobs.filter((j: { id: string }) => j.id.startsWith("01LEGACY"));
      // listings end at the largest safe integer, so the 6e22 row is reached by its id only
      expect(shown.map((j: { dueAt: string }) => j.dueAt)).toEqual([
        "+010000-01-01T22:58:59.000Z",
        `invalid time (epoch ms ${times[0]})`,
      ]);
      for (const job of legacy) {
        expect((await t.api("GET", `/v1/jobs/${job.id}`)).status).toBe(200);
        const status = await call(mcp, "task.status", { id: job.id });
        expect(status.isError, status.text).toBe(false);
      }
      const tasks = await call(mcp, "task.list", {});
      expect(tasks.isError, tasks.text).toBe(false);
      expect((await t.api("GET", "/v1/dashboard/jobs?limit=200")).status).toBe(200);
      for (const job of legacy) {
        expect((await t.api("POST", `/v1/jobs/${job.id}/cancel`)).status).toBe(200);
      }
    });
  });
});
