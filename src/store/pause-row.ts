import { scopeFromColumns, type OnResume, type Pause, type PauseState } from "../core/pause.js";

/**
 * A pause record as both stores keep it: one row of `pauses`, these columns (the same names
 * in SQLite and PostgreSQL). The drivers give two of them differently: `held` is a number
 * from SQLite and a bigint's text from PostgreSQL, `hold_done` 0 or 1 from SQLite and a
 * boolean from PostgreSQL; toPause reads either. Shared so the two stores cannot read a
 * pause differently. (Each store's pass position columns are its own: a store's row type
 * extends this one.)
 */
export interface PauseRow {
  id: string;
  tenant: string;
  scope_kind: string;
  scope_value: string;
  on_resume: string;
  state: string;
  paused_at: number;
  resumed_at: number | null;
  held: number | string;
  hold_done: boolean | number;
}

export function toPause(r: PauseRow): Pause {
  return {
    id: r.id,
    tenant: r.tenant,
    scope: scopeFromColumns(r.scope_kind, r.scope_value),
    onResume: r.on_resume as OnResume,
    state: r.state as PauseState,
    pausedAt: r.paused_at,
    resumedAt: r.resumed_at,
    heldJobs: Number(r.held),
    holdComplete: r.hold_done === true || r.hold_done === 1,
  };
}
