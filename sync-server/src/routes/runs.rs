//! `GET /runs`, `GET/PUT /runs/{runId}`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::{Role, User, user_exists};
use crate::http::{
    JsonBody, Precondition, Query, Reply, decode_cursor, not_modified, not_modified_response, page,
    write_precondition,
};
use crate::model::{
    self, Entry, PathScope, RUN_COUNTERS, Status, diff_maps, header_state, lock_run,
    require_full_edit, run_json, tags_of,
};
use crate::problem::{Problem, Result};
use crate::routes::run_id_param;
use crate::store::{Sql, Tx, get_str, like_escape};
use crate::validate::{self, Check};

pub async fn list(State(state): State<AppState>, user: User, mut query: Query) -> Result<Reply> {
    let limit = query.limit()?;
    let cursor = query.one("cursor")?;
    let filter = RunFilter::from_query(&mut query, &user)?;
    let changed_since = match query.one("pullCursor")? {
        Some(cursor) => Some(pull::decode(&cursor, &user)?),
        None => None,
    };
    let sort = query.one("sort")?.unwrap_or_else(|| "-updatedAt".into());
    let (column, descending) = match sort.as_str() {
        "-updatedAt" => ("updated_at", true),
        "updatedAt" => ("updated_at", false),
        "-createdAt" => ("created_at", true),
        _ => {
            return Err(Problem::bad_param(
                "query.sort",
                "must be -updatedAt, updatedAt or -createdAt",
            ));
        }
    };
    query.finish()?;

    let RunFilter { statuses, annotator, task_id, updated_since, tags, q } = &filter;
    let filters =
        json!([statuses, annotator, task_id, updated_since, tags, q, sort, changed_since])
            .to_string();
    let after = decode_cursor(cursor, &filters)?;
    // When this listing began, by the server's clock; a page cursor carries its first page's.
    let began = match after.as_ref().map(|after| &after[2]) {
        Some(Value::Number(ms)) => ms.as_i64().unwrap_or_default(),
        _ => crate::time::now_ms(),
    };

    let mut sql = Sql::new(&format!(
        "SELECT r.id, r.annotator, r.status, r.version, r.header_version, r.updated_at, \
         r.updated_by, r.header, r.review_rounds, r.assignees, r.{column} AS sort_key, \
         {RUN_COUNTERS} FROM runs r WHERE 1 = 1"
    ));
    if user.role == Role::Annotator {
        model::push_visible_to_annotator(&mut sql, &user.id);
    }
    filter.push(&mut sql);
    if let Some(since) = &changed_since {
        sql.push(" AND r.updated_at >= ").text(since);
    }
    if let Some(after) = after {
        let (Some(key), Some(id)) = (after[0].as_str(), after[1].as_str()) else {
            return Err(Problem::bad_param("query.cursor", "is not a cursor this server made"));
        };
        let op = if descending { "<" } else { ">" };
        sql.push(&format!(" AND (r.{column} {op} ")).text(key);
        sql.push(&format!(" OR (r.{column} = ")).text(key);
        sql.push(&format!(" AND r.id {op} ")).text(id).push("))");
    }
    let order = if descending { "DESC" } else { "ASC" };
    sql.push(&format!(" ORDER BY r.{column} {order}, r.id {order} LIMIT ")).int(limit + 1);

    let rows = sql.query().fetch_all(&state.store.pool).await?;
    let key = |last: &_| Ok(json!([get_str(last, "sort_key")?, get_str(last, "id")?, began]));
    let mut reply = page(&rows, limit, &filters, key, model::run_json_from_row)?;
    reply.body["pullCursor"] = json!(pull::encode(began, &user));
    Ok(reply)
}

/// The filters of `GET /runs` (also `RunFilter` in a round-robin assignment's body).
#[derive(Debug, Default, Clone)]
pub struct RunFilter {
    pub statuses: Vec<String>,
    pub annotator: Option<String>,
    pub task_id: Option<String>,
    pub updated_since: Option<String>,
    pub tags: Vec<String>,
    pub q: Option<String>,
}

