//! Assignments and queues: `GET/PUT /runs/{runId}/assignees`, `POST
//! /assignments:roundRobin`, `GET /users/me/queue` and `GET /users/me/queue/next`.
//!
//! An assignment row says a run is an annotator's work (`open`) or handed in (`submitted`).
//! With the project's overlap at 1 assigning also makes the assignee the run's `annotator`
//! (a run version); above 1 each assignee writes their own version (`routes/overlap.rs`).
//! Every change is audited, notifies the new assignees and fires `assignment.changed`.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{JsonBody, Query, Reply, if_match};
use crate::model::{self, Entry, RUN_COUNTERS, RunRow};
use crate::problem::{Problem, Result};
use crate::routes::runs::RunFilter;
use crate::routes::{Paged, run_id_param};
use crate::store::{Sql, Tx, get_opt_str, get_str};
use crate::validate;

/// Reviewers, qa_managers and admins assign; annotators do not.
fn may_assign(user: &User) -> Result<()> {
    if user.role == Role::Annotator {
        return Err(Problem::forbidden("Reviewers, qa_managers and admins assign runs."));
    }
    Ok(())
}

pub fn assignment_json(row: &AnyRow) -> Result<Value> {
    Ok(json!({
        "runId": get_str(row, "run_id")?,
        "annotator": get_str(row, "annotator")?,
        "assignedBy": get_str(row, "assigned_by")?,
        "assignedAt": get_str(row, "assigned_at")?,
        "state": get_str(row, "state")?,
        "submittedAt": get_opt_str(row, "submitted_at")?,
    }))
}

const ASSIGNMENT_COLUMNS: &str =
    "a.run_id, a.annotator, a.assigned_by, a.assigned_at, a.state, a.submitted_at";

/// The run's assignments, oldest first.
pub async fn assignments(conn: &mut AnyConnection, run_id: &str) -> Result<Vec<Value>> {
    let sql = format!(
        "SELECT {ASSIGNMENT_COLUMNS} FROM assignments a WHERE a.run_id = $1 \
         ORDER BY a.assigned_at, a.annotator"
    );
    let rows = sqlx::query(&sql).bind(run_id.to_owned()).fetch_all(conn).await?;
    rows.iter().map(assignment_json).collect()
}

async fn list_json(conn: &mut AnyConnection, user: &User, run: &RunRow) -> Result<Value> {
    let mut items = assignments(conn, &run.id).await?;
    if user.role == Role::Annotator {
        items.retain(|a| a["annotator"] == user.id.as_str());
    }
    Ok(json!({"runId": run.id, "overlap": run.assignees, "runVersion": run.version,
        "items": items}))
}

pub async fn get_assignees(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
) -> Result<Reply> {
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    Ok(Reply::ok(list_json(&mut conn, &user, &run).await?))
}

pub async fn put_assignees(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let run_id = run_id_param(&run_id)?;
    may_assign(&user)?;
    let base = if_match(&headers)?;
    validate::check_body("AssigneesWrite", &body)?;
    let annotators = validate::texts(body.get("annotators")).unwrap_or_default();
    let note = validate::text(&body, "note");
    let mut tx = state.store.begin().await?;
    let run = model::lock_visible_run(&mut tx, &user, &run_id).await?;
    model::require_version(&mut tx, &run, base).await?;
    check_annotators(&mut tx, &annotators, "/annotators").await?;
    let overlap = super::project::load(&mut tx).await?.overlap;
    let version = assign(&mut tx, &user, &run, &annotators, overlap, note.as_deref()).await?;
    let run = model::lock_run(&mut tx, &run_id).await?.ok_or_else(|| Problem::internal("gone"))?;
    let out = list_json(&mut tx, &user, &run).await?;
    tx.commit().await?;
    Ok(Reply::ok(out).version(version))
}

/// Every one of `ids` is a user with the role annotator (`422` at `at/i` otherwise).
async fn check_annotators(conn: &mut AnyConnection, ids: &[String], at: &str) -> Result<()> {
    let mut sql = Sql::new("SELECT id FROM users WHERE role = 'annotator' AND id IN ");
    sql.texts(ids);
    let rows = sql.query().fetch_all(conn).await?;
    let found: Vec<String> = rows.iter().map(|r| get_str(r, "id")).collect::<Result<_, _>>()?;
    let errors: Vec<_> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !found.contains(id))
        .map(|(i, _)| crate::problem::FieldError::new(format!("{at}/{i}"), "is not an annotator"))
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(Problem::validation(errors)) }
}

