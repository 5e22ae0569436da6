import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Handler } from "../index.js";
import { InvalidJobError } from "../core/errors.js";

const EXPECTED =
  "a module whose default export (or named export `handlers`) is an object of handler functions by name";

/**
 * Loads the handlers `duetime run` fires: `export default { remind: async (job) => ... }`
 * or `export const handlers = {...}`. A path is resolved from the current directory.
 */
export async function loadHandlers(path: string): Promise<Map<string, Handler>> {
  const file = resolve(path);
  if (!existsSync(file)) {
    throw new InvalidJobError(
      "--handlers",
      `an existing module file (${file} does not exist)`,
      path,
    );
  }
  const url = pathToFileURL(file).href;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    // (A missing file was refused above: a module not found here is one the file imports.)
    if ((err as { code?: unknown }).code === "ERR_UNKNOWN_FILE_EXTENSION") {
      throw new InvalidJobError("--handlers", EXPECTED, path);
    }
    throw new Error(`loading handlers from ${path}: ${(err as Error).message}`, { cause: err });
  }
  const candidate = mod.handlers ?? mod.default;
  if (typeof candidate !== "object" || candidate === null || Array.isArray(candidate)) {
    throw new InvalidJobError("--handlers", EXPECTED, path);
  }
  const handlers = new Map<string, Handler>();
  for (const [name, fn] of Object.entries(candidate)) {
    if (typeof fn !== "function") {
      throw new InvalidJobError(`--handlers: ${name}`, "a function", fn);
    }
    handlers.set(name, fn as Handler);
  }
  if (handlers.size === 0) throw new InvalidJobError("--handlers", EXPECTED, path);
  return handlers;
}
