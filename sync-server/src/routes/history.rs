//! The run's history: `GET /runs/{runId}/versions[/{version}[/steps/{index}]]`,
//! `GET /runs/{runId}/diff`, `POST /runs/{runId}/rollback`.

use axum::extract::{Path, State};
use serde_json::{Map, Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::User;
use crate::http::{Query, Reply, if_match};
use crate::idempotency::Replay;
use crate::model::{self, Change, Entry, StepRow, diff, require_full_edit};
use crate::problem::{Problem, Result};
use crate::routes::{RunList, RunPost, Write, index_param, run_id_param};
use crate::store::{Sql, get_i64, get_json, get_opt_i64, get_str, like_escape};
use crate::validate::{self, Check, STEP_EDITABLE};

const KINDS: [&str; 7] = [
    "run-created",
    "run-edited",
    "step-created",
    "step-edited",
    "status-changed",
    "rolled-back",
    "suggestion-accepted",
];

fn version_json(row: &AnyRow) -> Result<Value> {
    let extra = get_json(row, "extra")?;
    Ok(json!({
        "version": get_i64(row, "version")?,
        "at": get_str(row, "at_time")?,
        "by": get_str(row, "by_user")?,
        "kind": get_str(row, "kind")?,
        "stepIndex": get_opt_i64(row, "step_index")?,
        "changes": get_json(row, "changes")?,
        "summary": get_str(row, "summary")?,
        "transition": extra.get("transition").cloned().unwrap_or(Value::Null),
        "rolledBackTo": extra.get("rolledBackTo").cloned().unwrap_or(Value::Null),
        "suggestionId": extra.get("suggestionId").cloned().unwrap_or(Value::Null),
    }))
}

const VERSION_COLUMNS: &str =
    "version, at_time, by_user, kind, step_index, changes, summary, extra";

pub async fn list(State(state): State<AppState>, user: User, mut list: RunList) -> Result<Reply> {
    let step = list.query.int("stepIndex", 0, 1999)?;
    let kinds = list.query.all("kind");
    if let Some(kind) = kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
        return Err(Problem::bad_param("query.kind", format!("{kind:?} is not a version kind")));
    }
    let by = list.query.one("by")?;
    if by.as_deref().is_some_and(|b| !validate::is_user_id(b)) {
        return Err(Problem::bad_param("query.by", "must be a user id"));
    }
    let filters = json!(["versions", list.run_id, step, kinds, by]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new(&format!("SELECT {VERSION_COLUMNS} FROM versions WHERE run_id = "));
    sql.text(&list.run_id);
    if let Some(step) = step {
        sql.push(" AND (step_index = ").int(step);
        sql.push(" OR (kind = 'rolled-back' AND changes LIKE ");
        sql.text(format!("%\"steps.{}.%", like_escape(&step.to_string()))).push(" ESCAPE '\\'))");
    }
    if !kinds.is_empty() {
        sql.push(" AND kind IN ").texts(&kinds);
    }
    if let Some(by) = &by {
        sql.push(" AND by_user = ").text(by);
    }
    if let Some(before) = list.after(Value::as_i64)? {
        sql.push(" AND version < ").int(before);
    }
    sql.push(" ORDER BY version DESC");
    list.page(sql, |last| Ok(json!(get_i64(last, "version")?)), version_json).await
}

/// The header state at `version` and the version that wrote it.
async fn header_at(
    conn: &mut AnyConnection,
    run_id: &str,
    version: i64,
) -> Result<Option<(Map<String, Value>, i64)>> {
    let row = sqlx::query(
        "SELECT header, version FROM run_headers WHERE run_id = $1 AND version <= $2 \
         ORDER BY version DESC LIMIT 1",
    )
    .bind(run_id.to_owned())
    .bind(version)
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    match get_json(&row, "header")? {
        Value::Object(map) => Ok(Some((map, get_i64(&row, "version")?))),
        _ => Err(Problem::internal("bad stored header")),
    }
}

/// The steps as they were at `version` (each its latest snapshot at or before it).
async fn steps_at(
    conn: &mut AnyConnection,
    run_id: &str,
    version: i64,
    only: Option<i64>,
) -> Result<Vec<StepRow>> {
    let mut sql =
        Sql::new("SELECT s.idx, s.version, s.body FROM step_snapshots s WHERE s.run_id = ");
    sql.text(run_id);
    sql.push(
        " AND s.version = (SELECT MAX(s2.version) FROM step_snapshots s2 WHERE \
         s2.run_id = s.run_id AND s2.idx = s.idx AND s2.version <= ",
    );
    sql.int(version).push(")");
    if let Some(index) = only {
        sql.push(" AND s.idx = ").int(index);
    }
    sql.push(" ORDER BY s.idx");
    let rows = sql.query().fetch_all(conn).await?;
    rows.iter().map(model::step_from_row).collect()
}

fn version_param(text: &str) -> Result<i64> {
    match text.parse::<i64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Problem::bad_param("path.version", "must be an integer of at least 1")),
    }
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path((run_id, version)): Path<(String, String)>,
) -> Result<Reply> {
    let (run_id, version) = (run_id_param(&run_id)?, version_param(&version)?);
    let mut conn = state.store.pool.acquire().await?;
    let run = model::visible_run(&mut conn, &user, &run_id).await?;
    let sql = format!("SELECT {VERSION_COLUMNS} FROM versions WHERE run_id = $1 AND version = $2");
    let row = sqlx::query(&sql)
        .bind(run_id.clone())
        .bind(version)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| Problem::not_found("version"))?;
    let mut entry = version_json(&row)?;
    let (header, header_version) = header_at(&mut conn, &run_id, version)
        .await?
        .ok_or_else(|| Problem::internal("no header snapshot"))?;
    let then = model::run_output(
        &header,
        version,
        header_version,
        entry["at"].as_str().unwrap_or(""),
        entry["by"].as_str().unwrap_or(""),
        model::counters(&mut conn, &run.id).await?,
    );
    entry["run"] = then;
    Ok(Reply::ok(entry))
}

