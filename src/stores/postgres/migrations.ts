import type pg from "pg";

/**
 * PostgreSQL schema, one entry per version, each applied in its own transaction and
 * recorded in `<schema>.migrations`. Never edit a released entry: add a new one.
 *
 * Layout (docs/operations-postgres.md has the long version):
 *  - `jobs_live` holds pending jobs only, partitioned by due-time range, one partition per
 *    bucket (made by partitions.ts), plus a DEFAULT partition so a job whose partition is
 *    missing (far future, or a long-dropped past bucket) still lands. Index (due_at, id) is
 *    the due-time index the claim reads, and (tenant, due_at, id) (version 2) gives each
 *    tenant's due prefix when a claim is shared out per tenant; the primary key (shard, id, due_at) leads with the
 *    shard, as a distributed PostgreSQL wants, and serves lookups by id.
 *  - `jobs_claimed` holds claimed jobs: few rows (work in flight), keyed by (shard, id),
 *    with the lease expiry indexed for the lease sweeper.
 *  - `jobs_history` holds finished jobs, partitioned by finish time, so retention drops
 *    whole partitions.
 *  A transition moves a row between these tables in one statement, so a partition of
 *  `jobs_live` that has come due empties as its jobs fire and is dropped, and the live
 *  tables never carry finished rows (no unbounded bloat).
 *  - `job_keys` makes idempotency keys unique per tenant among live jobs.
 *  - `bucket_counts` (pending per bucket and tenant) and `history_counts` (finished per
 *    history period, tenant and status) are kept by statement-level triggers over
 *    transition tables: one counter write per (bucket, tenant) per statement, never a
 *    count of rows. Counter upserts go in (key) order so concurrent statements lock them
 *    in the same order.
 *  - `job_changes` (version 5) is the change feed: a row per transition, written by the
 *    statement that makes it.
 *  - `job_tags` (version 9) is the tag index: an entry per (tenant, tag, job) with the job's
 *    shard and due time, so its row is found by primary key in the one live partition that
 *    can hold it; every job table carries `tags` (a JSON array, NULL when none) for display.
 *  - `pauses` and `jobs_held` (version 12): a record per pause, and the pending jobs a pause
 *    holds, out of jobs_live (postgres/pauses.ts).
 */
