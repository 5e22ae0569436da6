import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { InvalidOptionError } from "../../src/core/errors.js";
import { startTestService, type ApiResult, type TestService } from "./helpers.js";

function expectSecurityHeaders(r: ApiResult): void {
  const csp = r.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(r.headers.get("x-frame-options")).toBe("DENY");
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  expect(r.headers.get("referrer-policy")).toBe("no-referrer");
  expect(r.headers.get("x-powered-by")).toBeNull();
  // Deliberately off: see src/http/security-headers.ts.
  expect(r.headers.get("strict-transport-security")).toBeNull();
}

describe("response headers", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.close());

  it("every answer carries the security headers: success, errors, 404s, health, the dashboard page", async () => {
    const answers = [
      await t.api("GET", "/v1/jobs"),
      await t.api("GET", "/v1/jobs", { key: null }),
      await t.api("GET", "/v1/nowhere"),
      await t.api("GET", "/v1/dashboard/now"),
      await t.api("GET", "/healthz", { key: null }),
      await t.api("GET", "/openapi.json", { key: null }),
      await t.api("GET", "/", { key: null }),
      await t.api("GET", "/assets/missing.js", { key: null }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 200, 200, 200, 200, 404]);
    for (const a of answers) expectSecurityHeaders(a);
  });

  it("/v1 JSON is never stored by a cache; only the dashboard's own files set their caching", async () => {
    for (const r of [
      await t.api("GET", "/v1/jobs"),
      await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target: "http://127.0.0.1:9/" } }),
      await t.api("GET", "/v1/jobs", { key: "dtk_wrong" }),
      await t.api("GET", "/v1/stats"),
      await t.api("GET", "/v1/nowhere"),
      await t.api("GET", "/readyz", { key: null }),
    ]) {
      expect(r.headers.get("cache-control")).toBe("no-store");
    }
    expect((await t.api("GET", "/", { key: null })).headers.get("cache-control")).toBe("no-cache");
  });

  it("CORS is off by default: no Access-Control header, and a preflight is an unknown route", async () => {
    const origin = { origin: "https://elsewhere.example" };
    const get = await t.api("GET", "/v1/jobs", { headers: origin });
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await t.api("OPTIONS", "/v1/jobs", {
      key: null,
      headers: { ...origin, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(404);
    expect(preflight.body.error.code).toBe("no-route");
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS allow-list", () => {
  let t: TestService | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it("answers allowed origins only, with the headers the API needs", async () => {
    t = await startTestService({ corsOrigins: ["https://app.example.com"] });
    const preflight = await t.api("OPTIONS", "/v1/jobs", {
      key: null,
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const get = await t.api("GET", "/v1/jobs", { headers: { origin: "https://app.example.com" } });
    expect(get.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(get.headers.get("access-control-expose-headers")).toContain("retry-after");
    const other = await t.api("GET", "/v1/jobs", { headers: { origin: "https://evil.example" } });
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses anything but exact origins at start, naming the option", async () => {
    for (const bad of [
      "*",
      "https://app.example.com/",
      "https://app.example.com/path",
      "ftp://x",
    ]) {
      const err: unknown = await startTestService({ corsOrigins: [bad] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidOptionError);
      expect((err as Error).message).toMatch(/^option corsOrigins: expected exact origins/);
    }
  });
});

describe("/readyz answers from a cached probe", () => {
  it("probes the store once per cache period, however many ask at once", async () => {
    const clock = new ManualClock(Date.now());
    const t = await startTestService({ clock, readinessCacheMs: 5000 });
    try {
      const probes = async (): Promise<number> => {
        const text = (await t.api("GET", "/metrics", { key: null })).body as string;
        const m = /^duetime_readiness_probes_total\{result="ready"\} (\d+)$/m.exec(text);
        if (!m) throw new Error("no duetime_readiness_probes_total in /metrics");
        return Number(m[1]);
      };
      const before = await probes();
      const burst = await Promise.all(
        Array.from({ length: 50 }, () => t.api("GET", "/readyz", { key: null })),
      );
      expect(burst.every((r) => r.status === 200 && r.body.status === "ready")).toBe(true);
      expect(await probes()).toBe(before + 1);
      await t.api("GET", "/readyz", { key: null });
      await clock.advance(4999);
      await t.api("GET", "/readyz", { key: null });
      expect(await probes()).toBe(before + 1);
      await clock.advance(1);
      expect((await t.api("GET", "/readyz", { key: null })).status).toBe(200);
      expect(await probes()).toBe(before + 2);
    } finally {
      await t.close();
    }
  });
});
