/**
 * The service's one limit mechanism: a token bucket per name (an API key's id, a client
 * address), `burst` tokens deep, refilled at `perSecond`. In memory, per process: with
 * several servers behind a balancer each enforces its own share. Idle buckets (full again)
 * are dropped so the map stays as small as the set of recently active names.
 */
export interface RateLimitOptions {
  /** Sustained requests per second per name. Default 100. 0 disables the limit. */
  readonly perSecond?: number;
  /** Requests a name may make at once after being idle. Default 2 x perSecond. */
  readonly burst?: number;
}

/** Most names tracked at once: past it idle buckets go, then the least recently created. */
const MAX_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  readonly perSecond: number;
  readonly burst: number;

  constructor(
    options: RateLimitOptions = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perSecond = options.perSecond ?? 100;
    this.burst = options.burst ?? Math.max(1, this.perSecond * 2);
  }

  /**
   * Takes `cost` tokens (default one) for `key`: 0 when allowed, else the ms to wait before
   * that many are there (Infinity when `cost` is more than `burst`: never).
   */
  take(key: string, cost = 1): number {
    if (this.perSecond <= 0) return 0;
    const now = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.dropIdle(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) * this.perSecond) / 1000);
    b.at = now;
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return 0;
    }
    if (cost > this.burst) return Infinity;
    return Math.ceil(((cost - b.tokens) * 1000) / this.perSecond);
  }

  /**
   * The ms until `key` has a token, 0 when it has one now; takes nothing. For a limit that
   * is checked before the work and charged only by some outcomes (failed authentications).
   */
  peek(key: string): number {
    if (this.perSecond <= 0) return 0;
    const b = this.buckets.get(key);
    if (!b) return 0;
    const tokens = Math.min(this.burst, b.tokens + ((this.now() - b.at) * this.perSecond) / 1000);
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / this.perSecond);
  }

  /** Names tracked now (at most 10,000). */
  get size(): number {
    return this.buckets.size;
  }

  /**
   * Drops the buckets that are full again (forgetting them loses nothing), and if none is,
   * the oldest one: names can be made up by the client (addresses), so the map must stay
   * bounded even when every bucket is in use. Forgetting a busy name gives it a fresh burst,
   * which costs an attacker MAX_BUCKETS names in use at once to buy.
   */
  private dropIdle(now: number): void {
    const fullAfterMs = (this.burst * 1000) / this.perSecond;
    for (const [k, b] of this.buckets) if (now - b.at >= fullAfterMs) this.buckets.delete(k);
    if (this.buckets.size >= MAX_BUCKETS) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
  }
}
