import type { Command } from "commander";
import { outcomeView } from "../../api/job-view.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, withExistingScheduler } from "../context.js";
import { iso } from "../format.js";
import { jobRefOf, notFoundText, type JobRef } from "../job-ref.js";
import { callApi, remoteWithoutTenant, RemoteOutcome, type Remote } from "../remote.js";
import type { Job as JobView } from "../../client/index.js";

/** `duetime cancel <id>` or `duetime cancel --key <key>`: cancels a pending job, with a definite outcome. */
export function registerCancel(program: Command): void {
  program
    .command("cancel")
    .description("cancel a pending job: cancelled (exit 0), too-late (4) or not-found (3)")
    .argument("[id]", "job id (or name the job with --key)")
    .option("--key <key>", "the live job holding this idempotency key, instead of an id")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--json", "print the outcome as JSON")
    .action(
      action(
        async (
          id: string | undefined,
          o: { key?: string; tenant?: string; json?: boolean },
          cmd: Command,
        ) => {
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
        },
      ),
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
