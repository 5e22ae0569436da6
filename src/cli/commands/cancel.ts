import type { Command } from "commander";
import { outcomeView } from "../../api/job-view.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, withExistingScheduler } from "../context.js";
import { iso } from "../format.js";
import { callApi, remoteWithoutTenant, RemoteOutcome, type Remote } from "../remote.js";
import type { Job as JobView } from "../../client/index.js";

/** `duetime cancel <id>`: cancels a pending job, with a definite outcome. */
export function registerCancel(program: Command): void {
  program
    .command("cancel")
    .description("cancel a pending job: cancelled (exit 0), too-late (4) or not-found (3)")
    .argument("<id>", "job id")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--json", "print the outcome as JSON")
    .action(
      action(async (id: string, o: { tenant?: string; json?: boolean }, cmd: Command) => {
        const remote = remoteWithoutTenant(cmd, o.tenant);
        if (remote) {
          return remoteCancel(remote, id, o.json === true);
        }
        const r = await withExistingScheduler(cmd, (s) =>
          s.cancel(id, o.tenant === undefined ? {} : { tenant: o.tenant }),
        );
        if (o.json) outJson(outcomeView(r, id));
        switch (r.outcome) {
          case "cancelled":
            if (!o.json) out(`cancelled: job ${id} (was due ${iso(r.job.dueAt)}) will not fire`);
            return EXIT.ok;
          case "too-late":
            if (!o.json) {
              out(
                r.job.status === "claimed"
                  ? `too-late: job ${id} is firing now (claimed); it will not be cancelled`
                  : `too-late: job ${id} is already ${r.job.status}`,
              );
            }
            return EXIT.tooLate;
          case "not-found":
            if (!o.json) out(`not-found: no job ${id}`);
            return EXIT.notFound;
        }
      }),
    );
}

async function remoteCancel(remote: Remote, id: string, json: boolean): Promise<number> {
  try {
    const r = await callApi(remote, (c) => c.cancelJob(id));
    if (json) outJson(r);
    else out(`cancelled: job ${id} (was due ${r.job.dueAt}) will not fire`);
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof RemoteOutcome)) throw err;
    if (err.status === 404) {
      if (json) outJson({ outcome: "not-found", id });
      else out(`not-found: no job ${id}`);
      return EXIT.notFound;
    }
    const job = err.body.job as JobView | undefined;
    if (json) outJson({ outcome: "too-late", job });
    else if (job?.status === "claimed")
      out(`too-late: job ${id} is firing now (claimed); it will not be cancelled`);
    else out(`too-late: job ${id} is already ${job?.status ?? "finished"}`);
    return err.exitCode;
  }
}
