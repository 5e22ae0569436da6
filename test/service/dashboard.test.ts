import { existsSync } from "node:fs";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { build } from "vite";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { redactKeyQuery } from "../../src/service/request-log.js";
import { startTestService, type TestService } from "./helpers.js";

const TARGET = "https://hooks.example.com/x";
const MISSING = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

/**
 * `duetime serve` serves the front end from dist/dashboard/web (what `npm run build` writes
 * and the package ships). Built here when absent, so the test checks the real default path.
 */
beforeAll(async () => {
  const web = fileURLToPath(new URL("../../dist/dashboard/web/index.html", import.meta.url));
  if (existsSync(web)) return;
  await build({
    configFile: fileURLToPath(new URL("../../web/dashboard/vite.config.ts", import.meta.url)),
    logLevel: "warn",
  });
  if (!existsSync(web)) throw new Error(`vite build did not write ${web}`);
}, 120_000);

interface Frame {
  event?: string;
  data?: string;
}

/** Reads SSE frames (comments skipped) from a streaming response. */
function frames(res: Response): () => Promise<Frame> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async () => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const f: Frame = {};
        for (const line of buffer.slice(0, end).split("\n")) {
          if (line.startsWith("event: ")) f.event = line.slice(7);
          else if (line.startsWith("data: ")) f.data = line.slice(6);
        }
        buffer = buffer.slice(end + 2);
        if (f.event) return f;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("stream ended");
      buffer += value;
    }
  };
}

/** The next `event: job` frame's change. */
async function nextJob(next: () => Promise<Frame>): Promise<{ kind: string; id: string }> {
  for (;;) {
    const f = await next();
    if (f.event === "job") return JSON.parse(f.data!) as { kind: string; id: string };
  }
}

