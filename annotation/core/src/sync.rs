//! Sync with the team's server (`sync-server/openapi.yaml`): what the page queues, the
//! bodies it sends, how it reads the answers, and what it shows. The page's shell does the
//! HTTP and storage; every decision is here.
//!
//! The local copy stays the working copy. A save queues the run's header and the steps it
//! changed; draining sends them in one `runs:batchUpsert`, each with the server version it
//! was based on, so a stale write comes back as a conflict instead of overwriting someone.
//! Pulling replaces local records only where nothing is queued, so unsent work is never
//! overwritten either.

use run_contract::url::origin;
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use run_contract::limits::{BATCH_ITEMS, JSON_BODY_BYTES};

use crate::record::{ReviewStatus, Run, Step, Thought};
use crate::review::{Comment, CommentKind, PassageRef, Suggestion, SuggestionState};
use crate::roles::{Role, User, permitted};

/// Where to sync and as whom. The token is a secret: it never prints, and it is never part of
/// an export (exports are built from runs and steps, which do not hold it).
#[derive(Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct SyncSettings {
    /// `http://127.0.0.1:8787`; empty: the page works locally only.
    pub endpoint: String,
    pub token: String,
}

impl std::fmt::Debug for SyncSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncSettings")
            .field("endpoint", &self.endpoint)
            .field("token", &"***")
            .finish()
    }
}

impl SyncSettings {
    pub fn enabled(&self) -> bool {
        !self.endpoint.trim().is_empty()
    }

    /// What is wrong with the settings, for a person; empty when they can be used.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let endpoint = self.endpoint.trim();
        if endpoint.is_empty() {
            return problems;
        }
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            problems.push("The server address must start with http:// or https://.".into());
        } else if endpoint.contains(char::is_whitespace) {
            problems.push("The server address must not contain spaces.".into());
        }
        if self.token.trim().is_empty() {
            problems
                .push("A token is needed: ask your admin for one (`sync-server user add`).".into());
        }
        problems
    }

    /// The settings as edited in the sync dialog. An empty token field keeps the stored
    /// token, but only for the same server: a token is never sent to a server it was not
    /// issued by, so moving to another origin asks for a new one.
    pub fn edited(&self, endpoint: &str, typed_token: &str) -> SyncSettings {
        let endpoint = endpoint.trim().to_owned();
        let token = match typed_token.trim() {
            "" if origin(&endpoint) == origin(&self.endpoint) => self.token.clone(),
            typed => typed.to_owned(),
        };
        SyncSettings { endpoint, token }
    }

    /// The URL of `path` (which starts with `/`) on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.endpoint.trim().trim_end_matches('/'))
    }

    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token.trim())
    }
}

/// What a queued change is about. The record itself is read when the queue drains, so
/// several saves of one step send it once, as it is then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Pending {
    Run { run_id: String },
    Step { run_id: String, index: u32 },
}

impl Pending {
    pub fn run_id(&self) -> &str {
        match self {
            Pending::Run { run_id } | Pending::Step { run_id, .. } => run_id,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Pending::Run { run_id } => format!("run {run_id}"),
            Pending::Step { run_id, index } => format!("step {} of run {run_id}", index + 1),
        }
    }
}

/// The changes a save makes to send: the header, and each step that differs from before.
pub fn changes(run: &Run, before: &[Step], after: &[Step]) -> Vec<Pending> {
    let mut out = vec![Pending::Run { run_id: run.id.clone() }];
    for step in after {
        if before.iter().find(|s| s.index == step.index) != Some(step)
            || step.server_version.is_none()
        {
            out.push(Pending::Step { run_id: run.id.clone(), index: step.index });
        }
    }
    out
}

/// Adds `new` to `queue` unless the same thing is already queued.
pub fn enqueue(queue: &mut Vec<Pending>, new: impl IntoIterator<Item = Pending>) {
    for item in new {
        if !queue.contains(&item) {
            queue.push(item);
        }
    }
}

