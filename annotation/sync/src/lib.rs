//! The annotation page's sync with the server: HTTP to the sync server and the queue in
//! IndexedDB (`annotation-store`). What to send, how to read the answers and what to show
//! are `annotation_core::sync`'s.
//!
//! The page links this crate for a round's frame (who the token is, the team's round, then
//! figures, collections and the open run's review), for conflicts and for the team's API.
//! The round's [`exchange`] (push and pull, most of this crate's code) runs in the page's
//! transfer module, which links it too: the page's bundle carries none of it.
//!
//! The exchange: push (runs never sent, then the queue: screenshots the server lacks first,
//! then `runs:batchUpsert` in batches under the server's limits), then pull (runs changed on
//! the server since the last pull, by the server's cursor, except runs with changes still
//! queued here). Conflicts and refusals stay queued until a person decides; network trouble
//! leaves everything queued for the next round.

use annotation_core::record::{ReviewStatus, Step};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::roles::{Role, User};
use annotation_core::sync::{
    self, BATCH_ITEMS, Conflict, JSON_BODY_BYTES, Outcome, Pending, SyncSettings, SyncState,
};
use annotation_core::team::{OwnVersion, Project, QueueEntry};
use annotation_store::{QueuedChange, Store, http, now};
use run_contract::url::component_encode;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

mod collections;
mod fetch;
mod metrics;
mod team;
pub use fetch::fetch_run;
pub use team::move_runs;

/// How a round ended, as the effect layer reports it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoundDone {
    /// The run on screen when the round started.
    pub open_run: Option<String>,
    pub state: SyncState,
    pub conflicts: Vec<(Conflict, serde_json::Value)>,
    /// Runs that changed locally because of the pull.
    pub pulled: Vec<String>,
    /// Who the token belongs to, when the server said.
    pub user: Option<User>,
    /// The open run's comments and suggestions, when the server changed them.
    pub review: Option<(Vec<Comment>, Vec<Suggestion>)>,
    /// Queued changes the server refused, with why.
    pub refused: Vec<(Pending, String)>,
    /// What the server said of the team this round, when it answered.
    pub team: Option<TeamRound>,
    /// The team's collections as the server has them after the round (curators).
    pub collections: Option<Vec<annotation_core::collections::Collection>>,
    /// The server's figures for the open run.
    pub metrics: Option<annotation_core::metrics_sync::TeamMetrics>,
}

/// The team's side of a round: the project's settings, the badge, the queue, and the runs
/// annotated in a version of one's own.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TeamRound {
    pub project: Option<Project>,
    pub unread: u32,
    pub queue: Vec<QueueEntry>,
    pub own: Vec<String>,
}

/// Why a request did not get an answer worth reading.
#[derive(Debug)]
pub enum Failure {
    /// Network down, server gone, 429 or 5xx: try again later.
    Unreachable { retry_after: Option<u32>, why: String },
    /// The server answered and refused (401, 403, 4xx): a person must act.
    Refused(String),
    /// `413`: the body is over what the server takes; smaller requests may still go.
    TooLarge(String),
}

impl Failure {
    /// What a person is told.
    fn message(self) -> String {
        match self {
            Failure::Unreachable { why, .. } | Failure::Refused(why) | Failure::TooLarge(why) => {
                why
            }
        }
    }
}

type Answer = Result<(u16, Value), Failure>;

async fn request(
    settings: &SyncSettings,
    method: &str,
    path: &str,
    body: Option<RequestBody>,
) -> Answer {
    request_with(settings, method, path, body, Precondition::None).await
}

/// What a write is based on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    None,
    /// `If-Match` on this version.
    Match(i64),
    /// `If-None-Match: *`: a creation.
    Create,
}

/// One request to the server for the page's team views: the answer's status and JSON,
/// or what to tell a person. A `409` is an answer (it carries the server's record).
pub async fn api(
    settings: &SyncSettings,
    method: &str,
    path: &str,
    body: Option<Value>,
    precondition: Precondition,
) -> Result<(u16, Value), String> {
    request_with(settings, method, path, body.map(RequestBody::Json), precondition)
        .await
        .map_err(Failure::message)
}

/// The text of an answer (the audit log's JSON Lines), or what to tell a person.
pub async fn api_text(settings: &SyncSettings, path: &str) -> Result<String, String> {
    let authorization = settings.authorization();
    let response =
        http::fetch("GET", &settings.url(path), &[("Authorization", &authorization)], None)
            .await
            .map_err(|()| format!("{} does not answer", settings.endpoint))?;
    let text = http::text(&response).await;
    match response.status() {
        200..=299 => Ok(text),
        status => {
            let body = serde_json::from_str(&text).unwrap_or(Value::Null);
            Err(format!("{} ({status})", sync::problem_text(&body)))
        }
    }
}

async fn request_with(
    settings: &SyncSettings,
    method: &str,
    path: &str,
    body: Option<RequestBody>,
    precondition: Precondition,
) -> Answer {
    send(settings, method, path, body, precondition, None).await
}

