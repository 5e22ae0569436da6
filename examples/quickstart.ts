import { once } from "node:events";
import { createScheduler } from "duetime";

// One SQLite file holds every job; no server to run.
const scheduler = await createScheduler({ db: process.env.DUETIME_DB ?? "quickstart.db" });

// Handlers are registered by name; a job's `target` names the one that fires it.
scheduler.handle("send-reminder", async (job) => {
  const { user, text } = job.payload as { user: string; text: string };
  console.log(`reminder for ${user}: ${text} (${Date.now() - job.dueAt} ms late)`);
});

// Schedule one job (while it is pending or firing, the same key returns this job)...
const { job, created } = await scheduler.schedule({
  dueAt: "in 200 ms",
  target: "send-reminder",
  payload: { user: "ada", text: "stand up and stretch" },
  key: "ada-stretch",
});
console.log(`scheduled ${job.id} for ${new Date(job.dueAt).toISOString()} (created: ${created})`);

// ...or many in one transaction.
await scheduler.scheduleMany([
  { delayMs: 300, target: "send-reminder", payload: { user: "bob", text: "drink water" } },
  { delayMs: 86_400_000, target: "send-reminder", payload: { user: "cy", text: "tomorrow" } },
]);

// Snooze and cancel give definite answers.
const later = await scheduler.schedule({
  delayMs: 60_000,
  target: "send-reminder",
  payload: { user: "di", text: "snoozed" },
});
console.log((await scheduler.reschedule(later.job.id, "in 2 hours")).outcome); // rescheduled
console.log((await scheduler.cancel(later.job.id)).outcome); // cancelled

scheduler.start();
await once(scheduler, "succeeded");
await once(scheduler, "succeeded");
const stats = await scheduler.stats();
console.log(`pending: ${stats.counts.pending}, succeeded: ${stats.counts.succeeded}`);
await scheduler.close(); // stops firing (finishing in-flight work) and closes the file
