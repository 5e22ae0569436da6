import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openKeyStore } from "../../src/service/keys.js";
import { verifyWebhook } from "../../src/webhooks/index.js";
import {
  dropSchema,
  freshSchema,
  startPostgres,
  type PostgresServer,
} from "../support/postgres-server.js";
import { startReceiver, startTestService, waitForJob } from "./helpers.js";

/** `duetime serve` on PostgreSQL: keys in the jobs' schema, the API and delivery unchanged. */
let pg: PostgresServer;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describe("the service on PostgreSQL", () => {
  it("authenticates, isolates tenants, delivers signed webhooks and revokes keys", async () => {
    const schema = freshSchema("svc");
    const t = await startTestService({ db: `${pg.url}?schema=${schema}` });
    const rx = await startReceiver();
    try {
      const c = await t.api("POST", "/v1/jobs", {
        body: { delayMs: 0, target: rx.url, payload: { on: "postgres" } },
      });
      expect(c.status).toBe(201);
      const req = await rx.nth(1);
      expect(
        verifyWebhook({ secret: t.acme.secret, headers: req.headers, body: req.body }).id,
      ).toBe(c.body.job.id);
      await waitForJob(t, c.body.job.id, (j) => j.status === "succeeded");
      expect(
        (await t.api("GET", `/v1/jobs/${c.body.job.id}`, { key: t.umbrella.key })).status,
      ).toBe(404);
      expect((await t.api("GET", "/readyz", { key: null })).status).toBe(200);

      const keys = await openKeyStore(`${pg.url}?schema=${schema}`);
      expect((await keys.apiKeysList({})).map((k) => k.tenant).sort()).toEqual([
        "acme",
        "umbrella",
      ]);
      const both = [t.acme.keyId, t.umbrella.keyId, "key_unknown"];
      expect((await keys.apiKeysLive({ ids: both })).sort()).toEqual(both.slice(0, 2).sort());
      expect(await keys.apiKeyRevoke({ id: t.acme.keyId, now: Date.now() })).toBe(true);
      expect(await keys.apiKeyRevoke({ id: t.acme.keyId, now: Date.now() })).toBe(false);
      // what the event streams' re-check asks: the revoked key is no longer live
      expect(await keys.apiKeysLive({ ids: both })).toEqual([t.umbrella.keyId]);
      await keys.close();
      expect((await t.api("GET", "/v1/jobs")).status).toBe(401);
    } finally {
      await t.close();
      await rx.close();
      await dropSchema(pg.url, schema);
    }
  });
});
