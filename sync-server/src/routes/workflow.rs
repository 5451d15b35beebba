//! `GET/POST /runs/{runId}/transitions`: the review status flow, enforced here.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::User;
use crate::http::{Reply, if_match};
use crate::idempotency::Replay;
use crate::model::{self, Entry, RunRow, Status};
use crate::problem::{Problem, Result};
use crate::routes::{RunPost, Write};
use crate::validate::Check;

/// Who may move a run from one status to another: `None` if the pair is not a transition.
/// The table is the shared contract's; the run is the caller's if they are its annotator.
pub fn permitted(from: Status, to: Status, user: &User, run: &RunRow) -> Option<bool> {
    run_contract::roles::permitted(user.role, run.annotator == user.id, from, to)
}

/// The targets the caller may move the run to now: approval is left out while
/// `pending_suggestions` are.
pub fn allowed_targets(user: &User, run: &RunRow, pending_suggestions: i64) -> Vec<&'static str> {
    Status::ALL
        .into_iter()
        .filter(|to| permitted(run.status, *to, user, run) == Some(true))
        .filter(|to| *to != Status::Approved || pending_suggestions == 0)
        .map(Status::as_str)
        .collect()
}

pub async fn options(
    State(state): State<AppState>,
    user: User,
    Path(run_id): Path<String>,
) -> Result<Reply> {
    let (mut conn, run) = super::read_run(&state, &user, &run_id).await?;
    let pending = model::counters(&mut conn, &run.id).await?.pending_suggestions;
    Ok(Reply::ok(json!({
        "status": run.status.as_str(),
        "version": run.version,
        "allowed": allowed_targets(&user, &run, pending),
    })))
}

pub async fn transition(State(state): State<AppState>, user: User, post: RunPost) -> Result<Reply> {
    let base = if_match(&post.headers)?;
    let act = |write, replay| apply(write, base, replay);
    post.write(&state, &user, &format!("transitions {base}"), act).await
}

async fn apply(write: Write<'_>, base: i64, replay: Replay) -> Result<Reply> {
    let Write { state, user, run_id, body } = write;
    let mut c = Check::default();
    c.body("TransitionRequest", body);
    let to = body.get("to").and_then(Value::as_str).and_then(Status::parse);
    let note = crate::validate::text(body, "note");
    let to = c.finish_with(to)?;

    let mut tx = replay.begin(&state.store).await?;
    let reply = move_run(&mut tx, user, run_id, base, to, note).await?;
    replay.commit(tx, reply).await
}

/// `POST /runs:batchTransition`: each item as its own transition, in its own transaction.
pub async fn batch(
    State(state): State<AppState>,
    user: User,
    crate::http::JsonBody(body, _): crate::http::JsonBody,
) -> Result<Reply> {
    let mut c = Check::default();
    c.body("BatchTransitionRequest", &body);
    let to = body.get("to").and_then(Value::as_str).and_then(Status::parse);
    let note = crate::validate::text(&body, "note");
    let to = c.finish_with(to)?;
    let mut results = Vec::new();
    for item in body["items"].as_array().into_iter().flatten() {
        let run_id = item["runId"].as_str().unwrap_or("").to_owned();
        let base = item["baseVersion"].as_i64().unwrap_or(0);
        let mut tx = state.store.begin().await?;
        match move_run(&mut tx, &user, &run_id, base, to, note.clone()).await {
            Ok(reply) => {
                tx.commit().await?;
                results.push(json!({"runId": run_id, "outcome": "ok", "run": reply.body}));
            }
            Err(problem) if problem.status.is_server_error() => return Err(problem),
            Err(problem) => {
                let outcome =
                    if problem.status == StatusCode::CONFLICT { "conflict" } else { "rejected" };
                results.push(
                    json!({"runId": run_id, "outcome": outcome, "problem": problem.to_json()}),
                );
            }
        }
    }
    Ok(Reply::ok(json!({"results": results})))
}

/// One transition in `tx` (which it locks the run in first): every check, the version, and
/// what the change tells people (`events::status_changed`).
async fn move_run(
    tx: &mut crate::store::Tx,
    user: &User,
    run_id: &str,
    base: i64,
    to: Status,
    note: Option<String>,
) -> Result<Reply> {
    let run = model::lock_visible_run(tx, user, run_id).await?;
    model::require_version(tx, &run, base).await?;
    let from = run.status;
    let counters = model::counters(tx, run_id).await?;
    let pending = counters.pending_suggestions;
    match permitted(from, to, user, &run) {
        None => {
            return Err(Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-transition",
                "Invalid transition",
            )
            .detail(format!("A run cannot go from {} to {}.", from.as_str(), to.as_str()))
            .errors(vec![crate::problem::FieldError::new(
                "/to",
                format!("is not reachable from {}", from.as_str()),
            )])
            .with("allowed", json!(allowed_targets(user, &run, pending))));
        }
        Some(false) => {
            return Err(Problem::forbidden(format!(
                "A {} may not move this run from {} to {}.",
                user.role.as_str(),
                from.as_str(),
                to.as_str()
            ))
            .with("allowed", json!(allowed_targets(user, &run, pending))));
        }
        Some(true) => {}
    }
    if to == Status::Approved && pending > 0 {
        let record = run.output(counters);
        return Err(Problem::conflict(
            "pending-suggestions",
            "run",
            Some(base),
            Some(run.version),
            record,
            None,
        )
        .detail(format!(
            "{pending} suggestion(s) are pending: accept, reject or withdraw them before \
             approving."
        ))
        .with("allowed", json!(allowed_targets(user, &run, pending))));
    }
    let mut header = run.header.clone();
    header.insert("status".into(), json!(to.as_str()));
    if matches!(to, Status::Approved | Status::Rejected) {
        header.insert("reviewedBy".into(), json!(user.id));
    }
    let changes = model::diff_maps(&run.header, &header, "");
    let summary = match &note {
        Some(note) => format!("Moved from {} to {}: {note}", from.as_str(), to.as_str()),
        None => format!("Moved from {} to {}", from.as_str(), to.as_str()),
    };
    let mut entry = Entry::new("status-changed", None, changes, summary);
    let mut transition = Map::new();
    transition.insert("from".into(), json!(from.as_str()));
    transition.insert("to".into(), json!(to.as_str()));
    transition.insert("note".into(), json!(note));
    entry.extra.insert("transition".into(), Value::Object(transition));
    let now = crate::time::now();
    let version = model::commit_version(tx, &run, user, &now, entry, Some(&header)).await?;
    crate::events::status_changed(tx, &run, from, to, &user.id, version).await?;
    // The run as written: a transition changes none of its counters, so it is not read again.
    let record = model::run_output(&header, version, version, &now, &user.id, counters);
    Ok(Reply::ok(record).version(version))
}
