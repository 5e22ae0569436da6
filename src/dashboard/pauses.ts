import { describeScope, pauseView, releaseView, type PauseView } from "../api/pause-view.js";
import { listPausePage, PAUSE_PAGE } from "../api/pauses.js";
import type { Scheduler } from "../api/scheduler.js";
import { PAUSE_STATES, type Pause } from "../core/pause.js";
import { readQuery } from "../core/query-params.js";
import type { Answer } from "./answers.js";

/**
 * The pauses page's endpoints (docs/dashboard.md): each is one call of the Scheduler's pause
 * API for the key's tenant, answered in the REST API's one pause view (src/api/pause-view.ts)
 * with the scope in words beside it. The body of a pause is the library's PauseInput, checked
 * by parsePauseInput (errors name the field); a missing pause, or another tenant's, answers
 * 404 and a pause past the tenant's open pauses 429, through the plugin's error handler.
 */

/** A pause as the pauses page shows it: the API's view and its scope in words. */
export interface PauseRow extends PauseView {
  /** "target mail", "tag user:42", "the whole tenant". */
  readonly description: string;
}

export function pauseRow(p: Pause): PauseRow {
  return { ...pauseView(p), description: describeScope(p.scope) };
}

/**
 * Query of /v1/dashboard/pauses: which states (default all, so the page shows resumed ones),
 * a page at a time (`limit`, PAUSE_PAGE; `cursor`, the `nextCursor` of the page before).
 */
const PAUSES_QUERY = {
  state: { kind: "list", of: PAUSE_STATES },
  cursor: { kind: "text", max: 64 },
  limit: { kind: "int", min: 1, max: PAUSE_PAGE.max },
} as const;

/** A page of the tenant's pauses in creation order, in every state unless `state` says. */
export async function listPauseRows(s: Scheduler, tenant: string, query: unknown): Promise<Answer> {
  const q = readQuery(query, PAUSES_QUERY);
  const page = await listPausePage((opts) => s.listPauses(opts), {
    tenant,
    states: q.state ?? PAUSE_STATES,
    limit: q.limit ?? PAUSE_PAGE.default,
    ...(q.cursor === undefined ? {} : { after: q.cursor }),
  });
  return { status: 200, body: { pauses: page.pauses.map(pauseRow), nextCursor: page.nextCursor } };
}

/** Makes an active pause: 201 with it. */
export async function makePause(s: Scheduler, tenant: string, body: unknown): Promise<Answer> {
  const pause = await s.pause(body as never, { tenant });
  return { status: 201, body: { pause: pauseRow(pause) } };
}

/**
 * Resumes a pause: 200 with it (`resuming` while its held jobs are given back in the
 * background, or as it was when resumed before) and what the resume gives back.
 */
export async function resumePause(s: Scheduler, tenant: string, id: string): Promise<Answer> {
  const pause = await s.resume(id, { tenant });
  return { status: 200, body: { pause: pauseRow(pause), releasing: releaseView(pause) } };
}
