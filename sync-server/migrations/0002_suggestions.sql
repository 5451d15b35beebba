-- Suggestions: a reviewer's proposed value for one field of one step, which the run's
-- annotator (or a manager) accepts or rejects. `original` and `proposed` are JSON text;
-- `seq` orders a run's suggestions. Decided ones are kept, so the review's history stays whole.

CREATE TABLE suggestions (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    step_index BIGINT NOT NULL,
    field TEXT NOT NULL,
    base_version BIGINT NOT NULL,
    original TEXT NOT NULL,
    proposed TEXT NOT NULL,
    note TEXT,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    state TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT,
    decision_note TEXT,
    applied_version BIGINT,
    seq BIGINT NOT NULL
);
CREATE INDEX suggestions_by_run ON suggestions (run_id, seq);
CREATE INDEX suggestions_pending ON suggestions (run_id, state, step_index);