/// A POST that must act once however often it is retried, under `Idempotency-Key: key`.
async fn request_once(settings: &SyncSettings, path: &str, body: Value, key: &str) -> Answer {
    let body = Some(RequestBody::Json(body));
    send(settings, "POST", path, body, Precondition::None, Some(key)).await
}

async fn send(
    settings: &SyncSettings,
    method: &str,
    path: &str,
    body: Option<RequestBody>,
    precondition: Precondition,
    idempotency_key: Option<&str>,
) -> Answer {
    let authorization = settings.authorization();
    let if_match = match precondition {
        Precondition::Match(version) => Some(("If-Match", format!("\"{version}\""))),
        Precondition::Create => Some(("If-None-Match", "*".to_owned())),
        Precondition::None => None,
    };
    let mut headers = vec![("Authorization", authorization.as_str())];
    if let Some((name, value)) = &if_match {
        headers.push((name, value));
    }
    if let Some(key) = idempotency_key {
        headers.push(("Idempotency-Key", key));
    }
    let body = match body {
        Some(RequestBody::Json(value)) => {
            headers.push(("Content-Type", "application/json"));
            Some(JsValue::from(value.to_string()))
        }
        Some(RequestBody::Jpeg(blob)) => {
            headers.push(("Content-Type", "image/jpeg"));
            Some(JsValue::from(blob))
        }
        None => None,
    };
    let response = http::fetch(method, &settings.url(path), &headers, body.as_ref())
        .await
        .map_err(|()| Failure::Unreachable {
            retry_after: None,
            why: format!("{} does not answer", settings.endpoint),
        })?;
    let status = response.status();
    let text = http::text(&response).await;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    match status {
        200..=299 | 409 => Ok((status, body)),
        429 | 500..=599 => {
            let retry_after =
                response.headers().get("Retry-After").ok().flatten().and_then(|v| v.parse().ok());
            Err(Failure::Unreachable { retry_after, why: format!("the server answered {status}") })
        }
        401 => Err(Failure::Refused(
            "the server does not accept this token; check it in Sync settings".into(),
        )),
        413 => Err(Failure::TooLarge(format!("{} ({status})", sync::problem_text(&body)))),
        _ => Err(Failure::Refused(format!("{} ({status})", sync::problem_text(&body)))),
    }
}

/// A POST with `If-Match` on `version`.
async fn request_if_match(
    settings: &SyncSettings,
    path: &str,
    body: Value,
    version: i64,
) -> Answer {
    request_with(
        settings,
        "POST",
        path,
        Some(RequestBody::Json(body)),
        Precondition::Match(version),
    )
    .await
}

enum RequestBody {
    Json(Value),
    Jpeg(web_sys::Blob),
}

/// One sync round. `attempt` counts rounds that failed in a row, for the backoff shown.
/// Comments and suggestions are conversation, not content, so they do not move a run's
/// version and no pull would notice them: they are synced for the open run, every round.
///
/// The exchange (push, pull, the team's versions) is `exchange`'s: the page hands it to the
/// transfer module, which runs [`exchange`] over its own connection to the same database.
pub async fn round<Exchange, Exchanging>(
    db: &Store,
    settings: &SyncSettings,
    attempt: u32,
    open_run: Option<&str>,
    exchange: Exchange,
) -> RoundDone
where
    Exchange: FnOnce(String, Vec<OwnVersion>) -> Exchanging,
    Exchanging: std::future::Future<Output = Exchanged>,
{
    // The round reports in the state's own terms: the reducer takes it as it is.
    let mut out = RoundDone {
        open_run: open_run.map(str::to_owned),
        state: SyncState::Syncing,
        ..RoundDone::default()
    };
    if !settings.enabled() {
        out.state = SyncState::LocalOnly;
        return out;
    }
    if let Some(problem) = settings.problems().into_iter().next() {
        out.state = SyncState::Error { message: problem };
        return out;
    }
    let result = async {
        let (_, me) = request(settings, "GET", "/users/me", None).await?;
        out.user = me["id"]
            .as_str()
            .zip(me["role"].as_str().and_then(Role::parse))
            .map(|(id, role)| User { name: id.to_owned(), role });
        let user = me["id"].as_str().unwrap_or_default();
        let (team, own) = team::round(db, settings, user).await?;
        out.team = Some(team);
        let exchanged = exchange(user.to_owned(), own).await;
        out.conflicts.extend(exchanged.conflicts);
        out.pulled.extend(exchanged.pulled);
        out.refused.extend(exchanged.refused);
        exchanged.failure.map_or(Ok(()), Err)?;
        // Quality, time and collections go up once the runs they name are there.
        let role = out.user.as_ref().map(|u| u.role);
        // One read of the stored runs serves both: neither writes runs.
        let runs = db.runs().await.map_err(Failure::Refused)?;
        metrics::report(db, settings, role, &runs).await?;
        if role.is_some_and(|r| r != Role::Annotator) {
            collections::round(db, settings, &runs, &mut out).await?;
        }
        if let Some(run_id) = open_run {
            out.metrics = metrics::of_run(settings, run_id).await;
        }
        match open_run {
            Some(run_id) => review(db, settings, run_id, &mut out).await,
            None => Ok(()),
        }
    };
    out.state = match result.await {
        Ok(()) if !out.conflicts.is_empty() => SyncState::Conflicts { count: out.conflicts.len() },
        Ok(()) => SyncState::Synced { at: now() },
        Err(Failure::Unreachable { retry_after, why }) => {
            let queued = db.queued().await.map(|q| q.len()).unwrap_or(0);
            web_sys::console::warn_1(&format!("sync: {why}").into());
            SyncState::Offline { queued, retry_in_s: sync::backoff(attempt + 1, retry_after) }
        }
        Err(Failure::Refused(message) | Failure::TooLarge(message)) => SyncState::Error { message },
    };
    out
}

