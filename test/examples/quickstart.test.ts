import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const dir = tempDir("duetime-example-");
afterAll(() => dir.cleanup());

describe("examples", () => {
  it("the README's library example is examples/quickstart.ts, verbatim", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const example = readFileSync(join(root, "examples/quickstart.ts"), "utf8");
    expect(readme).toContain("```ts\n" + example + "```");
  });

  it("the README's first screen imports only what the package's entries export", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const screen = readme.slice(
      readme.indexOf("## Three ways in"),
      readme.indexOf("- **Flat poll"),
    );
    const imports = [...screen.matchAll(/^import \{ ([^}]+) \} from "(duetime[^"]*)";$/gm)];
    expect(imports.map((m) => m[2])).toEqual(["duetime", "duetime/client", "duetime/webhooks"]);
    for (const [, names, entry] of imports) {
      const mod = (await import(entry!)) as Record<string, unknown>;
      for (const name of names!.split(",").map((n) => n.trim())) {
        expect(typeof mod[name], `${entry} exports ${name}`).toBe("function");
      }
    }
  });

  it("examples/quickstart.ts runs against the built package and fires its reminders", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/quickstart.ts"], {
      cwd: root,
      env: { ...process.env, DUETIME_DB: join(dir.path, "quickstart.db") },
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^scheduled [0-9A-Z]{26} for .* \(created: true\)$/m);
    expect(stdout).toContain("rescheduled\ncancelled\n");
    expect(stdout).toMatch(/reminder for ada: stand up and stretch \(\d+ ms late\)/);
    expect(stdout).toMatch(/reminder for bob: drink water/);
    expect(stdout).toContain("pending: 1, succeeded: 2");
  });
});
