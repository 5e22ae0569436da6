import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anyJson, dueTime, mutate, oddNumber } from "./arbitraries.js";
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
  collectedReport,
  requestPlan,
  sendAndCheck,
  tallyTable,
  type RouteSpec,
} from "./requests.js";

/**
 * Property-based fuzz of the dashboard's routes (/v1/dashboard/..., the live stream
 * /v1/events, the page and its assets), from the service's OpenAPI document: repeated and
 * hostile query parameters (zoom=constructor, status twice, ...), ids, bodies for cancel,
 * reschedule and retry. Same invariants as the API suite: no 5xx, one error shape, no
 * change on refusal.
 */

const RUNS = runsFor(0.25);
let t: FuzzService;
let routes: RouteSpec[];

function moveBody(now: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    mutate(
      fc.record(
        {
          dueAt: dueTime(now),
          timeZone: fc.constantFrom("UTC", "Europe/Paris"),
          expectedVersion: fc.integer({ min: 1, max: 5 }),
        },
        { requiredKeys: [] },
      ),
      ["dueAt", "timeZone", "expectedVersion"],
    ),
    anyJson,
    oddNumber,
  );
}

beforeAll(async () => {
  t = await startFuzzService();
  const isDashboard = (p: string) =>
    p.startsWith("/v1/dashboard") || p === "/v1/events" || p === "/" || p.startsWith("/assets");
  const body = moveBody(t.clock.now());
  routes = (await openApiRoutes(t))
    .filter((r) => isDashboard(r.path))
    .map((r) => {
      const extra =
        r.path === "/v1/dashboard/future"
          ? ["zoom", "from", "to", "bins"]
          : r.path === "/v1/dashboard/jobs"
            ? ["q", "status", "dueFrom", "dueTo", "timeZone", "tag", "cursor", "limit"]
            : [];
      const params = [...new Set([...(r.params ?? []), ...extra])];
      return {
        ...r,
        ...(params.length > 0 ? { params } : {}),
        ...(r.path.endsWith("/reschedule") || r.path.endsWith("/retry") ? { body } : {}),
      };
    });
});

afterAll(async () => {
  await t?.close();
});

describe("fuzz: dashboard routes", () => {
  it("covers every dashboard route of the OpenAPI document", () => {
    expect(routes.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        "/v1/dashboard/future",
        "/v1/dashboard/now",
        "/v1/dashboard/jobs",
        "/v1/dashboard/jobs/{id}",
        "/v1/dashboard/jobs/{id}/cancel",
        "/v1/dashboard/jobs/{id}/reschedule",
        "/v1/dashboard/jobs/{id}/retry",
        "/v1/dashboard/schedules",
        "/v1/dashboard/schedules/{id}",
        "/v1/dashboard/schedules/{id}/pause",
        "/v1/dashboard/schedules/{id}/resume",
        "/v1/dashboard/operations",
        "/v1/dashboard/operations/{id}",
        "/v1/dashboard/operations/{id}/cancel",
        "/v1/events",
      ]),
    );
  });

  it(
    `answers ${RUNS} random requests with no 5xx, one error shape, and no change on refusal`,
    async () => {
      const state = { before: await snapshot(t), tally: new Map<number, number>() };
      const r = await fuzz("dashboard", requestPlan(routes), RUNS, (p) =>
        sendAndCheck(t, state, p),
      );
      console.log(tallyTable("fuzz dashboard", state.tally, r.ms));
      if (process.env.FUZZ_COLLECT === "1") console.log(collectedReport());
      expect(state.tally.get(200) ?? 0).toBeGreaterThan(0);
      expect(state.tally.get(400) ?? 0).toBeGreaterThan(0);
    },
    timeoutFor(RUNS),
  );
});
