import { describe, expect, it } from "vitest";
import {
  bar,
  escapeControls,
  formatDuration,
  formatInZone,
  formatRelative,
  percentile,
  table,
} from "../../src/cli/format.js";

describe("CLI text formatting", () => {
  it("draws bars proportional to the largest value, never empty for a non-zero count", () => {
    expect(bar(10, 10, 40)).toBe("█".repeat(40));
    expect(bar(5, 10, 40)).toBe("█".repeat(20));
    expect(bar(1, 1000, 40)).toBe("▏");
    expect(bar(0, 10, 40)).toBe("");
  });

  it("shows wall-clock times in a zone, across a DST change", () => {
    expect(formatInZone(Date.UTC(2026, 2, 29, 0, 30), "Europe/Paris")).toBe(
      "2026-03-29 01:30:00.000 GMT+1",
    );
    expect(formatInZone(Date.UTC(2026, 2, 29, 1, 30), "Europe/Paris")).toBe(
      "2026-03-29 03:30:00.000 GMT+2",
    );
    expect(formatInZone(Date.UTC(2026, 0, 1, 12), "UTC")).toBe("2026-01-01 12:00:00.000 UTC");
  });

  it("names offsets of part hours and seconds as Intl's shortOffset does", () => {
    // Read through the core's one zone formatter (tzOffsetSeconds), not a formatter of its own.
    const at = (y: number, m: number, d: number, h: number) => Date.UTC(y, m - 1, d, h);
    expect(formatInZone(at(2026, 6, 1, 12), "Asia/Kathmandu")).toBe(
      "2026-06-01 17:45:00.000 GMT+5:45",
    );
    expect(formatInZone(at(2026, 1, 15, 12), "America/St_Johns")).toBe(
      "2026-01-15 08:30:00.000 GMT-3:30",
    );
    expect(formatInZone(at(2026, 1, 15, 12), "Pacific/Chatham")).toBe(
      "2026-01-16 01:45:00.000 GMT+13:45",
    );
    // Paris kept local mean time until 1891: not a whole minute from UTC.
    expect(formatInZone(at(1850, 1, 1, 12), "Europe/Paris")).toBe(
      "1850-01-01 12:09:21.000 GMT+0:09:21",
    );
  });

  it("writes short durations and relative times", () => {
    expect(formatDuration(250)).toBe("250 ms");
    expect(formatDuration(1500)).toBe("1.5 s");
    expect(formatDuration(2 * 3_600_000 + 5 * 60_000)).toBe("2h 5m");
    expect(formatDuration(3 * 86_400_000 + 7_200_000)).toBe("3d 2h");
    expect(formatDuration(3 * 86_400_000 + 60_000)).toBe("3d");
    expect(formatRelative(10_000 + 600_000, 10_000)).toBe("in 10m");
    expect(formatRelative(0, 90_000)).toBe("1m 30s ago");
  });

  it("takes nearest-rank percentiles", () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(50);
    expect(percentile(v, 99)).toBe(99);
    expect(percentile(v, 100)).toBe(100);
    expect(percentile([], 50)).toBe(0);
    expect(percentile([7], 99)).toBe(7);
  });

  it("aligns table columns", () => {
    expect(
      table(
        ["A", "N"],
        [
          ["xx", "1"],
          ["y", "10"],
        ],
        ["l", "r"],
      ),
    ).toBe("A    N\nxx   1\ny   10");
  });
});

describe("escapeControls", () => {
  it("makes ESC sequences, CR, BEL, C1 controls and bidi overrides visible", () => {
    expect(escapeControls("a\u001b[31mred\u001b[0m")).toBe("a\\x1b[31mred\\x1b[0m");
    expect(escapeControls("\u001b]0;title\u0007")).toBe("\\x1b]0;title\\x07");
    expect(escapeControls("done\rfake")).toBe("done\\x0dfake");
    expect(escapeControls("one\ntwo\tthree\u0000")).toBe("one\\x0atwo\\x09three\\x00");
    expect(escapeControls("\u007f\u0085\u009b2J")).toBe("\\x7f\\x85\\x9b2J");
    expect(escapeControls("abc\u202edcba\u202c \u2066x\u2069 \u200f\u061c\u2028")).toBe(
      "abc\\u202edcba\\u202c \\u2066x\\u2069 \\u200f\\u061c\\u2028",
    );
  });

  it("keeps printable text, other Unicode and the characters asked for", () => {
    const plain = "https://example.test/a?b=c Zoë 東京 ✓ █";
    expect(escapeControls(plain)).toBe(plain);
    expect(escapeControls("line 1\nline\u001b 2", "\n")).toBe("line 1\nline\\x1b 2");
  });

  it("is applied to every table cell and keeps columns aligned", () => {
    expect(table(["A", "B"], [["x\u001b[2J", "1"]])).toBe("A         B\nx\\x1b[2J  1");
  });
});
