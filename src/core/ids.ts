import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; // Crockford base32, as ULID

/**
 * Monotonic ULID generator: 48-bit ms timestamp + 80 random bits, where ids made in the
 * same millisecond increment the random part. Ids therefore sort by creation time, and a
 * stream of inserts appends to the id index instead of splitting random pages.
 */
export function createIdGenerator(now: () => number = Date.now): () => string {
  let lastTime = -1;
  let timePart = "";
  // the 80 random bits as 16 base32 digits (values 0..31), incremented in place
  const digits = new Uint8Array(16);
  let suffix = "";
  return () => {
    const t = now();
    if (t > lastTime) {
      lastTime = t;
      timePart = encodeTime(t);
      const bytes = randomBytes(16);
      for (let i = 0; i < 16; i++) digits[i] = bytes[i]! & 31;
      digits[0]! &= 15; // headroom so increments in one ms never overflow
    } else {
      for (let i = 15; i >= 0; i--) {
        digits[i] = (digits[i]! + 1) & 31;
        if (digits[i] !== 0) break;
      }
    }
    suffix = "";
    for (let i = 0; i < 16; i++) suffix += ALPHABET[digits[i]!]!;
    return timePart + suffix;
  };
}

function encodeTime(t: number): string {
  let out = "";
  let v = t;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[v % 32]! + out;
    v = Math.floor(v / 32);
  }
  return out;
}

/** Epoch ms encoded in a ULID. */
export function idTime(id: string): number {
  let t = 0;
  for (let i = 0; i < 10; i++) t = t * 32 + ALPHABET.indexOf(id[i] ?? "0");
  return t;
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export function isJobId(value: unknown): value is string {
  return typeof value === "string" && ULID_RE.test(value);
}

/** Stable shard of a job id: FNV-1a over the id, modulo the shard count. */
export function shardOf(id: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shardCount;
}
