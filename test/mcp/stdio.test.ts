import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, tempWorkspace, wallParts } from "../cli/helpers.js";
import { call, callTask, ensureBuilt, reminderNotice, startMcp, type Running } from "./helpers.js";

/**
 * `duetime mcp` as a client such as Claude Desktop runs it: a child process spoken to over
 * stdio by the official SDK client, on a fresh SQLite file, firing reminders in real time.
 */

const ws = tempWorkspace();
let mcp: Running;

beforeAll(async () => {
  await ensureBuilt();
  mcp = await startMcp(["--db", ws.db, "--tenant", "alice"]);
});

afterAll(async () => {
  await mcp?.client.close();
  ws.cleanup();
});

describe("duetime mcp over stdio", () => {
  it("lists the five task tools with described input schemas", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "task.cancel",
      "task.create",
      "task.list",
      "task.reschedule",
      "task.status",
    ]);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const create = byName.get("task.create")!;
    expect(create.description).toMatch(/reminder/);
    // scheduled_at is required of a one-shot task by the tool (a series may go without it)
    expect(create.inputSchema.required).toEqual(["description"]);
    const props = create.inputSchema.properties as Record<
      string,
      { type?: string; description?: string }
    >;
    expect(Object.keys(props).sort()).toEqual([
      "callbacks",
      "description",
      "expire_after_ms",
      "idempotency_key",
      "key_mode",
      "locale",
      "max_attempts",
      "max_wait_ms",
      "payload",
      "recurrence",
      "scheduled_at",
      "tags",
      "timezone",
      "webhook_headers",
      "webhook_url",
    ]);
    expect(props.scheduled_at).toMatchObject({ type: "string" });
    expect(props.scheduled_at!.description).toMatch(/in 10 minutes.*tomorrow 9am/);
    expect(props.max_attempts).toMatchObject({ type: "integer", minimum: 1 });
    for (const [name, p] of Object.entries(props)) expect(p.description, name).toBeTruthy();
    expect(create.inputSchema).toMatchObject({ additionalProperties: false });
    // job_id, id or idempotency_key: none is required by the schema, a call without any is
    // "not found"
    for (const tool of ["task.status", "task.cancel"]) {
      const schema = byName.get(tool)!.inputSchema;
      expect(schema.required ?? [], tool).toEqual([]);
      expect(Object.keys(schema.properties ?? {}).sort(), tool).toEqual([
        "id",
        "idempotency_key",
        "job_id",
      ]);
    }
    expect(byName.get("task.reschedule")!.inputSchema.required ?? []).toEqual([]);
    expect(byName.get("task.list")!.inputSchema.required ?? []).toEqual([]);
    expect(byName.get("task.list")!.inputSchema.properties).toHaveProperty("tag");
    expect(props.tags).toMatchObject({ type: "array", items: { type: "string" } });
    expect(byName.get("task.list")!.annotations?.readOnlyHint).toBe(true);
  });

  it('creates a reminder "in 10 minutes" due ten minutes after the call', async () => {
    const before = Date.now();
    const task = await callTask(mcp.client, "task.create", {
      description: "stretch",
      scheduled_at: "in 10 minutes",
    });
    const after = Date.now();
    const due = Date.parse(task.scheduled_at);
    expect(due).toBeGreaterThanOrEqual(before + 600_000);
    expect(due).toBeLessThanOrEqual(after + 600_000);
    expect(task).toMatchObject({
      status: "pending",
      kind: "reminder",
      description: "stretch",
      attempts: 0,
      fired_at: null,
      timezone: null,
      scheduled_at_local: null,
    });
  });

  it('creates "tomorrow 9am" in Europe/Paris at 09:00 Paris time the next Paris day', async () => {
    const before = Date.now();
    const task = await callTask(mcp.client, "task.create", {
      description: "call the bank",
      scheduled_at: "tomorrow 9am",
      timezone: "Europe/Paris",
    });
    const due = Date.parse(task.scheduled_at);
    // Independently of duetime: tomorrow's Paris date, and the one instant of it (UTC+1 or
    // UTC+2) at which Paris clocks read 09:00.
    const today = wallParts(before, "Europe/Paris");
    const tomorrow = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
    const [y, m, d] = [tomorrow.getUTCFullYear(), tomorrow.getUTCMonth(), tomorrow.getUTCDate()];
    const expected = [Date.UTC(y, m, d, 8), Date.UTC(y, m, d, 7)].find((t) => {
      const w = wallParts(t, "Europe/Paris");
      return w.day === d && w.hour === 9 && w.minute === 0;
    });
    expect(due).toBe(expected);
    expect(task.timezone).toBe("Europe/Paris");
    expect(task.scheduled_at_local).toMatch(/T09:00:00\.000\+0[12]:00$/);
  });

  it("lists, shows, cancels and reschedules with definite outcomes", async () => {
    const a = await callTask(mcp.client, "task.create", {
      description: "list me A",
      scheduled_at: "2099-01-01T10:00:00Z",
    });
    const b = await callTask(mcp.client, "task.create", {
      description: "list me B",
      scheduled_at: "2099-01-02T10:00:00+02:00",
    });
    const first = await call(mcp.client, "task.list", {
      due_from: "2099-01-01T00:00:00Z",
      status: "pending",
      limit: 1,
    });
    expect(first.isError).toBe(false);
    expect((first.structured.tasks as { id: string }[]).map((t) => t.id)).toEqual([a.id]);
    expect(first.structured.next_cursor).toEqual(expect.any(String));
    const second = await call(mcp.client, "task.list", {
      due_from: "2099-01-01T00:00:00Z",
      status: ["pending"],
      limit: 1,
      cursor: first.structured.next_cursor,
    });
    expect((second.structured.tasks as { id: string }[]).map((t) => t.id)).toEqual([b.id]);
    expect(second.structured.next_cursor).toBeNull();

    const shown = await call(mcp.client, "task.status", { id: b.id });
    expect(shown.isError).toBe(false);
    expect(shown.text).toMatch(/^pending: task .* "list me B" is due 2099-01-02T08:00:00.000Z/);
    expect(shown.structured.task).toMatchObject({ id: b.id, version: 1, status: "pending" });

    const moved = await call(mcp.client, "task.reschedule", {
      id: b.id,
      scheduled_at: "2099-03-01T09:30:00",
      timezone: "Europe/Paris",
    });
    // A wall time without an offset is read in the call's timezone: 09:30 in Paris in March
    expect(moved.isError).toBe(false);
    expect(moved.structured).toMatchObject({
      outcome: "rescheduled",
      task: { id: b.id, version: 2, scheduled_at: "2099-03-01T08:30:00.000Z" },
    });

    const snoozed = await call(mcp.client, "task.reschedule", {
      id: b.id,
      scheduled_at: "2099-03-01T10:30:00+01:00",
      expected_version: 2,
    });
    expect(snoozed.isError).toBe(false);
    expect(snoozed.structured).toMatchObject({
      outcome: "rescheduled",
      task: { id: b.id, version: 3, scheduled_at: "2099-03-01T09:30:00.000Z" },
    });
    const stale = await call(mcp.client, "task.reschedule", {
      id: b.id,
      scheduled_at: "in 2 days",
      expected_version: 1,
    });
    expect(stale.isError).toBe(true);
    expect(stale.structured).toMatchObject({ outcome: "version-conflict", task: { version: 3 } });

    const cancelled = await call(mcp.client, "task.cancel", { id: a.id });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.structured).toMatchObject({
      outcome: "cancelled",
      task: { status: "cancelled" },
    });
    const again = await call(mcp.client, "task.cancel", { id: a.id });
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/^too-late: not cancelled\. cancelled: task/);
    expect(again.structured).toMatchObject({ outcome: "too-late", task: { status: "cancelled" } });
    const lateSnooze = await call(mcp.client, "task.reschedule", {
      id: a.id,
      scheduled_at: "in 1 hour",
    });
    expect(lateSnooze.structured).toMatchObject({ outcome: "too-late" });

    const ghost = "01JZZZZZZZZZZZZZZZZZZZZZZZ";
    for (const tool of ["task.status", "task.cancel"]) {
      const r = await call(mcp.client, tool, { id: ghost });
      expect(r.isError, tool).toBe(true);
      expect(r.text).toBe(`not-found: no task ${ghost} (task not found)`);
      expect(r.structured).toEqual({ outcome: "not-found", job_id: ghost, id: ghost });
    }
    const r = await call(mcp.client, "task.reschedule", { id: ghost, scheduled_at: "in 1h" });
    expect(r.structured).toEqual({ outcome: "not-found", job_id: ghost, id: ghost });
  });

  it("answers bad input with a tool error naming the field, the expectation and the input", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { description: "x", scheduled_at: "whenever you like" },
        /^scheduled_at: expected .*"in 10 minutes".*, received "whenever you like"$/,
      ],
      [
        { description: "x", scheduled_at: "tomorrow 9am", timezone: "Mars/Olympus" },
        /^timezone: expected an IANA time zone name such as Europe\/Paris, received "Mars\/Olympus"$/,
      ],
      [
        { description: 42, scheduled_at: "in 1h" },
        /description: expected a string of 1 to 1000 characters, received 42/,
      ],
      [
        { scheduled_at: "in 1h" },
        /description: expected a string of 1 to 1000 characters, received undefined/,
      ],
      [
        { description: "x", scheduled_at: "in 1h", max_attempts: 0 },
        /max_attempts: expected an integer from 1 to 1000, received 0/,
      ],
      [
        { description: "x", scheduled_at: "in 1h", when: "now" },
        /when: expected no such field \(known fields: description, scheduled_at/,
      ],
      [
        { description: "x", scheduled_at: "in 1h", webhook_url: "https://example.com/hook" },
        /^webhook_url: expected no webhook: this server fires reminders only.*received "https:\/\/example.com\/hook"$/,
      ],
      [
        { description: "x", scheduled_at: "in 1h", webhook_headers: { a: "b" } },
        /^webhook_headers: expected to be given only with webhook_url, received an object$/,
      ],
      [
        { description: "x", scheduled_at: "in 1h", payload: { big: "y".repeat(70_000) } },
        /^payload: expected JSON of at most 65536 bytes, received \d+ bytes$/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await call(mcp.client, "task.create", args);
      expect(r.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(r.text).toMatch(re);
    }
    const list = await call(mcp.client, "task.list", { limit: 1000, status: "done" });
    expect(list.isError).toBe(true);
    expect(list.text).toMatch(/status: expected one of pending, claimed/);
    const cursor = await call(mcp.client, "task.list", { cursor: "not-a-cursor" });
    expect(cursor.text).toBe(
      'cursor: expected a cursor returned by a previous page, received "not-a-cursor"',
    );
    const from = await call(mcp.client, "task.list", { due_from: "soonish" });
    expect(from.text).toMatch(/^due_from: expected .*, received "soonish"$/);
    // Nothing was stored by any of the refused calls.
    const all = await call(mcp.client, "task.list", {
      due_from: "2000-01-01T00:00:00Z",
      limit: 100,
    });
    const descriptions = (all.structured.tasks as { description: string }[]).map(
      (t) => t.description,
    );
    expect(descriptions).not.toContain("x");
  });

  it("fires a reminder due now and task.status then shows it succeeded with its fired time", async () => {
    const due = await callTask(mcp.client, "task.create", {
      description: "tea is ready",
      scheduled_at: new Date().toISOString(),
    });
    // A past time within the tolerance (60 s) is accepted and fires at once.
    const late = await callTask(mcp.client, "task.create", {
      description: "a little late",
      scheduled_at: new Date(Date.now() - 5_000).toISOString(),
    });
    await Promise.all([reminderNotice(mcp, due.id), reminderNotice(mcp, late.id)]);
    for (const t of [due, late]) {
      const r = await call(mcp.client, "task.status", { id: t.id });
      expect(r.text).toMatch(/^succeeded: task .* fired at \d{4}-/);
      const task = r.structured.task as typeof due;
      expect(task).toMatchObject({ status: "succeeded", attempts: 1, last_error: null });
      expect(Date.parse(task.fired_at!)).toBeGreaterThanOrEqual(Date.parse(t.scheduled_at));
      expect(task.last_result).toMatchObject({ reminded: true, description: t.description });
    }
  });

  it("keeps stdout for the protocol: the startup line went to stderr", () => {
    expect(mcp.stderr()).toMatch(/duetime mcp: serving MCP over stdio: .*tenant=alice fire=true/);
  });
});

