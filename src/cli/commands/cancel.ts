import type { Command } from "commander";
import { outcomeView } from "../../api/job-view.js";
import { addFilterOptions, requireOneSelection, type FilterFlags } from "../bulk-options.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, withExistingScheduler } from "../context.js";
import { iso } from "../format.js";
import { jobRefOf, notFoundText, type JobRef } from "../job-ref.js";
import { callApi, remoteWithoutTenant, RemoteOutcome, type Remote } from "../remote.js";
import type { Job as JobView } from "../../client/index.js";

interface CancelOptions extends FilterFlags {
  key?: string;
  tenant?: string;
  tz?: string;
  json?: boolean;
}

/**
 * `duetime cancel <id>` or `duetime cancel --key <key>`: cancels a pending job, with a
 * definite outcome. `duetime cancel --tag user:42` (or another filter): every matching
 * pending job, as one bulk operation followed to its end (bulk.ts).
 */
export function registerCancel(program: Command): void {
  const cmd = program
    .command("cancel")
    .description(
      "cancel a pending job: cancelled (exit 0), too-late (4) or not-found (3); with a filter, every matching pending job (a bulk operation with progress)",
    )
    .argument("[id]", "job id (or name the job with --key, or give a filter)")
    .option("--key <key>", "the live job holding this idempotency key, instead of an id")
    .option(
      "--tenant <tenant>",
      "only if the job belongs to this tenant (bulk: that tenant's jobs)",
    )
    .option("--tz <iana>", "bulk: time zone for --due-from/--due-to (default: the system's)")
    .option("--json", "print the outcome (bulk: the operation's final record) as JSON");
  addFilterOptions(cmd)
    .addHelpText(
      "after",
      `
Examples:
  duetime cancel 01KB2Y7J3W6D3Q4S0R5T8V9X1Z
  duetime cancel --key standup:42
  duetime cancel --tag user:42                       (every pending job tagged user:42)
  duetime cancel --tag user:42 --count               (how many it would cancel)
  duetime cancel --target remind --due-to "tomorrow 00:00"`,
    )
    .action(
      action(async (id: string | undefined, o: CancelOptions, cmd: Command) => {
        if (requireOneSelection(id !== undefined || o.key !== undefined, o, "a job id or --key")) {
          const { runBulk } = await import("../bulk.js");
          return runBulk(cmd, "cancel", o);
        }
        const ref = jobRefOf(id, o.key);
        const remote = remoteWithoutTenant(cmd, o.tenant);
        if (remote) return remoteCancel(remote, ref, o.json === true);
        const tenant = o.tenant === undefined ? {} : { tenant: o.tenant };
        const r = await withExistingScheduler(cmd, (s) =>
          "key" in ref ? s.cancelByKey(ref.key, tenant) : s.cancel(ref.id, tenant),
        );
        if (o.json) outJson(outcomeView(r, "id" in ref ? ref.id : ""));
        switch (r.outcome) {
          case "cancelled":
            if (!o.json) {
              out(`cancelled: job ${r.job.id} (was due ${iso(r.job.dueAt)}) will not fire`);
            }
            return EXIT.ok;
          case "too-late":
            if (!o.json) out(tooLateText(r.job.id, r.job.status));
            return EXIT.tooLate;
          case "not-found":
            if (!o.json) out(notFoundText(ref));
            return EXIT.notFound;
        }
      }),
    );
}

function tooLateText(id: string, status: string): string {
  return status === "claimed"
    ? `too-late: job ${id} is firing now (claimed); it will not be cancelled`
    : `too-late: job ${id} is already ${status}`;
}

async function remoteCancel(remote: Remote, ref: JobRef, json: boolean): Promise<number> {
  try {
    const r = await callApi(remote, (c) =>
      "key" in ref ? c.call("cancelJobByKey", { path: { key: ref.key } }) : c.cancelJob(ref.id),
    );
    if (json) outJson(r);
    else out(`cancelled: job ${r.job.id} (was due ${r.job.dueAt}) will not fire`);
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof RemoteOutcome)) throw err;
    if (err.status === 404) {
      if (json) outJson({ outcome: "not-found", ...ref });
      else out(notFoundText(ref));
      return EXIT.notFound;
    }
    const job = err.body.job as JobView | undefined;
    if (json) outJson({ outcome: "too-late", job });
    else out(tooLateText(job?.id ?? ("id" in ref ? ref.id : ""), job?.status ?? "finished"));
    return err.exitCode;
  }
}
