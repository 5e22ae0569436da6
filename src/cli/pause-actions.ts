import type { Command } from "commander";
import { describeScope, type PauseView, type ReleaseView } from "../api/pause-view.js";
import { PAUSE_PAGE } from "../api/pauses.js";
import { InvalidJobError } from "../core/errors.js";
import { PAUSE_STATES, type PauseInput, type PauseState } from "../core/pause.js";
import { out, outJson, parseIntFlag } from "./context.js";
import { EXIT } from "./errors.js";
import { formatRelative, labelled, plural, table } from "./format.js";
import { whenFound } from "./not-found.js";
import { pauseBackend } from "./pause-backend.js";

/** The actions of `duetime pause`, `resume` and `pauses` (flags: commands/pause.ts). */

/** What `duetime pause` collects; `tenant` is true for a bare `--tenant` (the whole tenant). */
export interface PauseFlags {
  target?: string;
  tag?: string;
  tenant?: string | true;
  onResume?: string;
  json?: boolean;
}

export async function makePause(o: PauseFlags, cmd: Command): Promise<number> {
  const input = pauseInput(o);
  const tenant = typeof o.tenant === "string" ? o.tenant : undefined;
  const backend = pauseBackend(cmd, tenant);
  const p = await backend.create(input);
  if (o.json) outJson({ pause: p });
  else {
    out(`paused ${describeScope(p.scope)} of tenant ${p.tenant}: pause ${p.id}`);
    out(
      backend.settled
        ? `${plural(p.heldJobs, "job")} held; on resume: ${p.onResume} (duetime resume ${p.id})`
        : `the server is holding its jobs; on resume: ${p.onResume} (duetime resume ${p.id})`,
    );
  }
  return EXIT.ok;
}

export async function resumePause(
  id: string,
  o: { tenant?: string; json?: boolean },
  cmd: Command,
): Promise<number> {
  const backend = pauseBackend(cmd, o.tenant);
  return whenFound(o, id, async () => {
    const r = await backend.resume(id);
    if (o.json) outJson(r);
    else out(resumedText(r.pause, r.releasing, backend.settled));
    return EXIT.ok;
  });
}

/** What `duetime pauses` collects. */
export interface PausesFlags {
  state?: string;
  limit?: string;
  cursor?: string;
  tenant?: string;
  json?: boolean;
}

export async function showPauses(
  id: string | undefined,
  o: PausesFlags,
  cmd: Command,
): Promise<number> {
  const backend = pauseBackend(cmd, o.tenant);
  if (id !== undefined) {
    for (const [flag, value] of [
      ["--state", o.state],
      ["--limit", o.limit],
      ["--cursor", o.cursor],
    ] as const) {
      if (value !== undefined) {
        throw new InvalidJobError(flag, `no ${flag} when showing one pause`, value);
      }
    }
    return whenFound(o, id, async () => {
      const p = await backend.get(id);
      if (o.json) outJson({ pause: p });
      else out(describePause(p, Date.now()));
      return EXIT.ok;
    });
  }
  const listed = states(o.state);
  const page = await backend.list({
    limit: parseIntFlag(o.limit, "--limit", 1, PAUSE_PAGE.max) ?? PAUSE_PAGE.default,
    ...(listed ? { states: listed } : {}),
    ...(o.cursor === undefined ? {} : { cursor: o.cursor }),
  });
  if (o.json) outJson(page);
  else printPage(page.pauses, page.nextCursor, Date.now());
  return EXIT.ok;
}

/** The scope the flags name: exactly one of --target, --tag, or --tenant alone. */
function pauseInput(o: PauseFlags): PauseInput {
  const given = [o.target, o.tag].filter((v) => v !== undefined).length;
  const expected = "exactly one of --target, --tag or --tenant (alone: the whole tenant)";
  if (given > 1) throw new InvalidJobError("--tag", `${expected}, not both`, o.tag);
  if (given === 1 && o.tenant === true) {
    throw new InvalidJobError("--tenant", `a tenant name with --target or --tag`, "no name");
  }
  if (given === 0 && o.tenant === undefined) {
    throw new InvalidJobError("--target", expected, undefined);
  }
  const scope =
    o.target !== undefined
      ? { target: o.target }
      : o.tag !== undefined
        ? { tag: o.tag }
        : { tenant: true as const };
  return { scope, ...(o.onResume === undefined ? {} : { onResume: o.onResume as never }) };
}

function states(text: string | undefined): PauseState[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(",").map((s) => s.trim());
  for (const s of list) {
    if (!PAUSE_STATES.includes(s as PauseState)) {
      throw new InvalidJobError("--state", `states among ${PAUSE_STATES.join(", ")}`, text);
    }
  }
  return list as PauseState[];
}

function resumedText(p: PauseView, r: ReleaseView, settled: boolean): string {
  const what = `pause ${p.id} (${describeScope(p.scope)})`;
  if (r.jobs === 0 && p.state === "resumed" && !settled) return `resumed ${what}: no held jobs`;
  const jobs = plural(r.jobs, "held job");
  return settled
    ? `resumed ${what}: ${jobs} given back (${r.onResume})`
    : `resumed ${what}: ${jobs} being given back by the server (${r.onResume})`;
}

function describePause(p: PauseView, now: number): string {
  const lines: [string, string][] = [
    ["id", p.id],
    ["scope", describeScope(p.scope)],
    ["tenant", p.tenant],
    ["state", p.state],
    ["paused", `${p.pausedAt}  (${formatRelative(Date.parse(p.pausedAt), now)})`],
    ["held jobs", `${p.heldJobs}${p.holdComplete ? "" : " so far (still finding them)"}`],
    ["on resume", p.onResume],
  ];
  if (p.resumedAt !== null) lines.push(["resumed", p.resumedAt]);
  return labelled(lines);
}

function printPage(pauses: PauseView[], nextCursor: string | null, now: number): void {
  if (pauses.length === 0) out("no pauses");
  else {
    out(
      table(
        ["ID", "SCOPE", "STATE", "SINCE", "HELD", "ON RESUME"],
        pauses.map((p) => [
          p.id,
          describeScope(p.scope),
          p.state,
          formatRelative(Date.parse(p.pausedAt), now),
          String(p.heldJobs),
          p.onResume,
        ]),
        ["l", "l", "l", "l", "r", "l"],
      ),
    );
  }
  out(
    nextCursor === null
      ? `(${plural(pauses.length, "pause")}, last page)`
      : `(${plural(pauses.length, "pause")}) next page: --cursor ${nextCursor}`,
  );
}
