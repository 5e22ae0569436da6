import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which addresses a webhook may reach: public unicast only. The ranges are ipaddr.js's
 * (a well-kept registry of the IANA special-purpose blocks, RFC by RFC), not regular
 * expressions over address text, and every IPv6 form that carries an IPv4 address is judged
 * by the IPv4 address it reaches: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16, bits 16-47) and Teredo
 * (2001::/32: the server address, and the client address stored inverted in the last 32
 * bits). The deprecated IPv4-compatible block (::a.b.c.d, which Node prints as ::7f00:1) is
 * refused whole: nothing public lives there.
 */

/** IPv4 ranges that are public unicast (AS112 and AMT are public anycast services). */
const PUBLIC_V4 = new Set<string>(["unicast", "as112", "amt"]);
/** IPv6 ranges that are public unicast, inside 2000::/3 (checked as well). */
const PUBLIC_V6 = new Set<string>(["unicast", "amt", "as112v6"]);
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

/**
 * Why `address` (an IP literal, as a resolver or a URL gives it) is not a public unicast
 * address, e.g. "loopback" or "6to4 (2002::/16) of a loopback IPv4 address (127.0.0.1)";
 * null when it is public. Text that is not an IP address is refused rather than guessed at.
 * The answer names the address: it belongs in the server log, not where a tenant reads it.
 */
export function internalRange(address: string): string | null {
  const zone = address.indexOf("%");
  const text = zone === -1 ? address : address.slice(0, zone); // fe80::1%eth0: the zone is local
  const family = isIP(text);
  if (family === 4) return v4Range(ipaddr.IPv4.parse(text));
  if (family === 6) return v6Range(ipaddr.IPv6.parse(canonicalIPv6(text)));
  return "not an IP address";
}

/** True when `address` is not a public unicast address (see internalRange). */
export function isPrivateAddress(address: string): boolean {
  return internalRange(address) !== null;
}

/**
 * IPv6 text in its canonical hex form (RFC 5952, by the WHATWG URL parser): ipaddr.js reads
 * a dotted suffix as IPv4-mapped whatever precedes it ("::127.0.0.1" as "::ffff:7f00:1"),
 * which would judge an IPv4-compatible address by the wrong block.
 */
function canonicalIPv6(text: string): string {
  return text.includes(".") ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : text;
}

function v4Range(ip: ipaddr.IPv4): string | null {
  const range = ip.range();
  return PUBLIC_V4.has(range) ? null : range;
}

function v6Range(ip: ipaddr.IPv6): string | null {
  const range = ip.range();
  if (range === "unspecified" || range === "loopback") return range;
  const embedded = embeddedIPv4(ip, range);
  if (embedded) {
    for (const inner of embedded.addresses) {
      const innerRange = v4Range(inner);
      if (innerRange !== null) {
        return `${embedded.form} of a ${innerRange} IPv4 address (${inner.toString()})`;
      }
    }
    return null;
  }
  if (ip.parts.slice(0, 6).every((p) => p === 0)) {
    return "IPv4-compatible (::/96, deprecated and never routed)";
  }
  if (!PUBLIC_V6.has(range)) return range;
  if (!ip.match(GLOBAL_UNICAST)) return "outside global unicast (2000::/3)";
  return null;
}

/** The IPv4 addresses an IPv6 address reaches by its form, or null for a plain one. */
function embeddedIPv4(
  ip: ipaddr.IPv6,
  range: string,
): { form: string; addresses: ipaddr.IPv4[] } | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number): ipaddr.IPv4 =>
    new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  const last32 = (): ipaddr.IPv4 => v4(p[6]!, p[7]!);
  if (range === "ipv4Mapped") return { form: "IPv4-mapped (::ffff:0:0/96)", addresses: [last32()] };
  if (range === "rfc6145") {
    return { form: "IPv4-translated (::ffff:0:0:0/96)", addresses: [last32()] };
  }
  if (ip.match(NAT64_WELL_KNOWN)) {
    return { form: "NAT64 (64:ff9b::/96)", addresses: [last32()] };
  }
  if (range === "6to4") return { form: "6to4 (2002::/16)", addresses: [v4(p[1]!, p[2]!)] };
  if (range === "teredo") {
    // RFC 4380: server IPv4 in bits 32-63, client IPv4 inverted in bits 96-127.
    return {
      form: "Teredo (2001::/32)",
      addresses: [v4(p[2]!, p[3]!), v4(~p[6]! & 0xffff, ~p[7]! & 0xffff)],
    };
  }
  return null;
}
