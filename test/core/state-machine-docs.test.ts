import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { JOB_STATES, JOB_STATUSES, JOB_TRANSITIONS, LIVE_STATUSES } from "../../src/core/job.js";
import { STATE_DOC, blockOf, generatedBlocks, tableCells } from "../support/state-docs.js";

describe("docs/state-machine.md says what src/core/job.ts says", () => {
  const page = readFileSync(STATE_DOC, "utf8");

  for (const [name, expected] of Object.entries(generatedBlocks())) {
    it(`its ${name} table is the one generated from the code (npm run docs:states)`, () => {
      const block = blockOf(page, name);
      expect(block, `markers of the ${name} block`).not.toBeNull();
      expect(tableCells(block!)).toEqual(tableCells(expected));
    });
  }

  it("the check sees a drift: a changed cell no longer matches", () => {
    const drifted = page.replace("| `claimed`   | yes   | no ", "| `claimed`   | yes   | yes ");
    expect(drifted).not.toBe(page);
    const cells = tableCells(blockOf(drifted, "states")!);
    expect(cells).not.toEqual(tableCells(generatedBlocks().states!));
  });

  it("the data agrees with the union and with LIVE_STATUSES", () => {
    expect(Object.keys(JOB_STATES).sort()).toEqual([...JOB_STATUSES].sort());
    expect(JOB_STATUSES.filter((st) => JOB_STATES[st].live)).toEqual(LIVE_STATUSES);
    // Only pending jobs are in the due-time index: a claim takes the job out of it.
    expect(JOB_STATUSES.filter((st) => JOB_STATES[st].inDueTimeIndex)).toEqual(["pending"]);
    // Every state is reachable, and only live states (or dead, by retry) are left.
    for (const st of JOB_STATUSES)
      expect(
        JOB_TRANSITIONS.some((t) => t.to === st),
        st,
      ).toBe(true);
    for (const t of JOB_TRANSITIONS) {
      if (t.from !== null) expect(JOB_STATES[t.from].live || t.from === "dead", t.when).toBe(true);
    }
  });
});
