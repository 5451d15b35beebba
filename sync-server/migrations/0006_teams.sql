-- Teams (issue 29): the project's settings, assignments and each annotator's own version of
-- an overlap run, the figures the page used to keep alone, collections, webhooks with their
-- outbox, the audit log and notifications. `{serial}` is an auto-numbered primary key
-- (SQLite's INTEGER PRIMARY KEY AUTOINCREMENT, PostgreSQL's BIGSERIAL): the order of the
-- append-only logs.

CREATE TABLE project (
    id TEXT PRIMARY KEY,
    overlap BIGINT NOT NULL,
    guidelines_url TEXT,
    guidelines_markdown TEXT,
    version BIGINT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

-- How many times the run went to review (filled in for older runs from their history), and
-- how many annotators it is assigned to now (0: never assigned).
ALTER TABLE runs ADD COLUMN review_rounds BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN assignees BIGINT NOT NULL DEFAULT 0;

CREATE TABLE assignments (
    run_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    assigned_at TEXT NOT NULL,
    state TEXT NOT NULL,
    submitted_at TEXT,
    PRIMARY KEY (run_id, annotator)
);
CREATE INDEX assignments_queue ON assignments (annotator, state, assigned_at, run_id);

-- An annotator's own version of an overlap run: its state, and the steps they saved.
CREATE TABLE annotation_sets (
    run_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    state TEXT NOT NULL,
    submitted_at TEXT,
    updated_at TEXT,
    PRIMARY KEY (run_id, annotator)
);

CREATE TABLE annotated_steps (
    run_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    idx BIGINT NOT NULL,
    version BIGINT NOT NULL,
    body TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (run_id, annotator, idx)
);

CREATE TABLE run_metrics (
    run_id TEXT PRIMARY KEY,
    quality BIGINT,
    quality_at TEXT,
    quality_by TEXT
);

CREATE TABLE run_time (
    run_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    ms BIGINT NOT NULL,
    PRIMARY KEY (run_id, user_id)
);

CREATE TABLE collections (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    version BIGINT NOT NULL,
    last_exported_at TEXT
);

CREATE TABLE collection_runs (
    collection_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (collection_id, run_id)
);

-- `secret` signs deliveries; no answer, list or log ever carries it.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT NOT NULL,
    secret TEXT NOT NULL,
    paused BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- The outbox: written in the transaction of the write that caused the event.
CREATE TABLE webhook_deliveries (
    seq {serial},
    id TEXT NOT NULL UNIQUE,
    hook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at TEXT,
    last_status BIGINT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT
);
CREATE INDEX deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX deliveries_by_hook ON webhook_deliveries (hook_id, seq);

-- Append-only: no route or code path updates or deletes a row.
CREATE TABLE audit_log (
    seq {serial},
    at TEXT NOT NULL,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    run_id TEXT,
    target TEXT NOT NULL,
    before_ids TEXT NOT NULL,
    after_ids TEXT NOT NULL
);
CREATE INDEX audit_by_user ON audit_log (user_id, seq);
CREATE INDEX audit_by_run ON audit_log (run_id, seq);
CREATE INDEX audit_by_action ON audit_log (action, seq);
CREATE INDEX audit_by_at ON audit_log (at);

CREATE TABLE notifications (
    seq {serial},
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    run_id TEXT,
    comment_id TEXT,
    actor TEXT NOT NULL,
    body_text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    read_at TEXT
);
CREATE INDEX notifications_by_user ON notifications (user_id, seq);

-- A passage comment whose quote is gone; a passage suggestion's range, quote and context.
ALTER TABLE comments ADD COLUMN outdated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE suggestions ADD COLUMN passage TEXT;
