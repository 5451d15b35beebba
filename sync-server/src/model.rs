//! Runs and steps as stored, who may see and edit them, and the history every save writes.

use serde_json::{Map, Value, json};
use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::auth::{Role, User};
use crate::http::etag;
use crate::problem::{FieldError, Problem, Result};
use crate::store::{Tx, get_i64, get_json, get_str};

/// The review workflow's status, the shared contract's.
pub use run_contract::ReviewStatus as Status;

/// A run's row. `header` is the header state: the `AgentRun` content plus `status`,
/// `reviewedBy`, `annotator` and `tags`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub id: String,
    pub annotator: String,
    pub status: Status,
    pub version: i64,
    pub header_version: i64,
    pub updated_at: String,
    pub updated_by: String,
    pub header: Map<String, Value>,
    /// How many times the run went to review.
    pub review_rounds: i64,
    /// How many annotators it is assigned to now (0: never assigned; above 1: overlap, each
    /// annotating their own version).
    pub assignees: i64,
}

impl RunRow {
    /// Annotated in overlap: its annotators write their own versions, not its steps.
    pub fn in_overlap(&self) -> bool {
        self.assignees > 1
    }

    /// The `Run` a client sees, with `counters`.
    pub fn output(&self, counters: Counters) -> Value {
        let (header, version) = (&self.header, self.version);
        run_output(
            header,
            version,
            self.header_version,
            &self.updated_at,
            &self.updated_by,
            counters,
        )
    }
}

pub const RUN_COLUMNS: &str = "id, annotator, status, version, header_version, updated_at, \
     updated_by, header, review_rounds, assignees";

fn run_from_row(row: &AnyRow) -> Result<RunRow> {
    let status = get_str(row, "status")?;
    Ok(RunRow {
        id: get_str(row, "id")?,
        annotator: get_str(row, "annotator")?,
        status: Status::parse(&status).ok_or_else(|| Problem::internal("bad stored status"))?,
        version: get_i64(row, "version")?,
        header_version: get_i64(row, "header_version")?,
        updated_at: get_str(row, "updated_at")?,
        updated_by: get_str(row, "updated_by")?,
        header: match get_json(row, "header")? {
            Value::Object(map) => map,
            _ => return Err(Problem::internal("bad stored header")),
        },
        review_rounds: get_i64(row, "review_rounds")?,
        assignees: get_i64(row, "assignees")?,
    })
}

pub async fn load_run(conn: &mut AnyConnection, id: &str) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
    let row = sqlx::query(&sql).bind(id.to_owned()).fetch_optional(conn).await?;
    row.as_ref().map(run_from_row).transpose()
}

/// Takes the run's write lock (see `store`) and returns the row as it is now.
pub async fn lock_run(tx: &mut Tx, id: &str) -> Result<Option<RunRow>> {
    let sql = format!("UPDATE runs SET version = version WHERE id = $1 RETURNING {RUN_COLUMNS}");
    let row = sqlx::query(&sql).bind(id.to_owned()).fetch_optional(&mut **tx).await?;
    row.as_ref().map(run_from_row).transpose()
}

/// Annotators see their own runs (and those they are assigned, see [`visible_run`]);
/// everyone else sees all.
pub fn can_see(user: &User, run: &RunRow) -> bool {
    user.role != Role::Annotator || run.annotator == user.id
}

/// The run if the caller may see it as its annotator or another role, else `404` (not
/// `403`, so ids do not leak). Writes to the run's own header use this: an assignee of an
/// overlap run reads it but writes only their own version.
pub fn visible(user: &User, run: Option<RunRow>) -> Result<RunRow> {
    run.filter(|run| can_see(user, run)).ok_or_else(|| Problem::not_found("run"))
}

/// Whether `user` is assigned to the run now.
pub async fn is_assigned(conn: &mut AnyConnection, run_id: &str, user: &str) -> Result<bool> {
    let row = sqlx::query("SELECT 1 AS one FROM assignments WHERE run_id = $1 AND annotator = $2")
        .bind(run_id.to_owned())
        .bind(user.to_owned())
        .fetch_optional(conn)
        .await?;
    Ok(row.is_some())
}

