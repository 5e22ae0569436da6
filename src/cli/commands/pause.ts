import type { Command } from "commander";
import type { PausesFlags } from "../pause-actions.js";

/**
 * `duetime pause --target <t> | --tag <t> | --tenant`, `duetime resume <id>` and `duetime
 * pauses [id]`: pauses on the local database or a server (--url). Only the flags are
 * declared here; each action loads its code (src/cli/pause-actions.ts, and through it the
 * store or the client) when it runs, so the CLI's start-up does not.
 */
export function registerPause(program: Command): void {
  program
    .command("pause")
    .description("hold a tenant's jobs, one target's or one tag's until `duetime resume`")
    .option("--target <target>", "the jobs of this handler, or of this webhook origin")
    .option("--tag <tag>", "the jobs carrying this tag")
    .option(
      "--tenant [tenant]",
      "alone: every job of the tenant; with a name (local database): that tenant's jobs",
    )
    .option(
      "--on-resume <policy>",
      "what the jobs due meanwhile do on resume: fire (default), expire or shift",
    )
    .option("--json", "print the pause as JSON")
    .addHelpText(
      "after",
      `
Examples:
  duetime pause --target https://hooks.example.com      (every URL under that origin)
  duetime pause --tag campaign:spring --on-resume expire
  duetime pause --tenant acme --on-resume shift          (local database: tenant acme)`,
    )
    .action(async (o: Record<string, string | boolean | undefined>, cmd: Command) => {
      process.exitCode = await (await import("../pause-actions.js")).makePause(o, cmd);
    });
  program
    .command("resume")
    .description("resume a pause: its held jobs are given back by its on-resume policy")
    .argument("<id>", "pause id")
    .option("--tenant <tenant>", "only if the pause belongs to this tenant")
    .option("--json", "print the pause and what it gives back as JSON")
    .action(async (id: string, o: { tenant?: string; json?: boolean }, cmd: Command) => {
      process.exitCode = await (await import("../pause-actions.js")).resumePause(id, o, cmd);
    });
  program
    .command("pauses")
    .description("list pauses (by default those not yet resumed), or show one")
    .argument("[id]", "show this pause")
    .option("--state <states>", "comma-separated: active, resuming, resumed")
    .option("--limit <n>", "page size, 1 to 1000 (default 100)")
    .option("--cursor <cursor>", "continue after a previous page (its next cursor)")
    .option("--tenant <tenant>", "only this tenant's pauses")
    .option("--json", "print the page (pauses, nextCursor) or the pause as JSON")
    .action(async (id: string | undefined, o: PausesFlags, cmd: Command) => {
      process.exitCode = await (await import("../pause-actions.js")).showPauses(id, o, cmd);
    });
}
