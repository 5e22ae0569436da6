import js from "@eslint/js";
import regexp from "eslint-plugin-regexp";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "test-artifacts/**", "bench-data/**"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  // Hostile input must cost time in proportion to its size (issue 10): a regular expression
  // that can backtrack super-linearly fails the lint, not a production event loop.
  regexp.configs["flat/recommended"],
  {
    rules: {
      "regexp/no-super-linear-backtracking": ["error", { report: "potential" }],
      // Character classes spelled out as their grammar writes them (RFC 9110 tokens, the
      // documented tenant and file-name alphabets) read better than \w plus the i flag.
      "regexp/prefer-w": "off",
      "regexp/use-ignore-case": "off",
    },
  },
  {
    // What a client sends reaches these: a search that moves super-linearly over the input
    // (an unanchored quantifier retried from every start position) is refused too, also in
    // expressions used as parts of others. Sticky (y) expressions match at one position only,
    // so they cannot move; that is how the delay reader in time-input.ts stays linear.
    files: ["src/**/*.ts", "web/dashboard/src/**/*.ts"],
    rules: {
      "regexp/no-super-linear-move": ["error", { ignoreSticky: true, ignorePartial: false }],
    },
  },
  {
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["src/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "error" },
  },
  {
    // Adapters are thin (issue 11): they call the Scheduler, never a store. The one way to a
    // store is the factory that picks one from a database location (src/stores/open-store.ts:
    // openStore, openKeyStore, and the Store type for the service's wrappers of what it opens).
    files: [
      "src/service/**/*.ts",
      "src/mcp/**/*.ts",
      "src/dashboard/**/*.ts",
      "src/cli/**/*.ts",
      "src/http/**/*.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/store/*", "**/stores/**", "!**/stores/open-store.js"],
              message:
                "adapters go through the Scheduler (src/api); a store is opened only by src/stores/open-store.ts",
            },
          ],
        },
      ],
    },
  },
);