impl RunFilter {
    /// From `GET /runs`'s query.
    pub fn from_query(query: &mut Query, user: &User) -> Result<RunFilter> {
        let filter = RunFilter {
            statuses: query.all("status"),
            annotator: query.one("annotator")?,
            task_id: query.one("taskId")?,
            updated_since: query.one("updatedSince")?,
            tags: query.all("tag"),
            q: query.one("q")?,
        };
        filter.checked(user, "query.")
    }

    /// From a `RunFilter` object (already checked against its schema).
    pub fn from_json(value: &Value, user: &User) -> Result<RunFilter> {
        let texts = |key: &str| validate::texts(value.get(key)).unwrap_or_default();
        let text = |key: &str| validate::text(value, key);
        let filter = RunFilter {
            statuses: texts("status"),
            annotator: text("annotator"),
            task_id: text("taskId"),
            updated_since: text("updatedSince"),
            tags: texts("tag"),
            q: text("q"),
        };
        filter.checked(user, "/filter/")
    }

    /// Checks each filter (`at` prefixes the names in a refusal) and reads `me` and times.
    fn checked(mut self, user: &User, at: &str) -> Result<RunFilter> {
        let bad = |name: &str, message: String| {
            if at.starts_with('/') {
                Problem::invalid(&format!("{at}{name}"), message)
            } else {
                Problem::bad_param(&format!("{at}{name}"), message)
            }
        };
        if let Some(status) = self.statuses.iter().find(|s| Status::parse(s).is_none()) {
            return Err(bad("status", format!("{status:?} is not a status")));
        }
        if let Some(name) = &self.annotator {
            let id = user.named(name).map_err(|why| bad("annotator", why.into()))?;
            self.annotator = Some(id);
        }
        if self.task_id.as_deref().is_some_and(|id| !validate::is_id(id)) {
            return Err(bad("taskId", "must be an id".into()));
        }
        if let Some(text) = &self.updated_since {
            let normal = crate::time::normalize(text);
            self.updated_since = Some(
                normal
                    .ok_or_else(|| bad("updatedSince", "must be an RFC 3339 date-time".into()))?,
            );
        }
        if let Some(tag) = self.tags.iter().find(|t| !validate::is_tag(t)) {
            return Err(bad("tag", format!("{tag:?} is not a tag")));
        }
        if self.q.as_ref().is_some_and(|q| q.is_empty() || q.chars().count() > 200) {
            return Err(bad("q", "must have 1 to 200 characters".into()));
        }
        Ok(self)
    }

    /// The filters' conditions on runs aliased `r`.
    pub fn push(&self, sql: &mut Sql) {
        if !self.statuses.is_empty() {
            sql.push(" AND r.status IN ").texts(&self.statuses);
        }
        if let Some(annotator) = &self.annotator {
            sql.push(" AND r.annotator = ").text(annotator);
        }
        if let Some(task_id) = &self.task_id {
            sql.push(" AND r.task_id = ").text(task_id);
        }
        if let Some(since) = &self.updated_since {
            sql.push(" AND r.updated_at >= ").text(since);
        }
        for tag in &self.tags {
            sql.push(" AND r.tags LIKE ")
                .text(format!("%\"{}\"%", like_escape(tag)))
                .push(" ESCAPE '\\'");
        }
        if let Some(q) = &self.q {
            let pattern = format!("%{}%", like_escape(&q.to_lowercase()));
            sql.push(" AND (r.search LIKE ").text(pattern.clone()).push(" ESCAPE '\\'");
            sql.push(" OR EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id AND s.search LIKE ");
            sql.text(pattern).push(" ESCAPE '\\'))");
        }
    }
}

/// The pull cursor: where a client's next pull of changed runs starts, issued by the server
/// with every listing so that no client clock is involved (one an hour fast would ask for
/// changes since a time the server has not reached, and miss everyone else's).
mod pull {
    use base64::Engine as _;
    use serde_json::{Value, json};

    use crate::auth::User;
    use crate::problem::{Problem, Result};

