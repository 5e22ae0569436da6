import type { FastifyInstance } from "fastify";
import { changeView } from "../../api/change-feed.js";
import type { Scheduler } from "../../api/scheduler.js";
import { ChangeCursorExpiredError, InvalidJobError } from "../../core/errors.js";
import { rejectUnknownFields, requireObject } from "../../core/validate.js";
import { cursorExpired } from "../../http/change-refusals.js";
import { refused } from "../http-errors.js";

/**
 * GET /v1/changes?after=&limit= for the request's tenant: one page of the durable change
 * feed (Scheduler.changes: every transition of the tenant's jobs, from every node) and the
 * cursor to read on from. A cursor older than what is kept answers 410 with where to resume.
 */
export function changesRoutes(app: FastifyInstance, scheduler: Scheduler): void {
  app.get("/v1/changes", async (request) => {
    const q = requireObject(request.query ?? {}, "query");
    rejectUnknownFields(q, ["after", "limit"], "");
    let limit: number | undefined;
    if (q.limit !== undefined) {
      const text = String(q.limit);
      limit = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
      if (Number.isNaN(limit))
        throw new InvalidJobError("limit", "an integer from 1 to 1000", q.limit);
    }
    try {
      const page = await scheduler.changes({
        tenant: request.tenant,
        ...(q.after === undefined ? {} : { after: q.after as string }),
        ...(limit === undefined ? {} : { limit }),
      });
      return { changes: page.changes.map(changeView), next: page.next };
    } catch (err) {
      if (err instanceof ChangeCursorExpiredError) throw refused(cursorExpired(err));
      throw err;
    }
  });
}