/// What a round's exchange brought back: the conflicts, the runs the pull changed, the
/// queued changes the server refused, and why it stopped early, if it did.
#[derive(Debug, Default)]
pub struct Exchanged {
    pub conflicts: Vec<(Conflict, Value)>,
    pub pulled: Vec<String>,
    pub refused: Vec<(Pending, String)>,
    pub failure: Option<Failure>,
}

/// A round's exchange with the server: push (runs never sent, then the queue), pull, then
/// the runs of the team's versions of one's own (`own`, read by [`team`]'s round).
pub async fn exchange(
    db: &Store,
    settings: &SyncSettings,
    user: &str,
    mut own: Vec<OwnVersion>,
) -> Exchanged {
    let mut out = RoundDone::default();
    let result = async {
        push(db, settings, &mut own, &mut out).await?;
        pull(db, settings, user, &own, &mut out).await?;
        team::fetch(db, settings, &mut own).await
    };
    let (fetched, failure) = match result.await {
        Ok(fetched) => (fetched, None),
        Err(failure) => (Vec::new(), Some(failure)),
    };
    out.pulled.extend(fetched);
    Exchanged { conflicts: out.conflicts, pulled: out.pulled, refused: out.refused, failure }
}

impl Exchanged {
    /// As JSON, for the page: the exchange runs in the transfer module.
    pub fn to_json(&self) -> String {
        let failure = self.failure.as_ref().map(|failure| match failure {
            Failure::Unreachable { retry_after, why } => {
                json!({"kind": "unreachable", "why": why, "retryAfter": retry_after})
            }
            Failure::Refused(why) => json!({"kind": "refused", "why": why}),
            Failure::TooLarge(why) => json!({"kind": "tooLarge", "why": why}),
        });
        json!({
            "conflicts": self.conflicts,
            "pulled": self.pulled,
            "refused": self.refused,
            "failure": failure,
        })
        .to_string()
    }

    /// Read back from [`Exchanged::to_json`]'s JSON; what does not read is a refusal that
    /// says so, and the round reports it.
    pub fn from_json(text: &str) -> Exchanged {
        let unread = |why: String| Exchanged {
            failure: Some(Failure::Refused(format!("the sync's answer could not be read: {why}"))),
            ..Exchanged::default()
        };
        let mut value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => return unread(e.to_string()),
        };
        let mut take = |key: &str| value[key].take();
        let read = (|| {
            Ok::<_, serde_json::Error>(Exchanged {
                conflicts: serde_json::from_value(take("conflicts"))?,
                pulled: serde_json::from_value(take("pulled"))?,
                refused: serde_json::from_value(take("refused"))?,
                failure: None,
            })
        })();
        let failure = take("failure");
        let why = failure["why"].as_str().unwrap_or_default().to_owned();
        match read {
            Ok(exchanged) => Exchanged {
                failure: match failure["kind"].as_str() {
                    None => None,
                    Some("unreachable") => Some(Failure::Unreachable {
                        retry_after: failure["retryAfter"].as_u64().map(|s| s as u32),
                        why,
                    }),
                    Some("tooLarge") => Some(Failure::TooLarge(why)),
                    Some(_) => Some(Failure::Refused(why)),
                },
                ..exchanged
            },
            Err(e) => unread(e.to_string()),
        }
    }
}