    /// How far before a listing began the next pull starts. A write takes its `updatedAt`
    /// before it commits, so one in flight when a listing began can commit after it with an
    /// earlier time; re-reading a minute's changes is harmless (the client skips versions it
    /// holds).
    pub const OVERLAP_MS: i64 = 60_000;

    /// The cursor for a listing that began at `began_ms`, for `user`.
    pub fn encode(began_ms: i64, user: &User) -> String {
        let since = crate::time::format_ms(began_ms - OVERLAP_MS);
        let body = json!({"v": 1, "u": user.id, "since": since});
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(body.to_string())
    }

    /// The time a cursor starts at; `400` for one this server did not make for `user`.
    pub fn decode(cursor: &str, user: &User) -> Result<String> {
        let bad =
            || Problem::bad_param("query.pullCursor", "is not a pull cursor this server made");
        if cursor.len() > 512 {
            return Err(bad());
        }
        let bytes =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if body["v"] != 1 {
            return Err(bad());
        }
        if body["u"].as_str() != Some(user.id.as_str()) {
            // Another user's pull saw other runs; starting from it could skip some of yours.
            return Err(Problem::bad_param(
                "query.pullCursor",
                "was issued to another user; pull without it",
            ));
        }
        body["since"].as_str().and_then(crate::time::normalize).ok_or_else(bad)
    }
}

