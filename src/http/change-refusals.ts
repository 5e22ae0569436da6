import type { ChangeCursorExpiredError } from "../core/errors.js";
import type { JobRefusal } from "./job-refusals.js";

/**
 * 410: the changes after a cursor were removed by retention; `oldest` is where to read on
 * (after reloading the view). The one answer of `GET /v1/changes?after=` and of
 * `GET /v1/events` resumed with such a cursor, so a client handles both alike.
 */
export function cursorExpired(err: ChangeCursorExpiredError): JobRefusal {
  return {
    status: 410,
    code: "cursor-expired",
    field: "after",
    expected: `a cursor of the changes still kept (read on after ${err.oldest}, reloading your view first)`,
    received: err.cursor,
    message: err.message,
    extra: { oldest: err.oldest },
    headers: {},
  };
}
