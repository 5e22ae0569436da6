/**
 * The tables of docs/state-machine.md, rendered from JOB_STATES and JOB_TRANSITIONS in
 * src/core/job.ts (the source). test/core/state-machine-docs.test.ts fails when the page
 * says something else; `npm run docs:states` rewrites the tables (then Prettier aligns them).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { JOB_STATES, JOB_STATUSES, JOB_TRANSITIONS } from "../../src/core/job.js";

export const STATE_DOC = fileURLToPath(new URL("../../docs/state-machine.md", import.meta.url));

/** Each generated block sits between these two lines, named by the block. */
const begin = (name: string) => `<!-- ${name}: generated from src/core/job.ts -->`;
const end = (name: string) => `<!-- /${name} -->`;

const yesNo = (b: boolean) => (b ? "yes" : "no");

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The blocks of the page, by name, as the code says they should read. */
export function generatedBlocks(): Record<string, string> {
  return {
    states: table(
      ["state", "live?", "in the due-time index?", "meaning"],
      JOB_STATUSES.map((st) => {
        const info = JOB_STATES[st];
        return [`\`${st}\``, yesNo(info.live), yesNo(info.inDueTimeIndex), info.meaning];
      }),
    ),
    transitions: table(
      ["from", "to", "when", "what else changes"],
      JOB_TRANSITIONS.map((t) => [
        t.from === null ? "(new)" : `\`${t.from}\``,
        `\`${t.to}\``,
        t.when,
        t.effect,
      ]),
    ),
  };
}

/** The text of block `name` in `page`, or null when its markers are missing. */
export function blockOf(page: string, name: string): string | null {
  const from = page.indexOf(begin(name));
  const to = page.indexOf(end(name));
  if (from < 0 || to < from) return null;
  return page.slice(from + begin(name).length, to).trim();
}

/** A Markdown table as its cells, trimmed, without the separator row (alignment ignored). */
export function tableCells(text: string): string[][] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("|") && !/^\|[\s|:-]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split(" | ")
        .map((c) => c.trim()),
    );
}

function rewrite(page: string): string {
  let out = page;
  for (const [name, text] of Object.entries(generatedBlocks())) {
    const from = out.indexOf(begin(name));
    const to = out.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`${STATE_DOC}: markers of block "${name}" missing`);
    out = `${out.slice(0, from + begin(name).length)}\n\n${text}\n\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(STATE_DOC, rewrite(readFileSync(STATE_DOC, "utf8")));
}
