/**
 * A scheduler process for the series crash test, on its own ManualClock so it runs through
 * seconds of a per-second series without waiting for them: argv = SQLite file, log file,
 * start time (epoch ms), the nominal time at which to SIGKILL itself ("-" for none), and the
 * number of occurrences after which it stops. Its handler appends each occurrence's nominal
 * time to the log; at the kill nominal it kills itself inside the handler: after the claim
 * (which wrote the next occurrence) committed, before the outcome is recorded.
 */
import { appendFileSync } from "node:fs";
import pino from "pino";
import { Scheduler } from "../../src/api/scheduler.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

const [dbPath, logPath, startText, killAt, stopAfter] = process.argv.slice(2);
const store = new SqliteStore({ path: dbPath! });
const clock = new ManualClock(Number(startText));
const scheduler = new Scheduler({
  store,
  clock,
  logger: pino({ level: "silent" }),
  leaseMs: 2000,
  nodeName: "series-crash",
});
scheduler.handle("record", (job) => {
  appendFileSync(logPath!, `${job.nominal}\n`);
  if (job.nominal === killAt) process.kill(process.pid, "SIGKILL");
});
const { schedules } = await scheduler.listSchedules();
if (schedules.length === 0) {
  await scheduler.scheduleRecurring({
    cron: "* * * * * *",
    timeZone: "UTC",
    target: "record",
    misfire: "fire-all",
    misfireLimit: 1000,
  });
}
scheduler.start();
for (;;) {
  await clock.advance(250);
  await scheduler.sweepLeases();
  const [s] = (await scheduler.listSchedules()).schedules;
  if (s && s.firedCount >= Number(stopAfter)) break;
}
await scheduler.close();
process.stdout.write("done\n");
