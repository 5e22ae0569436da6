import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { Described, describeReceived, InvalidJobError } from "../core/errors.js";

/**
 * Every error the API answers has one shape, `{ error: { code, field, expected, received,
 * message } }`, the HTTP face of InvalidJobError: the field at fault, what was expected and
 * what came in (described in words, never echoed whole). No input produces a 500; a 500 is
 * a bug and says so without details.
 */
export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly field: string;
    readonly expected: string;
    readonly received: string;
    readonly message: string;
  };
}

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
    return {
      error: {
        code: this.code,
        field: this.field,
        expected: this.expected,
        received: describeReceived(this.received),
        message: this.message,
      },
      ...this.extra,
    };
  }
}

export function invalid(err: InvalidJobError, status = 400): ApiError {
  return new ApiError(status, "invalid", err.field, err.expected, err.received, err.message);
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

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  return reply.code(err.status).send(err.body());
}

/** Maps fastify's own errors (body parsing, limits) and ours onto the standard body. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error instanceof InvalidJobError) return sendError(reply, invalid(error));
    const e = error as FastifyError;
    const code = e.code ?? "";
    if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      const limit = request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 0;
      return sendError(
        reply,
        new ApiError(
          413,
          "too-large",
          "body",
          `a request body of at most ${limit} bytes`,
          describedLength(request.headers["content-length"]),
        ),
      );
    }
    if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return sendError(
        reply,
        new ApiError(
          415,
          "unsupported-media-type",
          "content-type",
          "application/json",
          request.headers["content-type"] ?? "no Content-Type",
        ),
      );
    }
    if (code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
      return sendError(reply, new ApiError(400, "invalid", "body", "a JSON body", "an empty body"));
    }
    if (error instanceof SyntaxError || code === "FST_ERR_CTP_INVALID_JSON_BODY") {
      return sendError(
        reply,
        new ApiError(400, "invalid", "body", "valid JSON", "malformed JSON", `body: ${e.message}`),
      );
    }
    const status = e.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return sendError(
        reply,
        new ApiError(status, "bad-request", "request", "a well-formed HTTP request", e.message),
      );
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

function describedLength(header: string | undefined): unknown {
  return new Described(header === undefined ? "a larger body" : `${header} bytes`);
}