/// A run's fields the server stores as content (`RunWrite`).
const RUN_WRITE: [&str; 16] = [
    "id",
    "taskId",
    "taskPrompt",
    "followUps",
    "agentStatus",
    "finalAnswer",
    "createdAt",
    "createdBy",
    "subtasks",
    "totalSteps",
    "startUrl",
    "models",
    "usage",
    "cost",
    "tags",
    // Seed 001 §7: the run's log and spend go with it, read-only here.
    "telemetry",
];

/// A step's fields the server stores (`StepWrite`).
const STEP_WRITE: [&str; 18] = [
    "runId",
    "index",
    "url",
    "title",
    "screenshot",
    "action",
    "actions",
    "thoughts",
    "extendedThoughts",
    "verified",
    "issues",
    "lastEditedBy",
    "lastEditedAt",
    "outcome",
    "traceIds",
    "durationMs",
    "navigator",
    "draftedThoughts",
];

fn only(value: Value, keys: &[&str]) -> Value {
    let Value::Object(map) = value else { return value };
    Value::Object(map.into_iter().filter(|(k, _)| keys.contains(&k.as_str())).collect())
}

/// The body the server takes for a run: its content only (status moves by transitions).
pub fn run_write(run: &Run) -> Value {
    let mut body = only(serde_json::to_value(run).unwrap_or(Value::Null), &RUN_WRITE);
    if let Some(map) = body.as_object_mut() {
        map.entry("finalAnswer").or_insert(Value::Null);
        map.entry("tags").or_insert(json!([]));
    }
    body
}

/// The body the server takes for a step.
pub fn step_write(step: &Step) -> Value {
    only(serde_json::to_value(step).unwrap_or(Value::Null), &STEP_WRITE)
}

/// One `runs:batchUpsert` item for a queued change, from the local records.
pub fn batch_item(
    mutation_id: &str,
    pending: &Pending,
    run: &Run,
    step: Option<&Step>,
) -> Option<Value> {
    match pending {
        Pending::Run { run_id } => Some(json!({
            "kind": "run", "mutationId": mutation_id, "runId": run_id,
            "baseVersion": run.server_version, "run": run_write(run),
        })),
        Pending::Step { run_id, index } => {
            let step = step?;
            Some(json!({
                "kind": "step", "mutationId": mutation_id, "runId": run_id, "index": index,
                "baseVersion": step.server_version, "step": step_write(step),
            }))
        }
    }
}

/// How a queue goes out: batches of item indexes, in order, each of whose
/// `runs:batchUpsert` bodies stays within the server's limits, and the items too big to go
/// in any (each alone makes a body over the byte limit).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batches {
    pub batches: Vec<Vec<usize>>,
    pub too_big: Vec<usize>,
}

/// Splits `items` into `runs:batchUpsert` bodies (`{"items":[…]}`, as `to_string` writes
/// them) of at most `max_bytes` and `max_items` each, in order. An item too big for a body
/// of its own is left out, so the rest still go.
pub fn batches(items: &[Value], max_bytes: usize, max_items: usize) -> Batches {
    const ENVELOPE: usize = r#"{"items":[]}"#.len();
    let mut out = Batches::default();
    let mut current: Vec<usize> = Vec::new();
    let mut bytes = ENVELOPE;
    for (i, item) in items.iter().enumerate() {
        let size = item.to_string().len();
        if ENVELOPE + size > max_bytes {
            out.too_big.push(i);
            continue;
        }
        let comma = usize::from(!current.is_empty());
        if !current.is_empty() && (bytes + comma + size > max_bytes || current.len() >= max_items) {
            out.batches.push(std::mem::take(&mut current));
            bytes = ENVELOPE;
        }
        bytes += usize::from(!current.is_empty()) + size;
        current.push(i);
    }
    if !current.is_empty() {
        out.batches.push(current);
    }
    out
}

