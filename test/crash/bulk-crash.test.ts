import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, it } from "vitest";
import { bulkCrashScenario } from "../support/bulk-crash.js";
import { tempDir } from "../support/temp-dir.js";

const dir = tempDir("duetime-bulk-crash-");
afterAll(() => dir.cleanup());

describe("bulk operation crash safety (SQLite)", () => {
  it("a bulk reschedule killed halfway resumes on restart and moves every matching job exactly once", async () => {
    const db = join(dir.path, "bulk.db");
    await bulkCrashScenario({
      db,
      async rescheduledPerJob() {
        const conn = new Database(db, { readonly: true });
        try {
          const rows = conn
            .prepare(
              "SELECT job_id, count(*) AS n FROM changes WHERE kind = 'rescheduled' GROUP BY job_id",
            )
            .all() as { job_id: string; n: number }[];
          return new Map(rows.map((r) => [r.job_id, r.n]));
        } finally {
          conn.close();
        }
      },
    });
  });
});
