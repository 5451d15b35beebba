//! Overlap: each annotator's own version of a run (`/runs/{runId}/annotations…`), the
//! agreement between versions (`GET /runs/{runId}/agreement`) and their resolution into the
//! run (`POST /runs/{runId}/resolve`). A version holds the steps its annotator saved: their
//! thoughts, action, extended thoughts and Navigator notes; a step they did not save is the
//! run's step as it is. No annotator reads another's version; reviewers, qa_managers and
//! admins read all. The maths is `run_contract::agreement`.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use run_contract::agreement::{self, StepText};
use serde_json::{Map, Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::AppState;
use crate::auth::{Role, User};
use crate::http::{JsonBody, Precondition, Reply, if_match, write_precondition};
use crate::idempotency::Replay;
use crate::model::{self, Entry, Status};
use crate::problem::{Problem, Result};
use crate::routes::{ItemPost, RunList, RunPost, Write, index_param, run_id_param};
use crate::store::{Sql, Tx, get_i64, get_json, get_opt_str, get_str};
use crate::validate;

/// At most this many tags on a run (the `tags` schema's `maxItems`).
const MAX_TAGS: usize = 32;

/// The step fields a version holds.
pub const ANNOTATED: [&str; 4] = ["thoughts", "action", "extendedThoughts", "navigator"];

/// `me` or a user id, as the path names an annotator.
fn annotator_param(user: &User, annotator: &str) -> Result<String> {
    user.named(annotator).map_err(|why| Problem::bad_param("path.annotator", why))
}

/// Reviewers, qa_managers and admins read every version; an annotator only their own.
fn may_read_version(user: &User, annotator: &str) -> Result<()> {
    if user.role == Role::Annotator && user.id != annotator {
        return Err(Problem::not_found("annotation version"));
    }
    Ok(())
}

fn set_json(row: &AnyRow) -> Result<Value> {
    Ok(json!({
        "runId": get_str(row, "run_id")?,
        "annotator": get_str(row, "annotator")?,
        "state": get_str(row, "state")?,
        "submittedAt": get_opt_str(row, "submitted_at")?,
        "steps": get_i64(row, "steps")?,
        "updatedAt": get_opt_str(row, "updated_at")?,
        "tags": tags_of_set(row)?,
    }))
}

/// The tags handed in with a version, if any were.
fn tags_of_set(row: &AnyRow) -> Result<Option<Vec<String>>> {
    Ok(get_opt_str(row, "tags")?.and_then(|t| serde_json::from_str(&t).ok()))
}

const SET_SQL: &str = "SELECT v.run_id, v.annotator, v.state, v.submitted_at, v.updated_at, v.tags, \
     (SELECT COUNT(*) FROM annotated_steps s WHERE s.run_id = v.run_id \
      AND s.annotator = v.annotator) AS steps FROM annotation_sets v WHERE v.run_id = ";

pub async fn list_sets(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
) -> Result<Reply> {
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    let run_id = run.id;
    let mut sql = Sql::new(SET_SQL);
    sql.text(&run_id);
    if user.role == Role::Annotator {
        sql.push(" AND v.annotator = ").text(&user.id);
    }
    sql.push(" ORDER BY v.annotator");
    let rows = sql.query().fetch_all(&mut *conn).await?;
    let items = rows.iter().map(set_json).collect::<Result<Vec<_>>>()?;
    Ok(Reply::ok(json!({"items": items})))
}

fn step_json(row: &AnyRow) -> Result<Value> {
    let mut body = match get_json(row, "body")? {
        Value::Object(map) => map,
        _ => return Err(Problem::internal("bad stored annotated step")),
    };
    let version = get_i64(row, "version")?;
    body.insert("index".into(), json!(get_i64(row, "idx")?));
    body.insert("annotator".into(), json!(get_str(row, "annotator")?));
    body.insert("version".into(), json!(version));
    body.insert("etag".into(), json!(crate::http::etag(version)));
    body.insert("updatedAt".into(), json!(get_str(row, "updated_at")?));
    Ok(Value::Object(body))
}

pub async fn list_steps(
    State(state): State<AppState>,
    user: User,
    Path((run_id, annotator)): Path<(String, String)>,
    axum::extract::RawQuery(raw): axum::extract::RawQuery,
) -> Result<Reply> {
    let annotator = annotator_param(&user, &annotator)?;
    may_read_version(&user, &annotator)?;
    let list = RunList::read(&run_id, raw.as_deref())?;
    let filters = json!(["annotated", list.run_id, annotator]);
    let mut list = list.open(&state, &user, filters).await?;
    let mut sql = Sql::new(
        "SELECT run_id, annotator, idx, version, body, updated_at FROM annotated_steps \
         WHERE run_id = ",
    );
    sql.text(&list.run_id).push(" AND annotator = ").text(&annotator);
    if let Some(index) = list.after(Value::as_i64)? {
        sql.push(" AND idx > ").int(index);
    }
    sql.push(" ORDER BY idx");
    list.page(sql, |last| Ok(json!(get_i64(last, "idx")?)), step_json).await
}

/// The caller's version's state, if they are assigned to the run: `open` or `submitted`.
async fn own_set(conn: &mut AnyConnection, run_id: &str, user: &str) -> Result<Option<String>> {
    let row = sqlx::query(
        "SELECT v.state FROM annotation_sets v JOIN assignments a ON a.run_id = v.run_id \
         AND a.annotator = v.annotator WHERE v.run_id = $1 AND v.annotator = $2",
    )
    .bind(run_id.to_owned())
    .bind(user.to_owned())
    .fetch_optional(conn)
    .await?;
    row.map(|row| get_str(&row, "state")).transpose().map_err(Into::into)
}

/// One step of an annotator's version, if saved.
async fn load_annotated(
    conn: &mut AnyConnection,
    run_id: &str,
    annotator: &str,
    index: i64,
) -> Result<Option<AnyRow>> {
    let row = sqlx::query(
        "SELECT run_id, annotator, idx, version, body, updated_at FROM annotated_steps \
         WHERE run_id = $1 AND annotator = $2 AND idx = $3",
    )
    .bind(run_id.to_owned())
    .bind(annotator.to_owned())
    .bind(index)
    .fetch_optional(conn)
    .await?;
    Ok(row)
}

pub async fn put_step(
    State(state): State<AppState>,
    user: User,
    Path((run_id, annotator, index)): Path<(String, String, String)>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let run_id = run_id_param(&run_id)?;
    let annotator = annotator_param(&user, &annotator)?;
    let index = index_param(&index)?;
    let pre = write_precondition(&headers)?;
    if annotator != user.id {
        return Err(Problem::forbidden("Only its annotator writes a version."));
    }
    validate::check_body("AnnotatedStepWrite", &body)?;
    let mut tx = state.store.begin().await?;
    let run = model::lock_visible_run(&mut tx, &user, &run_id).await?;
    match own_set(&mut tx, &run_id, &user.id).await?.as_deref() {
        None => {
            return Err(Problem::forbidden(
                "You are not assigned to annotate this run in overlap.",
            ));
        }
        Some("submitted") => {
            return Err(Problem::forbidden("Your version is submitted, so it is read only."));
        }
        Some(_) => {}
    }
    if run.status != Status::Draft {
        return Err(Problem::forbidden(format!(
            "The run is {}; versions are written while it is a draft.",
            run.status.as_str()
        )));
    }
    if model::load_step(&mut tx, &run_id, index).await?.is_none() {
        return Err(Problem::not_found("step"));
    }
    let current = load_annotated(&mut tx, &run_id, &user.id, index).await?;
    let now = crate::time::now();
    let mut stored = Map::new();
    for key in ANNOTATED {
        if let Some(value) = body.get(key) {
            stored.insert(key.into(), value.clone());
        }
    }
    let text = Value::Object(stored).to_string();
    let (version, status) = match (pre, current) {
        (Precondition::Create, Some(row)) => {
            let version = get_i64(&row, "version")?;
            return Err(Problem::conflict(
                "already-exists",
                "annotation",
                None,
                Some(version),
                step_json(&row)?,
                None,
            ));
        }
        (Precondition::Create, None) => {
            sqlx::query(
                "INSERT INTO annotated_steps (run_id, annotator, idx, version, body, updated_at) \
                 VALUES ($1, $2, $3, 1, $4, $5)",
            )
            .bind(run_id.clone())
            .bind(user.id.clone())
            .bind(index)
            .bind(text)
            .bind(now.clone())
            .execute(&mut *tx)
            .await?;
            (1, StatusCode::CREATED)
        }
        (Precondition::Match(_), None) => return Err(Problem::not_found("annotated step")),
        (Precondition::Match(base), Some(row)) => {
            let version = get_i64(&row, "version")?;
            if version != base {
                return Err(Problem::conflict(
                    "conflict",
                    "annotation",
                    Some(base),
                    Some(version),
                    step_json(&row)?,
                    None,
                ));
            }
            sqlx::query(
                "UPDATE annotated_steps SET version = $4, body = $5, updated_at = $6 \
                 WHERE run_id = $1 AND annotator = $2 AND idx = $3",
            )
            .bind(run_id.clone())
            .bind(user.id.clone())
            .bind(index)
            .bind(version + 1)
            .bind(text)
            .bind(now.clone())
            .execute(&mut *tx)
            .await?;
            (version + 1, StatusCode::OK)
        }
    };
    sqlx::query("UPDATE annotation_sets SET updated_at = $3 WHERE run_id = $1 AND annotator = $2")
        .bind(run_id.clone())
        .bind(user.id.clone())
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let before = if version > 1 { json!({"version": version - 1}) } else { Value::Null };
    let target = format!("step {index} of {}'s version", user.id);
    let after = json!({"version": version});
    crate::audit::record(
        &mut tx,
        &user.id,
        "annotation.saved",
        Some(&run_id),
        &target,
        before,
        after,
    )
    .await?;
    let row = load_annotated(&mut tx, &run_id, &user.id, index).await?;
    let out = step_json(&row.ok_or_else(|| Problem::internal("gone"))?)?;
    tx.commit().await?;
    Ok(Reply::ok(out).status(status).version(version))
}

pub async fn submit(State(state): State<AppState>, user: User, post: ItemPost) -> Result<Reply> {
    let annotator = annotator_param(&user, post.ids.first().map_or("", String::as_str))?;
    if annotator != user.id {
        return Err(Problem::forbidden("Only its annotator submits a version."));
    }
    let body = post.body.clone().unwrap_or_else(|| json!({}));
    validate::check_body("AnnotationSubmit", &body)?;
    let tags: Option<Vec<String>> =
        body.get("tags").and_then(|t| serde_json::from_value(t.clone()).ok());
    let act = |replay: Replay| submit_set(&state, &user, &post.run_id, tags, replay);
    post.once(&state, &user, &format!("annotations/{annotator}/submit"), act).await
}

async fn submit_set(
    state: &AppState,
    user: &User,
    run_id: &str,
    tags: Option<Vec<String>>,
    replay: Replay,
) -> Result<Reply> {
    let mut tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    match own_set(&mut tx, run_id, &user.id).await?.as_deref() {
        None => {
            return Err(Problem::forbidden(
                "You are not assigned to annotate this run in overlap.",
            ));
        }
        Some("submitted") => {
            let row = sqlx::query(&format!("{SET_SQL}$1 AND v.annotator = $2"))
                .bind(run_id.to_owned())
                .bind(user.id.clone())
                .fetch_one(&mut *tx)
                .await?;
            return Err(Problem::conflict(
                "not-pending",
                "annotation",
                None,
                None,
                set_json(&row)?,
                None,
            )
            .detail("Your version is submitted already."));
        }
        Some(_) => {}
    }
    let now = crate::time::now();
    for table in ["annotation_sets", "assignments"] {
        sqlx::query(&format!(
            "UPDATE {table} SET state = 'submitted', submitted_at = $3 \
             WHERE run_id = $1 AND annotator = $2"
        ))
        .bind(run_id.to_owned())
        .bind(user.id.clone())
        .bind(now.clone())
        .execute(&mut *tx)
        .await?;
    }
    if let Some(tags) = &tags {
        sqlx::query("UPDATE annotation_sets SET tags = $3 WHERE run_id = $1 AND annotator = $2")
            .bind(run_id.to_owned())
            .bind(user.id.clone())
            .bind(json!(tags).to_string())
            .execute(&mut *tx)
            .await?;
    }
    crate::audit::record(
        &mut tx,
        &user.id,
        "annotation.submitted",
        Some(run_id),
        &format!("{}'s version", user.id),
        json!({"state": "open"}),
        json!({"state": "submitted", "tags": tags}),
    )
    .await?;
    let open =
        sqlx::query("SELECT COUNT(*) AS n FROM assignments WHERE run_id = $1 AND state = 'open'")
            .bind(run_id.to_owned())
            .fetch_one(&mut *tx)
            .await?;
    if get_i64(&open, "n")? == 0 && run.status == Status::Draft {
        // The last version is in: the run goes to review.
        let mut header = run.header.clone();
        header.insert("status".into(), json!(Status::InReview.as_str()));
        let changes = model::diff_maps(&run.header, &header, "");
        let summary = "Moved from draft to in-review: every overlap version is submitted".into();
        let mut entry = Entry::new("status-changed", None, changes, summary);
        entry.extra.insert(
            "transition".into(),
            json!({"from": "draft", "to": "in-review", "note": "every overlap version is submitted"}),
        );
        let version =
            model::commit_version(&mut tx, &run, user, &now, entry, Some(&header)).await?;
        crate::events::status_changed(
            &mut tx,
            &run,
            Status::Draft,
            Status::InReview,
            &user.id,
            version,
        )
        .await?;
    }
    let row = sqlx::query(&format!("{SET_SQL}$1 AND v.annotator = $2"))
        .bind(run_id.to_owned())
        .bind(user.id.clone())
        .fetch_one(&mut *tx)
        .await?;
    let out = set_json(&row)?;
    replay.commit(tx, Reply::ok(out)).await
}

/// The text agreement compares, from a step body or a version's step.
pub fn step_text(body: &Map<String, Value>) -> StepText {
    let thought = |k: &str| {
        body.get("thoughts").and_then(|t| t.get(k)).and_then(Value::as_str).unwrap_or("").to_owned()
    };
    StepText {
        action: body.get("action").cloned().unwrap_or(Value::Null),
        thoughts: [thought("thought1"), thought("thought2"), thought("thought3")],
    }
}

/// A run's versions: the annotators with a version (not taken off), and each one's saved
/// steps by index.
pub struct Versions {
    pub annotators: Vec<String>,
    pub steps: HashMap<String, BTreeMap<i64, Map<String, Value>>>,
}

pub async fn versions(conn: &mut AnyConnection, run_id: &str) -> Result<Versions> {
    let sets = sqlx::query(
        "SELECT annotator FROM annotation_sets WHERE run_id = $1 AND state <> 'unassigned' \
         ORDER BY annotator",
    )
    .bind(run_id.to_owned())
    .fetch_all(&mut *conn)
    .await?;
    let annotators = sets.iter().map(|r| get_str(r, "annotator")).collect::<Result<_, _>>()?;
    let rows = sqlx::query("SELECT annotator, idx, body FROM annotated_steps WHERE run_id = $1")
        .bind(run_id.to_owned())
        .fetch_all(&mut *conn)
        .await?;
    let mut steps: HashMap<String, BTreeMap<i64, Map<String, Value>>> = HashMap::new();
    for row in rows {
        if let Value::Object(body) = get_json(&row, "body")? {
            steps
                .entry(get_str(&row, "annotator")?)
                .or_default()
                .insert(get_i64(&row, "idx")?, body);
        }
    }
    Ok(Versions { annotators, steps })
}

/// The run's steps, by index.
pub async fn run_steps(
    conn: &mut AnyConnection,
    run_id: &str,
) -> Result<BTreeMap<i64, Map<String, Value>>> {
    let rows = sqlx::query("SELECT idx, version, body FROM steps WHERE run_id = $1 ORDER BY idx")
        .bind(run_id.to_owned())
        .fetch_all(conn)
        .await?;
    rows.iter()
        .map(|row| {
            let step = model::step_from_row(row)?;
            Ok((step.index, step.body))
        })
        .collect()
}

/// An annotator's text of step `index`: their saved step over the run's.
fn version_of<'a>(
    versions: &'a Versions,
    annotator: &str,
    index: i64,
    run_step: &'a Map<String, Value>,
) -> Map<String, Value> {
    let mut step = run_step.clone();
    if let Some(saved) = versions.steps.get(annotator).and_then(|s| s.get(&index)) {
        for (key, value) in saved {
            step.insert(key.clone(), value.clone());
        }
    }
    step
}