/// Why an item of `bytes` cannot be sent, for a person.
pub fn too_big_text(bytes: usize, max_bytes: usize) -> String {
    let mb = |b: usize| b as f64 / (1024.0 * 1024.0);
    format!(
        "it is {:.1} MB, and the server takes {:.0} MB in one request; shorten it, or discard \
         the change",
        mb(bytes),
        mb(max_bytes)
    )
}

/// What the server did with one item.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Written: the server's record and version.
    Ok { version: i64, record: Value },
    /// Stale: the server's record now, its version, and the paths changed since the base.
    Conflict { version: Option<i64>, current: Value, paths: Vec<String> },
    /// Invalid or not allowed; `why` lists the reasons for a person.
    Rejected { why: String },
}

/// Reads a `runs:batchUpsert` answer: one outcome per item sent, in order.
pub fn read_batch(answer: &Value, sent: usize) -> Result<Vec<Outcome>, String> {
    let results = answer["results"].as_array().ok_or("the server's answer has no results")?;
    if results.len() != sent {
        return Err(format!("the server answered {} results for {sent} changes", results.len()));
    }
    Ok(results
        .iter()
        .map(|r| match r["outcome"].as_str() {
            Some("ok") => Outcome::Ok {
                version: r["version"].as_i64().unwrap_or_default(),
                record: r["record"].clone(),
            },
            Some("conflict") => Outcome::Conflict {
                version: r["problem"]["currentVersion"].as_i64(),
                current: r["problem"]["current"].clone(),
                paths: r["problem"]["changedPaths"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default(),
            },
            _ => Outcome::Rejected { why: problem_text(&r["problem"]) },
        })
        .collect())
}

/// A problem+json body as one line for a person: its detail, then each field error.
pub fn problem_text(problem: &Value) -> String {
    let mut text = problem["detail"]
        .as_str()
        .or(problem["title"].as_str())
        .unwrap_or("the server refused it")
        .to_owned();
    for error in problem["errors"].as_array().into_iter().flatten() {
        text += &format!(
            " {}: {}",
            error["path"].as_str().unwrap_or(""),
            error["message"].as_str().unwrap_or("")
        );
    }
    text
}

/// Server fields that are not part of the local record.
const SERVER_ONLY: [&str; 8] = [
    "version",
    "etag",
    "headerVersion",
    "updatedBy",
    "storedSteps",
    "openThreads",
    "pendingSuggestions",
    "serverVersion",
];

fn localize(mut record: Value) -> Result<(Map<String, Value>, Option<i64>), String> {
    let map = record.as_object_mut().ok_or("the server sent a record that is not an object")?;
    let version = map.get("version").and_then(Value::as_i64);
    for key in SERVER_ONLY {
        map.remove(key);
    }
    Ok((std::mem::take(map), version))
}

/// The server's run as the local record: its version becomes `serverVersion`, and the local
/// version counter is kept.
pub fn run_from_server(record: Value, local_version: u32) -> Result<Run, String> {
    let (map, version) = localize(record)?;
    let mut run: Run =
        serde_json::from_value(Value::Object(map)).map_err(|e| format!("the server's run: {e}"))?;
    run.server_version = version;
    run.version = local_version;
    Ok(run)
}

pub fn step_from_server(record: Value) -> Result<Step, String> {
    let (map, version) = localize(record)?;
    let mut step: Step = serde_json::from_value(Value::Object(map))
        .map_err(|e| format!("the server's step: {e}"))?;
    step.server_version = version;
    Ok(step)
}

/// Where the last pull got to: the server's own cursor from it (`pullCursor`), with the
/// server and the user it was issued for. The page keeps it and sends it back, so which
/// changes it asks for never depends on this browser's clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullMark {
    pub endpoint: String,
    pub user: String,
    pub cursor: String,
}

