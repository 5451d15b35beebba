//! `GET /audit` and `GET /audit:export`: the audit log for admins, filtered by user,
//! action, run and time; newest first in pages, or oldest first as JSON Lines.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{Query, Reply};
use crate::problem::{Problem, Result};
use crate::routes::Paged;
use crate::store::{Sql, get_i64, get_json, get_opt_str, get_str};
use crate::validate;

fn entry_json(row: &AnyRow) -> Result<Value> {
    Ok(json!({
        "seq": get_i64(row, "seq")?,
        "at": get_str(row, "at")?,
        "user": get_str(row, "user_id")?,
        "action": get_str(row, "action")?,
        "runId": get_opt_str(row, "run_id")?,
        "target": get_str(row, "target")?,
        "before": get_json(row, "before_ids")?,
        "after": get_json(row, "after_ids")?,
    }))
}

/// The filters of both operations, read from the query, as SQL and as the cursor's key.
fn filters(user: &User, query: &mut Query) -> Result<(Sql, Value)> {
    if user.role != Role::Admin {
        return Err(Problem::forbidden("Only an admin reads the audit log."));
    }
    let who = query.one("user")?;
    if who.as_deref().is_some_and(|u| !validate::is_user_id(u)) {
        return Err(Problem::bad_param("query.user", "must be a user id"));
    }
    let action = query.one("action")?;
    if action.as_ref().is_some_and(|a| a.is_empty() || a.len() > 64) {
        return Err(Problem::bad_param("query.action", "must have 1 to 64 characters"));
    }
    let run = query.one("runId")?;
    if run.as_deref().is_some_and(|r| !validate::is_id(r)) {
        return Err(Problem::bad_param("query.runId", "must be an id"));
    }
    let time = |name: &str, value: Option<String>| -> Result<Option<String>> {
        value
            .map(|t| {
                crate::time::normalize(&t).ok_or_else(|| {
                    Problem::bad_param(&format!("query.{name}"), "must be an RFC 3339 date-time")
                })
            })
            .transpose()
    };
    let since = time("since", query.one("since")?)?;
    let until = time("until", query.one("until")?)?;
    let key = json!(["audit", who, action, run, since, until]);
    let mut sql = Sql::new(
        "SELECT seq, at, user_id, action, run_id, target, before_ids, after_ids FROM audit_log \
         WHERE 1 = 1",
    );
    if let Some(who) = &who {
        sql.push(" AND user_id = ").text(who);
    }
    if let Some(action) = &action {
        sql.push(" AND action = ").text(action);
    }
    if let Some(run) = &run {
        sql.push(" AND run_id = ").text(run);
    }
    if let Some(since) = &since {
        sql.push(" AND at >= ").text(since);
    }
    if let Some(until) = &until {
        sql.push(" AND at < ").text(until);
    }
    Ok((sql, key))
}

pub async fn list(State(state): State<AppState>, user: User, mut query: Query) -> Result<Reply> {
    let (sql, key) = filters(&user, &mut query)?;
    Paged::read(query, &key)?.newest_first(sql, &state, entry_json).await
}

pub async fn export(
    State(state): State<AppState>,
    user: User,
    mut query: Query,
) -> Result<Response> {
    let (mut sql, _) = filters(&user, &mut query)?;
    query.finish()?;
    sql.push(" ORDER BY seq");
    let rows = sql.query().fetch_all(&state.store.pool).await?;
    let mut out = String::new();
    for row in &rows {
        out.push_str(&entry_json(row)?.to_string());
        out.push('\n');
    }
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson")),
        (
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"audit.jsonl\""),
        ),
    ];
    Ok((headers, out).into_response())
}