/// The annotatable part of a step, as a reviewer compares it.
fn annotated_part(step: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for key in ANNOTATED {
        if let Some(value) = step.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    Value::Object(out)
}

pub async fn get_agreement(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
) -> Result<Reply> {
    if user.role == Role::Annotator {
        return Err(Problem::forbidden("Reviewers, qa_managers and admins read agreement."));
    }
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    let run_id = run.id;
    let versions = versions(&mut conn, &run_id).await?;
    let steps = run_steps(&mut conn, &run_id).await?;
    let mut out = Vec::new();
    let mut scored = Vec::new();
    for (index, run_step) in &steps {
        let texts: Vec<Map<String, Value>> = versions
            .annotators
            .iter()
            .map(|a| version_of(&versions, a, *index, run_step))
            .collect();
        let compared: Vec<StepText> = texts.iter().map(step_text).collect();
        let refs: Vec<&StepText> = compared.iter().collect();
        let by_annotator: Map<String, Value> = versions
            .annotators
            .iter()
            .zip(&texts)
            .map(|(a, t)| (a.clone(), annotated_part(t)))
            .collect();
        let Some(step) = agreement::step_agreement(&refs) else {
            continue;
        };
        out.push(json!({
            "index": index,
            "actionEqual": step.action_equal,
            "thoughts": {"thought1": step.thoughts[0], "thought2": step.thoughts[1],
                "thought3": step.thoughts[2]},
            "score": step.score,
            "versions": by_annotator,
        }));
        scored.push(step);
    }
    Ok(Reply::ok(json!({
        "runId": run_id,
        "annotators": versions.annotators,
        "score": agreement::run_score(&scored),
        "steps": out,
    })))
}

pub async fn resolve(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    let base = if_match(&post.headers)?;
    let act = |write, replay| resolve_versions(write, base, replay);
    post.write(&state, &user, &format!("resolve {base}"), act).await
}

async fn resolve_versions(write: Write<'_>, base: i64, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    if user.role == Role::Annotator {
        return Err(Problem::forbidden("Reviewers, qa_managers and admins resolve versions."));
    }
    validate::check_body("ResolveRequest", body)?;
    let pick = validate::text(body, "pick");
    let note = validate::text(body, "note");
    let mut per_step: BTreeMap<i64, String> = BTreeMap::new();
    for item in body.get("steps").and_then(Value::as_array).into_iter().flatten() {
        let index = item["index"].as_i64().unwrap_or(0);
        per_step.insert(index, item["from"].as_str().unwrap_or("").to_owned());
    }
    if pick.is_none() && per_step.is_empty() {
        return Err(Problem::invalid("", "name a version to pick, or steps to take"));
    }
    let mut tx: Tx = replay.begin(&state.store).await?;
    let run = model::lock_visible_run(&mut tx, user, run_id).await?;
    model::require_editable(&run)?;
    model::require_version(&mut tx, &run, base).await?;
    let versions = versions(&mut tx, run_id).await?;
    let named = pick.iter().chain(per_step.values());
    if let Some(unknown) = named.into_iter().find(|a| !versions.annotators.contains(a)) {
        return Err(Problem::invalid("", format!("{unknown} has no version of this run")));
    }
    let steps = run_steps(&mut tx, run_id).await?;
    if let Some(index) = per_step.keys().find(|i| !steps.contains_key(i)) {
        return Err(Problem::invalid("/steps", format!("the run has no step {index}")));
    }
    let mut changed: Vec<(i64, Map<String, Value>)> = Vec::new();
    let mut changes = Vec::new();
    let now = crate::time::now();
    for (index, run_step) in &steps {
        let Some(from) = per_step.get(index).or(pick.as_ref()) else { continue };
        let mut next = version_of(&versions, from, *index, run_step);
        let prefix = format!("steps.{index}");
        let diff = model::diff_maps(
            &validate::step_editable(run_step),
            &validate::step_editable(&next),
            &prefix,
        );
        if diff.is_empty() {
            continue;
        }
        next.insert("lastEditedBy".into(), json!(from));
        next.insert("lastEditedAt".into(), json!(now));
        changes.extend(diff);
        changed.push((*index, next));
    }
    // The tags each annotator handed in with their version join the run's.
    let mut tags = model::tags_of(&run.header);
    let handed = sqlx::query(
        "SELECT tags FROM annotation_sets WHERE run_id = $1 AND state = 'submitted' \
         AND tags IS NOT NULL ORDER BY annotator",
    )
    .bind(run_id.to_owned())
    .fetch_all(&mut *tx)
    .await?;
    for row in &handed {
        let theirs: Vec<String> = get_opt_str(row, "tags")?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        for tag in theirs {
            if !tags.contains(&tag) && tags.len() < MAX_TAGS {
                tags.push(tag);
            }
        }
    }
    let header = (tags != model::tags_of(&run.header)).then(|| {
        let mut header = run.header.clone();
        header.insert("tags".into(), json!(tags));
        header
    });
    if let Some(header) = &header {
        changes.extend(model::diff_maps(&run.header, header, ""));
    }
    let choice = json!({"pick": pick, "steps": per_step.iter().map(|(i, a)|
        json!({"index": i, "from": a})).collect::<Vec<_>>(), "note": note});
    let summary = match (&pick, per_step.is_empty()) {
        (Some(p), true) => format!("Resolved the overlap versions: took {p}'s"),
        (Some(p), false) => {
            format!("Resolved the overlap versions: {p}'s, with {} step(s) chosen", per_step.len())
        }
        (None, _) => format!("Resolved the overlap versions: {} step(s) chosen", per_step.len()),
    };
    let mut entry = Entry::new("agreement-resolved", None, changes, summary);
    entry.extra.insert("resolution".into(), choice);
    let version = model::commit_version(&mut tx, &run, user, &now, entry, header.as_ref()).await?;
    for (index, body) in &changed {
        model::save_step(&mut tx, run_id, *index, version, body, false).await?;
    }
    let record = model::run_after_write(&mut tx, run_id).await?;
    replay.commit(tx, Reply::ok(record).version(version)).await
}

