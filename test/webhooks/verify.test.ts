import { describe, expect, it } from "vitest";
import { signatureHeader } from "../../src/webhooks/signature.js";
import {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookRefusal,
} from "../../src/webhooks/index.js";

const SECRET = "whsec_current";
const OLD = "whsec_previous";
const NOW = 1_767_261_600;
// A body with multi-byte UTF-8: bytes and text must sign alike.
const BODY = JSON.stringify({
  id: "01JD3V6Q5X4W8N2M7K9P0R1S2T",
  key: null,
  tenant: "acme",
  dueAt: "2026-01-01T10:00:00.000Z",
  attempt: 2,
  payload: { text: "café ☕" },
});

function headersFor(secret: string, timestamp = NOW, body = BODY): Record<string, string> {
  return {
    "duetime-timestamp": String(timestamp),
    "duetime-signature": signatureHeader(secret, timestamp, body),
  };
}

function refusal(fn: () => unknown): WebhookRefusal | "accepted" {
  try {
    fn();
    return "accepted";
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
}

describe("verifyWebhook", () => {
  it("accepts the body as text or bytes and returns the delivery", () => {
    const headers = headersFor(SECRET);
    const fromText = verifyWebhook({ secret: SECRET, headers, body: BODY, nowSec: NOW });
    const bytes = new TextEncoder().encode(BODY);
    const fromBytes = verifyWebhook({ secret: SECRET, headers, body: bytes, nowSec: NOW });
    expect(fromText).toEqual(fromBytes);
    expect(fromText).toMatchObject({ attempt: 2, tenant: "acme", timestamp: NOW });
    expect(fromText.payload).toEqual({ text: "café ☕" });
    expect(
      verifyWebhook({ secret: SECRET, headers, body: Buffer.from(bytes), nowSec: NOW }).id,
    ).toBe(fromText.id);
  });

  it("reads Fetch Headers and records with any name case", () => {
    const h = headersFor(SECRET);
    const fetchHeaders = new Headers(h);
    expect(
      verifyWebhook({ secret: SECRET, headers: fetchHeaders, body: BODY, nowSec: NOW }).id,
    ).toBe("01JD3V6Q5X4W8N2M7K9P0R1S2T");
    const mixed = {
      "Duetime-Timestamp": h["duetime-timestamp"],
      "DUETIME-SIGNATURE": h["duetime-signature"],
    };
    expect(
      refusal(() => verifyWebhook({ secret: SECRET, headers: mixed, body: BODY, nowSec: NOW })),
    ).toBe("accepted");
  });

  it("refuses tampering, another secret, missing and malformed headers", () => {
    const h = headersFor(SECRET);
    const v = (over: Partial<Parameters<typeof verifyWebhook>[0]>) =>
      refusal(() =>
        verifyWebhook({ secret: SECRET, headers: h, body: BODY, nowSec: NOW, ...over }),
      );
    expect(v({ body: BODY.replace("acme", "acmf") })).toBe("bad-signature");
    expect(v({ secret: "whsec_other" })).toBe("bad-signature");
    expect(v({ headers: { "duetime-signature": h["duetime-signature"] } })).toBe("missing-header");
    expect(v({ headers: { "duetime-timestamp": String(NOW) } })).toBe("missing-header");
    expect(v({ headers: { ...h, "duetime-timestamp": "1e9" } })).toBe("bad-timestamp");
    expect(v({ headers: { ...h, "duetime-timestamp": "9".repeat(13) } })).toBe("bad-timestamp");
    expect(v({ headers: { ...h, "duetime-signature": "v1=zz" } })).toBe("bad-signature");
    // The timestamp is signed: moving it to look fresh breaks the signature.
    expect(v({ headers: { ...h, "duetime-timestamp": String(NOW + 1) } })).toBe("bad-signature");
  });

  it("refuses a replay outside the tolerance, at the edge inclusive", () => {
    const h = headersFor(SECRET);
    const at = (nowSec: number, toleranceSec?: number) =>
      refusal(() =>
        verifyWebhook({ secret: SECRET, headers: h, body: BODY, nowSec, toleranceSec }),
      );
    expect(at(NOW + 300)).toBe("accepted");
    expect(at(NOW + 301)).toBe("outside-tolerance");
    expect(at(NOW - 301)).toBe("outside-tolerance");
    expect(at(NOW + 3600, 3600)).toBe("accepted");
    expect(() =>
      verifyWebhook({ secret: SECRET, headers: h, body: BODY, toleranceSec: -1 }),
    ).toThrow(TypeError);
  });

  it("during a rotation accepts either secret, and a header carrying several signatures", () => {
    const oldSigned = headersFor(OLD);
    const rotating = [SECRET, OLD];
    const ok = (headers: Record<string, string>, secret: string | string[]) =>
      refusal(() => verifyWebhook({ secret, headers, body: BODY, nowSec: NOW }));
    expect(ok(oldSigned, rotating)).toBe("accepted");
    expect(ok(headersFor(SECRET), rotating)).toBe("accepted");
    expect(ok(oldSigned, SECRET)).toBe("bad-signature");
    const both = {
      ...oldSigned,
      "duetime-signature": `${oldSigned["duetime-signature"]}, ${headersFor(SECRET)["duetime-signature"]}`,
    };
    expect(ok(both, SECRET)).toBe("accepted");
    expect(() => verifyWebhook({ secret: [], headers: both, body: BODY })).toThrow(TypeError);
  });

  it("an authentic body that is not a delivery is refused as bad-body", () => {
    const h = headersFor(SECRET, NOW, "[1,2]");
    expect(
      refusal(() => verifyWebhook({ secret: SECRET, headers: h, body: "[1,2]", nowSec: NOW })),
    ).toBe("bad-body");
  });
});