pub async fn get(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response> {
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    if not_modified(&headers, run.version) {
        return Ok(not_modified_response(run.version));
    }
    let body = run_json(&mut conn, &run).await?;
    Ok(Reply::ok(body).version(run.version).into_response())
}

pub async fn put(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    JsonBody(body, _): JsonBody,
) -> Result<Reply> {
    let run_id = run_id_param(&run_id)?;
    let pre = write_precondition(&headers)?;
    let write = check_run(&user, &run_id, &body)?;
    let mut tx = state.store.begin().await?;
    let reply = write_run(&mut tx, &user, &run_id, pre, &write).await?;
    tx.commit().await?;
    Ok(reply)
}

/// What a run write can be refused for without the database: the role, and the body.
pub fn check_run(user: &User, run_id: &str, body: &Value) -> Result<validate::RunWrite> {
    if user.role == Role::Reviewer {
        return Err(Problem::forbidden(
            "Reviewers do not edit runs directly: comment or suggest instead.",
        ));
    }
    let mut check = Check::default();
    let write = validate::run_write(body, &mut check);
    let write = check.finish_with(write)?;
    if write.content.get("id").and_then(Value::as_str) != Some(run_id) {
        return Err(Problem::invalid("/id", "must equal the runId in the path"));
    }
    Ok(write)
}

/// The answer to a write on a run that exists but that the caller may not see: the same as
/// any refused write, and it says nothing of whose the run is, or that it exists.
fn not_yours() -> Problem {
    Problem::forbidden("This run id cannot be written with your role and token.")
}

/// Creates or updates a run header (checked by [`check_run`]) in `tx`, whose first
/// statement this is (it locks the run). Like every write here, it refuses only before it
/// writes anything, so a refused write leaves `tx` as it found it (the batch relies on it).
pub async fn write_run(
    tx: &mut Tx,
    user: &User,
    run_id: &str,
    pre: Precondition,
    write: &validate::RunWrite,
) -> Result<Reply> {
    let now = crate::time::now();
    let current = lock_run(tx, run_id).await?;

    let Precondition::Match(base) = pre else {
        // Create.
        if let Some(existing) = current {
            return Err(already_exists(tx, user, existing).await);
        }
        let annotator = match &write.annotator {
            Some(other) if *other != user.id => {
                if !user.is_manager() {
                    return Err(model::forbidden_paths(
                        "Only a qa_manager or admin assigns a run to someone else.",
                        vec!["annotator".into()],
                    ));
                }
                if !user_exists(tx, other).await? {
                    return Err(Problem::invalid("/annotator", "no such user"));
                }
                other.clone()
            }
            _ => user.id.clone(),
        };
        let tags = write.tags.clone().unwrap_or_default();
        let header = header_state(&write.content, Status::Draft, None, &annotator, &tags);
        let text = Value::Object(header.clone()).to_string();
        let created_at = write.content.get("createdAt").and_then(Value::as_str).unwrap_or("");
        let inserted = sqlx::query(
            "INSERT INTO runs (id, task_id, annotator, status, tags, created_at, updated_at, \
             updated_by, version, header_version, header, search) \
             VALUES ($1, $2, $3, 'draft', $4, $5, $6, $7, 1, 1, $8, $9) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(run_id.to_owned())
        .bind(write.content.get("taskId").and_then(Value::as_str).unwrap_or("").to_owned())
        .bind(annotator.clone())
        .bind(json!(tags).to_string())
        .bind(crate::time::normalize(created_at).unwrap_or_default())
        .bind(now.clone())
        .bind(user.id.clone())
        .bind(text.clone())
        .bind(model::run_search_text(&header))
        .execute(&mut **tx)
        .await?;
        if inserted.rows_affected() == 0 {
            // Created by someone else since the lock found nothing (PostgreSQL, whose row
            // locks cannot lock a row that is not there yet; read committed, so it is seen).
            let existing = model::load_run(tx, run_id)
                .await?
                .ok_or_else(|| Problem::internal("a run both exists and does not"))?;
            return Err(already_exists(tx, user, existing).await);
        }
        model::insert_header_snapshot(tx, run_id, 1, &text).await?;
        let entry = Entry::new("run-created", None, Vec::new(), "Uploaded the run".into());
        model::insert_entry(tx, run_id, 1, &now, &user.id, entry).await?;
        // A new run has no steps, threads or suggestions yet: each needs the run first.
        let record = model::run_output(&header, 1, 1, &now, &user.id, Default::default());
        return Ok(Reply::ok(record)
            .status(StatusCode::CREATED)
            .version(1)
            .location(format!("/runs/{run_id}")));
    };

    // Update.
    let run = model::visible(user, current)?;
    require_full_edit(user, &run)?;
    let mut errors = Vec::new();
    for key in ["taskId", "createdAt", "createdBy"] {
        if write.content.get(key) != run.header.get(key) {
            errors.push(crate::problem::FieldError::new(
                validate::pointer("", key),
                "is fixed once the run exists",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(Problem::validation(errors));
    }
    let current_annotator = run.annotator.clone();
    let annotator = write.annotator.clone().unwrap_or_else(|| current_annotator.clone());
    if annotator != current_annotator {
        if !user.is_manager() {
            return Err(model::forbidden_paths(
                "Only a qa_manager or admin changes a run's annotator.",
                vec!["annotator".into()],
            ));
        }
        if !user_exists(tx, &annotator).await? {
            return Err(Problem::invalid("/annotator", "no such user"));
        }
    }
    if run.header_version > base || base > run.version {
        return Err(model::run_conflict(tx, &run, base, PathScope::Header).await?);
    }
    let tags = write.tags.clone().unwrap_or_else(|| tags_of(&run.header));
    let reviewed_by = run.header.get("reviewedBy").and_then(Value::as_str);
    let header = header_state(&write.content, run.status, reviewed_by, &annotator, &tags);
    let changes = diff_maps(&run.header, &header, "");
    if changes.is_empty() {
        let record = run_json(tx, &run).await?;
        return Ok(Reply::ok(record).version(run.version));
    }
    let summary = format!("Edited {} of the run", model::describe_paths(&changes, ""));
    let entry = Entry::new("run-edited", None, changes, summary);
    let version = model::commit_version(tx, &run, user, &now, entry, Some(&header)).await?;
    let record = model::run_after_write(tx, run_id).await?;
    Ok(Reply::ok(record).version(version))
}

/// A create that found the run: `409 already-exists` with the run when the caller may see
/// it, else the refusal any write to a run they may not see gets.
async fn already_exists(tx: &mut Tx, user: &User, existing: model::RunRow) -> Problem {
    if !model::can_see(user, &existing) {
        return not_yours();
    }
    match run_json(tx, &existing).await {
        Ok(record) => {
            Problem::conflict("already-exists", "run", None, Some(existing.version), record, None)
        }
        Err(problem) => problem,
    }
}
