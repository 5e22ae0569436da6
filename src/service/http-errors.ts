import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { describeReceived, InvalidJobError } from "../core/errors.js";
import { errorBody, type ErrorBody } from "../http/error-body.js";
import type { JobRefusal } from "../http/job-refusals.js";
import { fastifyClientFault } from "../http/fastify-errors.js";
import { libraryFault, type LibraryFault } from "../http/library-faults.js";
import { storageFullFault } from "../http/storage-full.js";

/**
 * Every error the API answers has one shape (src/http/error-body.ts), the HTTP face of
 * InvalidJobError: the field at fault, what was expected and what came in. No input
 * produces a 500; a 500 is a bug and says so without details.
 */
export type { ErrorBody };

/** An error that answers with `status` and the standard body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    readonly field: string,
    readonly expected: string,
    readonly received: unknown,
    message?: string,
    /** Extra top-level fields of the answer (e.g. the job for too-late). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? `${field}: expected ${expected}, received ${describeReceived(received)}`);
  }

  body(): ErrorBody & Record<string, unknown> {
    const { code, field, expected, received, message } = this;
    return { ...errorBody({ code, field, expected, received, message }), ...this.extra };
  }
}

export function invalid(err: InvalidJobError, status = 400): ApiError {
  return new ApiError(status, "invalid", err.field, err.expected, err.received, err.message);
}

/** A definite refusal of a change (too late, version conflict) as the API's error. */
export function refused(r: JobRefusal): ApiError {
  return new ApiError(
    r.status,
    r.code,
    r.field,
    r.expected,
    r.received,
    r.message,
    r.extra,
    r.headers,
  );
}

/** A library error that is not bad input (quota, missing pause...) as the API's error. */
export function libraryError(f: LibraryFault): ApiError {
  const { status, code, field, expected, received, message, extra, headers } = f;
  return new ApiError(
    status,
    code,
    field,
    expected,
    received,
    message,
    { ...extra },
    { ...headers },
  );
}

/** The one not-found answer: a missing job and another tenant's job read the same. */
export function jobNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not-found",
    "id",
    "the id of one of your jobs",
    id,
    `job ${id} not found`,
  );
}

/** No live job of the tenant holds this idempotency key (or it finished and freed it). */
export function keyNotFound(key: string): ApiError {
  return new ApiError(
    404,
    "not-found",
    "key",
    "the idempotency key of one of your live jobs",
    key,
    `no live job has key ${JSON.stringify(key)}`,
  );
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  return reply.code(err.status).send(err.body());
}

/** Maps fastify's own errors (body parsing, limits) and ours onto the standard body. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    const full = storageFullFault(error);
    if (full) {
      request.log.error({ err: error }, "storage full: the write was refused");
      const { status, code, field, expected, received, message, headers } = full;
      return sendError(
        reply,
        new ApiError(status, code, field, expected, received, message, {}, headers),
      );
    }
    if (error instanceof InvalidJobError) return sendError(reply, invalid(error));
    const known = libraryFault(error);
    if (known) return sendError(reply, libraryError(known));
    const fault = fastifyClientFault(error, request);
    if (fault) {
      const { status, code, field, expected, received, message } = fault;
      return sendError(reply, new ApiError(status, code, field, expected, received, message));
    }
    request.log.error({ err: error }, "unexpected error");
    return sendError(
      reply,
      new ApiError(
        500,
        "internal",
        "request",
        "no server error",
        "an internal error",
        "internal error",
      ),
    );
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new ApiError(
        404,
        "no-route",
        "path",
        "one of the routes in /openapi.json",
        `${request.method} ${request.url.split("?")[0]}`,
      ),
    ),
  );
}
