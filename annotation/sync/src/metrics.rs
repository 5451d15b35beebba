//! A round's reports of quality and time spent (`POST /runs/{runId}/metrics`): each run
//! with something unreported, under a key kept until the server answers, so a report lost
//! on the way is sent again and never counted twice (`annotation_core::metrics_sync`).

use annotation_core::metrics_sync::TeamMetrics;
use annotation_core::record::Run;
use annotation_core::roles::Role;
use annotation_core::sync::SyncSettings;
use annotation_store::{Store, new_id};
use run_contract::url::component_encode;

use super::{Failure, request, request_once};

pub(super) async fn report(
    db: &Store,
    settings: &SyncSettings,
    role: Option<Role>,
    runs: &[Run],
) -> Result<(), Failure> {
    let refused = |why: String| Failure::Refused(why);
    // A reviewer's score is not the run's; the server refuses it, so it is not sent.
    let may_score = role.is_some_and(|r| r != Role::Reviewer);
    let mut marks = db.metrics_marks().await;
    let mut reports = Vec::new();
    for run in runs {
        // The server must hold the run first; its first sync carries it.
        if run.server_version.is_none() {
            continue;
        }
        let mark = marks.entry(run.id.clone()).or_default();
        if let Some(report) = mark.report(run.quality, run.active_ms, may_score, new_id) {
            reports.push((run.id.clone(), report));
        }
    }
    if reports.is_empty() {
        return Ok(());
    }
    // Kept before sending: a report whose answer is lost goes again under the same key.
    db.put_metrics_marks(&marks).await.map_err(refused)?;
    let mut outcome = Ok(());
    for (run_id, report) in reports {
        let path = format!("/runs/{}/metrics", component_encode(&run_id));
        match request_once(settings, &path, report.body(), &report.key).await {
            Ok(_) => {}
            // Refused for good (the run is not this person's to score, say): not sent again.
            Err(Failure::Refused(why) | Failure::TooLarge(why)) => {
                web_sys::console::warn_1(&format!("sync: metrics of {run_id}: {why}").into());
            }
            Err(unreachable) => {
                outcome = Err(unreachable);
                break;
            }
        }
        if let Some(mark) = marks.get_mut(&run_id) {
            mark.reported();
        }
    }
    db.put_metrics_marks(&marks).await.map_err(refused)?;
    outcome
}

/// The server's figures for the open run; none when it has not got the run (yet).
pub(super) async fn of_run(settings: &SyncSettings, run_id: &str) -> Option<TeamMetrics> {
    let path = format!("/runs/{}/metrics", component_encode(run_id));
    let (_, answer) = request(settings, "GET", &path, None).await.ok()?;
    Some(TeamMetrics::from_server(&answer))
}
