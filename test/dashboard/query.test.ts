import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDashboard, type Dashboard } from "./helpers.js";

/**
 * Issue 10 §1: the dashboard's query strings are read by the shared query rules. A repeated
 * parameter answered 500 (`split is not a function`), and so did a zoom named after a
 * property every plain object has.
 */
describe("dashboard query strings", () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await startDashboard();
  });
  afterAll(async () => {
    await d.stop();
  });

  function expectInvalid(r: Awaited<ReturnType<Dashboard["api"]>>, field: string): void {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid", field });
    for (const k of ["expected", "received", "message"])
      expect(typeof r.body.error[k]).toBe("string");
  }

  it.each(["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"])(
    "zoom=%s is not a zoom: 400 naming zoom",
    async (zoom) => {
      const r = await d.api(`/v1/dashboard/future?zoom=${zoom}`);
      expectInvalid(r, "zoom");
      expect(r.body.error.expected).toMatch(/^one of 1h, 6h, 1d/);
    },
  );

  it("a repeated status lists both; a repeated single-valued parameter is a 400", async () => {
    const both = await d.api("/v1/dashboard/jobs?status=pending&status=dead&limit=200");
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    const statuses = new Set(both.body.jobs.map((j: { status: string }) => j.status));
    expect([...statuses].sort()).toEqual(["dead", "pending"]);
    for (const path of [
      "/v1/dashboard/jobs?q=a&q=b",
      "/v1/dashboard/jobs?limit=1&limit=2",
      "/v1/dashboard/jobs?dueFrom=1&dueFrom=2",
      "/v1/dashboard/future?zoom=1d&zoom=7d",
      "/v1/dashboard/future?bins=10&bins=20",
      "/v1/dashboard/now?minutes=1&minutes=2",
    ]) {
      const field = new URL(path, "http://x").searchParams.keys().next().value!;
      const r = await d.api(path);
      expectInvalid(r, field);
      expect(r.body.error.expected).toBe("one value");
    }
  });

  it("unknown parameters, out-of-range numbers and over-long texts name the parameter", async () => {
    const cases: [string, string][] = [
      ["/v1/dashboard/jobs?tenant=globex", "tenant"],
      ["/v1/dashboard/jobs?__proto__=x", "__proto__"],
      ["/v1/dashboard/jobs?status=pending,constructor", "status"],
      ["/v1/dashboard/jobs?limit=201", "limit"],
      ["/v1/dashboard/jobs?limit=1e2", "limit"],
      [`/v1/dashboard/jobs?q=${"k".repeat(257)}`, "q"],
      [`/v1/dashboard/jobs?cursor=${"c".repeat(201)}`, "cursor"],
      [`/v1/dashboard/jobs?timeZone=${"Z".repeat(65)}`, "timeZone"],
      ["/v1/dashboard/future?bins=0", "bins"],
      [`/v1/dashboard/future?bins=${"9".repeat(40)}`, "bins"],
      ["/v1/dashboard/now?minutes=61", "minutes"],
    ];
    for (const [path, field] of cases) expectInvalid(await d.api(path), field);
  });

  it("a blank parameter is an absent one, as a form sends it", async () => {
    const r = await d.api("/v1/dashboard/jobs?q=&status=&dueFrom=&limit=");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.jobs.length).toBeGreaterThan(0);
  });
});
