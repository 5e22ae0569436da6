import type { FastifyInstance } from "fastify";

/** The error a body in another character set fails with (answered 415, see fastify-errors). */
class UnsupportedCharsetError extends Error {
  readonly statusCode = 415;
  readonly code = "DUETIME_UNSUPPORTED_CHARSET";
}

/** The `charset` parameter of a Content-Type, lower case, or null when there is none. */
function charsetOf(contentType: string | undefined): string | null {
  if (contentType === undefined) return null;
  for (const param of contentType.split(";").slice(1)) {
    const eq = param.indexOf("=");
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    return param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
  }
  return null;
}

/**
 * Request bodies are JSON in UTF-8 and nothing else: fastify's built-in `text/plain` parser
 * is removed (a text body would otherwise reach the validator as a string and answer 400
 * instead of 415), and a `charset` other than UTF-8 is refused rather than decoded as UTF-8
 * anyway. An empty body with `Content-Type: application/json` (some clients send that on a
 * bodiless POST such as cancel) is no body, not a parse error. Everything else answers 415
 * from fastify. The JSON parser refuses `__proto__` and `constructor.prototype` keys.
 */
export function acceptJsonBodiesOnly(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const charset = charsetOf(request.headers["content-type"]);
    if (charset !== null && charset !== "utf-8" && charset !== "utf8") {
      done(new UnsupportedCharsetError(`charset ${charset}: bodies are UTF-8 JSON`), undefined);
      return;
    }
    const text = body as string;
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    json(request, text, done);
  });
}
