//! Model-call traces: `GET /runs/{runId}/traces`, `GET/PUT /runs/{runId}/traces/{traceId}`.
//! Write-once facts: no versions, no `If-Match`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{JsonBody, Reply};
use crate::model;
use crate::problem::{Problem, Result};
use crate::routes::{RunList, id_param, run_id_param};
use crate::store::{Sql, Tx, get_json, get_str};
use crate::validate::{self, Check};

pub async fn list(State(state): State<AppState>, user: User, mut list: RunList) -> Result<Reply> {
    let step = list.query.int("step", 0, 1999)?;
    let filters = json!(["traces", list.run_id, step]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new("SELECT id, started_at, body FROM traces WHERE run_id = ");
    sql.text(&list.run_id);
    if let Some(step) = step {
        sql.push(" AND step = ").int(step);
    }
    if let Some((at, id)) = list.after(|after| Some((after[0].as_str()?, after[1].as_str()?)))? {
        sql.push(" AND (started_at > ").text(at);
        sql.push(" OR (started_at = ").text(at).push(" AND id > ").text(id).push("))");
    }
    sql.push(" ORDER BY started_at, id");
    let key = |last: &_| Ok(json!([get_str(last, "started_at")?, get_str(last, "id")?]));
    list.page(sql, key, |row| Ok(get_json(row, "body")?)).await
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path((run_id, trace_id)): Path<(String, String)>,
) -> Result<Reply> {
    let (run_id, trace_id) = (run_id_param(&run_id)?, id_param("traceId", &trace_id)?);
    let mut conn = state.store.pool.acquire().await?;
    model::visible_run(&mut conn, &user, &run_id).await?;
    let row = sqlx::query("SELECT body FROM traces WHERE run_id = $1 AND id = $2")
        .bind(run_id)
        .bind(trace_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| Problem::not_found("trace"))?;
    Ok(Reply::ok(get_json(&row, "body")?))
}

pub async fn put(
    State(state): State<AppState>,
    user: User,
    Path((run_id, trace_id)): Path<(String, String)>,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let (run_id, trace_id) = (run_id_param(&run_id)?, id_param("traceId", &trace_id)?);
    check_trace(&user, &run_id, &trace_id, &body)?;
    let mut tx = state.store.begin().await?;
    let reply = write_trace(&mut tx, &user, &run_id, &trace_id, &body).await?;
    tx.commit().await?;
    Ok(reply)
}

/// What a trace write can be refused for without the database: the role, and the body.
pub fn check_trace(user: &User, run_id: &str, trace_id: &str, body: &Value) -> Result<()> {
    if user.role == Role::Reviewer {
        return Err(Problem::forbidden("Reviewers do not upload traces."));
    }
    let mut c = Check::default();
    validate::trace(body, &mut c);
    if body.get("id").and_then(Value::as_str).is_some_and(|id| id != trace_id) {
        c.err("/id", "must equal the traceId in the path");
    }
    if body.get("runId").and_then(Value::as_str).is_some_and(|id| id != run_id) {
        c.err("/runId", "must equal the runId in the path");
    }
    c.finish()
}

/// Stores a trace (checked by [`check_trace`]) once, in `tx`, locking its run first;
/// refuses only before it writes (see `runs::write_run`).
pub async fn write_trace(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    trace_id: &str,
    body: &Value,
) -> Result<Reply> {
    let run = model::lock_visible_run(tx, user, run_id).await?;
    // A trace is part of what was reviewed: once approved (or rejected, archived), the run
    // takes none, as it takes no other write.
    model::require_editable(&run)?;
    let existing = |row: sqlx::any::AnyRow| -> Result<Reply> {
        let stored = get_json(&row, "body")?;
        if stored == *body {
            Ok(Reply::ok(stored))
        } else {
            Err(Problem::conflict("conflict", "trace", None, None, stored, None)
                .detail("A different trace is stored under this id; traces never change."))
        }
    };
    let select = "SELECT body FROM traces WHERE run_id = $1 AND id = $2";
    let row = sqlx::query(select)
        .bind(run_id.to_owned())
        .bind(trace_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    if let Some(row) = row {
        return existing(row);
    }
    let started_at = body.get("startedAt").and_then(Value::as_str).unwrap_or("");
    let inserted = sqlx::query(
        "INSERT INTO traces (run_id, id, step, started_at, body) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (run_id, id) DO NOTHING",
    )
    .bind(run_id.to_owned())
    .bind(trace_id.to_owned())
    .bind(body.get("step").and_then(Value::as_i64).unwrap_or(0))
    .bind(crate::time::normalize(started_at).unwrap_or_default())
    .bind(body.to_string())
    .execute(&mut **tx)
    .await?;
    if inserted.rows_affected() == 0 {
        let query = sqlx::query(select).bind(run_id.to_owned()).bind(trace_id.to_owned());
        return existing(query.fetch_one(&mut **tx).await?);
    }
    let after = serde_json::json!({"id": trace_id});
    let target = format!("trace {trace_id}");
    crate::audit::record(tx, &user.id, "trace.created", Some(run_id), &target, Value::Null, after)
        .await?;
    Ok(Reply::ok(body.clone())
        .status(StatusCode::CREATED)
        .location(format!("/runs/{run_id}/traces/{trace_id}")))
}
