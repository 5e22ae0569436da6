import { describe, expect, it } from "vitest";
import { internalRange, isPrivateAddress } from "../../src/core/address-ranges.js";

/**
 * Issue 10 §3: `[::127.0.0.1]` (IPv4-compatible, which Node normalises to `[::7f00:1]`) and
 * `[2002:7f00:1::]` (6to4) passed every check. Each IPv6 form that reaches an IPv4 address
 * is judged by that address; the deprecated IPv4-compatible block is refused whole.
 */
describe("address ranges (ipaddr.js)", () => {
  it.each([
    // IPv4-compatible (::/96): deprecated, never routed, refused whole
    ["::127.0.0.1", /IPv4-compatible/],
    ["::7f00:1", /IPv4-compatible/],
    ["::a9fe:a9fe", /IPv4-compatible/],
    ["::8.8.8.8", /IPv4-compatible/],
    // IPv4-mapped
    ["::ffff:127.0.0.1", /IPv4-mapped .* loopback IPv4 address \(127\.0\.0\.1\)/],
    ["::ffff:7f00:1", /IPv4-mapped .* loopback/],
    ["::ffff:10.0.0.1", /IPv4-mapped .* private/],
    // IPv4-translated (RFC 6145)
    ["::ffff:0:127.0.0.1", /IPv4-translated .* loopback/],
    ["::ffff:0:a9fe:a9fe", /IPv4-translated .* linkLocal/],
    // NAT64: the well-known prefix by its IPv4 address; the local-use /48 whole
    ["64:ff9b::127.0.0.1", /NAT64 .* loopback/],
    ["64:ff9b::7f00:1", /NAT64 .* loopback/],
    ["64:ff9b::a9fe:a9fe", /NAT64 .* linkLocal IPv4 address \(169\.254\.169\.254\)/],
    ["64:ff9b:1::808:808", /rfc6052/],
    // 6to4: bits 16-47
    ["2002:7f00:1::", /6to4 .* loopback IPv4 address \(127\.0\.0\.1\)/],
    ["2002:a9fe:a9fe::1", /6to4 .* linkLocal/],
    ["2002:c0a8:101::1", /6to4 .* private IPv4 address \(192\.168\.1\.1\)/],
    // Teredo: server in bits 32-63, client inverted in bits 96-127
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", /Teredo .* loopback IPv4 address \(127\.0\.0\.1\)/],
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", /Teredo .* private IPv4 address \(10\.0\.0\.1\)/],
    // plain IPv6
    ["::1", /^loopback$/],
    ["::", /^unspecified$/],
    ["fe80::1", /^linkLocal$/],
    ["fe80::1%eth0", /^linkLocal$/],
    ["fd12:3456::1", /^uniqueLocal$/],
    ["fec0::1", /deprecatedSiteLocal/],
    ["ff02::1", /^multicast$/],
    ["100::1", /^discard$/],
    ["2001:db8::1", /^reserved$/],
    ["3fff::1", /^reserved$/],
    ["2001:2::1", /^benchmarking$/],
    ["5f00::1", /segmentRouting/],
    ["4000::1", /outside global unicast/],
    // IPv4
    ["127.0.0.1", /^loopback$/],
    ["10.1.2.3", /^private$/],
    ["172.16.5.4", /^private$/],
    ["192.168.1.1", /^private$/],
    ["169.254.169.254", /^linkLocal$/],
    ["100.64.0.1", /^carrierGradeNat$/],
    ["0.0.0.0", /^unspecified$/],
    ["224.0.0.1", /^multicast$/],
    ["255.255.255.255", /^broadcast$/],
    ["192.0.0.8", /^reserved$/],
    ["192.0.2.1", /^reserved$/],
    ["198.18.0.1", /^reserved$/],
    ["203.0.113.9", /^reserved$/],
    ["240.0.0.1", /^reserved$/],
    // not an address: refused, never guessed (0177.0.0.1 is octal to some parsers)
    ["not-an-ip", /not an IP address/],
    ["0177.0.0.1", /not an IP address/],
    ["", /not an IP address/],
  ])("refuses %s", (address, why) => {
    expect(internalRange(address)).toMatch(why);
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "192.175.48.1", // AS112: public anycast
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "::ffff:0:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, public server and client 8.8.8.8
  ])("accepts %s", (address) => {
    expect(internalRange(address)).toBeNull();
    expect(isPrivateAddress(address)).toBe(false);
  });
});