async fn push(
    db: &Store,
    settings: &SyncSettings,
    own: &mut [annotation_core::team::OwnVersion],
    out: &mut RoundDone,
) -> Result<(), Failure> {
    let refused = |why: String| Failure::Refused(why);
    // Runs never sent go first, whole.
    for (run, steps) in db.unsynced_runs().await.map_err(refused)? {
        let mut changes = vec![Pending::Run { run_id: run.id.clone() }];
        changes
            .extend(steps.iter().map(|s| Pending::Step { run_id: run.id.clone(), index: s.index }));
        db.enqueue(changes, &now()).await.map_err(refused)?;
    }
    let queue = db.queued().await.map_err(refused)?;
    // One's own versions of overlap runs go to their own routes.
    let (mine, queue): (Vec<_>, Vec<_>) =
        queue.into_iter().partition(|(_, change)| team::is_own(own, &change.pending));
    if !mine.is_empty() {
        let problems = team::push(db, settings, own, mine).await?;
        out.refused.extend(problems);
    }
    if queue.is_empty() {
        return refusals(out);
    }
    // Steps may only point at screenshots the server holds.
    let mut items: Vec<(JsValue, QueuedChange, Value, Value)> = Vec::new();
    let mut hashes: Vec<String> = Vec::new();
    let mut dead: Vec<JsValue> = Vec::new();
    for (key, change) in queue {
        let Some((run, steps)) =
            db.run_and_steps(change.pending.run_id()).await.map_err(refused)?
        else {
            dead.push(key);
            continue;
        };
        let step = match &change.pending {
            Pending::Step { index, .. } => steps.iter().find(|s| s.index == *index),
            Pending::Run { .. } => None,
        };
        if let Some(shot) = step.and_then(|s| s.screenshot.as_ref())
            && !hashes.contains(&shot.key)
        {
            hashes.push(shot.key.clone());
        }
        let mine = match step {
            Some(step) => sync::step_write(step),
            None => sync::run_write(&run),
        };
        match sync::batch_item(&change.mutation_id, &change.pending, &run, step) {
            Some(item) => items.push((key, change, item, mine)),
            None => dead.push(key),
        }
    }
    // A change whose record is gone (a deleted run or step) has nothing left to send.
    if !dead.is_empty() {
        db.dequeue(&dead).await.map_err(refused)?;
    }
    upload_screenshots(db, settings, hashes).await?;
    // Batches by the server's limits, bytes and items; an item too big for any is refused on
    // its own and the rest still go. A server that takes less than it should (a proxy's
    // limit) answers 413: that batch is halved until its items fit or stand alone.
    let (max_bytes, max_items) = (JSON_BODY_BYTES, BATCH_ITEMS);
    let bodies: Vec<Value> = items.iter().map(|(_, _, item, _)| item.clone()).collect();
    let plan = sync::batches(&bodies, max_bytes, max_items);
    for i in plan.too_big {
        let why = sync::too_big_text(bodies[i].to_string().len(), max_bytes);
        out.refused.push((items[i].1.pending.clone(), why));
    }
    let mut waiting: std::collections::VecDeque<Vec<usize>> = plan.batches.into();
    // Runs whose header the server took this round: their traces follow.
    let mut synced_runs: Vec<String> = Vec::new();
    while let Some(batch) = waiting.pop_front() {
        let body = json!({"items": batch.iter().map(|&i| bodies[i].clone()).collect::<Vec<_>>()});
        let answer =
            request(settings, "POST", "/runs:batchUpsert", Some(RequestBody::Json(body))).await;
        let answer = match answer {
            Ok((_, answer)) => answer,
            Err(Failure::TooLarge(why)) => {
                if batch.len() > 1 {
                    let (first, second) = batch.split_at(batch.len() / 2);
                    waiting.push_front(second.to_vec());
                    waiting.push_front(first.to_vec());
                } else {
                    out.refused.push((items[batch[0]].1.pending.clone(), why));
                }
                continue;
            }
            Err(other) => return Err(other),
        };
        let outcomes = sync::read_batch(&answer, batch.len()).map_err(refused)?;
        let mut sent = Vec::new();
        for (&i, outcome) in batch.iter().zip(outcomes) {
            let (key, change, _, mine) = &items[i];
            match outcome {
                Outcome::Ok { version, record } => {
                    let version = match &change.pending {
                        Pending::Run { run_id } => {
                            synced_runs.push(run_id.clone());
                            replay_status(db, settings, run_id, &record, version).await?
                        }
                        Pending::Step { .. } => version,
                    };
                    record_version(db, &change.pending, version).await.map_err(refused)?;
                    sent.push(key.clone());
                }
                Outcome::Conflict { version, current, paths } => out.conflicts.push((
                    Conflict {
                        pending: change.pending.clone(),
                        theirs: current,
                        their_version: version,
                        paths,
                    },
                    mine.clone(),
                )),
                // Refused for good (invalid, or not this user's to change): it stays queued
                // and shown until someone fixes the record or discards the change.
                Outcome::Rejected { why } => out.refused.push((change.pending.clone(), why)),
            }
        }
        db.dequeue(&sent).await.map_err(refused)?;
    }
    push_traces(db, settings, &synced_runs).await?;
    refusals(out)
}

/// What the server refused this round, as the round's error.
fn refusals(out: &RoundDone) -> Result<(), Failure> {
    if let Some((pending, why)) = out.refused.first() {
        let more = match out.refused.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(Failure::Refused(format!(
            "the server refused {}: {why}{more}",
            pending.describe()
        )));
    }
    Ok(())
}

