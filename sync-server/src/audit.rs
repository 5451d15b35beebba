//! The audit log: every write the server accepts, with who, what, when, the run, the target
//! and its ids or versions before and after, written in the write's own transaction. It is
//! append-only: [`record`] is the only statement that touches the table besides the admins'
//! reads (`routes/audit.rs`); nothing updates or deletes a row (`tests/teams.rs` holds the
//! source to that). A secret (a token, a webhook's key) is never part of an entry.

use serde_json::Value;
use sqlx::AnyConnection;

use crate::problem::Result;

/// Appends one entry on `conn` (the write's transaction).
pub async fn record(
    conn: &mut AnyConnection,
    user: &str,
    action: &str,
    run_id: Option<&str>,
    target: &str,
    before: Value,
    after: Value,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO audit_log (at, user_id, action, run_id, target, before_ids, after_ids) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(crate::time::now())
    .bind(user.to_owned())
    .bind(action.to_owned())
    .bind(run_id.map(str::to_owned))
    .bind(target.to_owned())
    .bind(before.to_string())
    .bind(after.to_string())
    .execute(conn)
    .await?;
    Ok(())
}
