import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

/** GET `path` with this key from the local address `from` (127.0.0.0/8 is all loopback). */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

function getFrom(t: TestService, from: string, path: string, key: string | null): Promise<Answer> {
  const url = new URL(path, t.svc.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        localAddress: from,
        headers: key === null ? {} : { authorization: `Bearer ${key}` },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const UNKNOWN_KEY = `dtk_${"x".repeat(43)}`;

describe("failed authentications are limited per client address, before the key check", () => {
  let t: TestService;
  afterEach(() => t.close());

  it("refuses an address that spent its failures 429 before looking at its key; other addresses are served", async () => {
    t = await startTestService({ authFailureLimit: { perSecond: 0.001, burst: 3 } });
    for (let i = 0; i < 3; i++) {
      const r = await getFrom(t, "127.0.0.1", "/v1/jobs", i === 1 ? null : `${UNKNOWN_KEY}${i}`);
      expect(r.status).toBe(401);
    }
    const blocked = await getFrom(t, "127.0.0.1", "/v1/jobs", UNKNOWN_KEY);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toMatchObject({ code: "rate-limited", field: "authorization" });
    expect(blocked.body.error.expected).toContain("failed authentications per second per client");
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // Refused before the key is looked at: a valid key from the same address waits as well,
    // on /v1, the dashboard's routes and /mcp alike.
    for (const path of ["/v1/jobs", "/v1/dashboard/now", "/mcp"]) {
      expect((await getFrom(t, "127.0.0.1", path, t.acme.key)).status).toBe(429);
    }
    // Another client address has its own budget.
    expect((await getFrom(t, "127.0.0.2", "/v1/jobs", t.acme.key)).status).toBe(200);
    expect((await getFrom(t, "127.0.0.2", "/v1/jobs", UNKNOWN_KEY)).status).toBe(401);
  });

  it("behind a trusted proxy, counts the forwarded client, not the proxy", async () => {
    t = await startTestService({
      trustProxy: ["127.0.0.1"],
      authFailureLimit: { perSecond: 0.001, burst: 1 },
    });
    const from = (client: string, key: string) =>
      t.api("GET", "/v1/jobs", { key, headers: { "x-forwarded-for": client } });
    expect((await from("203.0.113.7", UNKNOWN_KEY)).status).toBe(401);
    expect((await from("203.0.113.7", t.acme.key)).status).toBe(429);
    expect((await from("203.0.113.8", t.acme.key)).status).toBe(200);
    // IPv6 clients are counted per /64: a new address in the same block has no new budget.
    expect((await from("2001:db8:0:7::1", UNKNOWN_KEY)).status).toBe(401);
    expect((await from("2001:db8:0:7::2", t.acme.key)).status).toBe(429);
    expect((await from("2001:db8:0:8::1", t.acme.key)).status).toBe(200);
  });

  it("refuses a trusted proxy that is not an address or range, naming the option", async () => {
    const err: unknown = await startTestService({ trustProxy: ["proxy.internal"] }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/^option trustProxy: expected IP addresses or CIDR/);
  });

  it("successful requests spend none of the address's failure budget", async () => {
    t = await startTestService({ authFailureLimit: { perSecond: 0.001, burst: 2 } });
    for (let i = 0; i < 20; i++) {
      expect((await getFrom(t, "127.0.0.1", "/v1/jobs", t.acme.key)).status).toBe(200);
    }
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", UNKNOWN_KEY)).status).toBe(401);
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", t.umbrella.key)).status).toBe(200);
  });

  it("refuses a key it already found unknown or revoked without reading the key store again", async () => {
    t = await startTestService();
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", UNKNOWN_KEY)).status).toBe(401);
    await t.api("GET", "/v1/jobs", { key: t.umbrella.key });
    expect(await t.svc.keys.apiKeyRevoke({ id: t.umbrella.keyId, now: Date.now() })).toBe(true);
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", t.umbrella.key)).status).toBe(401);
    // With the key store gone, only a key the gate remembers can still be answered: the two
    // refused keys are, from memory; a key never seen needs the store and cannot be.
    await t.svc.keys.close();
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", UNKNOWN_KEY)).status).toBe(401);
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", t.umbrella.key)).status).toBe(401);
    expect((await getFrom(t, "127.0.0.1", "/v1/jobs", `${UNKNOWN_KEY}y`)).status).toBe(500);
  });
});