/// Makes `annotators` the run's assignees (the run locked in `tx`, the caller one who may
/// assign, the annotators checked); returns the run's version after it.
pub async fn assign(
    tx: &mut Tx,
    user: &User,
    run: &RunRow,
    annotators: &[String],
    overlap: i64,
    note: Option<&str>,
) -> Result<i64> {
    model::require_editable(run)?;
    if annotators.len() as i64 != overlap {
        return Err(Problem::invalid(
            "/annotators",
            format!("must name {overlap} annotator(s): the project's overlap"),
        ));
    }
    let before: Vec<String> = assignments(tx, &run.id)
        .await?
        .iter()
        .filter_map(|a| a["annotator"].as_str().map(str::to_owned))
        .collect();
    let mut sorted_before = before.clone();
    let mut sorted_after = annotators.to_vec();
    sorted_before.sort();
    sorted_after.sort();
    if sorted_before == sorted_after {
        return Ok(run.version);
    }
    let now = crate::time::now();
    for gone in before.iter().filter(|b| !annotators.contains(b)) {
        sqlx::query("DELETE FROM assignments WHERE run_id = $1 AND annotator = $2")
            .bind(run.id.clone())
            .bind(gone.clone())
            .execute(&mut **tx)
            .await?;
        sqlx::query(
            "UPDATE annotation_sets SET state = 'unassigned' WHERE run_id = $1 AND annotator = $2",
        )
        .bind(run.id.clone())
        .bind(gone.clone())
        .execute(&mut **tx)
        .await?;
    }
    let task = run.header.get("taskPrompt").and_then(Value::as_str).unwrap_or("");
    let short: String = task.chars().take(60).collect();
    for new in annotators.iter().filter(|a| !before.contains(a)) {
        sqlx::query(
            "INSERT INTO assignments (run_id, annotator, assigned_by, assigned_at, state, \
             submitted_at) VALUES ($1, $2, $3, $4, 'open', NULL)",
        )
        .bind(run.id.clone())
        .bind(new.clone())
        .bind(user.id.clone())
        .bind(now.clone())
        .execute(&mut **tx)
        .await?;
        if overlap > 1 {
            sqlx::query(
                "INSERT INTO annotation_sets (run_id, annotator, state, submitted_at, updated_at) \
                 VALUES ($1, $2, 'open', NULL, NULL) ON CONFLICT (run_id, annotator) \
                 DO UPDATE SET state = 'open', submitted_at = NULL",
            )
            .bind(run.id.clone())
            .bind(new.clone())
            .execute(&mut **tx)
            .await?;
        }
        let text = format!("Assigned to you: \"{short}\" ({})", run.id);
        crate::events::notify(tx, new, "assigned", Some(&run.id), None, &user.id, &text).await?;
    }
    sqlx::query("UPDATE runs SET assignees = $2 WHERE id = $1")
        .bind(run.id.clone())
        .bind(annotators.len() as i64)
        .execute(&mut **tx)
        .await?;
    let mut version = run.version;
    if overlap == 1 && run.annotator != annotators[0] {
        let mut header = run.header.clone();
        header.insert("annotator".into(), json!(annotators[0]));
        let changes = model::diff_maps(&run.header, &header, "");
        let summary = match note {
            Some(note) => format!("Assigned to {}: {note}", annotators[0]),
            None => format!("Assigned to {}", annotators[0]),
        };
        let entry = Entry::new("annotator-assigned", None, changes, summary);
        version = model::commit_version(tx, run, user, &now, entry, Some(&header)).await?;
    }
    let (before, after) = (json!({"annotators": before}), json!({"annotators": annotators}));
    crate::audit::record(
        tx,
        &user.id,
        "assignment.changed",
        Some(&run.id),
        "assignees",
        before.clone(),
        after.clone(),
    )
    .await?;
    let data = json!({"before": before["annotators"], "after": after["annotators"],
        "note": note});
    crate::events::fire(tx, "assignment.changed", &user.id, Some(&run.id), data).await?;
    Ok(version)
}

