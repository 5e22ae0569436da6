import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, ensureBuilt } from "../cli/helpers.js";
import { nextMatching, sseFrames } from "../support/sse.js";
import { startTestService, type TestService } from "./helpers.js";

/**
 * `GET /v1/events` of the service: the streams of a revoked key end (the key is re-checked
 * every `events.recheckMs`, here 50 ms), and streams are capped per key and in total.
 */
let t: TestService;
const open: AbortController[] = [];

beforeAll(ensureBuilt, 120_000);
afterEach(async () => {
  for (const c of open.splice(0)) c.abort();
  await t.close();
});

async function connect(key: string, how: "header" | "query" = "header") {
  const c = new AbortController();
  open.push(c);
  const res = await fetch(`${t.svc.url}/v1/events${how === "query" ? `?key=${key}` : ""}`, {
    headers: how === "header" ? { authorization: `Bearer ${key}` } : {},
    signal: c.signal,
  });
  return { res, abort: () => c.abort() };
}

async function stream(key: string, how: "header" | "query" = "header") {
  const { res } = await connect(key, how);
  expect(res.status).toBe(200);
  const s = sseFrames(res);
  await nextMatching(s, (f) => f.event === "hello");
  return s;
}

describe("event streams and revoked keys", () => {
  it("revoking a key (duetime keys revoke) ends its streams, by header and ?key=", async () => {
    t = await startTestService({ events: { recheckMs: 50 } });
    const byHeader = await stream(t.acme.key, "header");
    const byQuery = await stream(t.acme.key, "query");
    const other = await stream(t.umbrella.key);

    const revoked = await cli(["keys", "revoke", t.acme.keyId, "--db", t.db]);
    expect(revoked.code).toBe(0);

    for (const s of [byHeader, byQuery]) {
      const last = await nextMatching(s, (f) => f.event !== undefined);
      expect(last.event).toBe("revoked");
      expect(await s.next()).toBeNull(); // and the server ended the stream
    }
    // the revoked key cannot open a new one
    expect((await connect(t.acme.key)).res.status).toBe(401);
    // another key's stream goes on and is fed
    const created = await t.api("POST", "/v1/jobs", {
      key: t.umbrella.key,
      body: { dueAt: "2099-01-01T00:00:00Z", target: "https://example.test/hook" },
    });
    expect(created.status).toBe(201);
    const change = await nextMatching(other, (f) => f.event === "job");
    expect(JSON.parse(change.data!)).toMatchObject({ id: created.body.job.id, tenant: "umbrella" });
  }, 15_000);
});

describe("stream caps", () => {
  it("answers 429 past the per-key cap and 503 past the total, in the API's error shape", async () => {
    t = await startTestService({ events: { maxStreamsPerKey: 2, maxStreams: 3 } });
    await stream(t.acme.key);
    const second = await connect(t.acme.key);
    expect(second.res.status).toBe(200);

    const perKey = await connect(t.acme.key, "query");
    expect(perKey.res.status).toBe(429);
    expect(perKey.res.headers.get("retry-after")).toBe("5");
    expect(await perKey.res.json()).toEqual({
      error: {
        code: "too-many-streams",
        field: "authorization",
        expected: "at most 2 open event streams per API key",
        received: "2 open already",
        message: expect.stringContaining("too many event streams"),
      },
    });

    await stream(t.umbrella.key);
    const total = await connect(t.umbrella.key);
    expect(total.res.status).toBe(503);
    expect(total.res.headers.get("retry-after")).toBe("5");
    expect(await total.res.json()).toMatchObject({
      error: {
        code: "unavailable",
        field: "events",
        expected: "at most 3 open event streams on this server",
        received: "3 open already",
      },
    });

    // A stream that closes frees its slot: acme may open one again once the server saw it
    // go (the close reaches the server asynchronously; bounded retries, not a timed wait).
    second.abort();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      const again = await connect(t.acme.key);
      status = again.res.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
  }, 15_000);
});

describe("HEAD /v1/events", () => {
  it("answers with a stream's headers and ends, holding no stream slot", async () => {
    t = await startTestService({ events: { maxStreamsPerKey: 1 } });
    for (let i = 0; i < 3; i++) {
      // fetch resolves only once the status line arrives; the old handler attached a
      // stream to the HEAD response and never sent one.
      const res = await fetch(`${t.svc.url}/v1/events`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${t.acme.key}` },
        signal: AbortSignal.timeout(5_000),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    }
    // with a cap of one stream per key, the HEADs above left the slot free
    await stream(t.acme.key);
    const unauthenticated = await fetch(`${t.svc.url}/v1/events`, { method: "HEAD" });
    expect(unauthenticated.status).toBe(401);
  }, 15_000);
});
