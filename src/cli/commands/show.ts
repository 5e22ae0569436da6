import type { Command } from "commander";
import { jobView } from "../../api/job-view.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, resolveTimeZone, withExistingScheduler } from "../context.js";
import { describeJob } from "../format.js";
import { callApi, describeJobView, remoteWithoutTenant, RemoteOutcome } from "../remote.js";

/** `duetime show <id>`: one job, every field. */
export function registerShow(program: Command): void {
  program
    .command("show")
    .description("show one job")
    .argument("<id>", "job id")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--tz <iana>", "time zone to show the due time in (default: the system's)")
    .option("--json", "print the job as JSON")
    .action(
      action(
        async (id: string, o: { tenant?: string; tz?: string; json?: boolean }, cmd: Command) => {
          const timeZone = resolveTimeZone(o.tz);
          const remote = remoteWithoutTenant(cmd, o.tenant);
          if (remote) {
            try {
              const job = await callApi(remote, (c) => c.getJob(id));
              if (o.json) outJson(job);
              else out(describeJobView(job, timeZone, Date.now()));
              return EXIT.ok;
            } catch (err) {
              if (!(err instanceof RemoteOutcome) || err.status !== 404) throw err;
              if (o.json) outJson({ outcome: "not-found", id });
              else out(`not-found: no job ${id}`);
              return EXIT.notFound;
            }
          }
          const job = await withExistingScheduler(cmd, (s) =>
            s.get(id, o.tenant === undefined ? {} : { tenant: o.tenant }),
          );
          if (!job) {
            if (o.json) outJson({ outcome: "not-found", id });
            else out(`not-found: no job ${id}`);
            return EXIT.notFound;
          }
          if (o.json) outJson(jobView(job));
          else out(describeJob(job, timeZone, Date.now()));
          return EXIT.ok;
        },
      ),
    );
}
