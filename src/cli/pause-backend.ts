import type { Command } from "commander";
import { pauseView, releaseView, type PauseView, type ReleaseView } from "../api/pause-view.js";
import { listPausePage } from "../api/pauses.js";
import type { PauseInput, PauseState } from "../core/pause.js";
import { PauseNotFoundError } from "../core/pause.js";
import { withExistingScheduler, withScheduler } from "./context.js";
import { RecordNotFound } from "./not-found.js";
import { callApi, remoteWithoutTenant, RemoteOutcome, type Remote } from "./remote.js";

/**
 * Where `duetime pause`, `resume` and `pauses` work: the local database (the Scheduler's
 * pause API, its work run in the command so the jobs are held, or given back, when it exits)
 * or a server (`--url`, the HTTP API through duetime/client, which does that work in the
 * background). Both answer in the one pause view (src/api/pause-view.ts), so each command
 * prints the same either way; a pause that is not there (or another tenant's) is a
 * PauseNotThere.
 */
export interface PauseBackend {
  create(input: PauseInput): Promise<PauseView>;
  /** A page of pauses (`cursor`: the next cursor of the page before) and the next cursor. */
  list(q: PauseListFlags): Promise<{ pauses: PauseView[]; nextCursor: string | null }>;
  get(id: string): Promise<PauseView>;
  resume(id: string): Promise<{ pause: PauseView; releasing: ReleaseView }>;
  /** True when the jobs were held or given back before the answer (the local database). */
  readonly settled: boolean;
}

/** Which pauses `duetime pauses` lists: by state (default active and resuming), a page. */
export interface PauseListFlags {
  readonly states?: readonly PauseState[];
  readonly limit: number;
  readonly cursor?: string;
}

/** The pause asked for is not there (or is another tenant's). */
export class PauseNotThere extends RecordNotFound {
  constructor(id: string) {
    super("pause", id);
  }
}

/** The backend of the command: the server of --url, else the database (--tenant scoping). */
export function pauseBackend(cmd: Command, tenant: string | undefined): PauseBackend {
  const remote = remoteWithoutTenant(cmd, tenant);
  return remote ? remoteBackend(remote) : localBackend(cmd, tenant);
}

function localBackend(cmd: Command, tenant: string | undefined): PauseBackend {
  const scope = tenant === undefined ? {} : { tenant };
  return {
    settled: true,
    // A pause may be the first write to a new file (pausing before adding jobs is fine).
    create: (input) =>
      withScheduler(cmd, async (s) => {
        const made = await s.pause(input, scope);
        await s.runPauseWork();
        return pauseView((await s.getPause(made.id)) ?? made);
      }),
    list: (q) =>
      withExistingScheduler(cmd, async (s) => {
        const page = await listPausePage((opts) => s.listPauses(opts), {
          ...scope,
          limit: q.limit,
          ...(q.states ? { states: q.states } : {}),
          ...(q.cursor === undefined ? {} : { after: q.cursor }),
        });
        return { pauses: page.pauses.map(pauseView), nextCursor: page.nextCursor };
      }),
    get: (id) =>
      withExistingScheduler(cmd, async (s) => {
        const p = await s.getPause(id, scope);
        if (!p) throw new PauseNotThere(id);
        return pauseView(p);
      }),
    resume: (id) =>
      withExistingScheduler(cmd, async (s) => {
        let resumed;
        try {
          resumed = await s.resume(id, scope);
        } catch (err) {
          if (err instanceof PauseNotFoundError) throw new PauseNotThere(id);
          throw err;
        }
        await s.runPauseWork();
        const now = (await s.getPause(id)) ?? resumed;
        return { pause: pauseView(now), releasing: releaseView(resumed) };
      }),
  };
}

function remoteBackend(remote: Remote): PauseBackend {
  const found = async <T>(id: string, call: Parameters<typeof callApi<T>>[1]): Promise<T> => {
    try {
      return await callApi(remote, call);
    } catch (err) {
      if (err instanceof RemoteOutcome && err.status === 404) throw new PauseNotThere(id);
      throw err;
    }
  };
  return {
    settled: false,
    create: (input) => callApi(remote, (c) => c.createPause(input)),
    list: (q) =>
      callApi(remote, (c) =>
        c.listPausesPage({
          limit: q.limit,
          ...(q.states ? { state: q.states.join(",") } : {}),
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        }),
      ),
    get: (id) => found(id, (c) => c.getPause(id)),
    resume: (id) => found(id, (c) => c.resumePause(id)),
  };
}
