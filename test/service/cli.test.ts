import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { CLI, ROOT, ensureBuilt } from "../cli/helpers.js";
import { tempDir } from "../support/temp-dir.js";
import { startReceiver, type Receiver } from "./helpers.js";

/**
 * The CLI as a user runs it (the built dist/cli/main.js, as test/cli does: a start through
 * tsx cost a second or more of transpiling per command): `keys`, `serve` as a child process
 * (SIGTERM drains in-flight deliveries and exits 0), and add/list/show/cancel/stats as
 * clients of the server with --url/--api-key or DUETIME_URL/DUETIME_KEY.
 */
const dir = tempDir("duetime-serve-cli-");
const db = join(dir.path, "jobs.db");

function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.DUETIME_DB;
  if (!("DUETIME_URL" in extra)) delete env.DUETIME_URL;
  if (!("DUETIME_KEY" in extra)) delete env.DUETIME_KEY;
  return env;
}

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: baseEnv(env), timeout: 30_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

let key = "";
let keyId = "";
let url = "";
let rx: Receiver;
let server: ReturnType<typeof spawn>;
let serverOut = "";
let exited: Promise<number | null>;

beforeAll(async () => {
  await ensureBuilt();
  rx = await startReceiver((r) => ({ status: 200, delayMs: r.url.includes("slow") ? 1500 : 0 }));
  const created = await cli(["keys", "create", "--tenant", "acme", "--db", db, "--json"]);
  expect(created.code, created.stderr).toBe(0);
  const k = JSON.parse(created.stdout) as { key: string; id: string; signingSecret: string };
  key = k.key;
  keyId = k.id;
  expect(k.signingSecret).toMatch(/^whsec_/);
  server = spawn(
    process.execPath,
    [
      CLI,
      "serve",
      "--db",
      db,
      "--port",
      "0",
      "--allow-private-targets",
      "--log-level",
      "warn",
      "--request-timeout",
      "20000",
      "--headers-timeout",
      "5000",
      "--auth-failure-limit",
      "5",
      "--trust-proxy",
      "10.0.0.0/8, 192.0.2.1",
      "--cors-origin",
      "https://app.example.com",
      "--cors-origin",
      "https://admin.example.com",
      "--readiness-cache",
      "500",
    ],
    { cwd: ROOT, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  exited = new Promise((r) => server.on("exit", (code) => r(code)));
  url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`serve did not start: ${serverOut}`)), 20_000);
    const onData = (d: Buffer): void => {
      serverOut += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(serverOut);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    };
    server.stdout!.on("data", onData);
    server.stderr!.on("data", onData);
  });
}, 60_000);

afterAll(async () => {
  if (server.exitCode === null) server.kill("SIGKILL");
  await rx.close();
  dir.cleanup();
});