describe("the dashboard in duetime serve", () => {
  let t: TestService;
  const streams: AbortController[] = [];
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    for (const s of streams) s.abort();
    await t.close();
  });

  async function connect(url: string, headers: Record<string, string> = {}) {
    const abort = new AbortController();
    streams.push(abort);
    const res = await fetch(t.svc.url + url, { headers, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const next = frames(res);
    expect((await next()).event).toBe("hello");
    return next;
  }

  it("serves the page and its assets at / without a key", async () => {
    const page = await fetch(t.svc.url + "/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("<title>duetime dashboard</title>");
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset, "the page references its script").toBeDefined();
    const js = await fetch(`${t.svc.url}/${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
  });

  it("data routes answer 401 without a valid key, as the API does, and 200 with one", async () => {
    const routes: [string, string][] = [
      ["GET", "/v1/dashboard/future"],
      ["GET", "/v1/dashboard/now"],
      ["GET", "/v1/dashboard/jobs"],
      ["GET", `/v1/dashboard/jobs/${MISSING}`],
      ["POST", `/v1/dashboard/jobs/${MISSING}/cancel`],
      ["POST", `/v1/dashboard/jobs/${MISSING}/reschedule`],
      ["POST", `/v1/dashboard/jobs/${MISSING}/retry`],
      ["GET", "/v1/events"],
      ["GET", "/v1/events?key=dtk_not-a-real-key"],
    ];
    for (const key of [null, "dtk_not-a-real-key"]) {
      for (const [method, path] of routes) {
        const r = await t.api(method, path, { key });
        expect(r.status, `${method} ${path} with ${key}`).toBe(401);
        expect(r.body.error.code).toBe("unauthorized");
        expect(r.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
    const now = await t.api("GET", "/v1/dashboard/now");
    expect(now.status).toBe(200);
    expect(now.body.counts).toBeDefined();
    expect((await t.api("GET", "/v1/dashboard/future")).status).toBe(200);
  });

  it("another tenant's job answers 404 on the dashboard's job routes, as a missing one", async () => {
    const created = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 3_600_000, target: TARGET },
    });
    const id = created.body.job.id as string;
    const mine = await t.api("GET", `/v1/dashboard/jobs/${id}`);
    expect(mine.status).toBe(200);
    expect(mine.body.job).toMatchObject({ id, tenant: "acme", status: "pending" });
    const other = { key: t.umbrella.key };
    for (const [method, path] of [
      ["GET", (x: string) => `/v1/dashboard/jobs/${x}`],
      ["POST", (x: string) => `/v1/dashboard/jobs/${x}/cancel`],
    ] as const) {
      const theirs = await t.api(method, path(id), other);
      const none = await t.api(method, path(MISSING), other);
      expect(theirs.status, `${method} ${path(id)}`).toBe(404);
      expect(JSON.stringify(theirs.body).replaceAll(id, "ID")).toBe(
        JSON.stringify(none.body).replaceAll(MISSING, "ID"),
      );
    }
    const search = await t.api("GET", `/v1/dashboard/jobs?q=${id}`, other);
    expect(search.body.jobs).toEqual([]);
    expect((await t.api("GET", `/v1/jobs/${id}`)).body.job.status).toBe("pending");
  });

  it("streams a change made through /v1 to the job's tenant only", async () => {
    const acme = await connect("/v1/events", { authorization: `Bearer ${t.acme.key}` });
    // The browser's way: EventSource cannot set headers.
    const umbrella = await connect(`/v1/events?key=${encodeURIComponent(t.umbrella.key)}`);

    const created = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 3_600_000, target: TARGET },
    });
    expect(created.status).toBe(201);
    const id = created.body.job.id as string;
    expect((await t.api("POST", `/v1/jobs/${id}/cancel`)).status).toBe(200);
    expect(await nextJob(acme)).toMatchObject({ kind: "scheduled", id, tenant: "acme" });
    expect(await nextJob(acme)).toMatchObject({ kind: "cancelled", id, status: "cancelled" });

    // Changes reach streams in the order they happen, so had umbrella's stream been sent
    // acme's two, they would come before umbrella's own.
    const theirs = await t.api("POST", "/v1/jobs", {
      key: t.umbrella.key,
      body: { delayMs: 3_600_000, target: TARGET },
    });
    expect(await nextJob(umbrella)).toMatchObject({
      kind: "scheduled",
      id: theirs.body.job.id,
      tenant: "umbrella",
    });
  });
});

describe("rate limit and request logs", () => {
  let t: TestService | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("dashboard routes spend the key's tokens: 429 with Retry-After, as on /v1", async () => {
    t = await startTestService({ rateLimit: { perSecond: 1, burst: 3 } });
    const statuses = [
      (await t.api("GET", "/v1/jobs")).status,
      (await t.api("GET", "/v1/dashboard/now")).status,
      (await t.api("GET", "/v1/dashboard/jobs")).status,
    ];
    const limited = await t.api("GET", "/v1/dashboard/future");
    const stream = await t.api("GET", "/v1/events");
    expect([...statuses, limited.status, stream.status]).toEqual([200, 200, 200, 429, 429]);
    expect(limited.body.error.code).toBe("rate-limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await t.api("GET", "/v1/jobs")).status).toBe(429);
    // The page needs no key, so no token; another key has its own bucket.
    expect((await t.api("GET", "/", { key: null })).status).toBe(200);
    expect((await t.api("GET", "/v1/dashboard/now", { key: t.umbrella.key })).status).toBe(200);
  });

  it("redacts ?key= from logged request URLs", async () => {
    const lines: string[] = [];
    const log = new PassThrough();
    log.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n")));
    t = await startTestService({ logLevel: "info", logDestination: log });
    await t.api("GET", `/v1/jobs?k%65y=${t.acme.key}`);
    const abort = new AbortController();
    const res = await fetch(`${t.svc.url}/v1/events?since=1&key=${t.acme.key}`, {
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    abort.abort();
    const requests = lines
      .filter((l) => l.includes('"incoming request"'))
      .map((l) => (JSON.parse(l) as { req: { url: string } }).req.url);
    expect(requests).toContain("/v1/events?since=1&key=[redacted]");
    expect(requests).toContain("/v1/jobs?k%65y=[redacted]");
    expect(lines.join("\n")).not.toContain(t.acme.key);
  });

  it("redactKeyQuery keeps everything but key values", () => {
    expect(redactKeyQuery("/v1/events")).toBe("/v1/events");
    expect(redactKeyQuery("/v1/events?key=dtk_x")).toBe("/v1/events?key=[redacted]");
    expect(redactKeyQuery("/a?x=1&key=dtk_x&y=2&KEY=z")).toBe(
      "/a?x=1&key=[redacted]&y=2&KEY=[redacted]",
    );
    expect(redactKeyQuery("/a?monkey=1&key&keys=2")).toBe("/a?monkey=1&key&keys=2");
    expect(redactKeyQuery("/a?%E0%A4%A=1&key=s")).toBe("/a?%E0%A4%A=1&key=[redacted]");
  });
});
