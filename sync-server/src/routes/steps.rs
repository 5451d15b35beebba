//! `GET /runs/{runId}/steps`, `GET/PUT /runs/{runId}/steps/{index}`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::User;
use crate::http::{
    JsonBody, Precondition, Reply, not_modified, not_modified_response, write_precondition,
};
use crate::model::{self, EditScope, Entry, edit_scope, step_json, step_output};
use crate::problem::{FieldError, Problem, Result};
use crate::routes::{RunList, index_param, run_id_param};
use crate::store::{Sql, Tx, get_i64};
use crate::validate::{self, Check, STEP_FIXED, step_editable};

pub async fn list(State(state): State<AppState>, user: User, mut list: RunList) -> Result<Reply> {
    let since = list.query.int("sinceVersion", 0, i64::MAX)?;
    let filters = json!(["steps", list.run_id, since]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new(&format!(
        "SELECT s.idx, s.version, s.body, {} FROM steps s WHERE s.run_id = ",
        model::STEP_COUNTERS
    ));
    sql.text(&list.run_id);
    if let Some(since) = since {
        sql.push(" AND s.version > ").int(since);
    }
    if let Some(index) = list.after(Value::as_i64)? {
        sql.push(" AND s.idx > ").int(index);
    }
    sql.push(" ORDER BY s.idx");
    let item = |row: &_| {
        let step = model::step_from_row(row)?;
        Ok(step_output(&step, model::step_counters_from_row(row)?))
    };
    list.page(sql, |last| Ok(json!(get_i64(last, "idx")?)), item).await
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path((run_id, index)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response> {
    let (run_id, index) = (run_id_param(&run_id)?, index_param(&index)?);
    let mut conn = state.store.pool.acquire().await?;
    model::visible_run(&mut conn, &user, &run_id).await?;
    let step = model::load_step(&mut conn, &run_id, index)
        .await?
        .ok_or_else(|| Problem::not_found("step"))?;
    if not_modified(&headers, step.version) {
        return Ok(not_modified_response(step.version));
    }
    let body = step_json(&mut conn, &run_id, &step).await?;
    Ok(Reply::ok(body).version(step.version).into_response())
}

pub async fn put(
    State(state): State<AppState>,
    user: User,
    Path((run_id, index)): Path<(String, String)>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let (run_id, index) = (run_id_param(&run_id)?, index_param(&index)?);
    let pre = write_precondition(&headers)?;
    let record = check_step(&run_id, index, &body)?;
    let mut tx = state.store.begin().await?;
    let reply = write_step(&mut tx, &user, &run_id, index, pre, record).await?;
    tx.commit().await?;
    Ok(reply)
}

/// What a step write can be refused for without the database: the body.
pub fn check_step(run_id: &str, index: i64, body: &Value) -> Result<Map<String, Value>> {
    let mut check = Check::default();
    let record = validate::step_write(body, &mut check);
    let record = check.finish_with(record)?;
    let mut errors = Vec::new();
    if record.get("runId").and_then(Value::as_str) != Some(run_id) {
        errors.push(FieldError::new("/runId", "must equal the runId in the path"));
    }
    if record.get("index").and_then(Value::as_i64) != Some(index) {
        errors.push(FieldError::new("/index", "must equal the index in the path"));
    }
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    Ok(record)
}

/// Creates or updates one step (checked by [`check_step`]) in `tx`, locking its run first;
/// refuses only before it writes (see `runs::write_run`).
pub async fn write_step(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    index: i64,
    pre: Precondition,
    mut record: Map<String, Value>,
) -> Result<Reply> {
    let now = crate::time::now();
    let run = model::lock_visible_run(tx, user, run_id).await?;
    let scope = edit_scope(user, &run)?;
    let current = model::load_step(tx, run_id, index).await?;
    let location = format!("/runs/{run_id}/steps/{index}");

    let Precondition::Match(base) = pre else {
        if let Some(step) = current {
            let record = step_json(tx, run_id, &step).await?;
            return Err(Problem::conflict(
                "already-exists",
                "step",
                None,
                Some(step.version),
                record,
                None,
            ));
        }
        if scope == EditScope::ReviewFields {
            return Err(Problem::forbidden("Reviewers do not upload steps."));
        }
        check_screenshot(tx, user, run_id, &record).await?;
        let entry = Entry::new(
            "step-created",
            Some(index),
            vec![model::Change {
                path: format!("steps.{index}"),
                op: "add",
                before: None,
                after: None,
            }],
            format!("Uploaded step {index}"),
        );
        let version = model::commit_version(tx, &run, user, &now, entry, None).await?;
        model::save_step(tx, run_id, index, version, &record, true).await?;
        let step = model::StepRow { index, version, body: record };
        // Threads and suggestions need the step to exist, and steps are never deleted.
        let out = model::step_output(&step, (0, 0));
        return Ok(Reply::ok(out).status(StatusCode::CREATED).version(version).location(location));
    };

    let step = current.ok_or_else(|| Problem::not_found("step"))?;
    let fixed: Vec<FieldError> = STEP_FIXED
        .iter()
        .filter(|key| record.get(**key) != step.body.get(**key))
        .map(|key| {
            FieldError::new(
                validate::pointer("", key),
                "is captured and fixed once the step exists",
            )
        })
        .collect();
    if !fixed.is_empty() {
        return Err(Problem::validation(fixed));
    }
    if step.version > base || base > run.version {
        return Err(model::step_conflict(tx, run_id, &step, base).await?);
    }
    let mut changes = model::diff_maps(&step_editable(&step.body), &step_editable(&record), "");
    if changes.is_empty() {
        let out = step_json(tx, run_id, &step).await?;
        return Ok(Reply::ok(out).version(step.version));
    }
    if scope == EditScope::ReviewFields {
        let refused: Vec<String> = changes
            .iter()
            .filter(|c| !(c.path.starts_with("verified") || c.path.starts_with("issues")))
            .map(|c| c.path.clone())
            .collect();
        if !refused.is_empty() {
            return Err(model::forbidden_paths(
                "Reviewers change only verified and issues; suggest the rest.",
                refused,
            ));
        }
    }
    record.insert("lastEditedBy".into(), json!(user.id));
    record.insert("lastEditedAt".into(), json!(now));
    for change in &mut changes {
        change.path = format!("steps.{index}.{}", change.path);
    }
    let summary = format!(
        "Edited {} of step {index}",
        model::describe_paths(&changes, &format!("steps.{index}."))
    );
    let entry = Entry::new("step-edited", Some(index), changes, summary);
    let version = model::commit_version(tx, &run, user, &now, entry, None).await?;
    model::save_step(tx, run_id, index, version, &record, false).await?;
    let step = model::StepRow { index, version, body: record };
    let out = step_json(tx, run_id, &step).await?;
    Ok(Reply::ok(out).version(version))
}

/// A step's screenshot must be stored and the caller's to read (theirs, or shown in a run
/// they may see), with the size it claims; the run then shows it, to whoever may see the run.
async fn check_screenshot(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    record: &Map<String, Value>,
) -> Result<()> {
    let Some(shot) = record.get("screenshot").and_then(Value::as_object) else { return Ok(()) };
    let key = shot.get("key").and_then(Value::as_str).unwrap_or("");
    match super::screenshots::readable_size(tx, user, key).await? {
        None => {
            return Err(Problem::invalid(
                "/screenshot/key",
                "no stored screenshot has this hash; upload it first (PUT /screenshots/{sha256})",
            ));
        }
        Some(bytes) if Some(bytes) != shot.get("bytes").and_then(Value::as_i64) => {
            return Err(Problem::invalid(
                "/screenshot/bytes",
                "differs from the stored screenshot's size",
            ));
        }
        Some(_) => {}
    }
    sqlx::query(
        "INSERT INTO run_screenshots (sha256, run_id) VALUES ($1, $2) \
         ON CONFLICT (sha256, run_id) DO NOTHING",
    )
    .bind(key.to_owned())
    .bind(run_id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}
