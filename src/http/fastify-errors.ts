import type { FastifyError, FastifyRequest } from "fastify";
import { Described } from "../core/errors.js";
import type { ErrorFacts } from "./error-body.js";

/** An error answer: its status and what it says. */
export interface ClientFault extends ErrorFacts {
  readonly status: number;
}

/** The one media type request bodies may have. */
export const JSON_MEDIA_TYPE = "application/json (UTF-8)";

/**
 * What fastify's own rejections (body too large, wrong media type, malformed or empty JSON,
 * any other 4xx it raises) mean in the one error shape, or null for an error that is not
 * the client's (the caller logs it and answers 500). Shared by the service and the
 * dashboard plugin so a 415 reads the same on every route.
 */
export function fastifyClientFault(
  error: FastifyError | Error,
  request: FastifyRequest,
): ClientFault | null {
  const e = error as Partial<FastifyError>;
  const code = e.code ?? "";
  const status = e.statusCode ?? 500;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE" || status === 413) {
    const limit = request.routeOptions.bodyLimit ?? 0;
    const length = request.headers["content-length"];
    return {
      status: 413,
      code: "too-large",
      field: "body",
      expected: `a request body of at most ${limit} bytes`,
      received: new Described(length === undefined ? "a larger body" : `${length} bytes`),
    };
  }
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || status === 415) {
    return {
      status: 415,
      code: "unsupported-media-type",
      field: "content-type",
      expected: JSON_MEDIA_TYPE,
      received: request.headers["content-type"] ?? new Described("no Content-Type"),
    };
  }
  if (code === "FST_ERR_CTP_EMPTY_JSON_BODY") {
    return {
      status: 400,
      code: "invalid",
      field: "body",
      expected: "a JSON body",
      received: new Described("an empty body"),
    };
  }
  if (error instanceof SyntaxError || code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return {
      status: 400,
      code: "invalid",
      field: "body",
      expected: "valid JSON",
      received: new Described("malformed JSON"),
      message: `body: ${error.message}`,
    };
  }
  if (status >= 400 && status < 500) {
    return {
      status,
      code: "bad-request",
      field: "request",
      expected: "a well-formed HTTP request",
      received: error.message,
    };
  }
  return null;
}
