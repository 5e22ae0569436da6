/**
 * SQLite schema, one entry per version, applied in order inside one transaction each and
 * recorded in `PRAGMA user_version`. Never edit a released entry: add a new one.
 *
 * The layout (version 2) is the three-level time hierarchy of docs/architecture.md, with a
 * job's row written once and its later states kept in small tables that grow in the order
 * jobs fire:
 *  - `jobs` holds every job's definition. Its rowid (`seq`) grows with each insert, so rows
 *    append, and the index `jobs_bucket (bucket, seq, due_at, tenant)` orders them by bucket and,
 *    inside a bucket, by seq: a bulk insert appends at the end of each bucket. It carries
 *    due_at and tenant, so staging copies a bucket into `hot` from the index alone, without reading
 *    the (scattered) rows. Firing never writes
 *    this row: rows of jobs due together were written at scattered times, so a write per
 *    fired job would dirty a random page each (measured: 17k/s with two such writes, 27k/s
 *    with one, 78k/s with none; docs/benchmarks.md). Only rare changes write it:
 *    reschedule, a failed attempt's retry, a lease that ran out, a released claim.
 *  - `hot` is the due-time index proper, limited to staged buckets (the bucket about to come
 *    due and any overdue one): (due_at, seq) in a WITHOUT ROWID B-tree, so "what is due" is
 *    a range read of its prefix. Since version 3 each entry carries its tenant, indexed by
 *    `hot_tenant (tenant, due_at, seq)`, so a claim can take a tenant's due prefix alone when
 *    the tenants must take turns.
 *  - `claims` holds the lease of each claimed job (as many rows as jobs in flight), keyed by
 *    job id, with the job fields an outcome needs, so a settlement reads nothing else.
 *  - `finished` holds each finished job's outcome, indexed by (due_at, id): jobs fire in due
 *    order, so its rows and index entries append. Its rowid follows finish order, which is
 *    what retention reads (no index on the finish time to keep up per fired job). A job is finished when it has a row here,
 *    claimed when it has a `claims` row, and pending otherwise.
 *  - `live_keys` maps an idempotency key to the latest job that took it; the key is live
 *    while that job is not finished.
 *  - `bucket_counts` keeps pending counts per (bucket, tenant), updated in the same
 *    transaction as each write, so the histogram of the future never counts rows;
 *    `status_counts` does the same per status.
 *  - `bucket_staging` records which buckets have been copied into `hot` (and how far).
 *  - `changes` (version 5) is the change feed: a row per transition, in commit order.
 *  - `pauses` and `held` (version 9): a pause record per pause, and a row per job a pause
 *    holds (keyed by the job's seq). A held job stays pending but is kept out of `hot`, so
 *    no claim reads it (src/stores/sqlite/pauses.ts).
 * Since version 4 a jobs row carries `trace_context`, the traceparent of the span that
 * scheduled it (NULL when no OpenTelemetry SDK recorded one).
 * Since version 8 a jobs row carries `tags` (a JSON array, NULL when none) and `job_tags`
 * indexes them per (tenant, tag, job id), with the job's seq to reach its row.
 * Since version 11 a jobs row carries `callbacks` (its outcome callback URLs, JSON) and
 * `callback_of` (on a callback job, the job it reports on).
 * Since version 12 an `operations` row carries its idempotency `key`, unique per tenant.
 * Since version 13 a `job_tags` entry carries `walk_bucket`, the order bulk operations walk a
 * tag in (index job_tags_walk), and so do the feed rows a cancel so walked writes.
 * Retention deletes a finished job's `finished` row, its `jobs` row and its tag entries
 * together.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE jobs (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    tenant           TEXT NOT NULL,
    key              TEXT,
    status           TEXT NOT NULL,
    due_at           INTEGER NOT NULL,
    bucket           INTEGER NOT NULL,
    shard            INTEGER NOT NULL,
    payload          TEXT NOT NULL,
    target           TEXT NOT NULL,
    target_options   TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    expire_after_ms  INTEGER,
    version          INTEGER NOT NULL DEFAULT 1,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    fence            INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    last_result      TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    fired_at         INTEGER,
    finished_at      INTEGER
  );

  CREATE INDEX jobs_pending_bucket ON jobs (bucket) WHERE status = 'pending';
  CREATE INDEX jobs_claimed_lease ON jobs (lease_expires_at) WHERE status = 'claimed';
  CREATE UNIQUE INDEX jobs_live_key ON jobs (tenant, key)
    WHERE key IS NOT NULL AND finished_at IS NULL;
  CREATE INDEX jobs_finished_at ON jobs (finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX jobs_finished_due ON jobs (due_at, id) WHERE finished_at IS NOT NULL;

  CREATE TABLE hot (
    due_at INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (due_at, seq)
  ) WITHOUT ROWID;

  CREATE TABLE bucket_counts (
    bucket  INTEGER NOT NULL,
    tenant  TEXT NOT NULL,
    pending INTEGER NOT NULL,
    PRIMARY KEY (bucket, tenant)
  ) WITHOUT ROWID;

  CREATE TABLE bucket_staging (
    bucket INTEGER PRIMARY KEY,
    cursor INTEGER NOT NULL,
    done   INTEGER NOT NULL
  );

  CREATE TABLE status_counts (
    tenant TEXT NOT NULL,
    status TEXT NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (tenant, status)
  ) WITHOUT ROWID;
  `,
  // Version 2: job state out of the jobs row (claims, finished, live_keys), see above.
  `
  CREATE TABLE claims (
    id               TEXT PRIMARY KEY,
    seq              INTEGER NOT NULL,
    due_at           INTEGER NOT NULL,
    bucket           INTEGER NOT NULL,
    tenant           TEXT NOT NULL,
    owner            TEXT NOT NULL,
    lease_expires_at INTEGER NOT NULL,
    fence            INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    version          INTEGER NOT NULL,
    last_error       TEXT,
    fired_at         INTEGER,
    claimed_at       INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX claims_lease ON claims (lease_expires_at);

  CREATE TABLE finished (
    rid         INTEGER PRIMARY KEY,
    seq         INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    id          TEXT NOT NULL,
    tenant      TEXT NOT NULL,
    status      TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    fence       INTEGER NOT NULL,
    version     INTEGER NOT NULL,
    last_error  TEXT,
    last_result TEXT,
    fired_at    INTEGER,
    finished_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX finished_due ON finished (due_at, id);

  CREATE TABLE live_keys (
    tenant TEXT NOT NULL,
    key    TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
  ) WITHOUT ROWID;

  INSERT INTO claims (id, seq, due_at, bucket, tenant, owner, lease_expires_at, fence, attempts,
      version, last_error, fired_at, claimed_at)
    SELECT id, seq, due_at, bucket, tenant, lease_owner, lease_expires_at, fence, attempts,
      version, last_error, fired_at, updated_at
    FROM jobs WHERE status = 'claimed';
  INSERT INTO finished (seq, due_at, id, tenant, status, attempts, fence, version, last_error,
      last_result, fired_at, finished_at)
    SELECT seq, due_at, id, tenant, status, attempts, fence, version, last_error, last_result,
      fired_at, finished_at
    FROM jobs WHERE finished_at IS NOT NULL ORDER BY finished_at;
  INSERT INTO live_keys (tenant, key, seq)
    SELECT tenant, key, seq FROM jobs WHERE key IS NOT NULL AND finished_at IS NULL;

  DROP INDEX jobs_pending_bucket;
  DROP INDEX jobs_claimed_lease;
  DROP INDEX jobs_live_key;
  DROP INDEX jobs_finished_at;
  DROP INDEX jobs_finished_due;
  ALTER TABLE jobs DROP COLUMN status;
  ALTER TABLE jobs DROP COLUMN lease_owner;
  ALTER TABLE jobs DROP COLUMN lease_expires_at;
  ALTER TABLE jobs DROP COLUMN last_result;
  ALTER TABLE jobs DROP COLUMN finished_at;
  CREATE INDEX jobs_bucket ON jobs (bucket, seq, due_at);
  `,
  // Version 3: the tenant in the hot index, for claims that take turns per tenant (claim.ts).
  // jobs_bucket carries it so staging still copies from the index alone.
  `
  CREATE TABLE hot_v3 (
    due_at INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    PRIMARY KEY (due_at, seq)
  ) WITHOUT ROWID;
  INSERT INTO hot_v3 (due_at, seq, tenant)
    SELECT h.due_at, h.seq, j.tenant FROM hot h JOIN jobs j ON j.seq = h.seq;
  DROP TABLE hot;
  ALTER TABLE hot_v3 RENAME TO hot;
  CREATE INDEX hot_tenant ON hot (tenant, due_at, seq);
  DROP INDEX jobs_bucket;
  CREATE INDEX jobs_bucket ON jobs (bucket, seq, due_at, tenant);
  `,
  // Version 4: the trace context at schedule time (a W3C traceparent, NULL without an
  // OpenTelemetry SDK), read with the job by the claim. Adding a nullable column writes no row.
  `
  ALTER TABLE jobs ADD COLUMN trace_context TEXT;
  `,
  // Version 5: the change feed (feed.ts). AUTOINCREMENT so a seq is never given twice, even
  // after retention emptied the table (a reader's cursor must stay a position in it); rows
  // append in commit order (one writer), and (tenant, seq) reads one tenant's part.
  `
  CREATE TABLE changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant   TEXT NOT NULL,
    job_id   TEXT NOT NULL,
    kind     TEXT NOT NULL,
    status   TEXT NOT NULL,
    due_at   INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    error    TEXT,
    at       INTEGER NOT NULL
  );
  CREATE INDEX changes_tenant ON changes (tenant, seq);
  `,
  // Version 6: recurring series (src/core/series.ts). A series is a row of `schedules` (a
  // WITHOUT ROWID table keyed by its ULID, so rows append); its occurrences are plain jobs
  // carrying schedule_id and nominal, its key (no index: nothing reads jobs by series on the firing
  // path; the series row names its one pending occurrence, next_job_id).
  `
  ALTER TABLE jobs ADD COLUMN schedule_id TEXT;
  ALTER TABLE jobs ADD COLUMN nominal TEXT;
  CREATE TABLE schedules (
    id                   TEXT PRIMARY KEY,
    tenant               TEXT NOT NULL,
    key                  TEXT,
    rule_kind            TEXT NOT NULL,
    rule                 TEXT NOT NULL,
    time_zone            TEXT NOT NULL,
    gap                  TEXT NOT NULL,
    overlap              TEXT NOT NULL,
    misfire              TEXT NOT NULL,
    misfire_limit        INTEGER NOT NULL,
    misfire_tolerance_ms INTEGER NOT NULL,
    start_at             INTEGER,
    end_at               INTEGER,
    max_count            INTEGER,
    target               TEXT NOT NULL,
    payload              TEXT NOT NULL,
    target_options       TEXT,
    max_attempts         INTEGER NOT NULL,
    expire_after_ms      INTEGER,
    state                TEXT NOT NULL,
    version              INTEGER NOT NULL,
    next_job_id          TEXT,
    next_at              INTEGER,
    next_nominal         TEXT,
    fired_count          INTEGER NOT NULL,
    missed_count         INTEGER NOT NULL,
    last_misfire_at      INTEGER,
    catch_up_fired       INTEGER NOT NULL,
    last_job_id          TEXT,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX schedules_key ON schedules (tenant, key) WHERE key IS NOT NULL;
  CREATE INDEX schedules_tenant ON schedules (tenant, id);
  `,
  // Version 7: bulk operations (src/core/operation.ts, operations.ts). A record per operation,
  // keyed by its ULID (rows append); the runner finds the active ones through
  // operations_active. changes_job lets an erase delete a job's feed rows without a scan
  // (job ids grow with time, so its entries mostly append).
  `
  CREATE TABLE operations (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    filter      TEXT NOT NULL,
    params      TEXT NOT NULL,
    state       TEXT NOT NULL,
    scanned     INTEGER NOT NULL,
    changed     INTEGER NOT NULL,
    skipped     INTEGER NOT NULL,
    cursor      TEXT,
    error       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX operations_tenant ON operations (tenant, id);
  CREATE INDEX operations_active ON operations (id) WHERE state IN ('queued', 'running');
  CREATE INDEX changes_job ON changes (job_id);
  `,
  // Version 8: tags (src/core/tags.ts). The row keeps them for display; job_tags is the index
  // listing and counting by tag read: (tenant, tag, job_id) in a WITHOUT ROWID B-tree, so a
  // tag's entries are one range in id order and its seq reaches the row without a second
  // index. No due time in it: a reschedule or retry never touches it (the due range is checked
  // on the row). Adding a nullable column writes no row.
  `
  ALTER TABLE jobs ADD COLUMN tags TEXT;
  CREATE TABLE job_tags (
    tenant TEXT NOT NULL,
    tag    TEXT NOT NULL,
    job_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (tenant, tag, job_id)
  ) WITHOUT ROWID;
  `,
  // Version 9: pauses (src/core/pause.ts, pauses.ts). `held` is keyed by the job's seq, so
  // "is this job held" is one probe; held_pause gives a resume its batches in seq order.
  // hold_bucket and hold_seq are the position of the pass that holds the jobs pending when
  // the pause was made, over index jobs_bucket.
  `
  CREATE TABLE pauses (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    scope_kind  TEXT NOT NULL,
    scope_value TEXT NOT NULL,
    on_resume   TEXT NOT NULL,
    state       TEXT NOT NULL,
    paused_at   INTEGER NOT NULL,
    resumed_at  INTEGER,
    held        INTEGER NOT NULL,
    hold_bucket INTEGER NOT NULL,
    hold_seq    INTEGER NOT NULL,
    hold_done   INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX pauses_state ON pauses (state, id);
  CREATE TABLE held (
    seq      INTEGER PRIMARY KEY,
    pause_id TEXT NOT NULL
  );
  CREATE INDEX held_pause ON held (pause_id, seq);
  `,
  // Version 10: why a series ended when a claim could not advance it (a rule that no longer
  // compiles, a corrupt row): the claim records it and goes on (core/series.ts stepSeries).
  `
  ALTER TABLE schedules ADD COLUMN ended_reason TEXT;
  `,
  // Version 11: outcome callbacks (src/core/callbacks.ts): a job's callback URLs (JSON, NULL
  // when none) and, on a callback job, the job it reports on. Nullable columns write no row.
  `
  ALTER TABLE jobs ADD COLUMN callbacks TEXT;
  ALTER TABLE jobs ADD COLUMN callback_of TEXT;
  `,
  // Version 12: an operation's idempotency key (src/api/operations.ts). operations_key makes
  // it unique per tenant for the record's life, so a retried start finds the first one; the
  // partial index holds only keyed records. A nullable column writes no row.
  `
  ALTER TABLE operations ADD COLUMN key TEXT;
  CREATE UNIQUE INDEX operations_key ON operations (tenant, key) WHERE key IS NOT NULL;
  `,
  // Version 13: the order a bulk operation walks a tag in (operations.ts). A tag entry keeps
  // `walk_bucket`, the job's bucket when the entry was written (never updated: a reschedule
  // or retry still touches no tag entry), and job_tags_walk orders a tag's entries by it,
  // then by job id, covering the seq. A batch walked in that order holds jobs due close
  // together, so the outcome rows a cancel writes land on a few neighbouring pages of
  // finished_due instead of one page a job (job id order: due times all over the index;
  // measured in docs/benchmarks.md). Entries of one bucket are written in id order, so the
  // index appends within each bucket as jobs_bucket does. The table is rebuilt (no default
  // for the column: a writer that leaves it out fails).
  // The feed rows such a cancel writes carry the walk_bucket of the entry walked, and
  // changes_walk (walk_bucket, job_id) indexes them, in the order they are written; changes_job
  // keeps every other row (walk_bucket NULL). With one index on job_id for all rows, a
  // cancel walked in this order put one random entry a job into it instead (the cost moved
  // from finished_due to changes_job). An erase finds a job's rows under both: changes_job,
  // and changes_walk at the walk_bucket of each of its tag entries (feed.ts).
  `
  CREATE TABLE job_tags_v13 (
    tenant      TEXT NOT NULL,
    tag         TEXT NOT NULL,
    job_id      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    walk_bucket INTEGER NOT NULL,
    PRIMARY KEY (tenant, tag, job_id)
  ) WITHOUT ROWID;
  INSERT INTO job_tags_v13 (tenant, tag, job_id, seq, walk_bucket)
    SELECT t.tenant, t.tag, t.job_id, t.seq, coalesce(j.bucket, 0)
    FROM job_tags t LEFT JOIN jobs j ON j.seq = t.seq;
  DROP TABLE job_tags;
  ALTER TABLE job_tags_v13 RENAME TO job_tags;
  CREATE INDEX job_tags_walk ON job_tags (tenant, tag, walk_bucket, job_id, seq);
  ALTER TABLE changes ADD COLUMN walk_bucket INTEGER;
  DROP INDEX changes_job;
  CREATE INDEX changes_job ON changes (job_id) WHERE walk_bucket IS NULL;
  CREATE INDEX changes_walk ON changes (walk_bucket, job_id) WHERE walk_bucket IS NOT NULL;
  `,
];