/// [`visible`], where an annotator also sees the runs they are assigned.
async fn visible_or_assigned(
    conn: &mut AnyConnection,
    user: &User,
    run: Option<RunRow>,
) -> Result<RunRow> {
    match run {
        Some(run) if can_see(user, &run) => Ok(run),
        Some(run) if run.assignees > 0 && is_assigned(conn, &run.id, &user.id).await? => Ok(run),
        _ => Err(Problem::not_found("run")),
    }
}

pub async fn visible_run(conn: &mut AnyConnection, user: &User, id: &str) -> Result<RunRow> {
    let run = load_run(conn, id).await?;
    visible_or_assigned(conn, user, run).await
}

/// Takes the run's write lock, as [`lock_run`], and returns the run if the caller may see it.
pub async fn lock_visible_run(tx: &mut Tx, user: &User, id: &str) -> Result<RunRow> {
    let run = lock_run(tx, id).await?;
    visible_or_assigned(tx, user, run).await
}

/// The SQL condition that a run aliased `r` is visible to an annotator (the text bound to
/// the caller's id, twice).
pub fn push_visible_to_annotator(sql: &mut crate::store::Sql, user: &str) {
    sql.push(" AND (r.annotator = ").text(user);
    sql.push(" OR EXISTS (SELECT 1 FROM assignments a WHERE a.run_id = r.id AND a.annotator = ");
    sql.text(user).push("))");
}

/// The run as a write in `tx` left it, with its server fields.
pub async fn run_after_write(tx: &mut Tx, id: &str) -> Result<Value> {
    let run = lock_run(tx, id).await?.ok_or_else(|| Problem::internal("run vanished"))?;
    run_json(tx, &run).await
}

/// What the caller may change in a run, per the editing table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditScope {
    /// Header, steps, rollback.
    Full,
    /// A reviewer on an in-review run: steps' `verified` and `issues` only.
    ReviewFields,
}

pub fn edit_scope(user: &User, run: &RunRow) -> Result<EditScope> {
    require_editable(run)?;
    match user.role {
        Role::QaManager | Role::Admin => Ok(EditScope::Full),
        Role::Annotator if run.annotator == user.id && run.in_overlap() => Err(Problem::forbidden(
            "This run is annotated in overlap: save your own version \
                 (/runs/{runId}/annotations/me/steps/{index}); a reviewer resolves the versions \
                 into the run.",
        )),
        Role::Annotator if run.annotator == user.id => Ok(EditScope::Full),
        Role::Annotator => Err(Problem::not_found("run")),
        Role::Reviewer if run.status == Status::InReview => Ok(EditScope::ReviewFields),
        Role::Reviewer => Err(Problem::forbidden(
            "Reviewers comment and suggest; they edit only steps' verified and issues, and only \
             while the run is in review.",
        )),
    }
}

/// `403` unless the run's status lets anything in it change (draft, in review): the same
/// refusal for every write to an approved, rejected or archived run.
pub fn require_editable(run: &RunRow) -> Result<()> {
    if run.status.editable() {
        return Ok(());
    }
    Err(Problem::forbidden(format!(
        "The run is {}, so it is read only; transition it back first.",
        run.status.as_str()
    )))
}

/// Full edit rights or `403`.
pub fn require_full_edit(user: &User, run: &RunRow) -> Result<()> {
    match edit_scope(user, run)? {
        EditScope::Full => Ok(()),
        EditScope::ReviewFields => Err(Problem::forbidden(
            "Reviewers do not edit content directly: comment or suggest instead.",
        )),
    }
}

/// The header state of a run.
pub fn header_state(
    content: &Map<String, Value>,
    status: Status,
    reviewed_by: Option<&str>,
    annotator: &str,
    tags: &[String],
) -> Map<String, Value> {
    let mut header = content.clone();
    header.insert("status".into(), json!(status.as_str()));
    header.insert("reviewedBy".into(), json!(reviewed_by));
    header.insert("annotator".into(), json!(annotator));
    header.insert("tags".into(), json!(tags));
    header
}

pub fn tags_of(header: &Map<String, Value>) -> Vec<String> {
    crate::validate::texts(header.get("tags")).unwrap_or_default()
}