/// Sends the traces of `runs` (the runs whose header the server just took), redacted at
/// the configured paths and with every secret masked. Traces are write-once: one the
/// server holds already is `ok` again, so a run's traces simply go with each of its syncs.
async fn push_traces(db: &Store, settings: &SyncSettings, runs: &[String]) -> Result<(), Failure> {
    if runs.is_empty() {
        return Ok(());
    }
    let refused = |why: String| Failure::Refused(why);
    let paths = annotation_core::traces::redaction_paths(&db.agent_settings().await);
    let secrets = db.secrets().await;
    let mut bodies = Vec::new();
    for run_id in runs {
        for trace in db.traces(run_id).await.map_err(refused)? {
            let trace = annotation_core::traces::outgoing(&trace, &paths, &secrets);
            bodies.extend(annotation_core::traces::batch_item(&trace));
        }
    }
    let plan = sync::batches(&bodies, JSON_BODY_BYTES, BATCH_ITEMS);
    let mut problems: Vec<String> = plan
        .too_big
        .iter()
        .map(|&i| sync::too_big_text(bodies[i].to_string().len(), JSON_BODY_BYTES))
        .collect();
    for batch in plan.batches {
        let body = json!({"items": batch.iter().map(|&i| bodies[i].clone()).collect::<Vec<_>>()});
        let (_, answer) =
            request(settings, "POST", "/runs:batchUpsert", Some(RequestBody::Json(body))).await?;
        for (&i, outcome) in
            batch.iter().zip(sync::read_batch(&answer, batch.len()).map_err(refused)?)
        {
            match outcome {
                // Write-once: a copy redacted under other paths stays as first sent.
                Outcome::Ok { .. } | Outcome::Conflict { .. } => {}
                Outcome::Rejected { why } => problems.push(format!(
                    "trace {}: {why}",
                    bodies[i]["trace"]["id"].as_str().unwrap_or_default()
                )),
            }
        }
    }
    match problems.first() {
        None => Ok(()),
        Some(first) => {
            let more = match problems.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            Err(Failure::Refused(format!("the server refused {first}{more}")))
        }
    }
}

/// Drops a refused change from the queue. The local copy stays as it is; it is sent again
/// only when it is saved again.
pub async fn discard(db: &Store, pending: &Pending) -> Result<(), String> {
    let queue = db.queued().await?;
    let keys: Vec<JsValue> =
        queue.into_iter().filter(|(_, q)| q.pending == *pending).map(|(k, _)| k).collect();
    db.dequeue(&keys).await
}

/// Status moves only by transitions: when the local status differs from the server's, the
/// flow's edges are replayed in order, each based on the version the last one made.
/// Returns the run's server version afterwards.
async fn replay_status(
    db: &Store,
    settings: &SyncSettings,
    run_id: &str,
    record: &Value,
    mut version: i64,
) -> Result<i64, Failure> {
    let Some((run, _)) = db.run_and_steps(run_id).await.map_err(Failure::Refused)? else {
        return Ok(version);
    };
    let Some(theirs) = record["status"].as_str().and_then(ReviewStatus::parse) else {
        return Ok(version);
    };
    for to in sync::transition_path(theirs, run.status) {
        let path = format!("/runs/{}/transitions", component_encode(run_id));
        let body = json!({"to": to.as_str()});
        let (status, answer) = request_if_match(settings, &path, body, version).await?;
        if status == 409 {
            return Err(Failure::Refused(format!(
                "the server did not move run {run_id} to {}: {}",
                to.label().to_ascii_lowercase(),
                sync::problem_text(&answer)
            )));
        }
        version = answer["version"].as_i64().unwrap_or(version);
    }
    Ok(version)
}

/// Notes the server version a push produced, so the next write is based on it.
async fn record_version(db: &Store, pending: &Pending, version: i64) -> Result<(), String> {
    let Some((mut run, mut steps)) = db.run_and_steps(pending.run_id()).await? else {
        return Ok(());
    };
    match pending {
        Pending::Run { .. } => {
            run.server_version = Some(version);
            db.put_synced(Some(&run), &[]).await
        }
        Pending::Step { index, .. } => {
            let Some(step) = steps.iter_mut().find(|s| s.index == *index) else { return Ok(()) };
            step.server_version = Some(version);
            db.put_synced(None, std::slice::from_ref(step)).await
        }
    }
}

