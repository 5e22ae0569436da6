import { isIP } from "node:net";
import { internalRange } from "./address-ranges.js";
import { Described, InvalidJobError } from "./errors.js";
import { isObject } from "./validate.js";
import { checkWebhookUrl } from "./webhook-url.js";

/**
 * The one webhook-target policy: what a job's target URL and headers may be, checked when a
 * job is created (HTTP API, MCP tools) and again before each delivery (for jobs stored
 * before a rule existed). Everything it accepts can be sent exactly as stored: a target with
 * control characters (which the URL parser would silently strip) or a header that the HTTP
 * client refuses to send (`Expect`, `Upgrade`, `Keep-Alive`, a value with a control or
 * non-Latin-1 character) is refused here, naming the field, rather than killing the job at
 * its due time.
 */

/** Most headers a job may carry. */
export const MAX_HEADERS = 20;
/** Longest header name, in characters. */
export const MAX_HEADER_NAME_LENGTH = 64;
/** Longest header value, in characters. */
export const MAX_HEADER_VALUE_LENGTH = 1024;

/** Headers the service sets on every delivery; a job may not replace them. */
const SET_BY_SERVICE = ["content-type", "content-length", "host", "user-agent"];
/**
 * Connection-level (hop-by-hop) headers and `Expect`: they describe one connection, not the
 * request, and the HTTP client refuses to send them (RFC 9110 §7.6.1, §10.1.1).
 */
const CONNECTION_LEVEL = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "http2-settings",
];
/** The service's own namespace (signature, timestamp, job id, attempt, and future ones). */
const SERVICE_PREFIX = "duetime-";

/** Header names a job may not set, lower-case: the list in error messages and docs. */
export const FORBIDDEN_HEADERS: readonly string[] = [
  ...SET_BY_SERVICE,
  ...CONNECTION_LEVEL,
  `${SERVICE_PREFIX}*`,
];

// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space, tab and Latin-1 letters (obs-text without the C1 controls): what the
// HTTP client sends byte for byte.
const HEADER_VALUE = /^[\t\x20-\x7e\xa0-\xff]*$/;
// HTTP drops optional whitespace around a value: what is sent would differ from what is stored.
const EDGE_WHITESPACE = /^[\t ]|[\t ]$/;

/** Where a policy error points: the field names of the caller's surface. */
export interface WebhookTargetFields {
  /** The URL's field, e.g. "target" or "jobs[3].target" (HTTP), "webhook_url" (MCP). */
  readonly target: string;
  /** The headers' field, e.g. "headers" (HTTP), "webhook_headers" (MCP). */
  readonly headers: string;
}

export interface WebhookTargetOptions {
  /** Accept hosts written as private, loopback or link-local addresses, and localhost. */
  readonly allowPrivateTargets: boolean;
  readonly fields: WebhookTargetFields;
}

/** A target and headers the policy accepted. */
export interface WebhookTarget {
  readonly target: string;
  readonly headers: Record<string, string> | null;
}

/** Checks a webhook target and its headers; throws InvalidJobError naming the field. */
export function checkWebhookTarget(
  input: { readonly target: unknown; readonly headers?: unknown },
  o: WebhookTargetOptions,
): WebhookTarget {
  const target = checkTargetUrl(input.target, o.fields.target, o.allowPrivateTargets);
  const headers =
    input.headers === undefined || input.headers === null
      ? null
      : checkHeaders(input.headers, o.fields.headers);
  return { target, headers };
}

function checkTargetUrl(value: unknown, field: string, allowPrivate: boolean): string {
  const { text, url } = checkWebhookUrl(value, field);
  if (!allowPrivate && isInternalHost(url)) {
    throw new InvalidJobError(
      field,
      "a URL of a public host (private, loopback, link-local and other internal addresses are refused)",
      text,
    );
  }
  return text;
}

/**
 * A host written as an internal address, or a localhost name. Other names are judged at
 * connect time, on the addresses they resolve to (service/webhook/address-guard.ts).
 */
function isInternalHost(url: URL): boolean {
  // A name may end in the root's dot ("localhost." is localhost): judge it without.
  let host = url.hostname.toLowerCase();
  while (host.endsWith(".")) host = host.slice(0, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  // The URL parser has already normalised IPv4 forms (0x7f.1, 2130706433) to dotted quads.
  return isIP(literal) !== 0 && internalRange(literal) !== null;
}

/** Checks webhook headers alone (a change of headers keeping the stored target). */
/**
 * The callback URL check of a surface that delivers webhooks (HTTP, MCP): each URL under the
 * webhook target's own policy, so a private address is refused with the target's message.
 * The argument of optionalCallbacks (core/callbacks.ts).
 */
export function callbackUrlPolicy(allowPrivateTargets: boolean) {
  return (value: unknown, field: string): string =>
    checkWebhookTarget(
      { target: value },
      { allowPrivateTargets, fields: { target: field, headers: field } },
    ).target;
}

export function checkHeaders(value: unknown, field: string): Record<string, string> {
  if (!isObject(value)) {
    throw new InvalidJobError(field, "an object of header names to string values", value);
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) {
    throw new InvalidJobError(
      field,
      `at most ${MAX_HEADERS} headers`,
      new Described(`${entries.length} headers`),
    );
  }
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, v] of entries) {
    const at = `${field}.${name}`;
    if (name.length > MAX_HEADER_NAME_LENGTH || !HEADER_NAME.test(name)) {
      throw new InvalidJobError(
        at,
        `a header name (an HTTP token of 1 to ${MAX_HEADER_NAME_LENGTH} characters)`,
        name,
      );
    }
    const lower = name.toLowerCase();
    if (
      SET_BY_SERVICE.includes(lower) ||
      CONNECTION_LEVEL.includes(lower) ||
      lower.startsWith(SERVICE_PREFIX)
    ) {
      throw new InvalidJobError(
        at,
        `a header a job may set (not ${FORBIDDEN_HEADERS.join(", ")})`,
        name,
      );
    }
    if (seen.has(lower)) {
      throw new InvalidJobError(at, "each header name once (names are case-insensitive)", name);
    }
    seen.add(lower);
    if (typeof v !== "string" || v.length > MAX_HEADER_VALUE_LENGTH) {
      throw new InvalidJobError(
        at,
        `a string of at most ${MAX_HEADER_VALUE_LENGTH} characters`,
        typeof v === "string" ? new Described(`${v.length} characters`) : v,
      );
    }
    if (!HEADER_VALUE.test(v) || EDGE_WHITESPACE.test(v)) {
      throw new InvalidJobError(
        at,
        "a header value of printable Latin-1 characters (no control characters, no line " +
          "breaks, no characters beyond U+00FF, no leading or trailing whitespace)",
        v,
      );
    }
    out[name] = v;
  }
  return out;
}
