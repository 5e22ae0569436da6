import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdGenerator } from "../../src/core/ids.js";
import { openStore } from "../../src/stores/open-store.js";
import { cli, ensureBuilt, tempWorkspace } from "./helpers.js";

/**
 * Text a tenant or a receiver controls, printed by the CLI: a job's target, key, payload and
 * last error carry terminal escape sequences (retitle, clear screen, cursor up), CR, BEL,
 * a C1 CSI, a bidi override and a newline. The operator must see them as escapes.
 */
const HOSTILE = {
  target: "https://example.test/\u001b]0;pwned\u0007",
  key: "k\u001b[2J",
  payload: { note: "\u202eevil" },
  error: "boom\r\u001b[1Aok\u009b31m\nsucceeded  fake line",
};
/** Anything a terminal would act on: C0 except the newlines between lines, DEL, C1, bidi. */
function rawControls(text: string): string[] {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0)!;
    return (
      (c < 0x20 && c !== 0x0a) ||
      (c >= 0x7f && c <= 0x9f) ||
      [0x061c, 0x200e, 0x200f, 0x2028, 0x2029].includes(c) ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    );
  });
}

const ws = tempWorkspace();
let id = "";
const T0 = Date.UTC(2026, 2, 1, 10);

beforeAll(async () => {
  await ensureBuilt();
  // The hostile text is put on disk through the store itself: whatever validation the
  // entry points apply now, a last error comes from a receiver and is stored as received.
  const store = await openStore(ws.db);
  id = createIdGenerator(() => T0)();
  await store.jobsInsert({
    jobs: [
      {
        id,
        tenant: "default",
        key: HOSTILE.key,
        dueAt: T0,
        payload: HOSTILE.payload,
        target: HOSTILE.target,
        targetOptions: null,
        maxAttempts: 1,
        expireAfterMs: null,
      },
    ],
    now: T0,
  });
  await store.bucketsStage({ until: T0 + 3_600_000, maxRows: 10 });
  const [c] = await store.jobsClaimDue({
    now: T0,
    dueBefore: T0,
    limit: 1,
    leaseMs: 1000,
    owner: "n",
  });
  await store.jobsSettle({
    now: T0,
    settlements: [{ id, fence: c!.fence, firedAt: T0, outcome: "dead", error: HOSTILE.error }],
  });
  await store.close();
}, 120_000);
afterAll(() => ws.cleanup());

describe("the CLI escapes control characters in what tenants and receivers wrote", () => {
  it("show: target, key, payload and last error print as visible escapes", async () => {
    const r = await cli(["show", id, "--db", ws.db]);
    expect(r.code).toBe(0);
    expect(rawControls(r.stdout)).toEqual([]);
    expect(r.stdout).toContain("https://example.test/\\x1b]0;pwned\\x07");
    expect(r.stdout).toContain("k\\x1b[2J");
    expect(r.stdout).toContain("\\u202eevil");
    expect(r.stdout).toContain("boom\\x0d\\x1b[1Aok\\x9b31m\\x0asucceeded  fake line");
    // the newline inside the error did not become a line of its own
    expect(r.stdout.split("\n").some((l) => l.startsWith("succeeded"))).toBe(false);
  });

  it("list: the table shows the target escaped and stays aligned", async () => {
    const r = await cli(["list", "--db", ws.db, "--status", "dead"]);
    expect(r.code).toBe(0);
    expect(rawControls(r.stdout)).toEqual([]);
    const row = r.stdout.split("\n").find((l) => l.startsWith(id));
    expect(row).toContain("https://example.test/\\x1b]0;pwned\\x07");
  });
});