/// What `q` searches in a run header: the prompt and the answer, lowercased.
pub fn run_search_text(header: &Map<String, Value>) -> String {
    let mut text = String::new();
    for key in ["taskPrompt", "finalAnswer"] {
        if let Some(s) = header.get(key).and_then(Value::as_str) {
            text.push_str(&s.to_lowercase());
            text.push('\n');
        }
    }
    text
}

/// What `q` searches in a step: the thoughts and extended thoughts, lowercased.
pub fn step_search_text(step: &Map<String, Value>) -> String {
    let mut text = String::new();
    if let Some(thoughts) = step.get("thoughts").and_then(Value::as_object) {
        for thought in thoughts.values().filter_map(Value::as_str) {
            text.push_str(&thought.to_lowercase());
            text.push('\n');
        }
    }
    for thought in step.get("extendedThoughts").and_then(Value::as_array).into_iter().flatten() {
        if let Some(thought) = thought.as_str() {
            text.push_str(&thought.to_lowercase());
            text.push('\n');
        }
    }
    text
}

/// A run's computed counters: not versioned, not covered by its ETag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub stored_steps: i64,
    pub open_threads: i64,
    pub pending_suggestions: i64,
}

impl Counters {
    /// From a row that selected [`RUN_COUNTERS`].
    pub fn from_row(row: &AnyRow) -> Result<Counters> {
        Ok(Counters {
            stored_steps: get_i64(row, "stored_steps")?,
            open_threads: get_i64(row, "open_threads")?,
            pending_suggestions: get_i64(row, "pending_suggestions")?,
        })
    }
}

/// The `Run` a client sees, from a header state and the counters.
pub fn run_output(
    header: &Map<String, Value>,
    version: i64,
    header_version: i64,
    updated_at: &str,
    updated_by: &str,
    counters: Counters,
) -> Value {
    let mut out = header.clone();
    out.insert("updatedAt".into(), json!(updated_at));
    out.insert("updatedBy".into(), json!(updated_by));
    out.insert("version".into(), json!(version));
    out.insert("etag".into(), json!(etag(version)));
    out.insert("headerVersion".into(), json!(header_version));
    out.insert("storedSteps".into(), json!(counters.stored_steps));
    out.insert("openThreads".into(), json!(counters.open_threads));
    out.insert("pendingSuggestions".into(), json!(counters.pending_suggestions));
    Value::Object(out)
}

/// The counters' SQL, for a run aliased `r`.
pub const RUN_COUNTERS: &str = "(SELECT COUNT(*) FROM steps s WHERE s.run_id = r.id) AS stored_steps, \
     (SELECT COUNT(*) FROM comments c WHERE c.run_id = r.id AND c.parent_id IS NULL \
      AND c.resolved = 0) AS open_threads, \
     (SELECT COUNT(*) FROM suggestions g WHERE g.run_id = r.id AND g.state = 'pending') \
      AS pending_suggestions";

pub async fn counters(conn: &mut AnyConnection, run_id: &str) -> Result<Counters> {
    let sql = format!("SELECT {RUN_COUNTERS} FROM runs r WHERE r.id = $1");
    let row = sqlx::query(&sql).bind(run_id.to_owned()).fetch_one(conn).await?;
    Counters::from_row(&row)
}

pub async fn run_json(conn: &mut AnyConnection, run: &RunRow) -> Result<Value> {
    Ok(run.output(counters(conn, &run.id).await?))
}

pub fn run_json_from_row(row: &AnyRow) -> Result<Value> {
    Ok(run_from_row(row)?.output(Counters::from_row(row)?))
}

// -------------------------------------------------------------------------------- steps

#[derive(Debug, Clone)]
pub struct StepRow {
    pub index: i64,
    pub version: i64,
    pub body: Map<String, Value>,
}

pub async fn load_step(
    conn: &mut AnyConnection,
    run_id: &str,
    index: i64,
) -> Result<Option<StepRow>> {
    let row = sqlx::query("SELECT idx, version, body FROM steps WHERE run_id = $1 AND idx = $2")
        .bind(run_id.to_owned())
        .bind(index)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(step_from_row).transpose()
}

pub fn step_from_row(row: &AnyRow) -> Result<StepRow> {
    Ok(StepRow {
        index: get_i64(row, "idx")?,
        version: get_i64(row, "version")?,
        body: match get_json(row, "body")? {
            Value::Object(map) => map,
            _ => return Err(Problem::internal("bad stored step")),
        },
    })
}

