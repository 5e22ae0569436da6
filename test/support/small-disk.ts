import { execFileSync } from "node:child_process";
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./temp-dir.js";

/**
 * A small real filesystem (a tmpfs of `sizeMiB`, mounted on a fresh temp directory; needs
 * root, as in CI and the dev container) that a test can fill to the last byte and free
 * again, for disk-full behaviour with a real SQLite file. `mountable()` says whether this
 * machine lets the test mount one.
 */
export interface SmallDisk {
  readonly path: string;
  /** Writes a filler file until the filesystem refuses (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Deletes the filler: the space is back. */
  free(): void;
  unmount(): void;
}

export function mountable(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0;
}

export function mountSmallDisk(sizeMiB: number): SmallDisk {
  const dir = tempDir("duetime-small-disk-");
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m`, "tmpfs", dir.path]);
  const filler = join(dir.path, "filler");
  return {
    path: dir.path,
    fill() {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 1);
      let written = 0;
      try {
        // Large chunks first, then single bytes, so no space is left at all.
        for (const size of [chunk.length, 4096, 1]) {
          for (;;) {
            try {
              written += writeSync(fd, chunk, 0, size);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync("umount", ["-l", dir.path]);
      dir.cleanup();
    },
  };
}
