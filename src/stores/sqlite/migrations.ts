/**
 * SQLite schema, one entry per version, applied in order inside one transaction each and
 * recorded in `PRAGMA user_version`. Never edit a released entry: add a new one.
 *
 * The layout is the three-level time hierarchy of docs/architecture.md:
 *  - `jobs` holds every job. Its rowid (`seq`) grows with each insert, so rows append.
 *    The partial index `jobs_pending_bucket (bucket) WHERE status = 'pending'` orders the
 *    pending backlog by bucket and, inside a bucket, by seq: a bulk insert appends at the end
 *    of each bucket instead of dirtying a random page per row (see docs/benchmarks.md).
 *  - `hot` is the due-time index proper, limited to staged buckets (the bucket about to come
 *    due and any overdue one): (due_at, seq) in a WITHOUT ROWID B-tree, so "what is due" is
 *    a range read of its prefix.
 *  - `bucket_counts` keeps pending counts per (bucket, tenant), updated in the same
 *    transaction as each write, so the histogram of the future never counts rows;
 *    `status_counts` does the same per status.
 *  - `bucket_staging` records which buckets have been copied into `hot` (and how far).
 * Finished jobs leave every live index in the statement that finishes them; they stay in
 * `jobs` as history (indexed by finish time for retention) until purged.
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
];
