import { isoInstant } from "../core/instant-text.js";
import type { OnResume, Pause, PauseScope, PauseState } from "../core/pause.js";

/**
 * A pause as every surface shows it in JSON: the HTTP API, `duetime pauses --json`, and the
 * dashboard's pauses page. The scope is the input's (`{ "target": ... }`), so a view's
 * `scope` and `onResume` can be sent back to make the same pause; times are ISO.
 */
export interface PauseView {
  id: string;
  tenant: string;
  scope: PauseScope;
  onResume: OnResume;
  state: PauseState;
  pausedAt: string;
  resumedAt: string | null;
  /** Jobs held by it now (while resuming: those not yet given back). */
  heldJobs: number;
  /** Whether every job pending when it was made has been found and held. */
  holdComplete: boolean;
}

export function pauseView(p: Pause): PauseView {
  return {
    id: p.id,
    tenant: p.tenant,
    scope: { ...p.scope },
    onResume: p.onResume,
    state: p.state,
    pausedAt: isoInstant(p.pausedAt),
    resumedAt: p.resumedAt === null ? null : isoInstant(p.resumedAt),
    heldJobs: p.heldJobs,
    holdComplete: p.holdComplete,
  };
}

/**
 * What a resume answers besides the pause: how many held jobs it gives back and by which
 * policy. They are given back in the background, in bounded batches (the pause is
 * `resuming` until the last one is), so what each one did is not known yet when it answers.
 */
export interface ReleaseView {
  /** Held jobs this resume gives back (0 when the pause had been resumed before). */
  jobs: number;
  /** What those due before the resume do; those due after it fire on time. */
  onResume: OnResume;
}

export function releaseView(p: Pause): ReleaseView {
  return { jobs: p.state === "resumed" ? 0 : p.heldJobs, onResume: p.onResume };
}

/** A one-line description of a scope, for the CLI and the dashboard: "target mail". */
export function describeScope(scope: PauseScope): string {
  if ("target" in scope) return `target ${scope.target}`;
  if ("tag" in scope) return `tag ${scope.tag}`;
  return "the whole tenant";
}
