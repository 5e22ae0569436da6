import type { FastifyInstance } from "fastify";
import { pauseView, releaseView } from "../../api/pause-view.js";
import { listPausePage, PAUSE_PAGE } from "../../api/pauses.js";
import type { Scheduler } from "../../api/scheduler.js";
import { PAUSE_STATES, PauseNotFoundError } from "../../core/pause.js";
import { readQuery } from "../../core/query-params.js";

const LIST_PARAMS = {
  state: { kind: "list", of: PAUSE_STATES },
  cursor: { kind: "text", max: 64 },
  limit: { kind: "int", min: 1, max: PAUSE_PAGE.max },
} as const;

type IdRequest = { Params: { id: string } };

/**
 * Pauses of the request's tenant (docs/managing-jobs.md, Pause and resume): POST /v1/pauses
 * makes one (201), GET lists a page of them (active and resuming unless `state` says;
 * `limit`, default 100, and `cursor`, the `nextCursor` of the page before), GET
 * /v1/pauses/{id} shows one, DELETE /v1/pauses/{id} resumes it. Each is one Scheduler call;
 * the body is checked by the library's parsePauseInput (errors name the field), and another
 * tenant's pause answers 404 like a missing one. The library's typed refusals (a missing
 * pause, a store without pauses, too many open pauses) are answered by the service's error
 * handler through the one mapping of src/http/library-faults.ts, as the dashboard's are.
 */
export function pauseRoutes(
  app: FastifyInstance,
  o: { scheduler: Scheduler; bodyLimit: number },
): void {
  const s = o.scheduler;
  app.post("/v1/pauses", { bodyLimit: o.bodyLimit }, async (request, reply) => {
    const pause = await s.pause(request.body as never, { tenant: request.tenant });
    return reply.code(201).send({ pause: pauseView(pause) });
  });

  app.get("/v1/pauses", async (request) => {
    const q = readQuery(request.query, LIST_PARAMS);
    const page = await listPausePage((opts) => s.listPauses(opts), {
      tenant: request.tenant,
      limit: q.limit ?? PAUSE_PAGE.default,
      ...(q.state ? { states: q.state } : {}),
      ...(q.cursor === undefined ? {} : { after: q.cursor }),
    });
    return { pauses: page.pauses.map(pauseView), nextCursor: page.nextCursor };
  });

  app.get<IdRequest>("/v1/pauses/:id", async (request) => {
    const id = request.params.id;
    const pause = await s.getPause(id, { tenant: request.tenant });
    if (!pause) throw new PauseNotFoundError(id);
    return { pause: pauseView(pause) };
  });

  app.delete<IdRequest>("/v1/pauses/:id", async (request) => {
    const id = request.params.id;
    const pause = await s.resume(id, { tenant: request.tenant });
    return { pause: pauseView(pause), releasing: releaseView(pause) };
  });
}
