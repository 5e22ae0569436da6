import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * Issue 10 §1: a super-linear regular expression fails `npm run check`. These run the
 * project's own ESLint configuration on the expressions that were found in the code, so the
 * rules cannot be switched off (or lose their scope) without a failing test.
 */
const eslint = new ESLint({ cwd: new URL("../..", import.meta.url).pathname });

async function rulesHit(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe("eslint-plugin-regexp in the lint", () => {
  it("fails the old delay splitter (polynomial backtracking)", async () => {
    const code = "export const parts = (s: string) => s.split(/\\s*(?:,|and)?\\s+(?=\\d)/i);\n";
    expect(await rulesHit(code, "src/core/example.ts")).toContain(
      "regexp/no-super-linear-backtracking",
    );
  });

  it("fails the old delay prefix (\\s+ against .+)", async () => {
    const code = "export const m = (s: string) => /^(?:in\\s+|\\+)(.+)$/i.exec(s);\n";
    expect(await rulesHit(code, "src/core/example.ts")).toContain(
      "regexp/no-super-linear-backtracking",
    );
  });

  it("fails a quadratic search in src/ (a quantifier retried from every position)", async () => {
    const code = 'export const trim = (u: string) => u.replace(/\\/+$/, "");\n';
    expect(await rulesHit(code, "src/cli/example.ts")).toContain("regexp/no-super-linear-move");
    expect(await rulesHit(code, "web/dashboard/src/example.ts")).toContain(
      "regexp/no-super-linear-move",
    );
  });

  it("passes the readers that replaced them", async () => {
    const results = await eslint.lintFiles([
      "src/core/time-input.ts",
      "src/core/query-params.ts",
      "src/cli/remote.ts",
    ]);
    expect(results.flatMap((r) => r.messages.map((m) => `${r.filePath}: ${m.ruleId}`))).toEqual([]);
  });
});
