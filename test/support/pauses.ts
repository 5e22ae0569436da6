import type { Pause, PauseInsertResult } from "../../src/core/pause.js";

/** The pause a store-level pauseInsert stored (tests that give no maxOpen: always). */
export function inserted(r: PauseInsertResult): Pause {
  if (r.outcome !== "inserted") throw new Error(`pause refused: ${r.open} open`);
  return r.pause;
}
