import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempWorkspace } from "../cli/helpers.js";
import { call, ensureBuilt, reminderNotice, startMcp, type Running } from "./helpers.js";

/**
 * The verification flow of the seed prototype (`chatgpt_task`) that duetime grew from,
 * followed as its users' assistants and scripts do, unchanged: ISO times without an offset
 * ("ISO 8601 format (e.g. 2026-05-03T10:00:00)"), a past time on purpose, `job_id`
 * everywhere. `duetime mcp` over stdio, the official SDK client, a fresh SQLite file.
 */
const ws = tempWorkspace();
let mcp: Running;

beforeAll(async () => {
  await ensureBuilt();
  mcp = await startMcp(["--db", ws.db]);
});
afterAll(async () => {
  await mcp?.client.close();
  ws.cleanup();
});

describe("the seed prototype's MCP flow", () => {
  it("creates, runs a past task at once, cancels a future one, lists both, and says not found", async () => {
    const past = await call(mcp.client, "task.create", {
      description: "prototype check",
      scheduled_at: "2025-01-01T00:00:00",
    });
    expect(past.isError).toBe(false);
    const pastId = past.structured.job_id as string;
    expect(pastId).toMatch(/^[0-9A-Z]{26}$/);
    expect(past.structured).toMatchObject({
      outcome: "created",
      task: { job_id: pastId, id: pastId, scheduled_at: "2025-01-01T00:00:00.000Z" },
    });
    // overdue by almost two years at the time of writing: the answer says it, and by how much
    expect(past.text).toMatch(/it was due \d+d( \d+h)? ago \(overdue\): it runs now/);
    expect(past.structured.overdue_ms).toBeGreaterThan(Date.now() - Date.parse("2025-01-02"));

    const future = await call(mcp.client, "task.create", {
      description: "far future",
      scheduled_at: "2099-05-03T10:00:00",
    });
    expect(future.isError).toBe(false);
    const futureId = future.structured.job_id as string;
    expect(future.text).not.toMatch(/overdue/);

    await reminderNotice(mcp, pastId);
    const done = await call(mcp.client, "task.status", { job_id: pastId });
    expect(done.isError).toBe(false);
    expect(done.text).toMatch(new RegExp(`^succeeded: task ${pastId} "prototype check" completed`));
    expect(done.structured.task).toMatchObject({ status: "succeeded", completed: true });
    // `id` names the same task
    const byId = await call(mcp.client, "task.status", { id: pastId });
    expect(byId.structured.task).toMatchObject({ job_id: pastId, completed: true });

    const cancelled = await call(mcp.client, "task.cancel", { job_id: futureId });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.text).toMatch(/^cancelled: /);
    expect(cancelled.structured).toMatchObject({
      outcome: "cancelled",
      task: { job_id: futureId },
    });

    const listed = await call(mcp.client, "task.list", {});
    expect(listed.isError).toBe(false);
    const tasks = listed.structured.tasks as { job_id: string; status: string }[];
    expect(tasks.map((t) => [t.job_id, t.status])).toEqual([
      [pastId, "succeeded"],
      [futureId, "cancelled"],
    ]);

    const ghost = "01JZZZZZZZZZZZZZZZZZZZZZZZ";
    for (const tool of ["task.status", "task.cancel"]) {
      const missing = await call(mcp.client, tool, { job_id: ghost });
      expect(missing.isError, tool).toBe(true);
      expect(missing.text, tool).toMatch(/not found/);
      expect(missing.structured).toMatchObject({ outcome: "not-found", job_id: ghost });
      // no id at all: still a definite "not found", not a schema error
      const none = await call(mcp.client, tool, {});
      expect(none.isError, tool).toBe(true);
      expect(none.text, tool).toMatch(
        /^not-found: no job_id \(or id\) given, so no task was found/,
      );
    }
  });

  it("refuses job_id and id naming two different tasks, naming the field", async () => {
    const r = await call(mcp.client, "task.status", {
      job_id: "01JAAAAAAAAAAAAAAAAAAAAAAA",
      id: "01JBBBBBBBBBBBBBBBBBBBBBBB",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^job_id: expected the same task as id \(01JB/);
  });

  it("reads a wall time in the call's timezone and words in its locale", async () => {
    const paris = await call(mcp.client, "task.create", {
      description: "paris",
      scheduled_at: "2099-03-01T09:30:00",
      timezone: "Europe/Paris",
    });
    expect(paris.structured.task).toMatchObject({
      scheduled_at: "2099-03-01T08:30:00.000Z",
      scheduled_at_local: "2099-03-01T09:30:00.000+01:00",
    });
    const french = await call(mcp.client, "task.create", {
      description: "demain",
      scheduled_at: "demain à 9h",
      timezone: "Europe/Paris",
      locale: "fr",
    });
    expect(french.isError).toBe(false);
    expect((french.structured.task as { scheduled_at_local: string }).scheduled_at_local).toMatch(
      /T09:00:00\.000\+0[12]:00$/,
    );
    const unknown = await call(mcp.client, "task.create", {
      description: "x",
      scheduled_at: "demain à 9h",
      locale: "tlh",
    });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/^locale: expected a language tag duetime reads/);
  });
});