export function migrations(schema: string): readonly string[] {
  const s = `"${schema}"`;
  const cols = `
    shard           integer NOT NULL,
    id              text    NOT NULL,
    tenant          text    NOT NULL,
    key             text,
    due_at          bigint  NOT NULL,
    bucket          bigint  NOT NULL,
    payload         text    NOT NULL,
    target          text    NOT NULL,
    target_options  text,
    attempts        integer NOT NULL DEFAULT 0,
    max_attempts    integer NOT NULL,
    expire_after_ms bigint,
    version         integer NOT NULL DEFAULT 1,
    fence           bigint  NOT NULL DEFAULT 0,
    last_error      text,
    last_result     text,
    created_at      bigint  NOT NULL,
    updated_at      bigint  NOT NULL,
    fired_at        bigint`;
  return [
    `
    CREATE TABLE ${s}.meta (
      name  text PRIMARY KEY,
      value text NOT NULL
    );

    CREATE TABLE ${s}.jobs_live (${cols},
      PRIMARY KEY (shard, id, due_at)
    ) PARTITION BY RANGE (due_at);
    CREATE INDEX jobs_live_due ON ${s}.jobs_live (due_at, id);
    CREATE TABLE ${s}.jobs_live_default PARTITION OF ${s}.jobs_live DEFAULT;

    CREATE TABLE ${s}.jobs_claimed (${cols},
      lease_owner      text   NOT NULL,
      lease_expires_at bigint NOT NULL,
      PRIMARY KEY (shard, id)
    ) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 500);
    CREATE INDEX jobs_claimed_lease ON ${s}.jobs_claimed (lease_expires_at);

    CREATE TABLE ${s}.jobs_history (${cols},
      status      text   NOT NULL,
      finished_at bigint NOT NULL,
      PRIMARY KEY (shard, id, finished_at)
    ) PARTITION BY RANGE (finished_at);
    CREATE INDEX jobs_history_due ON ${s}.jobs_history (due_at, id);
    CREATE INDEX jobs_history_finished ON ${s}.jobs_history (finished_at);
    CREATE TABLE ${s}.jobs_history_default PARTITION OF ${s}.jobs_history DEFAULT;

    CREATE TABLE ${s}.job_keys (
      tenant text    NOT NULL,
      key    text    NOT NULL,
      shard  integer NOT NULL,
      id     text    NOT NULL,
      PRIMARY KEY (tenant, key)
    );

    CREATE TABLE ${s}.bucket_counts (
      bucket  bigint NOT NULL,
      tenant  text   NOT NULL,
      pending bigint NOT NULL,
      PRIMARY KEY (bucket, tenant)
    );

    CREATE TABLE ${s}.history_counts (
      period bigint NOT NULL,
      tenant text   NOT NULL,
      status text   NOT NULL,
      n      bigint NOT NULL,
      PRIMARY KEY (period, tenant, status)
    );

    CREATE FUNCTION ${s}.live_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.bucket_counts AS c (bucket, tenant, pending)
        SELECT bucket, tenant, count(*) FROM new_rows GROUP BY bucket, tenant ORDER BY 1, 2
        ON CONFLICT (bucket, tenant) DO UPDATE SET pending = c.pending + excluded.pending;
      RETURN NULL;
    END $$;
    CREATE TRIGGER live_inserted AFTER INSERT ON ${s}.jobs_live
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.live_inserted();

    CREATE FUNCTION ${s}.live_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Upsert (not UPDATE) so rows are locked in key order, as live_inserted does.
      INSERT INTO ${s}.bucket_counts AS c (bucket, tenant, pending)
        SELECT bucket, tenant, -count(*) FROM old_rows GROUP BY bucket, tenant ORDER BY 1, 2
        ON CONFLICT (bucket, tenant) DO UPDATE SET pending = c.pending + excluded.pending;
      -- A separate statement: rows updated above are invisible to a delete in the same one.
      DELETE FROM ${s}.bucket_counts c
        WHERE c.pending <= 0 AND (c.bucket, c.tenant) IN (SELECT bucket, tenant FROM old_rows);
      RETURN NULL;
    END $$;
    CREATE TRIGGER live_deleted AFTER DELETE ON ${s}.jobs_live
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.live_deleted();

    CREATE FUNCTION ${s}.history_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE w bigint := (SELECT value::bigint FROM ${s}.meta WHERE name = 'history_width_ms');
    BEGIN
      INSERT INTO ${s}.history_counts AS c (period, tenant, status, n)
        SELECT finished_at - ((finished_at % w) + w) % w,
               tenant, status, count(*)
        FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (period, tenant, status) DO UPDATE SET n = c.n + excluded.n;
      DELETE FROM ${s}.job_keys k USING new_rows r
        WHERE r.key IS NOT NULL AND k.tenant = r.tenant AND k.key = r.key AND k.id = r.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER history_inserted AFTER INSERT ON ${s}.jobs_history
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.history_inserted();

    CREATE FUNCTION ${s}.history_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE w bigint := (SELECT value::bigint FROM ${s}.meta WHERE name = 'history_width_ms');
    BEGIN
      INSERT INTO ${s}.history_counts AS c (period, tenant, status, n)
        SELECT finished_at - ((finished_at % w) + w) % w, tenant, status, -count(*)
        FROM old_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (period, tenant, status) DO UPDATE SET n = c.n + excluded.n;
      DELETE FROM ${s}.history_counts c WHERE c.n <= 0 AND (c.period, c.tenant, c.status) IN (
        SELECT finished_at - ((finished_at % w) + w) % w, tenant, status FROM old_rows);
      RETURN NULL;
    END $$;
    CREATE TRIGGER history_deleted AFTER DELETE ON ${s}.jobs_history
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${s}.history_deleted();

    -- Shard leases (shard-leases.ts): nodes heartbeat; each shard is owned by one node.
    CREATE TABLE ${s}.nodes (
      node_id      text   PRIMARY KEY,
      started_at   bigint NOT NULL,
      heartbeat_at bigint NOT NULL,
      expires_at   bigint NOT NULL
    );
    CREATE TABLE ${s}.shard_leases (
      shard      integer PRIMARY KEY,
      owner      text    NOT NULL,
      expires_at bigint  NOT NULL,
      acquired_at bigint NOT NULL
    );
    `,
    // Version 2: a tenant's due prefix, for claims shared out per tenant (claimTenantsDue).
    `
    CREATE INDEX jobs_live_tenant_due ON ${s}.jobs_live (tenant, due_at, id);
    `,
    // Version 3: the storage probe's table (statements.ts, storageProbe), in the jobs'
    // tablespace.
    `
    CREATE TABLE ${s}.storage_probe (filler text NOT NULL);
    ALTER TABLE ${s}.storage_probe ALTER COLUMN filler SET STORAGE EXTERNAL;
    `,
    // Version 4: the trace context at schedule time (a W3C traceparent, NULL without an
    // OpenTelemetry SDK), moved with the row by every transition, so a claim returns it.
    // A nullable column without a default is a catalog change: no table is rewritten, and
    // on a partitioned table it reaches every partition.
    `
    ALTER TABLE ${s}.jobs_live ADD COLUMN trace_context text;
    ALTER TABLE ${s}.jobs_claimed ADD COLUMN trace_context text;
    ALTER TABLE ${s}.jobs_history ADD COLUMN trace_context text;
    `,
    // Version 5: the change feed (changes.ts). Ordered by (tx, seq): the writing
    // transaction's id, then an identity within it; readers stop below the oldest
    // transaction still in flight, so a late commit never lands behind a cursor.
    `
    CREATE TABLE ${s}.job_changes (
      tx       xid8    NOT NULL DEFAULT pg_current_xact_id(),
      seq      bigint  GENERATED ALWAYS AS IDENTITY,
      tenant   text    NOT NULL,
      job_id   text    NOT NULL,
      kind     text    NOT NULL,
      status   text    NOT NULL,
      due_at   bigint  NOT NULL,
      attempts integer NOT NULL,
      error    text,
      at       bigint  NOT NULL,
      PRIMARY KEY (tx, seq)
    );
    CREATE INDEX job_changes_tenant ON ${s}.job_changes (tenant, tx, seq);
    `,
    // Version 6: recurring series (src/core/series.ts). Occurrences are plain jobs carrying
    // schedule_id and nominal in every job table (a transition copies them along); the
    // series row names its one pending occurrence (next_job_id) and is locked (FOR UPDATE)
    // by whatever changes it, a claim included, so two writers never advance it twice.
    `
    ALTER TABLE ${s}.jobs_live ADD COLUMN schedule_id text, ADD COLUMN nominal text;
    ALTER TABLE ${s}.jobs_claimed ADD COLUMN schedule_id text, ADD COLUMN nominal text;
    ALTER TABLE ${s}.jobs_history ADD COLUMN schedule_id text, ADD COLUMN nominal text;
    CREATE TABLE ${s}.schedules (
      id                   text    PRIMARY KEY,
      tenant               text    NOT NULL,
      key                  text,
      rule_kind            text    NOT NULL,
      rule                 text    NOT NULL,
      time_zone            text    NOT NULL,
      gap                  text    NOT NULL,
      overlap              text    NOT NULL,
      misfire              text    NOT NULL,
      misfire_limit        integer NOT NULL,
      misfire_tolerance_ms bigint  NOT NULL,
      start_at             bigint,
      end_at               bigint,
      max_count            integer,
      target               text    NOT NULL,
      payload              text    NOT NULL,
      target_options       text,
      max_attempts         integer NOT NULL,
      expire_after_ms      bigint,
      state                text    NOT NULL,
      version              integer NOT NULL,
      next_job_id          text,
      next_at              bigint,
      next_nominal         text,
      fired_count          integer NOT NULL,
      missed_count         integer NOT NULL,
      last_misfire_at      bigint,
      catch_up_fired       integer NOT NULL,
      last_job_id          text,
      created_at           bigint  NOT NULL,
      updated_at           bigint  NOT NULL
    );
    CREATE UNIQUE INDEX schedules_key ON ${s}.schedules (tenant, key) WHERE key IS NOT NULL;
    CREATE INDEX schedules_tenant ON ${s}.schedules (tenant, id);
    `,
    // Version 7: bulk operations (src/core/operation.ts, operations.ts). A record per
    // operation, locked (FOR UPDATE) by each batch, so two nodes never run one batch twice;
    // job_changes_job lets an erase delete a job's feed rows without a scan.
    `
    CREATE TABLE ${s}.operations (
      id          text    PRIMARY KEY,
      tenant      text    NOT NULL,
      kind        text    NOT NULL,
      filter      text    NOT NULL,
      params      text    NOT NULL,
      state       text    NOT NULL,
      scanned     bigint  NOT NULL,
      changed     bigint  NOT NULL,
      skipped     bigint  NOT NULL,
      cursor      text,
      error       text,
      created_at  bigint  NOT NULL,
      updated_at  bigint  NOT NULL,
      finished_at bigint
    );
    CREATE INDEX operations_tenant ON ${s}.operations (tenant, id);
    CREATE INDEX operations_active ON ${s}.operations (id) WHERE state IN ('queued', 'running');
    CREATE INDEX job_changes_job ON ${s}.job_changes (job_id);
    `,
    // Version 8: the heartbeat renews every owned shard_leases row and its node's nodes row
    // every 30 s; at the default thresholds autovacuum then vacuumed and analysed
    // shard_leases about once a minute on an idle deployment (four transactions, more than
    // half of a node's own). The renewals change no indexed column: with room on the page
    // (fillfactor) they are HOT updates that page pruning reclaims, so vacuum is needed only
    // rarely, and the statistics of a table of one row per shard or node never change.
    // Anti-wraparound vacuums are not governed by these thresholds.
    `
    ALTER TABLE ${s}.shard_leases SET (fillfactor = 50, autovacuum_vacuum_threshold = 10000,
      autovacuum_analyze_threshold = 10000);
    ALTER TABLE ${s}.nodes SET (fillfactor = 50, autovacuum_vacuum_threshold = 10000,
      autovacuum_analyze_threshold = 10000);
    `,
    // Version 9: tags (src/core/tags.ts). job_tags is what listing and counting by tag read:
    // one range of its primary key per tag. Its due_at is the job's, so the row is reached in
    // its one live partition (a lookup by id alone probes every partition): live_inserted
    // keeps it when a job comes back to jobs_live at another due time (reschedule, retry,
    // replace: every such move inserts into jobs_live), and a tagless insert costs one scan
    // of the statement's new rows. Tag entries leave with their job: retention's row delete
    // removes them in its statement (historyDeleteOldest), and a dropped history partition's
    // are deleted first, in the drop's transaction (partitions.ts), found through the partial
    // index jobs_history_tagged.
    `
    ALTER TABLE ${s}.jobs_live ADD COLUMN tags text;
    ALTER TABLE ${s}.jobs_claimed ADD COLUMN tags text;
    ALTER TABLE ${s}.jobs_history ADD COLUMN tags text;
    CREATE TABLE ${s}.job_tags (
      tenant text    NOT NULL,
      tag    text    NOT NULL,
      job_id text    NOT NULL,
      shard  integer NOT NULL,
      due_at bigint  NOT NULL,
      PRIMARY KEY (tenant, tag, job_id)
    );
    CREATE INDEX jobs_history_tagged ON ${s}.jobs_history (finished_at) WHERE tags IS NOT NULL;

    CREATE OR REPLACE FUNCTION ${s}.live_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.bucket_counts AS c (bucket, tenant, pending)
        SELECT bucket, tenant, count(*) FROM new_rows GROUP BY bucket, tenant ORDER BY 1, 2
        ON CONFLICT (bucket, tenant) DO UPDATE SET pending = c.pending + excluded.pending;
      UPDATE ${s}.job_tags t SET due_at = n.due_at
        FROM new_rows n CROSS JOIN LATERAL json_array_elements_text(n.tags::json) AS g(tag)
        WHERE n.tags IS NOT NULL AND t.tenant = n.tenant AND t.tag = g.tag AND t.job_id = n.id
          AND t.due_at <> n.due_at;
      RETURN NULL;
    END $$;

    `,
    // Version 10: why a series ended when a claim could not advance it (core/series.ts).
    `ALTER TABLE ${s}.schedules ADD COLUMN ended_reason text`,
    // Version 11: outcome callbacks (core/callbacks.ts) in every job table (a transition
    // copies them along): the URLs (JSON text) and, on a callback job, the job it reports on.
    `
    ALTER TABLE ${s}.jobs_live ADD COLUMN callbacks text, ADD COLUMN callback_of text;
    ALTER TABLE ${s}.jobs_claimed ADD COLUMN callbacks text, ADD COLUMN callback_of text;
    ALTER TABLE ${s}.jobs_history ADD COLUMN callbacks text, ADD COLUMN callback_of text;
    `,
    // Version 12: pauses (src/core/pause.ts, pauses.ts). A held job's row leaves jobs_live
    // for jobs_held (a transition like a claim), so no claim, poll, next-due read or bucket
    // counter sees it and a past live partition can still be dropped; its tag entries stay
    // (found by primary key there). pauses.held counts each pause's held jobs (the pending
    // count adds it); hold_due and hold_id are the position of the pass that holds the jobs
    // pending when the pause was made, over index jobs_live_tenant_due. pauses_open keeps
    // the claim's and the insert's "is anything paused" probe to the few open pauses.
    `
    CREATE TABLE ${s}.pauses (
      id          text    PRIMARY KEY,
      tenant      text    NOT NULL,
      scope_kind  text    NOT NULL,
      scope_value text    NOT NULL,
      on_resume   text    NOT NULL,
      state       text    NOT NULL,
      paused_at   bigint  NOT NULL,
      resumed_at  bigint,
      held        bigint  NOT NULL DEFAULT 0,
      hold_due    bigint  NOT NULL,
      hold_id     text    NOT NULL,
      hold_done   boolean NOT NULL DEFAULT false
    );
    CREATE INDEX pauses_open ON ${s}.pauses (id) WHERE state <> 'resumed';
    CREATE INDEX pauses_tenant ON ${s}.pauses (tenant, id);
    CREATE TABLE ${s}.jobs_held (${cols},
      trace_context text,
      schedule_id   text,
      nominal       text,
      tags          text,
      callbacks     text,
      callback_of   text,
      pause_id      text NOT NULL,
      PRIMARY KEY (shard, id)
    );
    CREATE INDEX jobs_held_pause ON ${s}.jobs_held (pause_id, shard, id);
    CREATE INDEX jobs_held_due ON ${s}.jobs_held (due_at, id);
    `,
    // Version 13: an operation's idempotency key (src/api/operations.ts), unique per tenant
    // for the record's life through the partial index operations_key, which the insert's
    // ON CONFLICT names: a retried start finds the first record.
    `
    ALTER TABLE ${s}.operations ADD COLUMN key text;
    CREATE UNIQUE INDEX operations_key ON ${s}.operations (tenant, key) WHERE key IS NOT NULL;
    `,
  ];
}

/**
 * Applies pending migrations under a transaction-level advisory lock on the schema's name:
 * nodes starting together wait for one another, and the second finds nothing to do.
 */
export async function applyMigrations(client: pg.ClientBase, schema: string): Promise<number> {
  const all = migrations(schema);
  const s = `"${schema}"`;
  let applied = 0;
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`duetime:migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.migrations (
      version    integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${s}.migrations`,
    );
    const current = rows[0]?.v ?? 0;
    for (let v = current; v < all.length; v++) {
      await client.query(all[v]!);
      await client.query(`INSERT INTO ${s}.migrations (version) VALUES ($1)`, [v + 1]);
      applied++;
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw new Error(`migrating schema ${schema}`, { cause: err });
  }
  return applied;
}
