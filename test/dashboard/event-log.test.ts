import { describe, expect, it } from "vitest";
import type { JobChange } from "../../src/api/scheduler.js";
import { TenantEventLog } from "../../src/dashboard/event-log.js";

function change(tenant: string, id: string): JobChange {
  return { kind: "scheduled", id, tenant, status: "pending", dueAt: 0, at: 0 };
}

describe("TenantEventLog", () => {
  it("numbers each tenant's changes 1, 2, 3... whatever the other tenants do", () => {
    const log = new TenantEventLog(100);
    expect(log.append(change("a", "a1")).seq).toBe(1);
    for (let i = 0; i < 7; i++) log.append(change("b", `b${i}`));
    expect(log.append(change("a", "a2")).seq).toBe(2);
    expect(log.latest("a")).toBe(2);
    expect(log.latest("b")).toBe(7);
    expect(log.latest("nobody")).toBe(0);
  });

  it("gives a tenant's changes after an id, and null when they cannot all be given", () => {
    const log = new TenantEventLog(5);
    log.append(change("a", "a1"));
    log.append(change("a", "a2"));
    log.append(change("b", "b1"));
    expect(log.after("a", 0)!.map((n) => n.change.id)).toEqual(["a1", "a2"]);
    expect(log.after("a", 1)!.map((n) => [n.seq, n.change.id])).toEqual([[2, "a2"]]);
    expect(log.after("a", 2)).toEqual([]);
    expect(log.after("a", 3)).toBeNull(); // not yet given: an id from another process
    expect(log.after("nobody", 0)).toEqual([]);
    expect(log.after("nobody", 4)).toBeNull();
    // three more of b's push a1 out of the ring of 5: a's gap after 0 is lost, after 1 is not
    for (let i = 2; i <= 4; i++) log.append(change("b", `b${i}`));
    expect(log.after("a", 0)).toBeNull();
    expect(log.after("a", 1)!.map((n) => n.change.id)).toEqual(["a2"]);
    // one more pushes a2 out too; a client that had seen it has nothing to miss
    log.append(change("b", "b5"));
    expect(log.after("a", 1)).toBeNull();
    expect(log.after("a", 2)).toEqual([]);
    expect(log.after("b", 2)!.map((n) => n.seq)).toEqual([3, 4, 5]);
    expect(log.after("b", 0)!.map((n) => n.seq)).toEqual([1, 2, 3, 4, 5]);
    log.append(change("b", "b6"));
    expect(log.after("b", 0)).toBeNull();
  });
});