/// The first page of a pull by `user`: every run changed since `mark`, or every run when
/// there is no mark for this server and user.
pub fn pull_path(mark: Option<&PullMark>, settings: &SyncSettings, user: &str) -> String {
    let mark = mark.filter(|m| origin(&m.endpoint) == origin(&settings.endpoint) && m.user == user);
    match mark {
        Some(mark) => format!(
            "/runs?sort=updatedAt&pullCursor={}",
            run_contract::url::component_encode(&mark.cursor)
        ),
        None => "/runs?sort=updatedAt".to_owned(),
    }
}

/// The mark to keep once every page of a pull has been applied: the cursor the server
/// issued with it, if it issued one.
pub fn pull_mark(page: &Value, settings: &SyncSettings, user: &str) -> Option<PullMark> {
    let cursor = page["pullCursor"].as_str().filter(|c| !c.is_empty())?;
    Some(PullMark {
        endpoint: settings.endpoint.trim().to_owned(),
        user: user.to_owned(),
        cursor: cursor.to_owned(),
    })
}

/// A conflict waiting for a person: what is queued here and what the server has now.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    pub pending: Pending,
    /// The server's record now (with its server fields).
    pub theirs: Value,
    pub their_version: Option<i64>,
    /// Paths the server changed since our base.
    pub paths: Vec<String>,
}

impl Conflict {
    /// The text fields that differ between mine and theirs, as (label, mine, theirs).
    pub fn differences(&self, mine: &Value) -> Vec<(String, String, String)> {
        let theirs = match &self.pending {
            Pending::Run { .. } => run_write_value(&self.theirs),
            Pending::Step { .. } => only(self.theirs.clone(), &STEP_WRITE),
        };
        let mut out = Vec::new();
        diff_leaves(mine, &theirs, "", &mut out);
        out
    }
}

fn run_write_value(record: &Value) -> Value {
    only(record.clone(), &RUN_WRITE)
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn diff_leaves(mine: &Value, theirs: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    match (mine, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            lean::sort(&mut keys);
            keys.dedup();
            for key in keys {
                let sub = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                // Who/when of the edit is bookkeeping, not content to choose between.
                if matches!(key.as_str(), "lastEditedBy" | "lastEditedAt") {
                    continue;
                }
                diff_leaves(
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    &sub,
                    out,
                );
            }
        }
        (a, b) if a != b => out.push((path.to_owned(), show(a), show(b))),
        _ => {}
    }
}

// ------------------------------------------------------------------ review

/// The body that creates `comment` on the server: a thread start with its anchor and kind, or
/// a reply naming its parent's server id.
pub fn comment_create(comment: &Comment, parent_server_id: Option<&str>) -> Value {
    match parent_server_id {
        Some(parent) => json!({"text": comment.text, "parentId": parent}),
        None => {
            let mut anchor = json!({"stepIndex": comment.step_index});
            if let Some(p) = &comment.passage {
                anchor["field"] = format!("thoughts.{}", p.field.key()).into();
                anchor["range"] = json!({"start": p.start, "end": p.end});
                anchor["quote"] = p.quote.clone().into();
                anchor["prefix"] = p.prefix.clone().into();
                anchor["suffix"] = p.suffix.clone().into();
            }
            json!({"text": comment.text, "anchor": anchor, "kind": comment.kind.as_str()})
        }
    }
}

/// A passage the server holds (a comment's anchor, a suggestion's `passage`): its field,
/// its range as re-anchored by the server, its quote and context, and whether it is gone.
fn passage_from_server(
    field: &Value,
    range: &Value,
    at: &Value,
    outdated: bool,
) -> Option<PassageRef> {
    let field = Thought::from_key(field.as_str()?.strip_prefix("thoughts.")?)?;
    Some(PassageRef {
        field,
        start: range["start"].as_u64()? as usize,
        end: range["end"].as_u64()? as usize,
        quote: at["quote"].as_str()?.to_owned(),
        prefix: at["prefix"].as_str().unwrap_or_default().to_owned(),
        suffix: at["suffix"].as_str().unwrap_or_default().to_owned(),
        outdated,
    })
}

