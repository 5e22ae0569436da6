import { describe, expect, it } from "vitest";
import { toPause, type PauseRow } from "../../src/store/pause-row.js";

const row = {
  id: "p1",
  tenant: "a",
  scope_kind: "tag",
  scope_value: "user:42",
  on_resume: "shift",
  state: "active",
  paused_at: 1000,
  resumed_at: null,
} as const;

/** One pause mapping for both stores: their drivers give `held` and `hold_done` differently. */
describe("toPause", () => {
  it("reads SQLite's and PostgreSQL's forms of a row as the same pause", () => {
    const sqlite: PauseRow = { ...row, held: 3, hold_done: 1 };
    const postgres: PauseRow = { ...row, held: "3", hold_done: true };
    const expected = {
      id: "p1",
      tenant: "a",
      scope: { tag: "user:42" },
      onResume: "shift",
      state: "active",
      pausedAt: 1000,
      resumedAt: null,
      heldJobs: 3,
      holdComplete: true,
    };
    expect(toPause(sqlite)).toEqual(expected);
    expect(toPause(postgres)).toEqual(expected);
    expect(toPause({ ...row, held: 0, hold_done: 0 }).holdComplete).toBe(false);
    expect(toPause({ ...row, held: "0", hold_done: false })).toMatchObject({
      heldJobs: 0,
      holdComplete: false,
    });
  });
});
