import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_TYPES_FILE, generateClientTypes } from "../../scripts/generate-client-types.js";

describe("duetime/client types", () => {
  it("src/client/api-types.ts is what the OpenAPI document generates (npm run generate:client)", async () => {
    expect(readFileSync(API_TYPES_FILE, "utf8")).toBe(await generateClientTypes());
  });
});
