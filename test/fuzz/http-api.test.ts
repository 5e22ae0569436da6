import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutate } from "./arbitraries.js";
import {
  fuzz,
  runsFor,
  snapshot,
  startFuzzService,
  timeoutFor,
  type FuzzService,
} from "./fuzz-service.js";
import { openApiRoutes } from "./openapi-routes.js";
import {
  batchBody,
  collectedReport,
  JOB_FIELDS,
  pauseBody,
  previewBody,
  requestPlan,
  rescheduleBody,
  scheduleBody,
  schedulePatchBody,
  sendAndCheck,
  tallyTable,
  validJob,
  type RouteSpec,
} from "./requests.js";

/**
 * Property-based fuzz of the HTTP API (every route of /openapi.json but the dashboard's,
 * which test/fuzz/dashboard.test.ts covers): random methods, ids, repeated and hostile query
 * parameters, auth forms, content types and bodies (mutated jobs, random JSON, broken JSON,
 * large bodies). For every request: no 5xx, every 4xx in the one error shape, and nothing in
 * the store changed by a refused request. FUZZ_SEED reproduces a run.
 */

const RUNS = runsFor(0.5);
let t: FuzzService;
let routes: RouteSpec[];

beforeAll(async () => {
  t = await startFuzzService();
  // a series of each tenant, so the /v1/schedules/{id} routes meet real ones (and another's)
  for (const tenant of ["acme", "umbrella"]) {
    const r = await t.svc.scheduler.scheduleRecurring({
      tenant,
      cron: "0 9 * * 1-5",
      timeZone: "Europe/Paris",
      target: t.receiver.url,
    });
    t.knownIds.push(r.schedule.id);
  }
  const all = await openApiRoutes(t);
  const isDashboard = (p: string) =>
    p.startsWith("/v1/dashboard") || p === "/v1/events" || p === "/" || p.startsWith("/assets");
  routes = all
    .filter((r) => !isDashboard(r.path) && r.path !== "/mcp")
    .map((r) => {
      if (r.path === "/v1/jobs") return { ...r, body: mutate(validJob(t), JOB_FIELDS) };
      if (r.path === "/v1/jobs/batch") return { ...r, body: batchBody(t) };
      if (r.path === "/v1/jobs/{id}/reschedule") return { ...r, body: rescheduleBody(t) };
      if (r.path === "/v1/schedules") return { ...r, body: scheduleBody(t) };
      if (r.path === "/v1/schedules/{id}") return { ...r, body: schedulePatchBody(t) };
      if (r.path === "/v1/schedules/preview") return { ...r, body: previewBody(t) };
      if (r.path === "/v1/pauses") return { ...r, body: pauseBody(t) };
      return r;
    });
});

afterAll(async () => {
  await t?.close();
});

describe("fuzz: HTTP API", () => {
  it("covers every API route of the OpenAPI document", () => {
    const paths = routes.map((r) => r.path);
    for (const p of ["/v1/jobs", "/v1/jobs/batch", "/v1/jobs/{id}", "/v1/jobs/{id}/reschedule"]) {
      expect(paths).toContain(p);
    }
    expect(paths).toEqual(
      expect.arrayContaining(["/v1/jobs/{id}/cancel", "/v1/stats", "/healthz"]),
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        "/v1/schedules",
        "/v1/schedules/{id}",
        "/v1/schedules/{id}/pause",
        "/v1/schedules/{id}/resume",
        "/v1/schedules/{id}/skip",
        "/v1/schedules/{id}/next",
        "/v1/schedules/preview",
        "/v1/pauses",
        "/v1/pauses/{id}",
      ]),
    );
  });

  it(
    `answers ${RUNS} random requests with no 5xx, one error shape, and no change on refusal`,
    async () => {
      const state = { before: await snapshot(t), tally: new Map<number, number>() };
      const r = await fuzz("http-api", requestPlan(routes), RUNS, (p) => sendAndCheck(t, state, p));
      console.log(tallyTable("fuzz http-api", state.tally, r.ms));
      if (process.env.FUZZ_COLLECT === "1") console.log(collectedReport());
      // the run reached the handlers, not only the auth and parser guards
      expect([...state.tally.keys()].some((s) => s === 200 || s === 201)).toBe(true);
      expect(state.tally.get(400) ?? 0).toBeGreaterThan(0);
    },
    timeoutFor(RUNS),
  );
});
