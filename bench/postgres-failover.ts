/**
 * Failover of a primary to its standby under a firing node and a writer, synchronous and
 * asynchronous replication: `npx tsx bench/postgres-failover.ts` (BENCH_SCALE=tiny: fewer
 * jobs). On loopback (test/support/postgres-standby.ts), one Scheduler node on the two-host
 * URL (target_session_attrs=read-write) fires jobs due 100 per second while a writer inserts
 * 20 jobs at a time; after 5 s the primary is SIGKILLed with its backends, 2 s later the
 * standby is promoted. Measured: writes acknowledged and then missing from the promoted
 * standby (lost), jobs written before the kill that never fired, jobs fired twice, and the
 * gap from the promotion to the node's next delivery.
 */
import { quietLogger } from "../src/core/logger.js";
import { createScheduler } from "../src/create-scheduler.js";
import { startPostgresPair } from "../test/support/postgres-standby.js";
import pg from "pg";

const tiny = process.env.BENCH_SCALE === "tiny";
const JOBS = tiny ? 600 : 2000; // due over JOBS / 100 seconds

async function once(synchronous: boolean): Promise<string[]> {
  const pair = await startPostgresPair({ synchronous });
  const db = `${pair.url}&schema=failover`;
  const node = await createScheduler({ db, nodeName: "node-a", logger: quietLogger });
  const fired = new Map<string, number>();
  const firedAt: number[] = [];
  node.handle("noop", (job) => {
    fired.set(job.id, (fired.get(job.id) ?? 0) + 1);
    firedAt.push(Date.now());
  });
  const start = Date.now() + 1000;
  const due = await node.scheduleMany(
    Array.from({ length: JOBS }, (_, i) => ({ dueAt: start + i * 10, target: "noop" })),
  );
  node.start();
  const writer = await createScheduler({ db, nodeName: "writer", logger: quietLogger });
  const acked: string[] = [];
  let writing = true;
  const writes = (async () => {
    while (writing) {
      try {
        const jobs = await writer.scheduleMany(
          Array.from({ length: 20 }, () => ({ dueAt: Date.now() + 86_400_000, target: "noop" })),
        );
        acked.push(...jobs.map((r) => r.job.id));
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  })();
  await new Promise((r) => setTimeout(r, 5000));
  const killedAt = Date.now();
  const ackedAtKill = acked.length;
  await pair.killPrimary();
  await new Promise((r) => setTimeout(r, 2000));
  await pair.promote();
  const promotedAt = Date.now();
  // Every job is due by start + JOBS * 10; leases (15 s) of claims lost with the primary run out after.
  const end = start + JOBS * 10 + 20_000;
  while (Date.now() < end && fired.size < due.length) await new Promise((r) => setTimeout(r, 100));
  writing = false;
  await writes;
  const client = new pg.Client({ connectionString: pair.standby.url });
  await client.connect();
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM failover.jobs_live WHERE id = ANY($1)`,
    [acked],
  );
  await client.end();
  const present = new Set(rows.map((r) => r.id));
  const lost = acked.filter((id) => !present.has(id));
  const lostBeforeKill = acked.slice(0, ackedAtKill).filter((id) => !present.has(id)).length;
  const neverFired = due.filter((r) => !fired.has(r.job.id)).length;
  const twice = [...fired.values()].filter((n) => n > 1).length;
  const resumed = firedAt.find((t) => t > promotedAt);
  await Promise.all([node.close(), writer.close()]);
  await pair.stop();
  return [
    synchronous ? "synchronous" : "asynchronous",
    String(acked.length),
    `${lost.length} (${lostBeforeKill} acknowledged before the kill)`,
    `${neverFired} of ${due.length}`,
    String(twice),
    resumed === undefined ? "none" : `${((resumed - promotedAt) / 1000).toFixed(2)} s`,
    `${((promotedAt - killedAt) / 1000).toFixed(2)} s`,
  ];
}

const rows = [await once(true), await once(false)];
const headers = [
  "replication",
  "writes acknowledged",
  "acknowledged, missing after promotion",
  "due jobs never fired",
  "fired twice",
  "next delivery after promotion",
  "kill to promotion",
];
process.stdout.write(`| ${headers.join(" | ")} |\n|${headers.map(() => "---").join("|")}|\n`);
for (const r of rows) process.stdout.write(`| ${r.join(" | ")} |\n`);
