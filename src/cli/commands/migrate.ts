import type { Command } from "commander";
import { describeDbLocation } from "../../core/db-location.js";
import { EXIT } from "../errors.js";
import { action, out, outJson, resolveDb, withScheduler, type GlobalOptions } from "../context.js";

/**
 * `duetime migrate`: applies the store's pending migrations and exits. Opening a store
 * migrates it too (every node does on start, safely at once on PostgreSQL: an advisory lock
 * serialises them), so this is for deploy pipelines that migrate before rolling out nodes.
 */
export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("apply pending schema migrations to the database and exit")
    .option("--json", "print the result as JSON")
    .action(
      action(async (o: { json?: boolean }, cmd: Command) => {
        const db = resolveDb(cmd.optsWithGlobals<GlobalOptions>());
        const info = await withScheduler(cmd, async (s) => {
          const { kind, bucketWidthMs, shardCount } = await s.migrate();
          return { store: kind, bucketWidthMs, shardCount };
        });
        if (o.json) outJson({ migrated: true, ...info });
        else {
          out(
            `migrated: ${info.store} database ${describeDbLocation(db)} is up to date ` +
              `(buckets of ${info.bucketWidthMs} ms, ${info.shardCount} shards)`,
          );
        }
        return EXIT.ok;
      }),
    );
}