/// Every pair of annotators of every overlap run with their agreement, and when: what the
/// per-annotator figures are built from.
pub struct PairScore {
    pub a: String,
    pub b: String,
    pub score: f64,
    pub at: String,
}

pub async fn all_pairs(conn: &mut AnyConnection) -> Result<Vec<PairScore>> {
    // Every version's steps and the run steps of overlap runs, each read in one query.
    let sets = sqlx::query(
        "SELECT run_id, annotator, submitted_at, updated_at FROM annotation_sets \
         WHERE state <> 'unassigned' ORDER BY run_id, annotator",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut runs: BTreeMap<String, (Vec<String>, String)> = BTreeMap::new();
    for row in &sets {
        let entry = runs.entry(get_str(row, "run_id")?).or_default();
        entry.0.push(get_str(row, "annotator")?);
        for column in ["submitted_at", "updated_at"] {
            if let Some(t) = get_opt_str(row, column)?
                && entry.1 < t
            {
                entry.1 = t;
            }
        }
    }
    runs.retain(|_, (annotators, _)| annotators.len() > 1);
    let mut saved: HashMap<(String, String), BTreeMap<i64, StepText>> = HashMap::new();
    for row in sqlx::query("SELECT run_id, annotator, idx, body FROM annotated_steps")
        .fetch_all(&mut *conn)
        .await?
    {
        let run_id = get_str(&row, "run_id")?;
        if !runs.contains_key(&run_id) {
            continue;
        }
        if let Value::Object(body) = get_json(&row, "body")? {
            let key = (run_id, get_str(&row, "annotator")?);
            saved.entry(key).or_default().insert(get_i64(&row, "idx")?, step_text(&body));
        }
    }
    // The run steps of the runs with more than one version (`runs`).
    let mut run_steps: HashMap<String, BTreeMap<i64, Map<String, Value>>> = HashMap::new();
    for row in sqlx::query(
        "SELECT run_id, idx, version, body FROM steps WHERE run_id IN (SELECT run_id \
         FROM annotation_sets WHERE state <> 'unassigned' GROUP BY run_id HAVING COUNT(*) > 1)",
    )
    .fetch_all(&mut *conn)
    .await?
    {
        let step = model::step_from_row(&row)?;
        run_steps.entry(get_str(&row, "run_id")?).or_default().insert(step.index, step.body);
    }
    let no_steps = BTreeMap::new();
    let mut pairs = Vec::new();
    for (run_id, (annotators, at)) in &runs {
        let steps = run_steps.get(run_id).unwrap_or(&no_steps);
        let texts: Vec<Vec<StepText>> = annotators
            .iter()
            .map(|a| {
                let own = saved.get(&(run_id.clone(), a.clone()));
                steps
                    .iter()
                    .map(|(i, body)| {
                        own.and_then(|o| o.get(i)).cloned().unwrap_or_else(|| step_text(body))
                    })
                    .collect()
            })
            .collect();
        for i in 0..annotators.len() {
            for j in i + 1..annotators.len() {
                if let Some(score) = agreement::pair_score(&texts[i], &texts[j]) {
                    pairs.push(PairScore {
                        a: annotators[i].clone(),
                        b: annotators[j].clone(),
                        score,
                        at: at.clone(),
                    });
                }
            }
        }
    }
    Ok(pairs)
}
