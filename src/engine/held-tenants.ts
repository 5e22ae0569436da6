import type { Job } from "../core/job.js";
import type { Settlement } from "../store/store.js";

/**
 * Claimed-and-unsettled jobs per tenant, for the claim's fair share (ClaimParams.tenantShare):
 * a job counts from its claim until its settlement is written (or refused), whatever path it
 * took (fired, retried, given back). Keyed by id and fence, so a job given back and claimed
 * again before the give-back's write resolved counts once per claim.
 */
export class HeldTenants {
  private readonly byClaim = new Map<string, string>();
  /** Held jobs by tenant; tenants holding none are absent. */
  readonly counts = new Map<string, number>();

  claimed(jobs: readonly Job[]): void {
    for (const j of jobs) {
      const key = claimKey(j.id, j.fence);
      if (this.byClaim.has(key)) continue;
      this.byClaim.set(key, j.tenant);
      this.counts.set(j.tenant, (this.counts.get(j.tenant) ?? 0) + 1);
    }
  }

  settled(settlements: readonly Settlement[]): void {
    for (const st of settlements) {
      const key = claimKey(st.id, st.fence);
      const tenant = this.byClaim.get(key);
      if (tenant === undefined) continue;
      this.byClaim.delete(key);
      const n = (this.counts.get(tenant) ?? 1) - 1;
      if (n > 0) this.counts.set(tenant, n);
      else this.counts.delete(tenant);
    }
  }

  /** Forgets everything (the engine stopped: nothing it claimed is held any more). */
  clear(): void {
    this.byClaim.clear();
    this.counts.clear();
  }
}

function claimKey(id: string, fence: number): string {
  return `${id} ${fence}`;
}
