import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { internalRange } from "../../core/address-ranges.js";

/**
 * The SSRF guard: webhook targets may not reach private, loopback, link-local or otherwise
 * non-public addresses (unless the server runs with --allow-private-targets). The check is
 * on the address the socket actually connects to (a `lookup` function undici's connector
 * hands to net/tls.connect), so a public name that resolves to 127.0.0.1 or 169.254.169.254
 * is refused too, and DNS rebinding between a check and the connect cannot slip through.
 * Which addresses are internal is core/address-ranges.ts's answer.
 */

/**
 * Thrown (through the connect callback) when a target resolves to a refused address. The
 * message is what the job's owner reads: it names their own host but never the address it
 * resolved to (an internal address is the operator's business); `address` and `range` are
 * for the server log.
 */
export class PrivateAddressError extends Error {
  override readonly name = "PrivateAddressError";
  readonly code = "EDUETIME_PRIVATE_ADDRESS";
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(
      `refused: ${hostname} resolves to a private, loopback, link-local or otherwise ` +
        `non-public address (start the server with --allow-private-targets to allow it)`,
    );
  }
}

/**
 * A `dns.lookup`-compatible function that resolves with `resolve` (default dns.lookup),
 * then refuses the connection if any resolved address is internal. Every address is checked
 * (not only the first) so a name with one public and one private record cannot be used to
 * reach the private one.
 */
export function guardedLookup(resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, found) => {
      if (err) {
        callback(err, "", 0);
        return;
      }
      const addresses = found as unknown as LookupAddress[];
      for (const a of addresses) {
        const range = internalRange(a.address);
        if (range !== null) {
          callback(
            new PrivateAddressError(hostname, a.address, range) as NodeJS.ErrnoException,
            "",
            0,
          );
          return;
        }
      }
      if (options.all) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        return;
      }
      const first = addresses[0];
      if (!first) {
        callback(
          Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }),
          "",
          0,
        );
        return;
      }
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The check for a URL whose host is an IP literal: net.connect does not call `lookup` for
 * those, so they are judged here, before connecting. Returns the refusal, or null.
 */
export function literalAddressRefusal(url: URL): PrivateAddressError | null {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) === 0) return null;
  const range = internalRange(host);
  return range === null ? null : new PrivateAddressError(url.hostname, host, range);
}
