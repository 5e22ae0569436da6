import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, secondNode, startDashboard, type Dashboard } from "./helpers.js";

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
  /** A second scheduler on the same SQLite file: another node of the same store. */
  let other: ReturnType<typeof secondNode>;
  const controllers: AbortController[] = [];
  beforeAll(async () => {
    d = await startDashboard({ events: { heartbeatMs: 100, pollMs: 20 } });
    other = secondNode(d);
  });
  afterAll(async () => {
    for (const c of controllers) c.abort();
    await other.close();
    await d.stop();
  });

  function request(key: string, how: "header" | "query", resume: Record<string, string> = {}) {
    const c = new AbortController();
    controllers.push(c);
    const headers: Record<string, string> = {};
    if (how === "header") headers.authorization = `Bearer ${key}`;
    if (resume["last-event-id"]) headers["last-event-id"] = resume["last-event-id"];
    const query = new URLSearchParams();
    if (how === "query") query.set("key", key);
    if (resume.after) query.set("after", resume.after);
    const qs = query.size ? `?${query}` : "";
    return { c, res: fetch(`${d.base}/v1/events${qs}`, { headers, signal: c.signal }) };
  }

  async function connect(key: string, how: "header" | "query", resume?: Record<string, string>) {
    const res = await request(key, how, resume).res;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    return frames(res);
  }

  const later = () => ({ dueAt: d.bucket0 + 7 * HOUR, target: "noop" });

  it("streams only the tenant's own changes, by header or ?key=", async () => {
    const acme = await connect("key-acme", "header");
    const globex = await connect("key-globex", "query");
    const hello = await until(acme, (f) => f.event === "hello");
    expect(JSON.parse(hello.data!)).toMatchObject({ tenant: "acme", cursor: hello.id });
    await until(globex, (f) => f.event === "hello");

    const { job: g } = await d.scheduler.schedule({ tenant: "globex", ...later() });
    const { job: a } = await d.scheduler.schedule({ tenant: "acme", ...later() });
    await d.scheduler.cancel(a.id);

    const first = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(first.data!)).toMatchObject({
      kind: "scheduled",
      id: a.id,
      tenant: "acme",
      status: "pending",
      cursor: first.id,
    });
    const second = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(second.data!)).toMatchObject({
      kind: "cancelled",
      id: a.id,
      status: "cancelled",
    });
    const other = await until(globex, (f) => f.event === "job");
    expect(JSON.parse(other.data!)).toMatchObject({ id: g.id, tenant: "globex" });
  });

  it("gives each change its cursor in the durable feed as its id", async () => {
    const acme = await connect("key-acme", "header");
    const hello = await until(acme, (f) => f.event === "hello");
    const { job } = await d.scheduler.schedule({ tenant: "acme", ...later() });
    const mine = await until(acme, (f) => f.event === "job");
    const page = await d.scheduler.changes({ tenant: "acme", after: hello.id! });
    expect(page.changes.map((c) => [c.cursor, c.id])).toEqual([[mine.id, job.id]]);
  });

  it("sends heartbeats", async () => {
    const next = await connect("key-acme", "header");
    const beat = await until(next, (f) => f.comment !== undefined);
    expect(beat.comment).toMatch(/^heartbeat \d+$/);
  });

  it("shows a change another node made on the same store", async () => {
    const acme = await connect("key-acme", "header");
    await until(acme, (f) => f.event === "hello");
    const { job } = await other.scheduler.schedule({ tenant: "acme", ...later() });
    await other.scheduler.cancel(job.id);
    const seen = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(seen.data!)).toMatchObject({ kind: "scheduled", id: job.id });
    const next = await until(acme, (f) => f.event === "job");
    expect(JSON.parse(next.data!)).toMatchObject({ kind: "cancelled", id: job.id });
  });

  it("resumes after a disconnect with Last-Event-ID or ?after=: no gap, no repeat", async () => {
    const first = request("key-acme", "header");
    const live = frames(await first.res);
    await until(live, (f) => f.event === "hello");
    const { job } = await d.scheduler.schedule({ tenant: "acme", ...later() });
    const seen = await until(live, (f) => f.event === "job");
    first.c.abort();
    // Changes happen while disconnected, on this node and on the other.
    await d.scheduler.reschedule(job.id, d.bucket0 + 9 * HOUR);
    await other.scheduler.cancel(job.id);
    const resumes: Record<string, string>[] = [{ "last-event-id": seen.id! }, { after: seen.id! }];
    for (const resume of resumes) {
      // What the feed holds after the last id seen: the stream must give exactly that.
      const missed = (await d.scheduler.changes({ tenant: "acme", after: seen.id! })).changes;
      expect(missed.slice(0, 2).map((c) => c.kind)).toEqual(["rescheduled", "cancelled"]);
      const resumed = await connect("key-acme", "header", resume);
      await until(resumed, (f) => f.event === "hello");
      const got = [];
      while (got.length < missed.length) got.push((await until(resumed, isJob)).id);
      expect(got).toEqual(missed.map((c) => c.cursor));
      // Nothing more: the next job event is a change made after the reconnect.
      const { job: marker } = await d.scheduler.schedule({ tenant: "acme", ...later() });
      expect(JSON.parse((await until(resumed, isJob)).data!)).toMatchObject({ id: marker.id });
    }
  });

  it("refuses a cursor it cannot resume from as /v1/changes does", async () => {
    const past = await request("key-acme", "header", { "last-event-id": "999999" }).res;
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: unknown }).error).toMatchObject({
      field: "last-event-id",
    });
    const garbage = await request("key-acme", "header", { after: "not-a-cursor" }).res;
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: unknown }).error).toMatchObject({ field: "after" });

    const hello = await until(await connect("key-acme", "header"), (f) => f.event === "hello");
    await d.scheduler.schedule({ tenant: "acme", ...later() });
    // Retention removes every change made up to now (the feed keeps changeRetentionMs).
    await d.clock.advance(8 * 24 * HOUR);
    expect(await d.scheduler.purgeChanges()).toBeGreaterThan(0);
    const expired = await request("key-acme", "header", { "last-event-id": hello.id! }).res;
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({
      error: { code: "cursor-expired", field: "after" },
      oldest: expect.any(String),
    });
  });
});

function isJob(f: Frame): boolean {
  return f.event === "job";
}
