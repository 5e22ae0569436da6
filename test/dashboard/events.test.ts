import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, startDashboard, type Dashboard } from "./helpers.js";

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Reads SSE frames from a streaming fetch response. */
function frames(res: Response) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return async function next(): Promise<Frame> {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const f: Frame = {};
        for (const line of raw.split("\n")) {
          if (line.startsWith(":")) f.comment = line.slice(1).trim();
          else if (line.startsWith("id: ")) f.id = line.slice(4);
          else if (line.startsWith("event: ")) f.event = line.slice(7);
          else if (line.startsWith("data: ")) f.data = line.slice(6);
        }
        if (f.event || f.comment || f.data) return f;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("stream ended");
      buffer += value;
    }
  };
}

/** Reads frames until one matches. */
async function until(next: () => Promise<Frame>, pred: (f: Frame) => boolean): Promise<Frame> {
  for (;;) {
    const f = await next();
    if (pred(f)) return f;
  }
}

describe("GET /v1/events (Server-Sent Events)", () => {
  let d: Dashboard;
  const controllers: AbortController[] = [];
  beforeAll(async () => {
    d = await startDashboard({ events: { heartbeatMs: 100, replay: 50 } });
  });
  afterAll(async () => {
    for (const c of controllers) c.abort();
    await d.stop();
  });

  async function connect(key: string, how: "header" | "query", lastEventId?: string) {
    const c = new AbortController();
    controllers.push(c);
    const headers: Record<string, string> = {};
    if (how === "header") headers.authorization = `Bearer ${key}`;
    if (lastEventId) headers["last-event-id"] = lastEventId;
    const res = await fetch(`${d.base}/v1/events${how === "query" ? `?key=${key}` : ""}`, {
      headers,
      signal: c.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    return frames(res);
  }

  it("streams only the tenant's own changes, by header or ?key=", async () => {
    const acme = await connect("key-acme", "header");
    const globex = await connect("key-globex", "query");
    const hello = await until(acme, (f) => f.event === "hello");
    expect(JSON.parse(hello.data!)).toMatchObject({ tenant: "acme" });
    await until(globex, (f) => f.event === "hello");

    const { job: g } = await d.scheduler.schedule({
      tenant: "globex",
      dueAt: d.bucket0 + 7 * HOUR,
      target: "noop",
    });
    const { job: a } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 7 * HOUR,
      target: "noop",
    });
    await d.scheduler.cancel(a.id);

    const first = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(first.data!)).toMatchObject({
      kind: "scheduled",
      id: a.id,
      tenant: "acme",
      status: "pending",
    });
    const second = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(second.data!)).toMatchObject({
      kind: "cancelled",
      id: a.id,
      status: "cancelled",
    });
    expect(Number(second.id)).toBe(Number(first.id) + 1);
    const other = await until(globex, (f) => f.event === "job");
    expect(JSON.parse(other.data!)).toMatchObject({ id: g.id, tenant: "globex" });
  });

  it("numbers each tenant's changes in its own sequence", async () => {
    const acme = await connect("key-acme", "header");
    const hello = JSON.parse((await until(acme, (f) => f.event === "hello")).data!) as {
      seq: number;
    };
    // Another tenant's busy moment must not show in acme's ids.
    for (let i = 0; i < 5; i++) {
      await d.scheduler.schedule({ tenant: "globex", dueAt: d.bucket0 + 7 * HOUR, target: "noop" });
    }
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 7 * HOUR,
      target: "noop",
    });
    const mine = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(mine.data!)).toMatchObject({ id: job.id });
    expect(Number(mine.id)).toBe(hello.seq + 1);
  });

  it("sends heartbeats", async () => {
    const next = await connect("key-acme", "header");
    const beat = await until(next, (f) => f.comment !== undefined);
    expect(beat.comment).toMatch(/^heartbeat \d+$/);
  });

  it("replays what a reconnecting client missed (Last-Event-ID), or tells it to reset", async () => {
    const live = await connect("key-acme", "header");
    await until(live, (f) => f.event === "hello");
    const { job } = await d.scheduler.schedule({
      tenant: "acme",
      dueAt: d.bucket0 + 8 * HOUR,
      target: "noop",
    });
    const seen = await until(live, (f) => f.event === "job");
    // Changes happen while "disconnected".
    await d.scheduler.reschedule(job.id, d.bucket0 + 9 * HOUR);
    await d.scheduler.cancel(job.id);
    const resumed = await connect("key-acme", "header", seen.id);
    const a = await until(resumed, (f) => f.event === "job");
    const b = await until(resumed, (f) => f.event === "job");
    expect([JSON.parse(a.data!).kind, JSON.parse(b.data!).kind]).toEqual([
      "rescheduled",
      "cancelled",
    ]);

    const lost = await connect("key-acme", "header", "999999");
    expect((await until(lost, (f) => f.event !== "hello")).event).toBe("reset");
  });
});