async fn upload_screenshots(
    db: &Store,
    settings: &SyncSettings,
    hashes: Vec<String>,
) -> Result<(), Failure> {
    for chunk in hashes.chunks(2000) {
        let body = json!({"hashes": chunk});
        let (_, answer) =
            request(settings, "POST", "/screenshots:missing", Some(RequestBody::Json(body)))
                .await?;
        for key in answer["missing"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let Some(blob) = db.screenshot(key).await {
                let path = format!("/screenshots/{key}");
                match request(settings, "PUT", &path, Some(RequestBody::Jpeg(blob))).await {
                    // Too big for the server: the steps that show it are refused on their own
                    // ("no stored screenshot"), and the rest of the queue still goes.
                    Err(Failure::TooLarge(why)) => {
                        web_sys::console::warn_1(&format!("sync: screenshot {key}: {why}").into());
                    }
                    other => {
                        other?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Every item of a paged list, following `nextCursor`.
async fn all_pages(settings: &SyncSettings, path: &str) -> Result<Vec<Value>, Failure> {
    Ok(pages(settings, path).await?.0)
}

/// Every item of a paged list, and its last page (which carries what the list says of
/// itself, such as a pull's `pullCursor`).
async fn pages(settings: &SyncSettings, path: &str) -> Result<(Vec<Value>, Value), Failure> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let joiner = if path.contains('?') { '&' } else { '?' };
        let page = match &cursor {
            Some(c) => format!("{path}{joiner}limit=200&cursor={}", component_encode(c)),
            None => format!("{path}{joiner}limit=200"),
        };
        let (_, mut answer) = request(settings, "GET", &page, None).await?;
        items.extend(answer["items"].as_array_mut().map(std::mem::take).unwrap_or_default());
        match answer["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok((items, answer)),
        }
    }
}

/// Runs changed on the server since the last pull, by the server's cursor: this browser's
/// clock never decides what is asked for.
async fn pull(
    db: &Store,
    settings: &SyncSettings,
    user: &str,
    own: &[annotation_core::team::OwnVersion],
    out: &mut RoundDone,
) -> Result<(), Failure> {
    let refused = |why: String| Failure::Refused(why);
    let path = sync::pull_path(db.pull_mark().await.as_ref(), settings, user);
    let everything = sync::pull_path(None, settings, user);
    let (headers, last) = match pages(settings, &path).await {
        // A cursor the server does not take (its database was replaced, say): start over.
        Err(Failure::Refused(why)) if path != everything => {
            web_sys::console::warn_1(&format!("sync: pulling everything again: {why}").into());
            pages(settings, &everything).await?
        }
        other => other?,
    };
    let queued = db.queued().await.map_err(refused)?;
    let waiting = |id: &str| queued.iter().any(|(_, q)| q.pending.run_id() == id);
    // Runs an earlier pull passed over for their queue, now sent: the cursor has moved
    // past their changes, so each is read by id.
    let mut owed = db.pull_owed().await;
    let was_owed = owed.clone();
    let mut headers = headers;
    for id in was_owed.iter().filter(|id| !waiting(id.as_str())) {
        if headers.iter().any(|h| h["id"].as_str() == Some(id)) {
            continue;
        }
        match request(settings, "GET", &format!("/runs/{}", component_encode(id)), None).await {
            Ok((_, header)) => headers.push(header),
            // Gone, or no longer this person's to see: nothing to bring.
            Err(Failure::Refused(_)) => {}
            Err(other) => return Err(other),
        }
    }
    owed.retain(|id| waiting(id));
    for header in headers {
        let Some(id) = header["id"].as_str().map(str::to_owned) else { continue };
        // Unsent work here wins until it is sent (or its conflict is resolved).
        if waiting(&id) {
            if !owed.contains(&id) {
                owed.push(id);
            }
            continue;
        }
        if team::keeps_local(own, &header) {
            continue;
        }
        if take(db, settings, &id, header).await? {
            out.pulled.push(id);
        }
    }
    if owed != was_owed {
        db.put_pull_owed(&owed).await.map_err(refused)?;
    }
    if let Some(mark) = sync::pull_mark(&last, settings, user) {
        db.put_pull_mark(&mark).await.map_err(refused)?;
    }
    Ok(())
}

/// Stores the server's run `id` (its header as listed, its steps and their screenshots)
/// unless this copy is at that version already. Answers whether anything changed.
async fn take(
    db: &Store,
    settings: &SyncSettings,
    id: &str,
    header: Value,
) -> Result<bool, Failure> {
    let refused = |why: String| Failure::Refused(why);
    let local = db.run_and_steps(id).await.map_err(refused)?;
    let server_version = header["version"].as_i64();
    if local.as_ref().is_some_and(|(run, _)| run.server_version == server_version) {
        return Ok(false);
    }
    let local_version = local.as_ref().map_or(0, |(run, _)| run.version);
    let run = sync::run_from_server(header, local_version).map_err(refused)?;
    let mut steps = Vec::new();
    for record in all_pages(settings, &format!("/runs/{}/steps", component_encode(id))).await? {
        steps.push(sync::step_from_server(record).map_err(refused)?);
    }
    for shot in steps.iter().filter_map(|s| s.screenshot.as_ref()) {
        if !db.has_screenshot(&shot.key).await {
            fetch_screenshot(db, settings, &shot.key).await?;
        }
    }
    db.put_synced(Some(&run), &steps).await.map_err(refused)?;
    Ok(true)
}

async fn fetch_screenshot(db: &Store, settings: &SyncSettings, key: &str) -> Result<(), Failure> {
    let url = settings.url(&format!("/screenshots/{key}"));
    let authorization = settings.authorization();
    let unreachable =
        || Failure::Unreachable { retry_after: None, why: "a screenshot download failed".into() };
    let response = http::fetch("GET", &url, &[("Authorization", &authorization)], None)
        .await
        .map_err(|()| unreachable())?;
    if !response.ok() {
        // A missing image leaves the step without its picture; it is not worth stopping sync.
        web_sys::console::warn_1(
            &format!("sync: screenshot {key} answered {}", response.status()).into(),
        );
        return Ok(());
    }
    let blob = http::blob(&response).await.ok_or_else(unreachable)?;
    db.put_screenshot(key, &blob).await.map_err(Failure::Refused)
}

/// Sends this page's new comments and suggestions on `run_id` and its thread resolutions,
/// then takes the server's comments and suggestions as they are.
async fn review(
    db: &Store,
    settings: &SyncSettings,
    run_id: &str,
    out: &mut RoundDone,
) -> Result<(), Failure> {
    let refused = |why: String| Failure::Refused(why);
    let Some((_, steps)) = db.run_and_steps(run_id).await.map_err(refused)? else { return Ok(()) };
    // A run the server does not have yet takes no comments: it goes first, next round.
    if steps.iter().all(|s| s.server_version.is_none()) {
        return Ok(());
    }
    let (mut comments, mut suggestions) = db.review(run_id).await.map_err(refused)?;
    let base = format!("/runs/{}", component_encode(run_id));
    let server_comments = all_pages(settings, &format!("{base}/comments")).await?;
    let mut changed = false;
    // Thread starts before replies, so a reply's parent has its server id.
    lean::sort_by_key(&mut comments, |c| c.parent_id.is_some());
    for i in 0..comments.len() {
        if comments[i].server_id.is_some() {
            continue;
        }
        let parent = match &comments[i].parent_id {
            Some(parent) => {
                match comments.iter().find(|c| &c.id == parent).and_then(|c| c.server_id.clone()) {
                    Some(server) => Some(server),
                    None => continue,
                }
            }
            None => None,
        };
        let body = sync::comment_create(&comments[i], parent.as_deref());
        let (_, created) =
            request(settings, "POST", &format!("{base}/comments"), Some(RequestBody::Json(body)))
                .await?;
        comments[i].server_id = created["id"].as_str().map(str::to_owned);
        changed = true;
    }
    // A thread resolved or reopened here is resolved or reopened there.
    for comment in comments.iter().filter(|c| c.parent_id.is_none()) {
        let Some(server_id) = &comment.server_id else { continue };
        let theirs = server_comments.iter().find(|c| c["id"].as_str() == Some(server_id));
        if theirs.is_some_and(|t| t["resolved"].as_bool() != Some(comment.resolved)) {
            let verb = if comment.resolved { "resolve" } else { "reopen" };
            request(
                settings,
                "POST",
                &format!("{base}/comments/{}/{verb}", component_encode(server_id)),
                Some(RequestBody::Json(json!({}))),
            )
            .await?;
            changed = true;
        }
    }
    for suggestion in suggestions.iter_mut().filter(|s| s.server_id.is_none()) {
        let Some(version) =
            steps.iter().find(|s| s.index == suggestion.step_index).and_then(|s| s.server_version)
        else {
            continue;
        };
        let body = sync::suggestion_create(suggestion, version);
        let (status, created) = request(
            settings,
            "POST",
            &format!("{base}/suggestions"),
            Some(RequestBody::Json(body)),
        )
        .await?;
        if status == 409 {
            // The step moved on the server since: the suggestion waits for the pull to catch up.
            continue;
        }
        suggestion.server_id = created["id"].as_str().map(str::to_owned);
        changed = true;
    }
    if changed {
        db.put_review(&comments, &suggestions).await.map_err(refused)?;
    }
    // Now the server's view, which includes what was just sent.
    let server_comments = all_pages(settings, &format!("{base}/comments")).await?;
    let server_suggestions = all_pages(settings, &format!("{base}/suggestions")).await?;
    let mut merged_comments = Vec::new();
    for record in &server_comments {
        let comment = sync::comment_from_server(record, &comments).map_err(refused)?;
        // Keep a reply's kind and our own wording of the anchor; take everything else.
        merged_comments.push(comment);
    }
    let merged_suggestions: Vec<_> = server_suggestions
        .iter()
        .filter_map(|r| sync::suggestion_from_server(r, &suggestions))
        .collect();
    let before = (comments.clone(), suggestions.clone());
    db.put_review(&merged_comments, &merged_suggestions).await.map_err(refused)?;
    let after_comments: Vec<_> =
        comments.iter().filter(|c| c.server_id.is_none()).cloned().chain(merged_comments).collect();
    let after_suggestions: Vec<_> = suggestions
        .iter()
        .filter(|s| s.server_id.is_none())
        .cloned()
        .chain(merged_suggestions)
        .collect();
    if (after_comments.len(), after_suggestions.len()) != (before.0.len(), before.1.len())
        || after_comments.iter().any(|c| !before.0.contains(c))
        || after_suggestions.iter().any(|s| !before.1.contains(s))
    {
        out.review = Some((after_comments, after_suggestions));
    }
    Ok(())
}

/// Accepts or rejects a synced suggestion on the server, which applies an acceptance to the
/// step itself; answers the suggestion and, on acceptance, the step as changed.
pub async fn decide(
    db: &Store,
    settings: &SyncSettings,
    suggestion: &Suggestion,
    accept: bool,
) -> Result<(Suggestion, Option<Step>), String> {
    let server_id =
        suggestion.server_id.as_deref().ok_or("this suggestion is not on the server yet")?;
    let (_, steps) = db.run_and_steps(&suggestion.run_id).await?.ok_or("the run is gone")?;
    let version = steps
        .iter()
        .find(|s| s.index == suggestion.step_index)
        .and_then(|s| s.server_version)
        .ok_or("the step is not on the server yet")?;
    let verb = if accept { "accept" } else { "reject" };
    let path = format!(
        "/runs/{}/suggestions/{}/{verb}",
        component_encode(&suggestion.run_id),
        component_encode(server_id)
    );
    let body = Some(RequestBody::Json(json!({})));
    let answer = request_with(settings, "POST", &path, body, Precondition::Match(version)).await;
    let (status, answer) = answer.map_err(|f| match f {
        Failure::Unreachable { why, .. } => {
            format!("Deciding needs the server, and {why}; try again when it answers.")
        }
        Failure::Refused(why) | Failure::TooLarge(why) => why,
    })?;
    if status == 409 {
        return Err(format!("The server refused: {}", sync::problem_text(&answer)));
    }
    let decided =
        sync::suggestion_from_server(&answer["suggestion"], std::slice::from_ref(suggestion))
            .ok_or("the server's answer has no suggestion")?;
    let step = match answer.get("step") {
        Some(step) if !step.is_null() => Some(sync::step_from_server(step.clone())?),
        _ => None,
    };
    if let Some(step) = &step {
        db.put_synced(None, std::slice::from_ref(step)).await?;
    }
    db.put_suggestion(&decided).await?;
    Ok((decided, step))
}

/// "Keep mine": the queued change is rebased on the server's version and sent again.
pub async fn keep_mine(db: &Store, conflict: &Conflict) -> Result<(), String> {
    let Some((mut run, mut steps)) = db.run_and_steps(conflict.pending.run_id()).await? else {
        return Ok(());
    };
    match &conflict.pending {
        Pending::Run { .. } => {
            run.server_version = conflict.their_version;
            db.put_synced(Some(&run), &[]).await
        }
        Pending::Step { index, .. } => {
            let Some(step) = steps.iter_mut().find(|s| s.index == *index) else { return Ok(()) };
            step.server_version = conflict.their_version;
            db.put_synced(None, std::slice::from_ref(step)).await
        }
    }
}

/// "Take theirs": the server's record replaces the local one and the queued change goes.
/// The local text it replaces stays in the run's history (the save that queued it).
pub async fn take_theirs(db: &Store, conflict: &Conflict) -> Result<(), String> {
    let Some((run, _)) = db.run_and_steps(conflict.pending.run_id()).await? else { return Ok(()) };
    match &conflict.pending {
        Pending::Run { .. } => {
            let theirs = sync::run_from_server(conflict.theirs.clone(), run.version)?;
            db.put_synced(Some(&theirs), &[]).await?;
        }
        Pending::Step { .. } => {
            let theirs = sync::step_from_server(conflict.theirs.clone())?;
            db.put_synced(None, &[theirs]).await?;
        }
    }
    discard(db, &conflict.pending).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_reads_back_what_it_wrote_failure_and_all() {
        let pending = Pending::Step { run_id: "r1".into(), index: 2 };
        let conflict = Conflict {
            pending: pending.clone(),
            theirs: json!({"id": "r1"}),
            their_version: Some(4),
            paths: vec!["/status".into()],
        };
        let failures = [
            Failure::Unreachable { retry_after: Some(30), why: "the server answered 503".into() },
            Failure::Refused("no such run (404)".into()),
            Failure::TooLarge("over the limit (413)".into()),
        ];
        for failure in failures {
            let written = Exchanged {
                conflicts: vec![(conflict.clone(), json!({"status": "draft"}))],
                pulled: vec!["r2".into()],
                refused: vec![(pending.clone(), "why".into())],
                failure: Some(failure),
            };
            let read = Exchanged::from_json(&written.to_json());
            assert_eq!(format!("{read:?}"), format!("{written:?}"));
        }
    }

    #[test]
    fn an_answer_that_does_not_read_is_a_refusal_that_says_so() {
        let read = Exchanged::from_json("{\"conflicts\": 7}");
        let Some(Failure::Refused(why)) = read.failure else { panic!("{read:?}") };
        assert!(why.starts_with("the sync's answer could not be read"), "{why}");
    }
}
