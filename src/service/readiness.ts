/** What a readiness probe found. */
export type Readiness =
  { readonly ready: true } | { readonly ready: false; readonly error: string };

/**
 * /readyz answered from a cached probe: the store is asked at most once per `ttlMs`, and
 * requests that arrive while a probe runs share it. An unauthenticated endpoint must not
 * be a way to put one store read per request on the database (a balancer polling it, or a
 * flood of it). A failure is cached as long as a success: the answer is at most `ttlMs`
 * old either way. `now` is the scheduler's clock, so tests move it instead of waiting; a
 * clock that went back counts as expired rather than freezing the answer.
 */
export class ReadinessProbe {
  private last: { at: number; result: Promise<Readiness> } | null = null;

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly onProbe: (r: Readiness) => void = () => undefined,
  ) {}

  check(): Promise<Readiness> {
    const now = this.now();
    const last = this.last;
    if (last && now >= last.at && now - last.at < this.ttlMs) return last.result;
    const result = Promise.resolve()
      .then(() => this.probe())
      .then(
        (): Readiness => ({ ready: true }),
        (err: unknown): Readiness => ({
          ready: false,
          error: err instanceof Error ? err.message : String(err),
        }),
      );
    void result.then(this.onProbe);
    this.last = { at: now, result };
    return result;
  }
}