pub async fn round_robin(
    State(state): State<AppState>,
    user: User,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    may_assign(&user)?;
    validate::check_body("RoundRobinRequest", &body)?;
    let filter = RunFilter::from_json(&body["filter"], &user)?;
    let annotators = validate::texts(body.get("annotators")).unwrap_or_default();
    let only_unassigned = body.get("onlyUnassigned").and_then(Value::as_bool).unwrap_or(true);
    let max = body.get("max").and_then(Value::as_i64).unwrap_or(200);
    let mut conn = state.store.pool.acquire().await?;
    check_annotators(&mut conn, &annotators, "/annotators").await?;
    let overlap = super::project::load(&mut conn).await?.overlap;
    if (annotators.len() as i64) < overlap {
        return Err(Problem::invalid(
            "/annotators",
            format!("must name at least {overlap} annotators: the project's overlap"),
        ));
    }
    let mut sql = Sql::new("SELECT r.id FROM runs r WHERE r.status IN ('draft', 'in-review')");
    filter.push(&mut sql);
    sql.push(" ORDER BY r.created_at, r.id LIMIT ").int(max);
    let ids: Vec<String> = sql
        .query()
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| get_str(r, "id"))
        .collect::<Result<_, _>>()?;
    drop(conn);
    let (mut assigned, mut skipped) = (Vec::new(), Vec::new());
    let mut turn = 0usize;
    for id in ids {
        let mut tx = state.store.begin().await?;
        let Some(run) = model::lock_run(&mut tx, &id).await? else { continue };
        if only_unassigned && run.assignees > 0 {
            skipped.push(json!({"runId": id, "reason": "already assigned"}));
            continue;
        }
        let chosen: Vec<String> = (0..overlap as usize)
            .map(|k| annotators[(turn + k) % annotators.len()].clone())
            .collect();
        match assign(&mut tx, &user, &run, &chosen, overlap, None).await {
            Ok(_) => {
                tx.commit().await?;
                turn = (turn + overlap as usize) % annotators.len();
                assigned.push(json!({"runId": id, "annotators": chosen}));
            }
            Err(problem) if problem.status.is_server_error() => return Err(problem),
            Err(problem) => {
                let reason = problem.detail.unwrap_or_else(|| problem.title.to_owned());
                skipped.push(json!({"runId": id, "reason": reason}));
            }
        }
    }
    Ok(Reply::ok(json!({"assigned": assigned, "skipped": skipped})))
}

/// A queue item from a row with the assignment's and the run's columns.
fn queue_item(row: &AnyRow) -> Result<Value> {
    Ok(json!({"assignment": assignment_json(row)?, "run": model::run_json_from_row(row)?}))
}

fn queue_sql() -> String {
    format!(
        "SELECT {ASSIGNMENT_COLUMNS}, r.id, r.annotator, r.status, r.version, r.header_version, \
         r.updated_at, r.updated_by, r.header, r.review_rounds, r.assignees, {RUN_COUNTERS} \
         FROM assignments a JOIN runs r ON r.id = a.run_id WHERE a.annotator = "
    )
}

pub async fn queue(State(state): State<AppState>, user: User, query: Query) -> Result<Reply> {
    let paged = Paged::read(query, &json!(["queue", user.id]))?;
    let mut sql = Sql::new(&queue_sql());
    sql.text(&user.id).push(" AND a.state = 'open'");
    if let Some((at, id)) = paged.after_pair()? {
        push_after(&mut sql, &at, &id);
    }
    sql.push(" ORDER BY a.assigned_at, a.run_id LIMIT ").int(paged.limit + 1);
    let rows = sql.query().fetch_all(&state.store.pool).await?;
    let key = |last: &AnyRow| Ok(json!([get_str(last, "assigned_at")?, get_str(last, "run_id")?]));
    paged.page(&rows, key, queue_item)
}

fn push_after(sql: &mut Sql, at: &str, id: &str) {
    sql.push(" AND (a.assigned_at > ").text(at);
    sql.push(" OR (a.assigned_at = ").text(at).push(" AND a.run_id > ").text(id).push("))");
}

pub async fn next(State(state): State<AppState>, user: User, mut query: Query) -> Result<Reply> {
    let after = query.one("after")?;
    query.finish()?;
    if after.as_deref().is_some_and(|id| !validate::is_id(id)) {
        return Err(Problem::bad_param("query.after", "must be an id"));
    }
    let mut conn = state.store.pool.acquire().await?;
    let mut sql = Sql::new(&queue_sql());
    sql.text(&user.id).push(" AND a.state = 'open'");
    if let Some(after) = &after {
        let row =
            sqlx::query("SELECT assigned_at FROM assignments WHERE run_id = $1 AND annotator = $2")
                .bind(after.clone())
                .bind(user.id.clone())
                .fetch_optional(&mut *conn)
                .await?;
        if let Some(row) = row {
            push_after(&mut sql, &get_str(&row, "assigned_at")?, after);
        } else {
            sql.push(" AND a.run_id <> ").text(after);
        }
    }
    sql.push(" ORDER BY a.assigned_at, a.run_id LIMIT 1");
    let row = sql.query().fetch_optional(&mut *conn).await?;
    let item = row.as_ref().map(queue_item).transpose()?;
    Ok(Reply::ok(json!({"item": item})))
}
