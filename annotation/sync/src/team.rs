//! The team's side of a sync round (issue 29): the project's settings, the notifications
//! badge and "My queue" each round, and the overlap runs annotated here in a version of
//! one's own: their steps go to `/runs/{runId}/annotations/me/…`, never to the run's own
//! steps, and a submit hands the version in.

use annotation_core::record::ReviewStatus;
use annotation_core::sync::{Pending, SyncSettings};
use annotation_core::team::{
    BatchMoved, OwnVersion, Project, batch_moved, batch_transition_body, queue_from_server,
};
use annotation_store::{QueuedChange, Store};
use run_contract::url::component_encode;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

use super::{Failure, Precondition, RequestBody, all_pages, request, request_with};
use crate::TeamRound;

/// Reads the project, the badge and the queue, and notes each queued run with overlap
/// above 1 as annotated here in one's own version. Answers the versions known here.
pub(super) async fn round(
    db: &Store,
    settings: &SyncSettings,
    me: &str,
) -> Result<(TeamRound, Vec<OwnVersion>), Failure> {
    let (_, project) = request(settings, "GET", "/project", None).await?;
    let (_, count) = request(settings, "GET", "/users/me/notifications/count", None).await?;
    let queue = queue_from_server(&all_pages(settings, "/users/me/queue").await?);
    let mut own = db.own_versions().await;
    own.retain(|o| o.annotator == me);
    for entry in &queue {
        if own.iter().any(|o| o.run_id == entry.run_id) {
            continue;
        }
        let path = format!("/runs/{}/assignees", component_encode(&entry.run_id));
        let (_, assignees) = request(settings, "GET", &path, None).await?;
        let overlap = assignees["overlap"].as_u64().unwrap_or(0) as u32;
        if overlap > 1 {
            own.push(OwnVersion {
                run_id: entry.run_id.clone(),
                annotator: me.to_owned(),
                overlap,
                ..OwnVersion::default()
            });
        }
    }
    // A version no longer queued was handed in (here or in another browser) or taken off.
    for version in &mut own {
        if !queue.iter().any(|q| q.run_id == version.run_id) {
            version.submitted = true;
        }
    }
    db.put_own_versions(&own).await.map_err(Failure::Refused)?;
    let team = TeamRound {
        project: Some(Project::from_server(&project)),
        unread: count["unread"].as_u64().unwrap_or(0) as u32,
        queue,
        own: own.iter().filter(|o| !o.submitted).map(|o| o.run_id.clone()).collect(),
    };
    Ok((team, own))
}

/// Whether a queued change belongs to a version of one's own, not the run's own record.
pub(super) fn is_own(own: &[OwnVersion], pending: &Pending) -> bool {
    own.iter().any(|o| o.run_id == pending.run_id() && !o.submitted)
}

/// Sends the queued changes of one's own versions: each step saved to the version, then a
/// run submitted here handed in. Answers what the server refused, with why.
pub(super) async fn push(
    db: &Store,
    settings: &SyncSettings,
    own: &mut [OwnVersion],
    changes: Vec<(JsValue, QueuedChange)>,
) -> Result<Vec<(Pending, String)>, Failure> {
    let refused = |why: String| Failure::Refused(why);
    let mut sent = Vec::new();
    let mut problems = Vec::new();
    // Steps before the hand-in, so the version handed in holds them.
    let (steps, runs): (Vec<_>, Vec<_>) =
        changes.into_iter().partition(|(_, c)| matches!(c.pending, Pending::Step { .. }));
    for (key, change) in steps.into_iter().chain(runs) {
        let run_id = change.pending.run_id().to_owned();
        let Some(version) = own.iter_mut().find(|o| o.run_id == run_id) else { continue };
        let Some((run, steps)) = db.run_and_steps(&run_id).await.map_err(refused)? else {
            sent.push(key);
            continue;
        };
        let base = format!("/runs/{}/annotations/me", component_encode(&run_id));
        match &change.pending {
            Pending::Step { index, .. } => {
                let Some(step) = steps.iter().find(|s| s.index == *index) else {
                    sent.push(key);
                    continue;
                };
                let precondition = match version.steps.get(index) {
                    Some(v) => Precondition::Match(*v),
                    None => Precondition::Create,
                };
                let body = Some(RequestBody::Json(OwnVersion::step_body(step)));
                let path = format!("{base}/steps/{index}");
                let (status, answer) =
                    match request_with(settings, "PUT", &path, body, precondition).await {
                        // Refused for good: shown, and the rest of the version still goes.
                        Err(Failure::Refused(why)) => {
                            problems.push((change.pending.clone(), why));
                            continue;
                        }
                        other => other?,
                    };
                if status == 409 {
                    problems.push((
                        change.pending.clone(),
                        "your version of this step was saved from another browser since; open \
                         the run there, or discard this change"
                            .to_owned(),
                    ));
                    continue;
                }
                if let Some(saved) = answer["version"].as_i64() {
                    version.steps.insert(*index, saved);
                }
                sent.push(key);
            }
            Pending::Run { .. } => {
                // The header is the run's, not the version's: the tags given here go with
                // the hand-in (the resolution adds them to the run's); nothing else is sent.
                if run.status != ReviewStatus::Draft && !version.submitted {
                    let path = format!("{base}/submit");
                    let body = Some(RequestBody::Json(json!({ "tags": run.tags })));
                    let (status, answer) =
                        request_with(settings, "POST", &path, body, Precondition::None).await?;
                    if status == 409 {
                        let why = annotation_core::sync::problem_text(&answer);
                        problems.push((change.pending.clone(), why));
                        continue;
                    }
                    version.submitted = true;
                }
                sent.push(key);
            }
        }
    }
    db.put_own_versions(own).await.map_err(refused)?;
    db.dequeue(&sent).await.map_err(refused)?;
    Ok(problems)
}