/// A step's computed counters: `(openThreads, pendingSuggestions)`.
pub type StepCounters = (i64, i64);

pub fn step_output(step: &StepRow, (open_threads, pending_suggestions): StepCounters) -> Value {
    let mut out = step.body.clone();
    out.insert("version".into(), json!(step.version));
    out.insert("etag".into(), json!(etag(step.version)));
    out.insert("openThreads".into(), json!(open_threads));
    out.insert("pendingSuggestions".into(), json!(pending_suggestions));
    Value::Object(out)
}

pub async fn step_json(conn: &mut AnyConnection, run_id: &str, step: &StepRow) -> Result<Value> {
    let counters = step_counters(conn, run_id, step.index).await?;
    Ok(step_output(step, counters))
}

/// The counters' SQL, for a step aliased `s`.
pub const STEP_COUNTERS: &str = "(SELECT COUNT(*) FROM comments c WHERE c.run_id = s.run_id \
     AND c.step_index = s.idx AND c.parent_id IS NULL AND c.resolved = 0) AS open_threads, \
     (SELECT COUNT(*) FROM suggestions g WHERE g.run_id = s.run_id AND g.step_index = s.idx \
      AND g.state = 'pending') AS pending_suggestions";

/// From a row that selected [`STEP_COUNTERS`].
pub fn step_counters_from_row(row: &AnyRow) -> Result<StepCounters> {
    Ok((get_i64(row, "open_threads")?, get_i64(row, "pending_suggestions")?))
}

pub async fn step_counters(
    conn: &mut AnyConnection,
    run_id: &str,
    index: i64,
) -> Result<StepCounters> {
    let row = sqlx::query(
        "SELECT (SELECT COUNT(*) FROM comments WHERE run_id = $1 AND step_index = $2 \
         AND parent_id IS NULL AND resolved = 0) AS open_threads, \
         (SELECT COUNT(*) FROM suggestions WHERE run_id = $1 AND step_index = $2 \
         AND state = 'pending') AS pending_suggestions",
    )
    .bind(run_id.to_owned())
    .bind(index)
    .fetch_one(conn)
    .await?;
    step_counters_from_row(&row)
}

// ------------------------------------------------------------------------------ history

/// One leaf-level change between two JSON values.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub path: String,
    pub op: &'static str,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Leaf-level changes from `before` to `after` (objects by key, arrays by index), with
/// paths prefixed by `path`.
pub fn diff(before: &Value, after: &Value, path: &str, out: &mut Vec<Change>) {
    let at = |key: &str| if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") };
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, old) in a {
                match b.get(key) {
                    Some(new) => diff(old, new, &at(key), out),
                    None => out.push(Change {
                        path: at(key),
                        op: "remove",
                        before: Some(old.clone()),
                        after: None,
                    }),
                }
            }
            for (key, new) in b.iter().filter(|(key, _)| !a.contains_key(*key)) {
                out.push(Change {
                    path: at(key),
                    op: "add",
                    before: None,
                    after: Some(new.clone()),
                });
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let key = i.to_string();
                match (a.get(i), b.get(i)) {
                    (Some(old), Some(new)) => diff(old, new, &at(&key), out),
                    (Some(old), None) => out.push(Change {
                        path: at(&key),
                        op: "remove",
                        before: Some(old.clone()),
                        after: None,
                    }),
                    (None, Some(new)) => out.push(Change {
                        path: at(&key),
                        op: "add",
                        before: None,
                        after: Some(new.clone()),
                    }),
                    (None, None) => {}
                }
            }
        }
        (a, b) if a != b => out.push(Change {
            path: path.to_owned(),
            op: "replace",
            before: Some(a.clone()),
            after: Some(b.clone()),
        }),
        _ => {}
    }
}

pub fn diff_maps(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    path: &str,
) -> Vec<Change> {
    let mut out = Vec::new();
    diff(&Value::Object(before.clone()), &Value::Object(after.clone()), path, &mut out);
    out
}

/// A history entry about to be written.
pub struct Entry {
    pub kind: &'static str,
    pub step_index: Option<i64>,
    pub changes: Vec<Change>,
    pub summary: String,
    /// `transition`, `rolledBackTo`, `suggestionId` when they apply.
    pub extra: Map<String, Value>,
}

