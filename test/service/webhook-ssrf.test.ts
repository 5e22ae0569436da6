import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import { PermanentJobError } from "../../src/engine/handler-errors.js";
import type { Logger } from "../../src/engine/logger.js";
import { createWebhookDelivery } from "../../src/service/webhook/deliver.js";
import {
  startReceiver,
  startTestService,
  waitForJob,
  type Receiver,
  type TestService,
} from "./helpers.js";

/**
 * Issue 10 §3, SSRF: every IPv6 form that reaches an internal IPv4 address is refused, at
 * create time for a host written as an address and at connect time for a name (resolved
 * here by a lookup the test controls: no DNS). A refusal tells the job's owner only their
 * own host; the internal address is in the server log.
 */

/** Internal addresses in the forms that used to pass (and a few that always failed). */
const INTERNAL_FORMS = [
  "::127.0.0.1", // IPv4-compatible, written dotted
  "::7f00:1", // the same, as Node normalises it
  "2002:7f00:1::", // 6to4 of 127.0.0.1
  "2002:a9fe:a9fe::", // 6to4 of 169.254.169.254 (cloud metadata)
  "64:ff9b::7f00:1", // NAT64 of 127.0.0.1
  "::ffff:0:7f00:1", // IPv4-translated
  "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
  "::ffff:127.0.0.1", // IPv4-mapped
];

let t: TestService | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await t?.close();
  await rx?.close();
  t = undefined;
  rx = undefined;
});

/** A lookup that answers every name with `addresses`, as dns.lookup({ all: true }) would. */
function fixedLookup(addresses: string[]): LookupFunction {
  const answer: LookupAddress[] = addresses.map((address) => ({
    address,
    family: address.includes(":") ? 6 : 4,
  }));
  return ((_host: string, _opts: unknown, cb: (e: null, a: LookupAddress[]) => void) => {
    setImmediate(() => cb(null, answer));
  }) as unknown as LookupFunction;
}

function warnings(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const none = (): void => undefined;
  return {
    lines,
    logger: {
      debug: none,
      info: none,
      error: none,
      warn: (obj, msg) => lines.push({ ...obj, msg }),
    },
  };
}

function webhookJob(target: string): Job {
  return {
    id: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    tenant: "acme",
    key: null,
    dueAt: Date.now(),
    payload: null,
    target,
    targetOptions: null,
  } as unknown as Job;
}

const ctx = () => ({ signal: new AbortController().signal, attempt: 1, latenessMs: 0 });

describe("SSRF ranges at create time (real HTTP)", () => {
  it("refuses a target written as an internal address in any IPv6 form", async () => {
    t = await startTestService({ allowPrivateTargets: false });
    for (const address of INTERNAL_FORMS) {
      const target = `http://[${address}]:8080/hook`;
      const r = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target } });
      expect(r.status, target).toBe(400);
      expect(r.body.error.field, target).toBe("target");
      expect(r.body.error.expected).toMatch(/a URL of a public host/);
    }
    // localhost names, also written with the root's trailing dot
    for (const host of ["localhost", "localhost.", "foo.localhost.", "LOCALHOST.."]) {
      const target = `http://${host}:8080/hook`;
      const r = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target } });
      expect(r.status, target).toBe(400);
      expect(r.body.error.field, target).toBe("target");
    }
    const publicForms = ["http://[2002:808:808::1]/h", "http://[64:ff9b::808:808]/h"];
    for (const target of publicForms) {
      const r = await t.api("POST", "/v1/jobs", { body: { delayMs: 60_000, target } });
      expect(r.status, target).toBe(201);
    }
    const listed = await t.api("GET", "/v1/jobs");
    expect(listed.body.jobs).toHaveLength(publicForms.length);
  });
});

describe("SSRF ranges at connect time (names resolved by the test's lookup)", () => {
  it.each(INTERNAL_FORMS)(
    "refuses a name resolving to %s, without the address in the job's error",
    async (address) => {
      rx = await startReceiver();
      const log = warnings();
      const outcomes: string[] = [];
      const delivery = createWebhookDelivery({
        secretFor: async () => "whsec_test",
        lookup: fixedLookup([address]),
        logger: log.logger,
        onAttempt: (a) => outcomes.push(a.outcome),
      });
      try {
        const err = await Promise.resolve(
          delivery.handler(webhookJob(`http://hook.example:${new URL(rx.url).port}/x`), ctx()),
        ).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PermanentJobError);
        const message = (err as Error).message;
        expect(message).toMatch(/^refused: hook\.example resolves to a private/);
        expect(message).not.toContain(address);
        expect(message).not.toMatch(/127\.0\.0\.1|7f00/);
        expect(outcomes).toEqual(["refused"]);
        expect(log.lines).toHaveLength(1);
        expect(log.lines[0]).toMatchObject({
          host: "hook.example",
          address,
          id: expect.any(String),
        });
        expect(String(log.lines[0]!.range)).toMatch(/loopback|linkLocal|IPv4-compatible/);
        expect(rx.requests).toHaveLength(0);
      } finally {
        await delivery.close();
      }
    },
  );

  it("refuses a name with one public and one internal address, and uses the lookup when allowed", async () => {
    rx = await startReceiver();
    const guarded = createWebhookDelivery({
      secretFor: async () => "whsec_test",
      lookup: fixedLookup(["93.184.216.34", "2002:a9fe:a9fe::1"]),
    });
    const target = `http://hook.example:${new URL(rx.url).port}/x`;
    await expect(Promise.resolve(guarded.handler(webhookJob(target), ctx()))).rejects.toThrow(
      /^refused: hook\.example resolves to/,
    );
    await guarded.close();

    // With private targets allowed, the same lookup decides where the request goes.
    const open = createWebhookDelivery({
      secretFor: async () => "whsec_test",
      allowPrivateTargets: true,
      lookup: fixedLookup(["127.0.0.1"]),
    });
    await expect(Promise.resolve(open.handler(webhookJob(target), ctx()))).resolves.toMatchObject({
      status: 200,
    });
    await open.close();
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]!.headers.host).toBe(`hook.example:${new URL(rx.url).port}`);
  });

  it("a stored job whose name resolves to loopback goes dead naming its host; the address is in the server log", async () => {
    const logs: string[] = [];
    const logDestination = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    t = await startTestService({ allowPrivateTargets: false, logLevel: "warn", logDestination });
    rx = await startReceiver();
    // As a job stored before its name pointed inside (create refuses "localhost" itself).
    const { job } = await t.svc.scheduler.schedule({
      tenant: "acme",
      dueAt: Date.now(),
      target: `http://localhost:${new URL(rx.url).port}/hook`,
      maxAttempts: 3,
    });
    const dead = await waitForJob(t, job.id, (j) => j.status === "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(/^refused: localhost resolves to a private/);
    expect(dead.lastError).not.toMatch(/127\.0\.0\.1|::1/);
    expect(rx.requests).toHaveLength(0);
    const refusal = logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find(
        (l) => l.msg === "webhook delivery refused: the target resolves to an internal address",
      );
    expect(refusal).toMatchObject({ id: job.id, tenant: "acme", host: "localhost" });
    expect(String(refusal!.address)).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