describe("duetime mcp process", () => {
  it("with --no-fire accepts webhooks and leaves due tasks for the process that fires the file", async () => {
    const other = tempWorkspace();
    const r = await startMcp(["--db", other.db, "--no-fire", "--tool-names", "underscore"]);
    try {
      const { tools } = await r.client.listTools();
      expect(tools.map((t) => t.name)).toContain("task_create");
      const hook = await callTask(r.client, "task_create", {
        description: "ping the build",
        scheduled_at: new Date().toISOString(),
        webhook_url: "https://example.com/hooks/build",
        webhook_headers: { "X-Token": "abc" },
        payload: { build: 42 },
      });
      expect(hook).toMatchObject({
        kind: "webhook",
        webhook_url: "https://example.com/hooks/build",
      });
      const bad = await call(r.client, "task_create", {
        description: "x",
        scheduled_at: "in 1h",
        webhook_url: "ftp://example.com/x",
      });
      expect(bad.text).toBe(
        'webhook_url: expected an http(s) URL such as https://example.com/hook, received "ftp://example.com/x"',
      );
      // The one webhook-target policy applies here too: a private host needs the flag.
      const internal = await call(r.client, "task_create", {
        description: "x",
        scheduled_at: "in 1h",
        webhook_url: "http://[2002:7f00:1::]:8080/hook",
      });
      expect(internal.text).toMatch(/^webhook_url: expected a URL of a public host/);
      // Another round trip: had this process been firing, the due task would be claimed now.
      await call(r.client, "task_list", {});
      expect((await callTask(r.client, "task_status", { id: hook.id })).status).toBe("pending");
    } finally {
      await r.client.close();
    }
    const open = await startMcp(["--db", other.db, "--no-fire", "--allow-private-targets"]);
    try {
      const local = await callTask(open.client, "task.create", {
        description: "to the receiver next door",
        scheduled_at: "in 1h",
        webhook_url: "http://127.0.0.1:8080/hook",
      });
      expect(local).toMatchObject({ kind: "webhook", webhook_url: "http://127.0.0.1:8080/hook" });
    } finally {
      await open.client.close();
      other.cleanup();
    }
  });

  it("writes only JSON-RPC to stdout and exits 0 on SIGTERM; also on stdin close", async () => {
    const other = tempWorkspace();
    try {
      for (const stop of ["SIGTERM", "stdin"] as const) {
        const child = spawn(process.execPath, [CLI, "mcp", "--db", other.db], {
          cwd: ROOT,
          stdio: ["pipe", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        child.stderr.on("data", (d: Buffer) => (err += d.toString()));
        const answered = new Promise<void>((resolve) =>
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
            if (out.includes("\n")) resolve();
          }),
        );
        const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
        child.stdin.write(
          `${JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "raw", version: "1" },
            },
          })}\n`,
        );
        await answered;
        if (stop === "SIGTERM") child.kill("SIGTERM");
        else child.stdin.end();
        expect(await exited, err).toBe(0);
        const lines = out.trim().split("\n");
        for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
        expect(JSON.parse(lines[0]!)).toMatchObject({
          id: 1,
          result: { serverInfo: { name: "duetime" } },
        });
        expect(err).toMatch(
          stop === "SIGTERM" ? /stopping \(SIGTERM\)/ : /stopping \(stdin closed\)/,
        );
        expect(err).toMatch(/stopped/);
      }
    } finally {
      other.cleanup();
    }
  });
});
