import {
  closeSync,
  copyFileSync,
  fsyncSync,
  openSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { bulkLoadPending, checkCounters, type BulkLoadSpec } from "./backlog.js";
import { count } from "./scale.js";
import { note } from "./progress.js";

/**
 * Benchmark database files: a cache of pending backlogs (built once per run, or reused
 * across runs with BENCH_KEEP_DATA=1) and scratch copies the benchmarks write to. All live
 * in bench-data/ (gitignored) or BENCH_DATA_DIR.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
export const DATA_DIR = resolve(process.env.BENCH_DATA_DIR ?? join(HERE, "..", "..", "bench-data"));

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** The shared backlog is due from 2 days after it was built, spread over 30 days. */
export const BACKLOG_OFFSET_MS = 2 * DAY;
export const BACKLOG_SPAN_MS = 30 * DAY;

interface BacklogInfo {
  readonly version: number;
  readonly count: number;
  readonly builtAt: number;
  readonly dueFrom: number;
}
/** Bumped with the store layout: a cached backlog of another layout is rebuilt. */
const FORMAT_VERSION = 7;

export function ensureDataDir(): void {
  mkdirSync(DATA_DIR, { recursive: true });
}

/**
 * The path of a store file holding `n` pending jobs due 2 to 32 days from when it was built
 * (hour buckets, nothing staged), building it if needed. A cached file older than a day is
 * rebuilt so its jobs stay far in the future. With `tags`, every job carries one tag (see
 * BulkLoadSpec.tags), in a file of its own.
 */
export async function backlogFile(
  n: number,
  tags?: BulkLoadSpec["tags"],
): Promise<{ path: string; info: BacklogInfo }> {
  ensureDataDir();
  const tagged = tags === undefined ? "" : `-${tags.prefix.replace(/\W/g, "")}${tags.perTag}`;
  const path = join(DATA_DIR, `sqlite-backlog-${n}${tagged}.db`);
  const infoPath = `${path}.json`;
  if (existsSync(path) && existsSync(infoPath)) {
    const info = JSON.parse(readFileSync(infoPath, "utf8")) as BacklogInfo;
    if (info.version === FORMAT_VERSION && info.count === n && Date.now() - info.builtAt < DAY) {
      return { path, info };
    }
  }
  removeDb(path);
  const builtAt = Date.now();
  const dueFrom = builtAt - (builtAt % HOUR) + BACKLOG_OFFSET_MS;
  note(`building a ${count(n)} pending backlog in ${path}`);
  const started = performance.now();
  const store = new SqliteStore({ path });
  try {
    await bulkLoadPending(store, {
      count: n,
      dueFrom,
      spanMs: BACKLOG_SPAN_MS,
      label: `backlog ${count(n)}`,
      ...(tags === undefined ? {} : { tags }),
    });
    const check = checkCounters(store.connection);
    if (!check.ok || check.pending !== n) throw new Error(`backlog ${n}: counters inconsistent`);
    store.connection.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    await store.close();
  }
  const info: BacklogInfo = { version: FORMAT_VERSION, count: n, builtAt, dueFrom };
  writeFileSync(infoPath, JSON.stringify(info));
  note(`built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { path, info };
}

/** A scratch copy of a (checkpointed, closed) store file; `remove()` deletes it. */
export function scratchCopy(src: string, name: string): { path: string; remove: () => void } {
  ensureDataDir();
  const path = join(DATA_DIR, `sqlite-scratch-${name}-${process.pid}.db`);
  removeDb(path);
  copyFileSync(src, path);
  // Flush the copy now: otherwise its gigabytes of dirty pages are written back by the
  // first checkpoint's fsync, in the middle of whatever the benchmark is timing.
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { path, remove: () => removeDb(path) };
}

/** A fresh, empty scratch store path. */
export function scratchPath(name: string): { path: string; remove: () => void } {
  ensureDataDir();
  const path = join(DATA_DIR, `sqlite-scratch-${name}-${process.pid}.db`);
  removeDb(path);
  return { path, remove: () => removeDb(path) };
}

export function removeDb(path: string): void {
  for (const suffix of ["", "-wal", "-shm", ".json"]) rmSync(`${path}${suffix}`, { force: true });
}

/**
 * Deletes the cached backlogs and this process's scratch files (the end of a run without
 * BENCH_KEEP_DATA). Only files named by this module: bench-data/ is shared with others.
 */
export function removeAllData(): void {
  if (!existsSync(DATA_DIR)) return;
  for (const f of readdirSync(DATA_DIR)) {
    if (f.startsWith("sqlite-backlog-") || f.startsWith(`sqlite-scratch-`)) {
      if (f.startsWith("sqlite-scratch-") && !f.includes(`-${process.pid}.db`)) continue;
      rmSync(join(DATA_DIR, f), { force: true });
    }
  }
}
