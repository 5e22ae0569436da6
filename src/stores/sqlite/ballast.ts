import { closeSync, existsSync, openSync, rmSync, statfsSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { StorageFullError } from "../../core/errors.js";

/** Free bytes, beyond the ballast itself, that count as "space is back". */
const FREE_MARGIN = 1 << 20;
const CHUNK = Buffer.alloc(64 * 1024);

/**
 * An emergency reserve beside the database file (`<db>.ballast`, `bytes` of zeros really
 * written, not a sparse file): space held back so that firing survives a full disk. The
 * first write that finds the disk full deletes it; from then on the store is short of
 * space: creates are refused (StorageFullError) while claims, outcomes and lease writes use
 * the space the ballast gave back, so stored jobs keep firing and their outcomes are
 * recorded. Once the filesystem has the ballast's size free again (plus a margin), the
 * ballast is written back and creates resume (`recover`, called by the store's probe and
 * before each create). CockroachDB keeps such a file for the same reason.
 */
export class Ballast {
  /** True from the ballast's release until it is written back. */
  private short = false;

  constructor(
    private readonly path: string,
    readonly bytes: number,
  ) {}

  /** Writes the ballast if it is missing or short; a full disk leaves the store short. */
  ensure(): void {
    if (this.bytes === 0) return;
    if (existsSync(this.path) && statSync(this.path).size >= this.bytes) return;
    this.short = !this.write();
  }

  /** Whether the ballast is released (the disk filled up and has not had room since). */
  get released(): boolean {
    return this.short;
  }

  /** Deletes the ballast (the disk is full): true when that freed space to retry with. */
  release(): boolean {
    if (this.bytes === 0) return false;
    const had = existsSync(this.path);
    rmSync(this.path, { force: true });
    this.short = true;
    return had;
  }

  /**
   * While released: writes the ballast back once the filesystem has its size free plus a
   * margin, and returns true; false while space is still short. True when not released.
   */
  recover(): boolean {
    if (!this.short) return true;
    if (freeBytes(this.path) < this.bytes + FREE_MARGIN) return false;
    this.short = !this.write();
    return !this.short;
  }

  /** Throws a StorageFullError for `what` while released and no room is back yet. */
  refuseWhileShort(what: string): void {
    if (!this.recover()) {
      throw new StorageFullError(
        `${what} (the disk filled up: its ${this.bytes} byte reserve was released to keep jobs firing, and new jobs are refused until ${Math.ceil((this.bytes + FREE_MARGIN) / 1024)} KiB are free beside the database)`,
      );
    }
  }

  /** Writes `bytes` zeros (real blocks); on ENOSPC removes the partial file, returns false. */
  private write(): boolean {
    const fd = openSync(this.path, "w");
    try {
      for (let n = 0; n < this.bytes; n += CHUNK.length) {
        writeSync(fd, CHUNK, 0, Math.min(CHUNK.length, this.bytes - n));
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      rmSync(this.path, { force: true });
      return false;
    } finally {
      closeSync(fd);
    }
  }
}

/** Bytes free to this process on the filesystem holding `path`. */
export function freeBytes(path: string): number {
  const fs = statfsSync(dirname(path));
  return fs.bavail * fs.bsize;
}
