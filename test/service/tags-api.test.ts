import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers.js";

/**
 * Issue 13 §2 over HTTP: `tags` on POST /v1/jobs (and batch) and in every Job, GET
 * /v1/jobs?tag= paging a tag's jobs in id order, GET /v1/jobs/count?tag= with status and due
 * range, each within the API key's tenant; bad tags refused naming `tags[i]`, nothing stored.
 */

let t: TestService;
beforeEach(async () => {
  t = await startTestService();
});
afterEach(async () => {
  await t.close();
});

const TARGET = "https://hooks.example.com/duetime";

describe("tags over HTTP", () => {
  it("stores tags, lists a tag's jobs page by page and counts them, per tenant", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.api("POST", "/v1/jobs", {
        body: { delayMs: (5 - i) * 60_000, target: TARGET, tags: ["user:42", `n:${i}`] },
      });
      expect(r.status).toBe(201);
      expect(r.body.job.tags).toEqual(["user:42", `n:${i}`]);
      ids.push(r.body.job.id as string);
    }
    await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 1000, target: TARGET },
          { delayMs: 1000, target: TARGET },
        ],
      },
    });
    await t.api("POST", "/v1/jobs", {
      key: t.umbrella.key,
      body: { delayMs: 1000, target: TARGET, tags: ["user:42"] },
    });
    const got = await t.api("GET", `/v1/jobs/${ids[0]}`);
    expect(got.body.job.tags).toEqual(["user:42", "n:0"]);

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const q: string = cursor === null ? "" : `&cursor=${cursor}`;
      const page = await t.api("GET", `/v1/jobs?tag=user:42&limit=2${q}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.jobs.map((j: { id: string }) => j.id));
      cursor = page.body.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(ids);

    expect((await t.api("GET", "/v1/jobs/count?tag=user:42")).body).toEqual({ count: 5 });
    const cancelled = await t.api("POST", `/v1/jobs/${ids[1]}/cancel`);
    expect(cancelled.status).toBe(200);
    const pending = await t.api("GET", "/v1/jobs/count?tag=user:42&status=pending");
    expect(pending.body).toEqual({ count: 4 });
    const soon = await t.api("GET", "/v1/jobs/count?tag=user:42&dueTo=in 150 seconds");
    expect(soon.body).toEqual({ count: 2 });
    const onlyCancelled = await t.api("GET", "/v1/jobs?tag=user:42&status=cancelled");
    expect(onlyCancelled.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[1]]);
    const theirs = await t.api("GET", "/v1/jobs/count?tag=user:42", { key: t.umbrella.key });
    expect(theirs.body).toEqual({ count: 1 });
  });

  it("refuses bad tags naming the field, with nothing stored, and a count without a tag", async () => {
    const long = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 1000, target: TARGET, tags: ["ok", "x".repeat(65)] },
    });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({
      field: "tags[1]",
      expected: "a string of 1 to 64 characters",
      received: "65 characters",
    });
    const many = await t.api("POST", "/v1/jobs/batch", {
      body: {
        jobs: [
          { delayMs: 1000, target: TARGET, tags: ["fine"] },
          { delayMs: 1000, target: TARGET, tags: Array.from({ length: 17 }, (_, i) => `t${i}`) },
        ],
      },
    });
    expect(many.status).toBe(400);
    expect(many.body.error).toMatchObject({ field: "jobs[1].tags", expected: "at most 16 tags" });
    const spaced = await t.api("POST", "/v1/jobs", {
      body: { delayMs: 1000, target: TARGET, tags: ["user 42"] },
    });
    expect(spaced.body.error).toMatchObject({ field: "tags[0]" });
    expect((await t.api("GET", "/v1/jobs")).body.jobs).toEqual([]);
    expect((await t.api("GET", "/v1/jobs/count?tag=fine")).body).toEqual({ count: 0 });
    const noTag = await t.api("GET", "/v1/jobs/count?status=pending");
    expect(noTag.status).toBe(400);
    expect(noTag.body.error).toMatchObject({ field: "tag" });
  });
});