describe("duetime serve: the edge flags", () => {
  it("applies --cors-origin (repeated) and the security headers", async () => {
    for (const origin of ["https://app.example.com", "https://admin.example.com"]) {
      const res = await fetch(`${url}/v1/jobs`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "GET" },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    }
    const other = await fetch(`${url}/healthz`, { headers: { origin: "https://x.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("refuses a CORS wildcard, a bad proxy and a headers timeout past the request timeout before opening anything", async () => {
    const bad = join(dir.path, "never-created.db");
    const cases: [string[], RegExp][] = [
      [["--cors-origin", "*"], /corsOrigins: expected exact origins/],
      [["--trust-proxy", "proxy.internal"], /trustProxy: expected IP addresses or CIDR/],
      [["--request-timeout", "1000", "--headers-timeout", "5000"], /--headers-timeout/],
    ];
    // independent refusals: one process each, side by side
    const runs = await Promise.all(
      cases.map(([flags]) => cli(["serve", "--db", bad, "--port", "0", ...flags])),
    );
    cases.forEach(([, message], i) => {
      const r = runs[i]!;
      expect(r.code, r.stdout).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).not.toContain("listening");
    });
    expect(existsSync(bad)).toBe(false);
  });
});

describe("duetime keys", () => {
  it("lists keys by id and prefix, never the key", async () => {
    const r = await cli(["keys", "list", "--db", db]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(keyId);
    expect(r.stdout).toContain(key.slice(0, 10));
    expect(r.stdout).not.toContain(key);
  });
});

describe("the CLI as a client of duetime serve", () => {
  it("refuses --tenant with --url on every command that takes it (the API key decides)", async () => {
    const commands = [["list"], ["stats"], ["show", "01X"], ["cancel", "01X"]];
    const runs = await Promise.all(
      commands.map((args) => cli([...args, "--url", url, "--api-key", key, "--tenant", "t"])),
    );
    commands.forEach((args, i) => {
      expect(runs[i]!.code, args.join(" ")).toBe(2);
      expect(runs[i]!.stderr).toContain(
        '--tenant: expected no --tenant with --url (the API key decides), received "t"',
      );
    });
  });

  it("refuses --url for one job's reschedule and retry instead of acting on the local database", async () => {
    // Before, both ignored --url and opened ./duetime.db (or --db): a job added over --url was
    // "not-found" there, or worse, a local job of the same id or key was moved.
    const env = { DUETIME_URL: url, DUETIME_KEY: key };
    const add = await cli(
      ["add", "in 1 hour", "--target", rx.url, "--key", "k-local", "--json"],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    const id = (JSON.parse(add.stdout) as { job: { id: string; version: number } }).job.id;
    const runs = await Promise.all([
      cli(["reschedule", "--key", "k-local", "in 2 hours", "--db", db], env),
      cli(["reschedule", id, "in 2 hours", "--url", url, "--api-key", key, "--db", db]),
      cli(["retry", id, "--db", db], env),
    ]);
    for (const [i, verb] of (["reschedule", "reschedule", "retry"] as const).entries()) {
      expect(runs[i]!.code, runs[i]!.stderr).toBe(2);
      expect(runs[i]!.stderr).toContain(
        `error: --url: expected a local database (${verb} of one job does not talk to a server yet; with a filter it does), received "${url}"`,
      );
    }
    const show = await cli(["show", id, "--json"], env);
    expect(JSON.parse(show.stdout).version).toBe(1);
    expect((await cli(["cancel", id], env)).code).toBe(0);
  });

  it("add, show, list, cancel and stats over HTTP with the same exit codes", async () => {
    const remote = ["--url", url, "--api-key", key];
    const add = await cli([
      "add",
      "in 1 hour",
      "--target",
      rx.url,
      "--payload",
      '{"n":1}',
      "--header",
      "x-a:1",
      "--json",
      ...remote,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const job = JSON.parse(add.stdout) as {
      created: boolean;
      job: { id: string; tenant: string; headers: unknown };
    };
    expect(job.created).toBe(true);
    expect(job.job.tenant).toBe("acme");
    expect(job.job.headers).toEqual({ "x-a": "1" });
    const id = job.job.id;

    // The environment variables do the same as the flags.
    const env = { DUETIME_URL: url, DUETIME_KEY: key };
    // reads of the one pending job, side by side
    const [show, list, stats, statsText] = await Promise.all([
      cli(["show", id], env),
      cli(["list", "--status", "pending"], env),
      cli(["stats", "--json"], env),
      cli(["stats"], env),
    ]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`id\\s+${id}`));
    expect(show.stdout).toMatch(/status\s+pending/);

    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain("(1 job, last page)");

    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).counts.pending).toBe(1);
    expect(statsText.stdout).toContain("jobs by state");
    expect(statsText.stdout).toMatch(/^succeeded in the last 60 min: 0$/m);

    expect((await cli(["cancel", id], env)).code).toBe(0);
    const again = await cli(["cancel", id], env);
    expect(again.code).toBe(4);
    expect(again.stdout).toContain("too-late");
    const [missing, bad, badKey] = await Promise.all([
      cli(["show", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], env),
      cli(["add", "when pigs fly", "--target", rx.url], env),
      cli(["list"], { DUETIME_URL: url, DUETIME_KEY: "dtk_wrong" }),
    ]);
    expect(missing.code).toBe(3);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: when: expected/m);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain("HTTP 401");
  });

  it("SIGTERM finishes the delivery in flight and exits 0; a revoked key is refused", async () => {
    const add = await cli([
      "add",
      "in 0 seconds",
      "--target",
      `${rx.url}/slow`,
      "--json",
      "--url",
      url,
      "--api-key",
      key,
    ]);
    expect(add.code, add.stderr).toBe(0);
    const id = (JSON.parse(add.stdout) as { job: { id: string } }).job.id;
    // Wait until the receiver holds the request, then stop the server mid-delivery.
    for (let n = 1; !rx.requests.some((r) => r.url.endsWith("/slow")); n++) await rx.nth(n);
    server.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(serverOut).toContain("stopped");
    const store = new SqliteStore({ path: db });
    const job = await store.jobGet({ id });
    await store.close();
    expect(job?.status).toBe("succeeded");
    expect(job?.lastResult).toMatchObject({ status: 200 });

    const revoke = await cli(["keys", "revoke", keyId, "--db", db]);
    expect(revoke.code).toBe(0);
    const list = await cli(["keys", "list", "--db", db, "--json"]);
    expect(JSON.parse(list.stdout).keys[0].revokedAt).not.toBeNull();
    expect((await cli(["keys", "revoke", keyId, "--db", db])).code).toBe(3);
  });
});
