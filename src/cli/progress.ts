import { formatDuration } from "../core/duration-text.js";
import { bar, escapeControls } from "./format.js";

/**
 * Progress of a bulk operation on the terminal: on a TTY one line redrawn in place (a bar of
 * jobs read against the expected total); otherwise plain lines, the first batch's and then
 * at most one a second, so a log of a long run stays short.
 */

/** What is shown of an operation's progress. */
export interface ProgressState {
  readonly scanned: number;
  readonly changed: number;
  readonly skipped: number;
}

/** Bar width in cells. */
const WIDTH = 30;
/** Least time between two plain lines, ms. */
const PLAIN_EVERY_MS = 1000;

export class ProgressDisplay {
  private lastPlainAt = -Infinity;
  private drawn = false;
  private readonly startedAt: number;

  /**
   * `total` is the jobs the operation is expected to read (null: not known); `verb` the
   * past participle of its change ("cancelled"); `write` prints without a newline.
   */
  constructor(
    private readonly o: {
      readonly total: number | null;
      readonly verb: string;
      readonly tty: boolean;
      readonly write: (text: string) => void;
      readonly now: () => number;
    },
  ) {
    this.startedAt = o.now();
  }

  update(p: ProgressState): void {
    if (this.o.tty) {
      this.o.write(`\r${this.line(p)}\x1b[K`);
      this.drawn = true;
      return;
    }
    const now = this.o.now();
    // nothing read yet (the record as queued) says nothing a plain log needs
    if (p.scanned === 0 || now - this.lastPlainAt < PLAIN_EVERY_MS) return;
    this.lastPlainAt = now;
    this.o.write(`${this.line(p)}\n`);
  }

  /** Ends the redrawn line (TTY), so what follows starts on a line of its own. */
  finish(): void {
    if (this.drawn) this.o.write("\n");
    this.drawn = false;
  }

  /** "[████▌     ]  45%  9,000 of 20,000 read, 8,990 cancelled, 10 skipped, 1.2s". */
  line(p: ProgressState): string {
    const counts = `${p.changed.toLocaleString("en-US")} ${this.o.verb}, ${p.skipped.toLocaleString("en-US")} skipped`;
    const elapsed = formatDuration(Math.max(0, this.o.now() - this.startedAt));
    const total = this.o.total === null ? null : Math.max(this.o.total, p.scanned);
    if (total === null || total === 0) {
      return escapeControls(`${p.scanned.toLocaleString("en-US")} read, ${counts}, ${elapsed}`);
    }
    const share = p.scanned / total;
    const cells = bar(p.scanned, total, WIDTH).padEnd(WIDTH);
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    return `[${cells}] ${percent}  ${p.scanned.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} read, ${counts}, ${elapsed}`;
  }
}
