import type { StoredChange } from "../../../src/core/change.js";
import { apiKey } from "./api.js";

/**
 * One change of a job, as `GET /v1/events` sends it (event `job`): a row of the durable
 * change feed, made by any node, with times in epoch ms. The server writes the feed's own
 * rows, so the type is theirs (a copy of the kind list here had missed `paused`/`resumed`).
 */
export type JobChange = StoredChange;

export type LiveState = "connecting" | "live" | "offline";

type Listener = (c: JobChange) => void;

/**
 * The live stream, read with fetch rather than EventSource so the API key travels in the
 * Authorization header and never in a URL. Every event's id is its feed cursor, so a
 * reconnect with `Last-Event-ID` misses nothing; a `reset` from the server, or a 410 (the
 * cursor is older than the feed keeps), tells the views to reload.
 */
export class LiveFeed {
  private readonly listeners = new Set<Listener>();
  private readonly resetListeners = new Set<() => void>();
  private lastId: string | null = null;
  /** The last changes seen, for a job page opened after they arrived. */
  private readonly seen: JobChange[] = [];
  private abort: AbortController | null = null;
  private retryMs = 3000;
  private stopped = true;
  private failures = 0;

  constructor(private readonly onState: (s: LiveState) => void) {}

  on(f: Listener): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }
  onReset(f: () => void): () => void {
    this.resetListeners.add(f);
    return () => this.resetListeners.delete(f);
  }

  /** Changes of job `id` seen since the page loaded, oldest first. */
  seenFor(id: string): JobChange[] {
    return this.seen.filter((c) => c.id === id);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.lastId = null;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.onState("connecting");
      try {
        await this.readOnce();
        this.failures = 0;
      } catch {
        this.failures++;
      }
      if (this.stopped) break;
      this.onState("offline");
      const wait = Math.min(30_000, this.retryMs * 2 ** Math.min(this.failures, 4));
      await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random() / 2)));
    }
  }

  private async readOnce(): Promise<void> {
    this.abort = new AbortController();
    const headers: Record<string, string> = {
      accept: "text/event-stream",
      authorization: `Bearer ${apiKey() ?? ""}`,
    };
    if (this.lastId !== null) headers["last-event-id"] = this.lastId;
    const res = await fetch("v1/events", { headers, signal: this.abort.signal });
    if (res.status === 410) {
      // Retention removed changes this view never saw: start again from the head.
      this.lastId = null;
      for (const f of this.resetListeners) f();
      return;
    }
    if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        this.dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  /** One SSE frame: `id:`, `event:`, `data:` and `retry:` lines; `:` lines are heartbeats. */
  private dispatch(frame: string): void {
    let event = "message";
    let data = "";
    for (const line of frame.split("\n")) {
      const colon = line.indexOf(":");
      if (colon === 0) continue;
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data += (data === "" ? "" : "\n") + value;
      else if (field === "id") this.lastId = value;
      else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    // The hello's id is the cursor the stream starts at, so a reconnect resumes from there.
    if (event === "hello") this.onState("live");
    else if (event === "reset") for (const f of this.resetListeners) f();
    else if (event === "job" && data !== "") {
      const change = JSON.parse(data) as JobChange;
      this.seen.push(change);
      if (this.seen.length > 1000) this.seen.shift();
      for (const f of this.listeners) f(change);
    }
  }
}
