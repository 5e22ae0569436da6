import pg from "pg";
import { describe, it } from "vitest";
import { bulkCrashScenario } from "../support/bulk-crash.js";
import { freshSchema, usePostgresServer } from "../support/postgres-server.js";

// the worker's share: the children connect to it, nothing here stops or restarts it
const server = usePostgresServer();

describe("bulk operation crash safety (PostgreSQL)", () => {
  it("a bulk reschedule killed halfway resumes on restart and moves every matching job exactly once", async () => {
    const schema = freshSchema("bulk_crash");
    await bulkCrashScenario({
      db: `${server.url}?schema=${schema}`,
      async rescheduledPerJob() {
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ job_id: string; n: number }>(
            `SELECT job_id, count(*)::int AS n FROM "${schema}".job_changes
             WHERE kind = 'rescheduled' GROUP BY job_id`,
          );
          return new Map(rows.map((r) => [r.job_id, r.n]));
        } finally {
          await client.end();
        }
      },
    });
  });
});
