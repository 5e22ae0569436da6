/**
 * Progress lines for long runs, on stderr so stdout stays the tables. On a terminal the line
 * is rewritten in place; otherwise (CI logs) a line at most every few seconds.
 */
export class Progress {
  private last = 0;
  private lastDone = -1;
  private readonly started = performance.now();
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number, extra = ""): void {
    const now = performance.now();
    if (now - this.last < (this.tty ? 250 : 5000) && done < this.total) return;
    this.last = now;
    this.lastDone = done;
    const pct = this.total > 0 ? ((100 * done) / this.total).toFixed(0) : "100";
    const secs = ((now - this.started) / 1000).toFixed(1);
    const line = `  ${this.label}: ${done.toLocaleString("en-US")}/${this.total.toLocaleString("en-US")} (${pct}%) ${secs}s${extra ? ` ${extra}` : ""}`;
    if (this.tty) process.stderr.write(`\r\u001b[2K${line}`);
    else process.stderr.write(`${line}\n`);
  }

  done(extra = ""): void {
    this.last = 0;
    if (this.lastDone !== this.total || extra !== "") this.update(this.total, extra);
    if (this.tty) process.stderr.write("\n");
  }
}

/** A one-off status line on stderr. */
export function note(message: string): void {
  process.stderr.write(`  ${message}\n`);
}
