import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.js";
import { cliEnv, startNode, type Watched } from "./processes.js";

/**
 * The receivers in examples/webhooks, each run as a user runs it (tsx, importing the built
 * `duetime/webhooks`), with a real `duetime serve` on 127.0.0.1 delivering to it. The Next.js
 * route handler is served through test/support/serve-route-handler.ts (a Web Request in, a
 * Web Response out, as Next.js calls it) rather than `next dev`.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "dist/cli/main.js");
const run = promisify(execFile);
const dir = tempDir("duetime-receivers-");
const db = join(dir.path, "jobs.db");

let serve: Watched;
let api = "";
let key = "";
let secret = "";

beforeAll(async () => {
  const created = await run(
    process.execPath,
    [CLI, "keys", "create", "--tenant", "acme", "--db", db, "--json"],
    { env: cliEnv() },
  );
  ({ key, signingSecret: secret } = JSON.parse(created.stdout) as {
    key: string;
    signingSecret: string;
  });
  serve = startNode(
    [CLI, "serve", "--db", db, "--port", "0", "--allow-private-targets", "--log-level", "warn"],
    ROOT,
    cliEnv(),
  );
  api = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1]!;
}, 60_000);

afterAll(async () => {
  await serve?.stop();
  dir.cleanup();
});

async function jobStatus(id: string): Promise<string> {
  const res = await fetch(`${api}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { job: { status: string } }).job.status;
}

const RECEIVERS: [string, string[]][] = [
  ["node:http", ["examples/webhooks/node-http.ts"]],
  ["Express", ["examples/webhooks/express.ts"]],
  ["Fastify", ["examples/webhooks/fastify.ts"]],
  [
    "a Next.js route handler",
    [
      "test/support/serve-route-handler.ts",
      "examples/webhooks/nextjs/app/api/duetime/route.ts",
      "/api/duetime",
    ],
  ],
];

describe("webhook receiver examples", () => {
  it.each(RECEIVERS)(
    "%s verifies a real delivery and refuses a forged one",
    async (_name, args) => {
      const receiver = startNode(
        ["--import", "tsx", ...args],
        ROOT,
        cliEnv({ PORT: "0", DUETIME_WEBHOOK_SECRET: secret }),
      );
      try {
        const target = (await receiver.waitFor(/listening on (http:\/\/\S+)/))[1]!;
        const created = await fetch(`${api}/v1/jobs`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ delayMs: 0, target, payload: { hello: "receiver" } }),
        });
        expect(created.status).toBe(201);
        const { job } = (await created.json()) as { job: { id: string } };
        await receiver.waitFor(new RegExp(`verified job ${job.id} attempt 1`));
        // The receiver's 204 made the job succeed; wait for the server to record it.
        for (let i = 0; i < 200 && (await jobStatus(job.id)) !== "succeeded"; i++) {
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(await jobStatus(job.id)).toBe("succeeded");

        const now = String(Math.floor(Date.now() / 1000));
        const forged = await fetch(target, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "duetime-timestamp": now,
            "duetime-signature": `v1=${"0".repeat(64)}`,
          },
          body: JSON.stringify({ id: job.id, attempt: 1 }),
        });
        expect(forged.status).toBe(401);
        await receiver.waitFor(/refused: bad-signature/);
        const unsigned = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(unsigned.status).toBe(401);
        await receiver.waitFor(/refused: missing-header/);
      } finally {
        await receiver.stop();
      }
    },
    60_000,
  );
});