/// A pull keeps this browser's copy of a run annotated here in one's own version while the
/// run is a draft: the server's steps are the run's, not the version's.
pub(super) fn keeps_local(own: &[OwnVersion], header: &Value) -> bool {
    let id = header["id"].as_str().unwrap_or_default();
    header["status"] == "draft" && own.iter().any(|o| o.run_id == id)
}

/// Reads what the server holds of each version not yet read into this browser (another
/// browser of the same person saved it), into the local steps.
/// Answers the runs whose local copy changed.
pub(super) async fn fetch(
    db: &Store,
    settings: &SyncSettings,
    own: &mut [OwnVersion],
) -> Result<Vec<String>, Failure> {
    let refused = |why: String| Failure::Refused(why);
    let mut changed = Vec::new();
    for version in own.iter_mut().filter(|o| !o.fetched) {
        let Some((_, mut steps)) = db.run_and_steps(&version.run_id).await.map_err(refused)? else {
            continue;
        };
        let path = format!("/runs/{}/annotations/me/steps", component_encode(&version.run_id));
        for saved in all_pages(settings, &path).await? {
            let index = saved["index"].as_u64().unwrap_or(u64::MAX);
            if let Some(step) = steps.iter_mut().find(|s| u64::from(s.index) == index) {
                version.take_step(&saved, step).map_err(refused)?;
            }
        }
        db.put_synced(None, &steps).await.map_err(refused)?;
        version.fetched = true;
        changed.push(version.run_id.clone());
    }
    if !changed.is_empty() {
        db.put_own_versions(own).await.map_err(refused)?;
    }
    Ok(changed)
}

/// Batch review through `POST /runs:batchTransition`: `runs` (id and the server version
/// seen) move in one request per 200; a run moved is stored as the server answered it.
/// Answers each run's outcome, or `None` when the server cannot be reached (the caller
/// moves them here, and the next round replays the moves).
pub async fn move_runs(
    db: &Store,
    settings: &SyncSettings,
    to: ReviewStatus,
    runs: &[(String, i64)],
) -> Result<Option<Vec<BatchMoved>>, String> {
    let mut out = Vec::new();
    for chunk in runs.chunks(200) {
        let body = Some(RequestBody::Json(batch_transition_body(to, chunk)));
        let answer = match request(settings, "POST", "/runs:batchTransition", body).await {
            Ok((_, answer)) => answer,
            Err(Failure::Unreachable { .. }) if out.is_empty() => return Ok(None),
            Err(failure) => return Err(failure.message()),
        };
        for moved in batch_moved(&answer) {
            if let BatchMoved::Moved { run_id, run } = &moved {
                let local = db.run_and_steps(run_id).await?.map(|(r, _)| r);
                let version = local.as_ref().map_or(0, |r| r.version);
                let mut run = annotation_core::sync::run_from_server(run.clone(), version)?;
                // A submit for review counts a round here, as the single move does.
                run.review_rounds =
                    local.map_or(0, |r| r.review_rounds) + u32::from(to == ReviewStatus::InReview);
                db.put_synced(Some(&run), &[]).await?;
            }
            out.push(moved);
        }
    }
    Ok(Some(out))
}