impl Entry {
    pub fn new(
        kind: &'static str,
        step_index: Option<i64>,
        changes: Vec<Change>,
        summary: String,
    ) -> Self {
        Self { kind, step_index, changes, summary, extra: Map::new() }
    }
}

/// "thoughts.thought2, verified and 3 more": the first paths of a change list.
pub fn describe_paths(changes: &[Change], strip: &str) -> String {
    let paths: Vec<&str> =
        changes.iter().map(|c| c.path.strip_prefix(strip).unwrap_or(&c.path)).collect();
    match paths.len() {
        0 => "nothing".into(),
        1..=3 => paths.join(", "),
        n => format!("{} and {} more", paths[..3].join(", "), n - 3),
    }
}

/// Writes the next run version: the entry, the run's counters, and the header when it
/// changed (`new_header`). Returns the new version; the caller writes step rows with it.
pub async fn commit_version(
    tx: &mut Tx,
    run: &RunRow,
    user: &User,
    now: &str,
    entry: Entry,
    new_header: Option<&Map<String, Value>>,
) -> Result<i64> {
    let version = run.version + 1;
    match new_header {
        Some(header) => {
            let text = Value::Object(header.clone()).to_string();
            let status = header.get("status").and_then(Value::as_str).unwrap_or("draft");
            let annotator = header.get("annotator").and_then(Value::as_str).unwrap_or("");
            sqlx::query(
                "UPDATE runs SET version = $2, header_version = $2, updated_at = $3, \
                 updated_by = $4, header = $5, status = $6, annotator = $7, tags = $8, \
                 search = $9 WHERE id = $1",
            )
            .bind(run.id.clone())
            .bind(version)
            .bind(now.to_owned())
            .bind(user.id.clone())
            .bind(text.clone())
            .bind(status.to_owned())
            .bind(annotator.to_owned())
            .bind(json!(tags_of(header)).to_string())
            .bind(run_search_text(header))
            .execute(&mut **tx)
            .await?;
            insert_header_snapshot(tx, &run.id, version, &text).await?;
        }
        None => {
            sqlx::query(
                "UPDATE runs SET version = $2, updated_at = $3, updated_by = $4 WHERE id = $1",
            )
            .bind(run.id.clone())
            .bind(version)
            .bind(now.to_owned())
            .bind(user.id.clone())
            .execute(&mut **tx)
            .await?;
        }
    }
    insert_entry(tx, &run.id, version, now, &user.id, entry).await?;
    Ok(version)
}

