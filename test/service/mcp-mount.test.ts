import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { startService } from "../../src/service/service.js";
import { tempDir } from "../support/temp-dir.js";

/**
 * The MCP module is part of the package: the service imports it statically, so an error it
 * throws while mounting is the service's error, not a quiet "/mcp answers 501". (The old
 * loader caught every error, real bugs included, and logged "MCP module not available".)
 */
describe("mounting /mcp", () => {
  it("fails the start with the MCP server's own error instead of answering 501", async () => {
    const dir = tempDir("duetime-mcp-mount-");
    const db = join(dir.path, "jobs.db");
    const start = startService({
      db,
      port: 0,
      logLevel: "silent",
      // Refused by the MCP server's option check (the service passes it through unchecked).
      allowPrivateTargets: "yes" as unknown as boolean,
    });
    await expect(start).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(start).rejects.toMatchObject({ option: "allowPrivateTargets" });
    // Nothing is left open: the same database serves again at once.
    const again = await startService({ db, port: 0, logLevel: "silent" });
    const r = await fetch(`${again.url}/mcp`, { method: "GET" });
    // Mounted: no bearer key is a 401 from the gate, not the 501 of a missing module.
    expect(r.status).toBe(401);
    await again.close();
    dir.cleanup();
  });
});