/// The server's comment as a local one. `known` are the local comments of the run, to keep
/// local ids for comments this page made and to find a reply's parent.
pub fn comment_from_server(record: &Value, known: &[Comment]) -> Result<Comment, String> {
    let server_id = record["id"].as_str().ok_or("a comment without an id")?.to_owned();
    let local_id = |server: &str| {
        known
            .iter()
            .find(|c| c.server_id.as_deref() == Some(server))
            .map_or_else(|| format!("srv-{server}"), |c| c.id.clone())
    };
    let parent_id = record["parentId"].as_str().map(local_id);
    // Replies carry no kind on the server: they take their thread's.
    let thread_kind = record["threadId"]
        .as_str()
        .and_then(|t| known.iter().find(|c| c.server_id.as_deref() == Some(t)))
        .map(|c| c.kind);
    Ok(Comment {
        id: local_id(&server_id),
        run_id: record["runId"].as_str().unwrap_or_default().to_owned(),
        step_index: record["anchor"]["stepIndex"].as_u64().map(|i| i as u32),
        parent_id,
        author: record["author"].as_str().unwrap_or_default().to_owned(),
        text: record["text"].as_str().unwrap_or_default().to_owned(),
        kind: record["kind"]
            .as_str()
            .and_then(CommentKind::parse)
            .or(thread_kind)
            .unwrap_or_default(),
        resolved: record["resolved"].as_bool().unwrap_or(false),
        created_at: record["createdAt"].as_str().unwrap_or_default().to_owned(),
        server_id: Some(server_id),
        passage: passage_from_server(
            &record["anchor"]["field"],
            &record["anchor"]["range"],
            &record["anchor"],
            record["outdated"].as_bool().unwrap_or(false),
        ),
    })
}

/// The body that proposes `suggestion` against the step version the reviewer read.
pub fn suggestion_create(suggestion: &Suggestion, base_version: i64) -> Value {
    let mut body = json!({
        "stepIndex": suggestion.step_index,
        "field": format!("thoughts.{}", suggestion.field.key()),
        "baseVersion": base_version,
        "proposed": suggestion.after,
        "note": if suggestion.note.is_empty() { Value::Null } else { Value::from(suggestion.note.clone()) },
    });
    // A passage suggestion replaces its range only.
    if let Some(p) = &suggestion.passage {
        body["range"] = json!({"start": p.start, "end": p.end});
        body["quote"] = p.quote.clone().into();
        body["prefix"] = p.prefix.clone().into();
        body["suffix"] = p.suffix.clone().into();
    }
    body
}

/// The server's suggestion as a local one, or `None` for fields this page does not suggest on
/// (the server also takes suggestions on actions).
pub fn suggestion_from_server(record: &Value, known: &[Suggestion]) -> Option<Suggestion> {
    let server_id = record["id"].as_str()?.to_owned();
    let field = Thought::from_key(record["field"].as_str()?.strip_prefix("thoughts.")?)?;
    let local = known.iter().find(|s| s.server_id.as_deref() == Some(&server_id));
    let state = match record["state"].as_str()? {
        "pending" => SuggestionState::Pending,
        "accepted" => SuggestionState::Accepted,
        // Withdrawn by its author: no longer to decide, like a rejection.
        _ => SuggestionState::Rejected,
    };
    Some(Suggestion {
        id: local.map_or_else(|| format!("srv-{server_id}"), |s| s.id.clone()),
        run_id: record["runId"].as_str()?.to_owned(),
        step_index: record["stepIndex"].as_u64()? as u32,
        field,
        before: record["original"].as_str().unwrap_or_default().to_owned(),
        after: record["proposed"].as_str().unwrap_or_default().to_owned(),
        author: record["author"].as_str().unwrap_or_default().to_owned(),
        note: record["note"].as_str().unwrap_or_default().to_owned(),
        state,
        created_at: record["createdAt"].as_str().unwrap_or_default().to_owned(),
        resolved_by: record["decidedBy"].as_str().map(str::to_owned),
        resolved_at: record["decidedAt"].as_str().map(str::to_owned),
        server_id: Some(server_id),
        passage: passage_from_server(
            &record["field"],
            &record["passage"],
            &record["passage"],
            record["outdated"].as_bool().unwrap_or(false),
        ),
    })
}

