import type { FastifyRequest } from "fastify";

/**
 * The `req` serializer of the service's request logs: fastify's fields, with the value of
 * any `key` query parameter replaced. `GET /v1/events?key=<api key>` is how a browser's
 * EventSource authenticates, and a key in a log file is a leaked key.
 */
export function serializeRequest(req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactKeyQuery(req.url),
    version: req.headers["accept-version"],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * `url` with every `key=` query value replaced by `[redacted]`. Parameter names are
 * compared decoded (`k%65y=` is `key=` to the query parser too); the rest is kept as sent.
 */
export function redactKeyQuery(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const hash = url.indexOf("#", q);
  const end = hash < 0 ? url.length : hash;
  const params = url
    .slice(q + 1, end)
    .split("&")
    .map((p) => {
      const eq = p.indexOf("=");
      if (eq < 0) return p;
      const name = p.slice(0, eq);
      return decodedName(name).toLowerCase() === "key" ? `${name}=[redacted]` : p;
    });
  return `${url.slice(0, q + 1)}${params.join("&")}${url.slice(end)}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}
