import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * Issue 11 §1: adapters (service, MCP server, dashboard, CLI, the HTTP edge) go through the
 * Scheduler, never a store. The project's own ESLint configuration is run on imports an
 * adapter must not have, so the rule cannot be dropped (or lose its scope) unnoticed.
 */
const eslint = new ESLint({ cwd: new URL("../..", import.meta.url).pathname });
const RULE = "no-restricted-imports";

async function rulesHit(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe("adapters do not import a store", () => {
  it("refuses the store contract and a store's own modules in every adapter folder", async () => {
    const cases: [string, string][] = [
      [
        'import type { Store } from "../store/store.js";\nexport type S = Store;\n',
        "src/service/x.ts",
      ],
      [
        'import { SqliteStore } from "../stores/sqlite/sqlite-store.js";\nexport { SqliteStore };\n',
        "src/dashboard/x.ts",
      ],
      [
        'import { PostgresStore } from "../stores/postgres/postgres-store.js";\nexport { PostgresStore };\n',
        "src/mcp/x.ts",
      ],
      [
        'import type { Job } from "../../store/store.js";\nexport type J = Job;\n',
        "src/cli/commands/x.ts",
      ],
      ['export { SqliteKeyStore } from "../stores/sqlite/key-store.js";\n', "src/http/x.ts"],
    ];
    for (const [code, file] of cases) expect(await rulesHit(code, file), file).toContain(RULE);
  });

  it("lets adapters use the factory and the Scheduler; the core and the stores are not adapters", async () => {
    const factory = 'import { openStore } from "../stores/open-store.js";\nexport { openStore };\n';
    expect(await rulesHit(factory, "src/service/x.ts")).not.toContain(RULE);
    const api =
      'import type { CancelResult } from "../api/scheduler.js";\nexport type C = CancelResult;\n';
    expect(await rulesHit(api, "src/dashboard/x.ts")).not.toContain(RULE);
    const store = 'import type { Store } from "../store/store.js";\nexport type S = Store;\n';
    expect(await rulesHit(store, "src/api/x.ts")).not.toContain(RULE);
  });

  it("passes the adapters as they are", async () => {
    const results = await eslint.lintFiles([
      "src/service",
      "src/mcp",
      "src/dashboard",
      "src/cli",
      "src/http",
    ]);
    expect(
      results.flatMap((r) =>
        r.messages.filter((m) => m.ruleId === RULE).map((m) => `${r.filePath}: ${m.message}`),
      ),
    ).toEqual([]);
  });
});
