//! The database: one `sqlx::AnyPool` over SQLite or PostgreSQL.
//!
//! Why `Any` rather than a trait over two pools: every query here is plain SQL that both
//! databases accept — `$1` placeholders (SQLite reads `$N` as the N-th argument), `TEXT`,
//! `BIGINT`, `ON CONFLICT … DO NOTHING`, `RETURNING` — and binds only `String`, `i64`,
//! `Vec<u8>` and their `Option`s, which `Any` maps onto both. So one code path serves both
//! backends and the tests exercise the same SQL either way. The one difference, the blob
//! column type, is a `{blob}` placeholder in the migrations (`BLOB` / `BYTEA`).
//!
//! Writes to a run serialize on the run's row: a write transaction's first statement is
//! [`lock_run`], an `UPDATE … RETURNING` on it (after the `Idempotency-Key` reservation, a
//! write too, when the request has one: see `idempotency`). That takes SQLite's write lock
//! before anything is read (so a deferred transaction never has to upgrade a stale read
//! snapshot) and PostgreSQL's row lock, so the version check and the write that follows it
//! cannot interleave with another writer's, whichever server process it runs in.
//!
//! SQLite has one writer at a time. Writers that find its lock taken poll for it (sleeping
//! 1, 2, 5, 10… ms between tries), which under load wastes most of the time the lock is
//! free, so on SQLite [`Store::begin`] first queues on an in-process gate: a server's
//! write transactions take turns in arrival order and never poll. Every write goes through
//! a [`Tx`]; readers use the pool directly and are not held up (WAL).
//!
//! [`lock_run`]: crate::model::lock_run

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::Arc;

use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, AnyPool, Row};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Embedded migrations, applied in order at start-up and recorded in `schema_migrations`.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../migrations/0001_init.sql")),
    (2, include_str!("../migrations/0002_suggestions.sql")),
    (3, include_str!("../migrations/0003_replay_indexes.sql")),
    (4, include_str!("../migrations/0004_screenshot_access.sql")),
    (5, include_str!("../migrations/0005_token_lifetime.sql")),
    (6, include_str!("../migrations/0006_teams.sql")),
    (7, include_str!("../migrations/0007_annotation_tags.sql")),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

#[derive(Clone)]
pub struct Store {
    pub pool: AnyPool,
    pub backend: Backend,
    /// SQLite's write gate (see the module doc); `None` on PostgreSQL, whose writers lock
    /// rows, not the database.
    gate: Option<Arc<Mutex<()>>>,
}

/// A write transaction: it derefs to its connection, like a sqlx transaction, and on
/// SQLite holds the write gate until it commits or is dropped (which rolls it back).
pub struct Tx {
    inner: sqlx::Transaction<'static, Any>,
    _gate: Option<OwnedMutexGuard<()>>,
}

impl Tx {
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.inner.commit().await
    }
}

impl Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.inner
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.inner
    }
}

impl Store {
    /// Connects (creating a SQLite file and its folder if needed) and migrates.
    pub async fn connect(url: &str) -> Result<Store, String> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if let Some(rest) =
            url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))
        {
            (Backend::Sqlite, sqlite_url(rest)?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_owned())
        } else {
            return Err(format!(
                "unsupported database URL {url:?}: use sqlite://… or postgres://…"
            ));
        };
        let max = if backend == Backend::Sqlite { 4 } else { 10 };
        let pool = AnyPoolOptions::new()
            .max_connections(max)
            .connect(&url)
            .await
            .map_err(|e| format!("cannot open {}: {e}", redact_url(&url)))?;
        if backend == Backend::Sqlite {
            // WAL lets readers go on while one connection writes; it is kept in the file.
            sqlx::query("PRAGMA journal_mode=WAL")
                .execute(&pool)
                .await
                .map_err(|e| e.to_string())?;
        }
        let gate = (backend == Backend::Sqlite).then(|| Arc::new(Mutex::new(())));
        let store = Store { pool, backend, gate };
        store.migrate().await.map_err(|e| format!("migration failed: {e}"))?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), sqlx::Error> {
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS schema_migrations \
             (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        .execute(&self.pool)
        .await?;
        let applied: Vec<i64> = sqlx::query("SELECT version FROM schema_migrations")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| row.try_get("version"))
            .collect::<Result<_, _>>()?;
        let (blob, serial) = match self.backend {
            Backend::Sqlite => ("BLOB", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            Backend::Postgres => ("BYTEA", "BIGSERIAL PRIMARY KEY"),
        };
        for (version, sql) in MIGRATIONS {
            if applied.contains(version) {
                continue;
            }
            let mut tx = self.pool.begin().await?;
            for statement in statements(sql) {
                let statement = statement.replace("{blob}", blob).replace("{serial}", serial);
                sqlx::query(&statement).execute(&mut *tx).await?;
            }
            if *version == 4 {
                backfill_run_screenshots(&mut tx).await?;
            }
            if *version == 6 {
                backfill_review_rounds(&mut tx).await?;
            }
            sqlx::query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)")
                .bind(*version)
                .bind(crate::time::now())
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// Begins a write transaction (after the write gate, on SQLite).
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        let gate = match &self.gate {
            Some(gate) => Some(gate.clone().lock_owned().await),
            None => None,
        };
        Ok(Tx { inner: self.pool.begin().await?, _gate: gate })
    }

    /// Deletes replay records past their keeping time ([`REPLAY_TABLES`]), one short write
    /// per table. Returns how many rows went. `serve` runs it in the background, never
    /// inside a request's write.
    pub async fn prune(&self) -> Result<u64, sqlx::Error> {
        let now = crate::time::now_ms();
        let mut deleted = 0;
        for (table, keep) in REPLAY_TABLES {
            let mut tx = self.begin().await?;
            let cutoff = crate::time::format_ms(now - keep);
            let sql = prune_sql(table);
            deleted += sqlx::query(&sql).bind(cutoff).execute(&mut *tx).await?.rows_affected();
            tx.commit().await?;
        }
        Ok(deleted)
    }
}

