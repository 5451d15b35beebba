-- The first schema. Portable SQL for SQLite and PostgreSQL: TEXT, BIGINT and {blob}
-- (BLOB or BYTEA). Timestamps are TEXT in one fixed ISO 8601 form, so they sort as text.
-- Records are stored as JSON text; the columns beside them are what queries filter on.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- One row per run: the header state (the AgentRun fields plus status, reviewedBy, annotator
-- and tags) as JSON in `header`, and the run-wide counters.
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    status TEXT NOT NULL,
    tags TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    version BIGINT NOT NULL,
    header_version BIGINT NOT NULL,
    header TEXT NOT NULL,
    search TEXT NOT NULL
);
CREATE INDEX runs_by_updated ON runs (updated_at, id);
CREATE INDEX runs_by_created ON runs (created_at, id);
CREATE INDEX runs_by_annotator ON runs (annotator, updated_at);
CREATE INDEX runs_by_task ON runs (task_id);

-- The header state after every version that changed it.
CREATE TABLE run_headers (
    run_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    header TEXT NOT NULL,
    PRIMARY KEY (run_id, version)
);

-- The current steps; `version` is the run version at which the step last changed.
CREATE TABLE steps (
    run_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    version BIGINT NOT NULL,
    body TEXT NOT NULL,
    search TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);

-- Every saved state of every step, by the run version that saved it.
CREATE TABLE step_snapshots (
    run_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    version BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, idx, version)
);

-- The history: one entry per run version.
CREATE TABLE versions (
    run_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    at_time TEXT NOT NULL,
    by_user TEXT NOT NULL,
    kind TEXT NOT NULL,
    step_index BIGINT,
    changes TEXT NOT NULL,
    summary TEXT NOT NULL,
    extra TEXT NOT NULL,
    PRIMARY KEY (run_id, version)
);

CREATE TABLE screenshots (
    sha256 TEXT PRIMARY KEY,
    bytes BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    data {blob} NOT NULL
);

CREATE TABLE traces (
    run_id TEXT NOT NULL,
    id TEXT NOT NULL,
    step BIGINT NOT NULL,
    started_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);

-- Comments, flat. `step_index`, `thread_kind` are the thread's (replies inherit them);
-- `resolved*` are meaningful on a thread's first comment; `seq` orders a run's comments.
CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    parent_id TEXT,
    step_index BIGINT,
    kind TEXT,
    thread_kind TEXT NOT NULL,
    anchor TEXT NOT NULL,
    body_text TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    edited_at TEXT,
    resolved BIGINT NOT NULL,
    resolved_by TEXT,
    resolved_at TEXT,
    version BIGINT NOT NULL,
    seq BIGINT NOT NULL
);
CREATE INDEX comments_by_run ON comments (run_id, seq);

-- First responses to POSTs sent with `Idempotency-Key` (kept 24 h).
CREATE TABLE idempotency (
    user_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status BIGINT NOT NULL,
    etag TEXT,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, idem_key)
);

-- Results of applied batch items by `mutationId` (kept 7 days).
CREATE TABLE mutations (
    user_id TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, mutation_id)
);
