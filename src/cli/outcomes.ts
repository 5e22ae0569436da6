import type { RescheduleResult } from "../index.js";
import { outcomeView } from "../api/job-view.js";
import { EXIT } from "./errors.js";
import { out, outJson } from "./context.js";
import { formatInZone, formatRelative } from "./format.js";
import { notFoundText, type JobRef } from "./job-ref.js";

/** Prints what a reschedule or retry did and returns its exit code. */
export function reportMove(
  r: RescheduleResult,
  ref: JobRef,
  o: { json?: boolean; timeZone: string; verb: "rescheduled" | "retrying" },
): number {
  const id = r.outcome === "not-found" ? ("id" in ref ? ref.id : "") : r.job.id;
  if (o.json) outJson(outcomeView(r, id));
  switch (r.outcome) {
    case "rescheduled":
      if (!o.json) {
        out(
          `${o.verb}: job ${id} due ${new Date(r.job.dueAt).toISOString()} ` +
            `(${formatInZone(r.job.dueAt, o.timeZone)}, ${formatRelative(r.job.dueAt, Date.now())}), version ${r.job.version}`,
        );
      }
      return EXIT.ok;
    case "too-late":
      if (!o.json) {
        out(
          o.verb === "retrying"
            ? `too-late: job ${id} is ${r.job.status}; only dead jobs can be retried`
            : `too-late: job ${id} is ${r.job.status}; only pending jobs can be rescheduled`,
        );
      }
      return EXIT.tooLate;
    case "version-conflict":
      if (!o.json) out(`version-conflict: job ${id} is at version ${r.job.version}`);
      return EXIT.versionConflict;
    case "key-conflict":
      if (!o.json) {
        out(
          `key-conflict: job ${r.holder.id} now holds key ${JSON.stringify(r.job.key)}; cancel it or schedule anew`,
        );
      }
      return EXIT.versionConflict;
    case "not-found":
      if (!o.json) out(notFoundText(ref));
      return EXIT.notFound;
  }
}
