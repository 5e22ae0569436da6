import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { Described } from "../core/errors.js";
import { errorAnswer } from "./answers.js";
import { send } from "./http.js";

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".map": "application/json",
  ".woff2": "font/woff2",
};

/** File names the asset route serves: no separators, no `..`, so no way out of the folder. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * Where the prebuilt front end is: `web/` beside the compiled plugin (the published package:
 * dist/dashboard/web), else the build output seen from the sources (running under tsx).
 */
export function defaultStaticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, "web"), join(here, "..", "..", "dist", "dashboard", "web")];
  return candidates.find((d) => existsSync(join(d, "index.html"))) ?? candidates[0]!;
}

export interface StaticFile {
  readonly body: Buffer;
  readonly type: string;
}

/** Reads `name` from `dir` (or `dir/assets`), or null when it is not a servable file. */
export async function readStatic(
  dir: string,
  name: string,
  inAssets: boolean,
): Promise<StaticFile | null> {
  if (!SAFE_NAME.test(name)) return null;
  const type = TYPES[extname(name)];
  if (type === undefined) return null;
  try {
    const body = await readFile(inAssets ? join(dir, "assets", name) : join(dir, name));
    return { body, type };
  } catch {
    return null;
  }
}

/**
 * The front end, no key needed: `/` (index.html, revalidated on every load) and
 * `/assets/:name` (content-hashed by Vite, so cached as immutable). A missing build or an
 * unknown asset answers in the API's error shape, like every other refusal.
 */
export function registerStaticRoutes(app: FastifyInstance, dir: string): void {
  app.get("/", async (_req, reply) => {
    const file = await readStatic(dir, "index.html", false);
    if (!file) {
      return send(
        reply,
        errorAnswer(503, "unavailable", {
          field: "path",
          expected: "a built dashboard (index.html in the static folder)",
          received: new Described("no index.html"),
          message: "The dashboard is not built. Run `npm run build` (vite build) first.",
        }),
      );
    }
    return reply.type(file.type).header("cache-control", "no-cache").send(file.body);
  });
  app.get<{ Params: { name: string } }>("/assets/:name", async (req, reply) => {
    const file = await readStatic(dir, req.params.name, true);
    if (!file) {
      return send(
        reply,
        errorAnswer(404, "no-route", {
          field: "path",
          expected: "one of the dashboard's built assets",
          received: `/assets/${req.params.name}`,
        }),
      );
    }
    return reply
      .type(file.type)
      .header("cache-control", "public, max-age=31536000, immutable")
      .send(file.body);
  });
}