/// How long a batch item's result is kept for replays of its `mutationId`: 7 days.
pub const MUTATIONS_KEEP_MS: i64 = 7 * 24 * 3600 * 1000;
/// How long an answer is kept for retries with its `Idempotency-Key`: 24 hours.
pub const IDEMPOTENCY_KEEP_MS: i64 = 24 * 3600 * 1000;

/// The replay records and how long each is kept; both are indexed on `created_at`
/// (migration 3), which is what [`Store::prune`] reads.
pub const REPLAY_TABLES: [(&str, i64); 2] =
    [("mutations", MUTATIONS_KEEP_MS), ("idempotency", IDEMPOTENCY_KEEP_MS)];

/// The statement that prunes `table`, with the cutoff time as `$1`.
pub fn prune_sql(table: &str) -> String {
    format!("DELETE FROM {table} WHERE created_at < $1")
}

/// Migration 4's rows for the steps already stored: which runs show which screenshots (a
/// step's screenshot is fixed once it exists, so its current row says it).
async fn backfill_run_screenshots(
    tx: &mut sqlx::Transaction<'static, Any>,
) -> Result<(), sqlx::Error> {
    let rows = sqlx::query("SELECT run_id, body FROM steps").fetch_all(&mut **tx).await?;
    for row in rows {
        let body = get_json(&row, "body")?;
        let Some(key) = body.pointer("/screenshot/key").and_then(serde_json::Value::as_str) else {
            continue;
        };
        sqlx::query(
            "INSERT INTO run_screenshots (sha256, run_id) VALUES ($1, $2) \
             ON CONFLICT (sha256, run_id) DO NOTHING",
        )
        .bind(key.to_owned())
        .bind(get_str(&row, "run_id")?)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Migration 6's review rounds for the runs stored before it: their moves to `in-review`,
/// read from their history.
async fn backfill_review_rounds(
    tx: &mut sqlx::Transaction<'static, Any>,
) -> Result<(), sqlx::Error> {
    let rows = sqlx::query("SELECT run_id, extra FROM versions WHERE kind = 'status-changed'")
        .fetch_all(&mut **tx)
        .await?;
    let mut rounds: std::collections::BTreeMap<String, i64> = Default::default();
    for row in rows {
        let extra = get_json(&row, "extra")?;
        if extra.pointer("/transition/to").and_then(serde_json::Value::as_str) == Some("in-review")
        {
            *rounds.entry(get_str(&row, "run_id")?).or_default() += 1;
        }
    }
    for (run_id, n) in rounds {
        sqlx::query("UPDATE runs SET review_rounds = $2 WHERE id = $1")
            .bind(run_id)
            .bind(n)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// A SQLite URL with `mode=rwc` (create if missing), its folder created.
fn sqlite_url(rest: &str) -> Result<String, String> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path != ":memory:"
        && let Some(parent) = Path::new(path).parent().filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let query = if query.split('&').any(|kv| kv.starts_with("mode=")) {
        query.to_owned()
    } else if query.is_empty() {
        "mode=rwc".to_owned()
    } else {
        format!("{query}&mode=rwc")
    };
    Ok(format!("sqlite://{path}?{query}"))
}

/// The URL without its password, for messages.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let auth = &url[scheme + 3..at];
            let user = auth.split(':').next().unwrap_or("");
            format!("{}://{user}:***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// The statements of a migration file: `--` comment lines dropped, split on `;`.
fn statements(sql: &str) -> Vec<String> {
    let text: String = sql
        .lines()
        .filter(|line| !line.trim_start().starts_with("--"))
        .map(|line| format!("{line}\n"))
        .collect();
    text.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// A bind argument of a dynamically built query.
#[derive(Debug, Clone)]
pub enum Arg {
    Text(String),
    Int(i64),
}

/// SQL built piece by piece with numbered placeholders.
#[derive(Debug, Default)]
pub struct Sql {
    pub text: String,
    args: Vec<Arg>,
}

impl Sql {
    pub fn new(text: &str) -> Self {
        Self { text: text.to_owned(), args: Vec::new() }
    }

    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Appends a placeholder for `arg`.
    pub fn arg(&mut self, arg: Arg) -> &mut Self {
        self.args.push(arg);
        self.text.push_str(&format!("${}", self.args.len()));
        self
    }

    pub fn text(&mut self, value: impl Into<String>) -> &mut Self {
        self.arg(Arg::Text(value.into()))
    }

    pub fn int(&mut self, value: i64) -> &mut Self {
        self.arg(Arg::Int(value))
    }

    /// `(a, b, …)`, a placeholder for each of `values` (for `IN`; none matches nothing).
    pub fn texts<S: AsRef<str>>(&mut self, values: &[S]) -> &mut Self {
        if values.is_empty() {
            return self.push("(NULL)");
        }
        for (i, value) in values.iter().enumerate() {
            self.push(if i == 0 { "(" } else { ", " }).text(value.as_ref());
        }
        self.push(")")
    }

    pub fn query(&self) -> Query<'_, Any, AnyArguments<'_>> {
        let mut query = sqlx::query(&self.text);
        for arg in &self.args {
            query = match arg {
                Arg::Text(text) => query.bind(text.clone()),
                Arg::Int(int) => query.bind(*int),
            };
        }
        query
    }
}

/// `LIKE` pattern text with `%`, `_` and `\` escaped (use with `ESCAPE '\'`).
pub fn like_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub fn get_str(row: &AnyRow, column: &str) -> Result<String, sqlx::Error> {
    row.try_get(column)
}

pub fn get_opt_str(row: &AnyRow, column: &str) -> Result<Option<String>, sqlx::Error> {
    row.try_get(column)
}

pub fn get_i64(row: &AnyRow, column: &str) -> Result<i64, sqlx::Error> {
    row.try_get(column)
}

pub fn get_opt_i64(row: &AnyRow, column: &str) -> Result<Option<i64>, sqlx::Error> {
    row.try_get(column)
}

pub fn get_json(row: &AnyRow, column: &str) -> Result<serde_json::Value, sqlx::Error> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_statements() {
        assert_eq!(sqlite_url(":memory:").unwrap(), "sqlite://:memory:?mode=rwc");
        assert_eq!(redact_url("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(statements("-- c\nCREATE x;\n\nCREATE y (a);\n"), ["CREATE x", "CREATE y (a)"]);
        assert_eq!(like_escape("a_b%c"), "a\\_b\\%c");
    }

    /// Migration 4 gives the runs stored before it their screenshots, read from their steps.
    #[tokio::test]
    async fn migration_4_finds_the_screenshots_of_steps_stored_before_it() {
        let dir = std::env::temp_dir().join(format!("sync-store-test-{}", std::process::id()));
        let url = format!("sqlite://{}/sync.db", dir.display());
        let store = Store::connect(&url).await.unwrap();
        let before = [
            "DROP TABLE run_screenshots",
            "DROP TABLE screenshot_uploads",
            "DELETE FROM schema_migrations WHERE version = 4",
            "INSERT INTO steps (run_id, idx, version, body, search) VALUES \
             ('r1', 0, 2, '{\"screenshot\": {\"key\": \"ab12\"}}', ''), \
             ('r1', 1, 3, '{\"screenshot\": null}', '')",
        ];
        for sql in before {
            sqlx::query(sql).execute(&store.pool).await.unwrap();
        }
        store.pool.close().await;
        let store = Store::connect(&url).await.unwrap();
        let rows = sqlx::query("SELECT sha256, run_id FROM run_screenshots")
            .fetch_all(&store.pool)
            .await
            .unwrap();
        let found: Vec<(String, String)> = rows
            .iter()
            .map(|row| (get_str(row, "sha256").unwrap(), get_str(row, "run_id").unwrap()))
            .collect();
        assert_eq!(found, [("ab12".to_owned(), "r1".to_owned())]);
        store.pool.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }
}