pub async fn step_at(
    State(state): State<AppState>,
    user: User,
    Path((run_id, version, index)): Path<(String, String, String)>,
) -> Result<Reply> {
    let run_id = run_id_param(&run_id)?;
    let (version, index) = (version_param(&version)?, index_param(&index)?);
    let mut conn = state.store.pool.acquire().await?;
    let run = model::visible_run(&mut conn, &user, &run_id).await?;
    if version > run.version {
        return Err(Problem::not_found("version"));
    }
    let step = steps_at(&mut conn, &run_id, version, Some(index))
        .await?
        .pop()
        .ok_or_else(|| Problem::not_found("step at that version"))?;
    let counters = model::step_counters(&mut conn, &run_id, index).await?;
    Ok(Reply::ok(model::step_output(&step, counters)))
}

fn change_json(change: &Change) -> Value {
    let mut out = json!({"path": change.path, "op": change.op});
    if let Some(before) = &change.before {
        out["before"] = before.clone();
    }
    if let Some(after) = &change.after {
        out["after"] = after.clone();
    }
    out
}

pub async fn diff_versions(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
    mut query: Query,
) -> Result<Reply> {
    let run_id = run_id_param(&run_id)?;
    let from = query.int("from", 1, i64::MAX)?;
    let to = query.int("to", 1, i64::MAX)?;
    let only = query.int("stepIndex", 0, 1999)?;
    query.finish()?;
    let from = from.ok_or_else(|| Problem::bad_param("query.from", "is required"))?;
    let to = to.ok_or_else(|| Problem::bad_param("query.to", "is required"))?;
    let mut conn = state.store.pool.acquire().await?;
    let run = model::visible_run(&mut conn, &user, &run_id).await?;
    if to < from || to > run.version {
        return Err(Problem::bad_param(
            "query.to",
            format!("must be from {from} to the current version {}", run.version),
        ));
    }
    let mut changes = Vec::new();
    if only.is_none() {
        let (a, _) = header_at(&mut conn, &run_id, from).await?.unwrap_or_default();
        let (b, _) = header_at(&mut conn, &run_id, to).await?.unwrap_or_default();
        changes.extend(model::diff_maps(&a, &b, ""));
    }
    let before = steps_at(&mut conn, &run_id, from, only).await?;
    let after = steps_at(&mut conn, &run_id, to, only).await?;
    for step in &after {
        let path = format!("steps.{}", step.index);
        match before.iter().find(|s| s.index == step.index) {
            Some(old) if old.version == step.version => {}
            Some(old) => changes.extend(model::diff_maps(&old.body, &step.body, &path)),
            None => changes.push(Change {
                path,
                op: "add",
                before: None,
                after: Some(Value::Object(step.body.clone())),
            }),
        }
    }
    let changes: Vec<Value> = changes.iter().map(change_json).collect();
    Ok(Reply::ok(json!({"from": from, "to": to, "changes": changes})))
}

