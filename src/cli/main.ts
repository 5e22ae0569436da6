#!/usr/bin/env node
/**
 * `duetime`: the command line. Parses arguments, runs one command, and turns any error into
 * one stderr line and an exit code (see EXIT in errors.ts; `duetime --help` lists them).
 */
import { readFileSync } from "node:fs";
import { buildProgram } from "./program.js";
import { reportError } from "./errors.js";
import { escapeControls } from "./format.js";

function packageVersion(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

// Output piped into a reader that stops early (`duetime list | head`) is not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
});

try {
  await buildProgram(packageVersion()).parseAsync(process.argv);
} catch (err) {
  // Error messages can carry a server's or a job's text: escaped like every printed line.
  process.exitCode = reportError(err, (line) => process.stderr.write(`${escapeControls(line)}\n`));
}
