-- Who may read a screenshot. Blobs are content-addressed and shared by every run that shows
-- them, so reading one is granted apart from the blob: to whoever uploaded it (they hold the
-- bytes anyway), and to whoever may see a run one of whose steps shows it. Rows for the
-- steps stored before this migration are filled in by the server as it applies it.

CREATE TABLE screenshot_uploads (
    sha256 TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (sha256, user_id)
);

CREATE TABLE run_screenshots (
    sha256 TEXT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (sha256, run_id)
);