pub async fn rollback(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    let base = if_match(&post.headers)?;
    let act = |write, replay| apply_rollback(write, base, replay);
    post.write(&state, &user, &format!("rollback {base}"), act).await
}

async fn apply_rollback(write: Write<'_>, base: i64, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    let mut c = Check::default();
    c.body("RollbackRequest", body);
    let target = body.get("toVersion").and_then(Value::as_i64);
    let note = validate::text(body, "note");
    let target = c.finish_with(target)?;

    let mut tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    require_full_edit(user, &run)?;
    model::require_version(&mut tx, &run, base).await?;
    if target > run.version {
        return Err(Problem::invalid(
            "/toVersion",
            format!("must be at most the current version {}", run.version),
        ));
    }
    let now = crate::time::now();
    // The header's content as it was; its status, reviewer, annotator and tags as they are.
    let (mut header, _) =
        header_at(&mut tx, run_id, target).await?.ok_or_else(|| Problem::internal("no header"))?;
    for key in ["status", "reviewedBy", "annotator", "tags"] {
        header.insert(key.into(), run.header.get(key).cloned().unwrap_or(Value::Null));
    }
    let mut changes = model::diff_maps(&run.header, &header, "");
    let then = steps_at(&mut tx, run_id, target, None).await?;
    let rows = sqlx::query("SELECT idx, version, body FROM steps WHERE run_id = $1 ORDER BY idx")
        .bind(run_id.to_owned())
        .fetch_all(&mut *tx)
        .await?;
    let mut restored = Vec::new();
    for row in &rows {
        let current = model::step_from_row(row)?;
        let Some(old) = then.iter().find(|s| s.index == current.index) else { continue };
        let mut body = current.body.clone();
        for key in STEP_EDITABLE {
            body.insert(key.into(), old.body.get(key).cloned().unwrap_or(Value::Null));
        }
        let mut step_changes = Vec::new();
        let path = format!("steps.{}", current.index);
        diff(
            &Value::Object(current.body.clone()),
            &Value::Object(body.clone()),
            &path,
            &mut step_changes,
        );
        if step_changes.is_empty() {
            continue;
        }
        body.insert("lastEditedBy".into(), json!(user.id));
        body.insert("lastEditedAt".into(), json!(now));
        changes.extend(step_changes);
        restored.push((current.index, body));
    }
    let header_changed = changes.iter().any(|c| !c.path.starts_with("steps."));
    let summary = match &note {
        Some(note) => format!("Rolled back to version {target}: {note}"),
        None => format!("Rolled back to version {target}"),
    };
    let mut entry = Entry::new("rolled-back", None, changes, summary);
    entry.extra.insert("rolledBackTo".into(), json!(target));
    let new_header = header_changed.then_some(&header);
    let version = model::commit_version(&mut tx, &run, user, &now, entry, new_header).await?;
    for (index, body) in &restored {
        model::save_step(&mut tx, run_id, *index, version, body, false).await?;
    }
    let record = model::run_after_write(&mut tx, run_id).await?;
    replay.commit(tx, Reply::ok(record).version(version)).await
}
