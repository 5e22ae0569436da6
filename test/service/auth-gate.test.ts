import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addressBudgetName, BearerGate } from "../../src/service/auth.js";
import { createApiKey, openKeyStore, type KeyStore } from "../../src/service/keys.js";
import { RateLimiter } from "../../src/service/rate-limit.js";
import { tempDir } from "../support/temp-dir.js";

/** The gate's memory and the limiter's map are bounded whatever names a client makes up. */
describe("BearerGate and RateLimiter stay bounded", () => {
  let cleanup: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await cleanup?.();
    cleanup = null;
  });

  async function keyStore(): Promise<KeyStore> {
    const dir = tempDir("duetime-gate-");
    const keys = await openKeyStore(join(dir.path, "keys.db"));
    cleanup = async () => {
      await keys.close();
      dir.cleanup();
    };
    return keys;
  }

  it("remembers refused keys that could exist, never junk (a 10 KiB header is not kept)", async () => {
    const keys = await keyStore();
    const { key } = await createApiKey(keys, "acme");
    const gate = new BearerGate(
      keys,
      new RateLimiter({ perSecond: 0 }),
      new RateLimiter({ perSecond: 0 }),
    );
    for (let i = 0; i < 50; i++) {
      const r = await gate.check(`Bearer ${"j".repeat(10_240)}${i}`, "192.0.2.1");
      expect(r.ok).toBe(false);
    }
    expect(gate.rememberedRefusals).toBe(0);
    expect((await gate.check(`Bearer dtk_${"x".repeat(43)}`, "192.0.2.1")).ok).toBe(false);
    expect(gate.rememberedRefusals).toBe(1);
    expect(await gate.check(`Bearer ${key}`, "192.0.2.1")).toMatchObject({
      ok: true,
      tenant: "acme",
    });
    expect(gate.rememberedRefusals).toBe(1);
  });

  it("keeps at most 10,000 names even when every bucket is in use", () => {
    let now = 0;
    const limiter = new RateLimiter({ perSecond: 1, burst: 5 }, () => now);
    for (let i = 0; i < 12_000; i++) {
      now += 0.001;
      limiter.take(`198.51.100.${i}`);
    }
    expect(limiter.size).toBe(10_000);
  });

  it("keeps an IPv6 client's budget per /64, an IPv4 (or IPv4-mapped) one per address", () => {
    expect(addressBudgetName("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressBudgetName("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressBudgetName("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressBudgetName("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressBudgetName("203.0.113.9")).toBe("203.0.113.9");
  });
});
