import { parseResumeCursor, type ChangesPage, type StoredChange } from "../core/change.js";
import { validateTenant } from "../core/schedule-input.js";
import { requireInteger } from "../core/validate.js";
import type { Store } from "../store/store.js";

/** Most changes one page returns. */
export const MAX_CHANGES_PAGE = 1000;
/** Changes per page when no `limit` is given. */
export const DEFAULT_CHANGES_PAGE = 100;

/** What `Scheduler.changes` takes. */
export interface ChangesQuery {
  /** Only this tenant's changes; all tenants when absent (a service passes the caller's). */
  readonly tenant?: string;
  /** A cursor from an earlier page's `next` or a change's `cursor`; from the oldest kept when absent. */
  readonly after?: string;
  /** Most changes to return, 1 to 1000. Default 100. */
  readonly limit?: number;
}

/**
 * One page of the durable change feed, checked once for every surface (library, HTTP
 * `?after=&limit=`, the SSE stream's `Last-Event-ID`): a bad cursor or limit, or a cursor past
 * the feed's head (one it never gave), is an InvalidJobError naming the field; a cursor older
 * than what retention kept is a ChangeCursorExpiredError saying where to start again.
 */
export async function readChangesPage(store: Store, q: ChangesQuery): Promise<ChangesPage> {
  const tenant = q.tenant === undefined ? undefined : validateTenant(q.tenant);
  const limit =
    q.limit === undefined
      ? DEFAULT_CHANGES_PAGE
      : requireInteger(q.limit, "limit", 1, MAX_CHANGES_PAGE);
  const after =
    q.after === undefined
      ? undefined
      : parseResumeCursor(
          q.after,
          "after",
          await store.changesHead(tenant === undefined ? {} : { tenant }),
        );
  return store.changesRead({
    ...(tenant === undefined ? {} : { tenant }),
    ...(after === undefined ? {} : { after }),
    limit,
  });
}

/** A change as the HTTP API and the event stream show it: ISO times, no tenant (the caller's). */
export interface ChangeView {
  readonly cursor: string;
  readonly kind: StoredChange["kind"];
  readonly id: string;
  readonly status: StoredChange["status"];
  readonly dueAt: string;
  readonly attempts: number;
  readonly error: string | null;
  readonly at: string;
}

export function changeView(c: StoredChange): ChangeView {
  return {
    cursor: c.cursor,
    kind: c.kind,
    id: c.id,
    status: c.status,
    dueAt: new Date(c.dueAt).toISOString(),
    attempts: c.attempts,
    error: c.error,
    at: new Date(c.at).toISOString(),
  };
}
