import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

/** What came back on a raw connection before the server closed it. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** ms from the first byte sent to the server closing the connection. */
  closedAfterMs: number;
}

/**
 * Sends `bytes` on a fresh connection to the service (127.0.0.1) and keeps the connection
 * open, sending nothing more, until the server closes it. Fails after `limitMs`: a server
 * that never closes is the bug some of these tests look for.
 */
function rawRequest(url: string, bytes: string | Buffer, limitMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${limitMs} ms`));
    }, limitMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      let body: unknown = rest.join("\r\n\r\n");
      try {
        body = JSON.parse(body as string);
      } catch {
        // not JSON: kept as text, and the shape assertions below fail on it
      }
      resolve({
        status: Number(statusLine.split(" ")[1]),
        headers,
        body,
        closedAfterMs: performance.now() - started,
      });
    });
  });
}

/** The one error shape (docs/http-api.md), with this code and field. */
function expectErrorShape(a: RawAnswer, status: number, code: string, field: string): void {
  expect(a.status).toBe(status);
  expect(a.headers["content-type"]).toMatch(/^application\/json/);
  expect(a.headers["x-content-type-options"]).toBe("nosniff");
  expect(a.body).toEqual({
    error: {
      code,
      field,
      expected: expect.any(String),
      received: expect.any(String),
      message: expect.any(String),
    },
  });
}

const REQUEST_TIMEOUT_MS = 400;
const HEADERS_TIMEOUT_MS = 200;

describe("requests Node's HTTP parser or its timers reject (raw sockets)", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      headersTimeoutMs: HEADERS_TIMEOUT_MS,
    });
  });
  afterAll(() => t.close());

  it("answers bad header bytes with the JSON error shape", async () => {
    const a = await rawRequest(
      t.svc.url,
      "GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\x01b\r\n\r\n",
    );
    expectErrorShape(a, 400, "bad-request", "request");
    expect(a.body.error.expected).toBe("a well-formed HTTP/1.1 request");
  });

  it("answers bad chunking with the JSON error shape, and stores nothing", async () => {
    const a = await rawRequest(
      t.svc.url,
      "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Authorization: Bearer ${t.acme.key}\r\n` +
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
        'zz\r\n{"delayMs":1000,"target":"http://127.0.0.1:9/x"}\r\n0\r\n\r\n',
    );
    expectErrorShape(a, 400, "bad-request", "request");
    expect(a.body.error.received).toMatch(/chunk/i);
    const list = await t.api("GET", "/v1/jobs");
    expect(list.status).toBe(200);
    expect(list.body.jobs).toEqual([]);
  });

  it("answers headers past the size limit with 431 in the JSON error shape", async () => {
    const a = await rawRequest(
      t.svc.url,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    expectErrorShape(a, 431, "too-large", "headers");
    expect(a.body.error.expected).toMatch(/at most \d+ bytes/);
  });

  it("cuts off a body that never completes (valid key) after the request timeout, with 408", async () => {
    const a = await rawRequest(
      t.svc.url,
      "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Authorization: Bearer ${t.acme.key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"delayMs":',
    );
    expectErrorShape(a, 408, "timeout", "request");
    expect(a.body.error.expected).toContain(`${REQUEST_TIMEOUT_MS} ms`);
    // Node checks its timers every headersTimeout/4 here: cut within the timeout plus that.
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(a.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS * 4);
    expect((await t.api("GET", "/v1/jobs")).body.jobs).toEqual([]);
  });

  it("cuts off headers that never complete after the headers timeout, with 408", async () => {
    const a = await rawRequest(t.svc.url, "GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow");
    expectErrorShape(a, 408, "timeout", "request");
    expect(a.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(a.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS * 4);
  });

  it("leaves a live stream open past the request timeout: it times requests, not answers", async () => {
    const abort = new AbortController();
    const res = await fetch(`${t.svc.url}/v1/events`, {
      headers: { authorization: `Bearer ${t.acme.key}` },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    // Three request timeouts of the server's own timers, then a change must still arrive.
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS * 3));
    const created = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 3_600_000, target: "http://127.0.0.1:9/x" },
    });
    expect(created.status).toBe(201);
    let text = "";
    while (!text.includes(created.body.job.id)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${text}`);
      text += new TextDecoder().decode(value);
    }
    abort.abort();
  });
});

/** Every final HTTP/1.1 response in `text`, in order (bodies delimited by Content-Length). */
function responsesIn(text: string): Omit<RawAnswer, "closedAfterMs">[] {
  const out = [];
  let rest = text;
  while (rest.includes("\r\n\r\n")) {
    const end = rest.indexOf("\r\n\r\n");
    const [statusLine = "", ...lines] = rest.slice(0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(":");
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const status = Number(statusLine.split(" ")[1]);
    const length = Number(headers["content-length"] ?? 0);
    const body = rest.slice(end + 4, end + 4 + length);
    // Interim answers (100 Continue) have no body and are not the request's answer.
    if (status >= 200) out.push({ status, headers, body: JSON.parse(body) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

describe("a request that arrives while the server closes", () => {
  it("is answered 503 in the JSON error shape (not fastify's own body), and the one in flight finishes", async () => {
    const t = await startTestService();
    try {
      const { hostname, port } = new URL(t.svc.url);
      const socket = connect({ host: hostname, port: Number(port) });
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      const closed = new Promise<void>((r) => socket.on("close", () => r()));
      await new Promise<void>((r) => socket.once("connect", () => r()));
      const body = JSON.stringify({ delayMs: 3_600_000, target: "http://127.0.0.1:9/x" });
      // A request in flight (its body half sent) keeps this connection busy through the close;
      // Node's "100 Continue" says the server has taken it in, before the close begins.
      socket.write(
        "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          `Authorization: Bearer ${t.acme.key}\r\nExpect: 100-continue\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` +
          body.slice(0, 10),
      );
      while (!Buffer.concat(chunks).toString().includes("100 Continue")) {
        await new Promise((r) => setImmediate(r));
      }
      const closing = t.svc.close();
      // The listener stops once fastify's preClose hooks have run.
      while (t.svc.app.server.listening) await new Promise((r) => setImmediate(r));
      socket.write(
        body.slice(10) +
          `GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.acme.key}\r\n\r\n`,
      );
      await closed;
      await closing;
      const [first, second] = responsesIn(Buffer.concat(chunks).toString("utf8"));
      expect(first?.status).toBe(201);
      expect(second?.status).toBe(503);
      expect(second?.headers.connection).toBe("close");
      expect(second?.body).toEqual({
        error: {
          code: "unavailable",
          field: "request",
          expected: "a server that is not shutting down",
          received: "a request during shutdown",
          message: expect.stringContaining("shutting down"),
        },
      });
    } finally {
      await t.close();
    }
  });
});