pub async fn insert_header_snapshot(
    tx: &mut Tx,
    run_id: &str,
    version: i64,
    header: &str,
) -> Result<()> {
    sqlx::query("INSERT INTO run_headers (run_id, version, header) VALUES ($1, $2, $3)")
        .bind(run_id.to_owned())
        .bind(version)
        .bind(header.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn insert_entry(
    tx: &mut Tx,
    run_id: &str,
    version: i64,
    now: &str,
    by: &str,
    entry: Entry,
) -> Result<()> {
    let changes: Vec<Value> =
        entry.changes.iter().map(|c| json!({"path": c.path, "op": c.op})).collect();
    sqlx::query(
        "INSERT INTO versions (run_id, version, at_time, by_user, kind, step_index, changes, \
         summary, extra) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(run_id.to_owned())
    .bind(version)
    .bind(now.to_owned())
    .bind(by.to_owned())
    .bind(entry.kind)
    .bind(entry.step_index)
    .bind(Value::Array(changes).to_string())
    .bind(entry.summary)
    .bind(Value::Object(entry.extra).to_string())
    .execute(&mut **tx)
    .await?;
    let target = match entry.step_index {
        Some(index) => format!("step {index}"),
        None => "run".to_owned(),
    };
    let before = if version > 1 { json!({"version": version - 1}) } else { Value::Null };
    let after = json!({"version": version});
    crate::audit::record(tx, by, entry.kind, Some(run_id), &target, before, after).await
}

/// Writes a step's current row and its snapshot at `version`.
pub async fn save_step(
    tx: &mut Tx,
    run_id: &str,
    index: i64,
    version: i64,
    body: &Map<String, Value>,
    create: bool,
) -> Result<()> {
    let text = Value::Object(body.clone()).to_string();
    let search = step_search_text(body);
    let sql = if create {
        "INSERT INTO steps (run_id, idx, version, body, search) VALUES ($1, $2, $3, $4, $5)"
    } else {
        "UPDATE steps SET version = $3, body = $4, search = $5 WHERE run_id = $1 AND idx = $2"
    };
    sqlx::query(sql)
        .bind(run_id.to_owned())
        .bind(index)
        .bind(version)
        .bind(text.clone())
        .bind(search)
        .execute(&mut **tx)
        .await?;
    sqlx::query("INSERT INTO step_snapshots (run_id, idx, version, body) VALUES ($1, $2, $3, $4)")
        .bind(run_id.to_owned())
        .bind(index)
        .bind(version)
        .bind(text)
        .execute(&mut **tx)
        .await?;
    if !create {
        crate::passages::reanchor_step(tx, run_id, index, body).await?;
    }
    Ok(())
}

/// Which changed paths a conflict reports.
pub enum PathScope {
    /// The header's paths (no `steps.`).
    Header,
    /// One step's paths, relative to the step.
    Step(i64),
    /// Everything.
    All,
}

/// The paths changed after `base`, from the history, each once, oldest first.
pub async fn changed_since(
    conn: &mut AnyConnection,
    run_id: &str,
    base: i64,
    scope: PathScope,
) -> Result<Vec<String>> {
    let rows = sqlx::query(
        "SELECT changes FROM versions WHERE run_id = $1 AND version > $2 ORDER BY version",
    )
    .bind(run_id.to_owned())
    .bind(base)
    .fetch_all(conn)
    .await?;
    let mut paths: Vec<String> = Vec::new();
    for row in &rows {
        for change in get_json(row, "changes")?.as_array().into_iter().flatten() {
            let Some(path) = change.get("path").and_then(Value::as_str) else { continue };
            let path = match &scope {
                PathScope::All => Some(path.to_owned()),
                PathScope::Header => (!path.starts_with("steps.")).then(|| path.to_owned()),
                PathScope::Step(index) => {
                    let prefix = format!("steps.{index}");
                    match path.strip_prefix(&prefix) {
                        Some("") => Some(String::new()),
                        Some(rest) if rest.starts_with('.') => Some(rest[1..].to_owned()),
                        _ => None,
                    }
                }
            };
            if let Some(path) = path
                && !paths.contains(&path)
            {
                paths.push(path);
            }
        }
    }
    Ok(paths)
}

/// The `409` for a write based on version `base` of a run that has moved on: the run as it
/// is, and the paths (in `scope`) changed after `base`.
pub async fn run_conflict(
    conn: &mut AnyConnection,
    run: &RunRow,
    base: i64,
    scope: PathScope,
) -> Result<Problem> {
    let record = run_json(conn, run).await?;
    let paths = changed_since(conn, &run.id, base, scope).await?;
    Ok(Problem::conflict("conflict", "run", Some(base), Some(run.version), record, Some(paths)))
}

/// A write on every path based on version `base`: the [`run_conflict`] unless it is the run's.
pub async fn require_version(conn: &mut AnyConnection, run: &RunRow, base: i64) -> Result<()> {
    if run.version == base {
        return Ok(());
    }
    Err(run_conflict(conn, run, base, PathScope::All).await?)
}

/// The `409` for a step that changed after `base`, with the step as it is now.
pub async fn step_conflict(
    conn: &mut AnyConnection,
    run_id: &str,
    step: &StepRow,
    base: i64,
) -> Result<Problem> {
    let current = step_json(conn, run_id, step).await?;
    let paths = changed_since(conn, run_id, base, PathScope::Step(step.index)).await?;
    Ok(Problem::conflict("conflict", "step", Some(base), Some(step.version), current, Some(paths)))
}

/// `403` naming the refused fields by their dot paths in the record.
pub fn forbidden_paths(detail: &str, paths: Vec<String>) -> Problem {
    let errors = paths
        .iter()
        .map(|p| FieldError::new(crate::validate::dot_pointer(p), "this role may not change it"))
        .collect();
    Problem::forbidden(detail).errors(errors)
}
