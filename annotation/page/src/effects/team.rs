//! Carries out the team's requests (`state/team.rs`) against the sync server and reports
//! the answers back as actions.

use annotation_core::sync::SyncSettings;
use annotation_core::team::{
    Agreement, Assignees, Project, audit_from_server, deliveries_from_server, figures_from_server,
    notifications_from_server, queue_from_server, webhook_from_server,
};
use serde_json::Value;

use crate::state::team::{Fetch, TeamAction, TeamData, TeamRequest};
use crate::state::{Action, Dispatch};
use crate::sync::{Precondition, api, api_text};

pub async fn carry(dispatch: &Dispatch, settings: &SyncSettings, request: TeamRequest) {
    let action = match request {
        TeamRequest::Get(fetch, path) => {
            match api(settings, "GET", &path, None, Precondition::None).await {
                Ok((_, answer)) => TeamAction::Loaded(read(fetch, &path, &answer)),
                Err(why) => TeamAction::Failed(why),
            }
        }
        TeamRequest::Write { method, path, body, if_match, then } => {
            let precondition = if_match.map_or(Precondition::None, Precondition::Match);
            match api(settings, method, &path, Some(body), precondition).await {
                Ok((409, answer)) => TeamAction::Failed(format!(
                    "Someone changed this first: {} Look again and retry.",
                    annotation_core::sync::problem_text(&answer)
                )),
                Ok((_, answer)) => return dispatch.dispatch(Action::TeamWritten { then, answer }),
                Err(why) => TeamAction::Failed(why),
            }
        }
        TeamRequest::ExportAudit(query) => {
            match api_text(settings, &format!("/audit:export{query}")).await {
                Ok(text) => match save_lines(&text) {
                    Ok(()) => TeamAction::Loaded(TeamData::Done(format!(
                        "The audit log is downloading ({} entries).",
                        text.lines().filter(|l| !l.trim().is_empty()).count()
                    ))),
                    Err(why) => TeamAction::Failed(why),
                },
                Err(why) => TeamAction::Failed(why),
            }
        }
    };
    dispatch.dispatch(Action::Team(action));
}

fn items(answer: &Value) -> &[Value] {
    answer["items"].as_array().map_or(&[], Vec::as_slice)
}

fn read(fetch: Fetch, path: &str, answer: &Value) -> TeamData {
    match fetch {
        Fetch::Queue => TeamData::Queue(queue_from_server(items(answer))),
        Fetch::Notifications => TeamData::Notifications(notifications_from_server(items(answer))),
        Fetch::Audit => TeamData::Audit(audit_from_server(items(answer))),
        Fetch::Webhooks => {
            TeamData::Webhooks(items(answer).iter().map(webhook_from_server).collect())
        }
        Fetch::Deliveries => {
            // `/webhooks/{id}/deliveries…`: the hook is the path's third part.
            let hook = path.split('/').nth(2).unwrap_or_default();
            let hook = run_contract::url::form_decode(hook).unwrap_or_default();
            TeamData::Deliveries(hook, deliveries_from_server(items(answer)))
        }
        Fetch::Figures => TeamData::Figures(figures_from_server(items(answer))),
        Fetch::Series => TeamData::Series(answer.clone()),
        Fetch::Project => TeamData::Project(Project::from_server(answer)),
        Fetch::Agreement => TeamData::Agreement(Agreement::from_server(answer)),
        Fetch::Assignees => TeamData::Assignees(Assignees::from_server(answer)),
    }
}

/// The audit log's JSON Lines as a download.
fn save_lines(text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/x-ndjson");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|e| format!("could not assemble the file: {e:?}"))?;
    let name = format!("audit-{}.jsonl", crate::util::now().get(..10).unwrap_or("log"));
    crate::download::save(&blob, &name)
}
