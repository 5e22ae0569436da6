import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { Described } from "../core/errors.js";
import { errorBody } from "./error-body.js";
import type { ClientFault } from "./fastify-errors.js";

/** Node's error on a rejected request: `code` is llhttp's (HPE_*) or Node's own. */
interface ParserError extends Error {
  readonly code?: string;
  /** llhttp's words for what was wrong ("Invalid header value char"). */
  readonly reason?: string;
}

/** The limits the answers name, so the client learns what it ran into. */
export interface ClientErrorLimits {
  /** ms a whole request may take (headers and body). */
  readonly requestTimeoutMs: number;
  /** ms the headers may take. */
  readonly headersTimeoutMs: number;
  /** Largest header block Node accepts, bytes. */
  readonly maxHeaderBytes: number;
}

/** What a request that Node's HTTP parser (or its timers) rejected means, in the one shape. */
export function parserFault(err: ParserError, limits: ClientErrorLimits): ClientFault {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return {
      status: 408,
      code: "timeout",
      field: "request",
      expected: `headers within ${limits.headersTimeoutMs} ms and the whole request within ${limits.requestTimeoutMs} ms`,
      received: new Described("a request that did not complete in time"),
    };
  }
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return {
      status: 431,
      code: "too-large",
      field: "headers",
      expected: `request headers of at most ${limits.maxHeaderBytes} bytes`,
      received: new Described("larger headers"),
    };
  }
  const what = err.reason ?? err.code ?? "an unreadable request";
  return {
    status: 400,
    code: "bad-request",
    field: "request",
    expected: "a well-formed HTTP/1.1 request",
    // llhttp's reason is a fixed phrase of its own, never the client's bytes.
    received: new Described(`${what.slice(0, 80)} (${err.code ?? "no code"})`),
  };
}

/** An HTTP/1.1 answer written straight on the socket: the request never reached fastify. */
export function rawErrorResponse(fault: ClientFault, extraHeaders: Record<string, string>): string {
  const body = JSON.stringify(errorBody(fault));
  const head = [
    `HTTP/1.1 ${fault.status} ${STATUS_CODES[fault.status] ?? "Error"}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    ...Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${head.join("\r\n")}\r\n\r\n${body}`;
}

/**
 * The server's `clientError` handler: Node rejects a request before any route runs (bad
 * header bytes, bad chunking, headers past the size limit, a request or its headers past
 * their timeout) and would answer a bare status line or fastify's own body. This answers
 * the one error shape instead, unless part of a response is already on the wire (then a
 * second status line would corrupt it) and always closes the connection, as Node does.
 */
export function clientErrorHandler(
  limits: ClientErrorLimits,
  extraHeaders: Record<string, string>,
  log: (err: ParserError, fault: ClientFault) => void,
): (err: ParserError, socket: Duplex) => void {
  return (err, socket) => {
    // A reset connection has no one left to answer.
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    const fault = parserFault(err, limits);
    log(err, fault);
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    // Written then destroyed, as Node's own handler does: a small write goes out at once.
    if (socket.writable && !inFlight?.headersSent)
      socket.write(rawErrorResponse(fault, extraHeaders));
    socket.destroy();
  };
}
