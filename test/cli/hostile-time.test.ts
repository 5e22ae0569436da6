import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cli, cliAll, cliJson, ensureBuilt, tempWorkspace } from "./helpers.js";

/**
 * Issue 10 §1 on the command line: the CLI reads times with the library's parser, so an
 * overflowing or over-long time is refused (exit 2, the field named as typed) and nothing is
 * stored.
 */
beforeAll(ensureBuilt, 120_000);

let ws: ReturnType<typeof tempWorkspace>;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => ws.cleanup());

const RANGE = "expected an epoch-ms integer from 0 to 253402300799999";

describe("duetime add / list with hostile times", () => {
  it("refuses due times outside the range and over-long text, storing nothing", async () => {
    const cases: [string, string][] = [
      ["in 99999999999 weeks", RANGE],
      ["in 14300000 weeks", RANGE],
      ["9999-12-31T23:59:59-23:59", RANGE],
      ["99999999999999999999", RANGE],
      [`in 1${" ".repeat(2000)}x`, "expected a time text of at most 200 characters"],
    ];
    const runs = await cliAll(cases.map(([when]) => ["add", when, "--target", "t", "--db", ws.db]));
    cases.forEach(([, expected], i) => {
      const r = runs[i]!;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.startsWith(`error: when: ${expected}`), r.stderr).toBe(true);
    });
    const from = await cli(["list", "--from", "in 99999999999 weeks", "--db", ws.db]);
    expect(from.code, from.stderr).toBe(2);
    expect(from.stderr.startsWith(`error: --from: ${RANGE}`), from.stderr).toBe(true);
    const all = await cliJson<{ jobs: unknown[] }>(["list", "--db", ws.db]);
    expect(all.body.jobs).toEqual([]);
  });
});