/// The statuses to move through, in order, to take a run from `from` to `to` (status moves
/// only by transitions, one flow edge at a time); empty when already there or unreachable.
pub fn transition_path(from: ReviewStatus, to: ReviewStatus) -> Vec<ReviewStatus> {
    // Any edge of the flow, whoever may take it; the server judges who.
    let admin = User { name: String::new(), role: Role::Admin };
    let edge = |a: ReviewStatus, b: ReviewStatus| permitted(&admin, None, a, b).is_some();
    let mut previous: Vec<Option<ReviewStatus>> = vec![None; ReviewStatus::ALL.len()];
    let position = |s: ReviewStatus| ReviewStatus::ALL.iter().position(|x| *x == s).unwrap_or(0);
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen = vec![false; ReviewStatus::ALL.len()];
    seen[position(from)] = true;
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = Vec::new();
            let mut step = to;
            while step != from {
                path.push(step);
                step = previous[position(step)].unwrap_or(from);
            }
            path.reverse();
            return path;
        }
        for next in ReviewStatus::ALL {
            if !seen[position(next)] && edge(at, next) {
                seen[position(next)] = true;
                previous[position(next)] = Some(at);
                queue.push_back(next);
            }
        }
    }
    Vec::new()
}

/// What the sync pill says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SyncState {
    /// No server configured: everything stays in this browser.
    #[default]
    LocalOnly,
    Syncing,
    /// Everything sent and received.
    Synced {
        at: String,
    },
    /// The server cannot be reached; changes wait in the queue.
    Offline {
        queued: usize,
        retry_in_s: u32,
    },
    /// Changes someone else made first: a person chooses.
    Conflicts {
        count: usize,
    },
    /// The server refused something (or the settings are wrong).
    Error {
        message: String,
    },
}

impl SyncState {
    pub fn label(&self) -> String {
        match self {
            SyncState::LocalOnly => "Local only".into(),
            SyncState::Syncing => "Syncing…".into(),
            SyncState::Synced { at } => format!("Synced {}", at.get(11..16).unwrap_or(at)),
            SyncState::Offline { queued, retry_in_s } => {
                format!(
                    "Offline · {queued} change{} queued · retry in {retry_in_s} s",
                    if *queued == 1 { "" } else { "s" }
                )
            }
            SyncState::Conflicts { count } => {
                format!("{count} conflict{} to resolve", if *count == 1 { "" } else { "s" })
            }
            SyncState::Error { message } => format!("Sync error: {message}"),
        }
    }

    pub fn class(&self) -> &'static str {
        match self {
            SyncState::LocalOnly => "local",
            SyncState::Syncing => "syncing",
            SyncState::Synced { .. } => "synced",
            SyncState::Offline { .. } => "offline",
            SyncState::Conflicts { .. } => "conflict",
            SyncState::Error { .. } => "error",
        }
    }
}

/// Seconds to wait before retry `attempt` (1, 2, …) after a network error or 429/503:
/// doubling from 2 s, at most 5 minutes; the server's `Retry-After` wins when longer.
pub fn backoff(attempt: u32, retry_after: Option<u32>) -> u32 {
    let doubling = 2u32.saturating_pow(attempt.min(9)).min(300);
    retry_after.map_or(doubling, |r| r.max(doubling).min(3600))
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;
