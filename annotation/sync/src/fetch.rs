//! Fetching one run the sync server has and this browser does not (seed §3: a run opened
//! by URL comes from the backend when it is not stored here). Kept apart from the rounds:
//! it reads with the same requests a pull makes, and stores what it gets the same way.

use annotation_core::sync;
use annotation_store::Store;

use run_contract::url::component_encode;

use super::{Failure, all_pages, fetch_screenshot, request};

/// Stores run `run_id` from the server with its steps and screenshots. `Ok(false)` when the
/// server has no such run (or none this user may see).
pub async fn fetch_run(
    db: &Store,
    settings: &sync::SyncSettings,
    run_id: &str,
) -> Result<bool, String> {
    let base = format!("/runs/{}", component_encode(run_id));
    let header = match request(settings, "GET", &base, None).await {
        Ok((_, header)) => header,
        // 404: not there; 403: not this user's to see. Either way there is nothing to open.
        Err(Failure::Refused(why)) if why.contains("(404)") || why.contains("(403)") => {
            return Ok(false);
        }
        Err(failure) => return Err(failure.message()),
    };
    let run = sync::run_from_server(header, 0)?;
    let mut steps = Vec::new();
    for record in all_pages(settings, &format!("{base}/steps")).await.map_err(Failure::message)? {
        steps.push(sync::step_from_server(record)?);
    }
    for shot in steps.iter().filter_map(|s| s.screenshot.as_ref()) {
        if !db.has_screenshot(&shot.key).await {
            fetch_screenshot(db, settings, &shot.key).await.map_err(Failure::message)?;
        }
    }
    db.put_synced(Some(&run), &steps).await?;
    Ok(true)
}
