import type { Command } from "commander";
import { jobView } from "../../api/job-view.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, resolveTimeZone, withExistingScheduler } from "../context.js";
import { describeJob } from "../format.js";
import { jobRefOf, notFoundText } from "../job-ref.js";
import { callApi, describeJobView, remoteWithoutTenant, RemoteOutcome } from "../remote.js";

/** `duetime show <id>`: one job, every field. */
export function registerShow(program: Command): void {
  program
    .command("show")
    .description("show one job")
    .argument("[id]", "job id (or name the job with --key)")
    .option("--key <key>", "the live job holding this idempotency key, instead of an id")
    .option("--tenant <tenant>", "only if the job belongs to this tenant")
    .option("--tz <iana>", "time zone to show the due time in (default: the system's)")
    .option("--json", "print the job as JSON")
    .action(
      action(
        async (
          id: string | undefined,
          o: { key?: string; tenant?: string; tz?: string; json?: boolean },
          cmd: Command,
        ) => {
          const ref = jobRefOf(id, o.key);
          const timeZone = resolveTimeZone(o.tz);
          const remote = remoteWithoutTenant(cmd, o.tenant);
          if (remote) {
            try {
              const job = await callApi(remote, async (c) =>
                "key" in ref
                  ? (await c.call("getJobByKey", { path: { key: ref.key } })).job
                  : c.getJob(ref.id),
              );
              if (o.json) outJson(job);
              else out(describeJobView(job, timeZone, Date.now()));
              return EXIT.ok;
            } catch (err) {
              if (!(err instanceof RemoteOutcome) || err.status !== 404) throw err;
              if (o.json) outJson({ outcome: "not-found", ...ref });
              else out(notFoundText(ref));
              return EXIT.notFound;
            }
          }
          const tenant = o.tenant === undefined ? {} : { tenant: o.tenant };
          const job = await withExistingScheduler(cmd, (s) =>
            "key" in ref ? s.getByKey(ref.key, tenant) : s.get(ref.id, tenant),
          );
          if (!job) {
            if (o.json) outJson({ outcome: "not-found", ...ref });
            else out(notFoundText(ref));
            return EXIT.notFound;
          }
          if (o.json) outJson(jobView(job));
          else out(describeJob(job, timeZone, Date.now()));
          return EXIT.ok;
        },
      ),
    );
}
