import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * The SSRF guard: webhook targets may not reach private, loopback, link-local or otherwise
 * non-public addresses (unless the server runs with --allow-private-targets). The check is
 * on the address the socket actually connects to (a `lookup` function undici's connector
 * hands to net/tls.connect), so a public name that resolves to 127.0.0.1 or 169.254.169.254
 * is refused too, and DNS rebinding between a check and the connect cannot slip through.
 */

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24], // documentation
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  BLOCKED.addSubnet(net, prefix, "ipv6");
}

/** True when `address` (an IP literal) is not a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, "ipv4");
  if (family !== 6) return true; // not an IP at all: refuse rather than guess
  const lower = address.toLowerCase();
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
  // addresses reach the embedded IPv4 address: judge that one.
  const embedded = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return isPrivateAddress(embedded[1]!);
  const hexMapped = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1]!, 16);
    const lo = parseInt(hexMapped[2]!, 16);
    return isPrivateAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return BLOCKED.check(address, "ipv6");
}

/** Thrown (through the connect callback) when a target resolves to a refused address. */
export class PrivateAddressError extends Error {
  override readonly name = "PrivateAddressError";
  readonly code = "EDUETIME_PRIVATE_ADDRESS";
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(
      `refused: ${hostname} resolves to ${address}, a private, loopback or link-local address ` +
        `(start the server with --allow-private-targets to allow it)`,
    );
  }
}

/**
 * A `dns.lookup`-compatible function that resolves as usual, then refuses the connection if
 * any resolved address is private. Every address is checked (not only the first) so a name
 * with one public and one private record cannot be used to reach the private one.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) {
      callback(err, "", 0);
      return;
    }
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) {
      callback(new PrivateAddressError(hostname, refused.address) as NodeJS.ErrnoException, "", 0);
      return;
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

/**
 * The check for a URL whose host is an IP literal: net.connect does not call `lookup` for
 * those, so they are judged here, before connecting. Returns the refusal, or null.
 */
export function literalAddressRefusal(url: URL): PrivateAddressError | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) === 0) return null;
  return isPrivateAddress(host) ? new PrivateAddressError(url.hostname, host) : null;
}
