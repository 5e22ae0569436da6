import cors from "@fastify/cors";
import helmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";
import { InvalidOptionError } from "../core/errors.js";

/**
 * The Content-Security-Policy of every answer. The dashboard is a built bundle served from
 * the same origin: its script and stylesheet are files under /assets (no inline script or
 * style, no eval), its only image is the favicon as a data: URL, and it talks to its own
 * origin alone (fetch for the API and the live stream). Nothing may frame any page.
 * `upgrade-insecure-requests` is left out on purpose: the service listens on plain HTTP by
 * default, and the page must work on http://127.0.0.1.
 */
export const CONTENT_SECURITY_POLICY: Readonly<Record<string, readonly string[]>> = {
  "default-src": ["'self'"],
  "script-src": ["'self'"],
  "script-src-attr": ["'none'"],
  "style-src": ["'self'"],
  "img-src": ["'self'", "data:"],
  "font-src": ["'self'"],
  "connect-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'self'"],
  "frame-ancestors": ["'none'"],
};

/**
 * Headers of answers written outside fastify (Node's parser rejections, see
 * node-client-errors.ts): a JSON error needs no CSP, but must not be sniffed or cached.
 */
export const RAW_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

/** Options of the response-header policy. */
export interface SecurityHeadersOptions {
  /**
   * Origins (scheme://host[:port]) whose pages may call the API from a browser (CORS).
   * Default none: CORS is off, a cross-origin page cannot read any answer. Exact origins
   * only, no `*`: keys travel in a header, and a page allowed by mistake could use a key
   * pasted into it.
   */
  readonly corsOrigins?: readonly string[];
}

/** The origins, checked: each exactly `scheme://host[:port]`. */
export function validateCorsOrigins(origins: readonly string[] | undefined): string[] {
  const expected =
    "exact origins such as https://app.example.com (http or https, host, optional port; no path, no '*')";
  if (origins === undefined) return [];
  if (!Array.isArray(origins)) throw new InvalidOptionError("corsOrigins", expected, origins);
  return origins.map((o: unknown) => {
    let url: URL | null = null;
    try {
      url = typeof o === "string" ? new URL(o) : null;
    } catch {
      url = null;
    }
    const ok = url !== null && (url.protocol === "http:" || url.protocol === "https:");
    if (!ok || url!.origin !== o) throw new InvalidOptionError("corsOrigins", expected, o);
    return o as string;
  });
}

/**
 * The response headers of every answer, set once at the root so that errors, 404s and
 * hijacked answers (the live stream, /mcp) carry them as well:
 * - helmet: the CSP above, `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`,
 *   `Referrer-Policy: no-referrer`, the cross-origin isolation headers, no X-Powered-By.
 *   HSTS is off: over plain HTTP browsers ignore it, and behind a TLS proxy the proxy owns
 *   it (a year-long includeSubDomains set by this service would bind the whole domain).
 * - `Cache-Control: no-store` unless a route sets its own (the dashboard's hashed assets):
 *   answers are per tenant and change, so no shared or browser cache may keep them.
 * - CORS only for `corsOrigins`; with none, no CORS header is ever sent and a preflight
 *   answers 404 like any unknown route.
 */
export async function securityHeaders(
  app: FastifyInstance,
  o: SecurityHeadersOptions = {},
): Promise<void> {
  const origins = validateCorsOrigins(o.corsOrigins);
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: Object.fromEntries(
        Object.entries(CONTENT_SECURITY_POLICY).map(([k, v]) => [k, [...v]]),
      ),
    },
    strictTransportSecurity: false,
    xFrameOptions: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
  });
  // On the raw response, before any route runs: a route's own reply.header() overrides it,
  // and hijacked answers keep it.
  app.addHook("onRequest", async (_request, reply) => {
    reply.raw.setHeader("cache-control", "no-store");
  });
  if (origins.length > 0) {
    await app.register(cors, {
      origin: origins,
      methods: ["GET", "POST", "DELETE"],
      allowedHeaders: [
        "authorization",
        "content-type",
        "if-match",
        "last-event-id",
        "mcp-session-id",
        "mcp-protocol-version",
      ],
      exposedHeaders: ["etag", "location", "retry-after", "mcp-session-id"],
      credentials: false,
      maxAge: 600,
    });
  }
}
