import { formatDuration } from "../core/duration-text.js";
import { isoInstant, isShowable } from "../core/instant-text.js";
import { zonedText } from "../core/wall-time.js";
import type { Job, JobStatus } from "../index.js";

/**
 * Text output helpers shared by the commands: times in a time zone, durations, tables and
 * histogram bars. Machine output (`--json`) bypasses all of this.
 */

/**
 * Characters a terminal acts on instead of printing, or that reorder what follows: C0
 * controls (ESC starts the sequences that move the cursor, retitle the window or rewrite the
 * clipboard; CR overwrites the line; BEL rings), DEL, C1 controls (U+009B is a one-byte CSI
 * for some terminals), the line and paragraph separators, and the bidirectional overrides,
 * embeddings and isolates that make text display in another order than it reads.
 */
function isUnsafeCodeUnit(c: number): boolean {
  return (
    c < 0x20 ||
    (c >= 0x7f && c <= 0x9f) ||
    c === 0x061c ||
    c === 0x200e ||
    c === 0x200f ||
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2066 && c <= 0x2069)
  );
}

function escapeCodeUnit(c: number): string {
  return c <= 0xff
    ? `\\x${c.toString(16).padStart(2, "0")}`
    : `\\u${c.toString(16).padStart(4, "0")}`;
}

/**
 * Text that tenants and receivers control (ids, keys, targets, errors, results) as it is
 * safe to print on an operator's terminal: every control character, newline included, as a
 * visible `\xNN` / `\uNNNN` escape, so a job cannot move the cursor, hide or forge lines,
 * or reorder what is shown. Everything else (other Unicode included) is kept. `keep` lists
 * characters left as they are (`out` keeps the newlines of its own multi-line text).
 * `--json` output does not pass here: it is for programs, and JSON escapes C0 itself.
 */
export function escapeControls(text: string, keep = ""): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isUnsafeCodeUnit(c) || keep.includes(text[i]!)) continue;
    out += text.slice(from, i) + escapeCodeUnit(c);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The system's IANA time zone (what a person at this terminal means by "9am"). */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** "2026-11-30 09:00:00.000 GMT+1": the wall-clock time at `ms` in `timeZone`. */
export function formatInZone(ms: number, timeZone: string): string {
  if (!isShowable(ms)) return isoInstant(ms);
  const { local, offsetSeconds } = zonedText(ms, timeZone);
  return `${local.replace("T", " ")} ${offsetLabel(offsetSeconds)}`;
}

/** "UTC", "GMT+1", "GMT-3:30", "GMT+0:09:21": the offset as Intl's shortOffset names it. */
function offsetLabel(seconds: number): string {
  if (seconds === 0) return "UTC";
  const abs = Math.abs(seconds);
  const two = (n: number) => String(n).padStart(2, "0");
  const mm = Math.floor(abs / 60) % 60;
  const ss = abs % 60;
  const tail = ss !== 0 ? `:${two(mm)}:${two(ss)}` : mm !== 0 ? `:${two(mm)}` : "";
  return `GMT${seconds < 0 ? "-" : "+"}${Math.floor(abs / 3600)}${tail}`;
}

export function iso(ms: number | null): string {
  return ms === null ? "-" : isoInstant(ms);
}

export { formatDuration };

/** "in 2h 5m" or "3m 2s ago". */
export function formatRelative(ms: number, now: number): string {
  const d = ms - now;
  if (Math.abs(d) < 1) return "now";
  return d > 0 ? `in ${formatDuration(d)}` : `${formatDuration(d)} ago`;
}

/** Left-aligned columns; `align` "r" right-aligns a column (numbers). */
export function table(headers: string[], cells: string[][], align: ("l" | "r")[] = []): string {
  const rows = cells.map((r) => r.map((c) => escapeControls(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (align[i] === "r" ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

/** A bar of `value / max` of `width` cells, in eighths so small counts still show. */
export function bar(value: number, max: number, width = 40): string {
  if (value <= 0 || max <= 0) return "";
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  const full = Math.floor(eighths / 8);
  const partial = eighths % 8;
  return "█".repeat(full) + (partial > 0 ? (PARTIAL_BLOCKS[partial] ?? "") : "");
}
const PARTIAL_BLOCKS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];

export function attemptsText(job: Pick<Job, "attempts" | "maxAttempts">): string {
  return `${job.attempts}/${job.maxAttempts}`;
}

/** The job as printed by `show` and `add`: one "label  value" line per field. */
export function describeJob(job: Job, timeZone: string, now: number): string {
  const lines: [string, string][] = [
    ["id", job.id],
    ["status", job.status],
    ["due", `${iso(job.dueAt)}  (${formatRelative(job.dueAt, now)})`],
    [`due (${timeZone})`, formatInZone(job.dueAt, timeZone)],
    ["bucket", iso(job.bucket)],
    ["target", job.target],
    ["payload", JSON.stringify(job.payload)],
    ["key", job.key ?? "-"],
    ["tags", tagsText(job.tags)],
    ["tenant", job.tenant],
    ["attempts", attemptsText(job)],
    [
      "expire after",
      job.expireAfterMs === null ? "never (fire however late)" : `${job.expireAfterMs} ms`,
    ],
    ["version", String(job.version)],
    ["created", iso(job.createdAt)],
    ["updated", iso(job.updatedAt)],
  ];
  if (job.firedAt !== null) {
    lines.push(["fired", `${iso(job.firedAt)}  (lateness ${job.firedAt - job.dueAt} ms)`]);
  }
  if (job.finishedAt !== null) lines.push(["finished", iso(job.finishedAt)]);
  if (job.leaseOwner !== null) {
    lines.push([
      "lease",
      `${job.leaseOwner} until ${iso(job.leaseExpiresAt)} (fence ${job.fence})`,
    ]);
  }
  if (job.lastError !== null) lines.push(["last error", job.lastError]);
  if (job.lastResult !== null) lines.push(["last result", JSON.stringify(job.lastResult)]);
  return labelled(lines);
}

/** "  label  value" lines, labels padded to one width, each value escaped (escapeControls). */
export function labelled(lines: readonly (readonly [string, string])[]): string {
  const w = Math.max(...lines.map(([l]) => l.length));
  return lines.map(([l, v]) => `  ${l.padEnd(w)}  ${escapeControls(v)}`).join("\n");
}

/** Status words padded for alignment in log lines. */
export function statusWord(s: JobStatus | string): string {
  return s.padEnd(9);
}

/** The p-th percentile (nearest rank) of ascending `sorted` values; 0 when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** A job's tags as one cell: "user:42, campaign:spring", or "-" for none. */
export function tagsText(tags: readonly string[]): string {
  return tags.length === 0 ? "-" : tags.join(", ");
}

/** "1 job", "3 jobs". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Lateness in ms while it is small, as a duration once it is not. */
export function formatLateness(ms: number): string {
  return Math.abs(ms) < 10_000 ? `${ms} ms` : formatDuration(ms) + (ms < 0 ? " early" : "");
}
