import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const index = fileURLToPath(new URL("../../../src/core/recurrence/index.ts", import.meta.url));

/** Which of croner and rrule-temporal a fresh process has loaded after `steps`. */
function loadedAfter(steps: string): string[] {
  const script = `
    import { createRequire } from "node:module";
    const { compileRecurrence } = await import(${JSON.stringify(index)});
    ${steps}
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const found = ["croner", "rrule-temporal"].filter((m) => cache.some((p) => p.includes("/node_modules/" + m + "/")));
    process.stdout.write(JSON.stringify(found));
  `;
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    {
      encoding: "utf8",
    },
  );
  return JSON.parse(out) as string[];
}

describe("the rule libraries load on their first rule only (CLI start-up stays as it is)", () => {
  it("importing the module loads neither", () => {
    expect(loadedAfter("")).toEqual([]);
  });

  it("a cron rule loads croner; a field-rule RRULE loads nothing; a library RRULE loads rrule-temporal", () => {
    expect(
      loadedAfter(`compileRecurrence({ rule: { cron: "0 9 * * *" }, timeZone: "UTC" });`),
    ).toEqual(["croner"]);
    expect(
      loadedAfter(
        `compileRecurrence({ rule: { rrule: "FREQ=DAILY;BYHOUR=9" }, timeZone: "UTC" });`,
      ),
    ).toEqual([]);
    expect(
      loadedAfter(
        `compileRecurrence({ rule: { rrule: "FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1" }, timeZone: "UTC" });`,
      ),
    ).toEqual(["rrule-temporal"]);
  });
});
