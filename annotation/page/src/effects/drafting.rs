//! AI drafts of a step's thoughts: the step's screenshot and the page state its trace kept
//! are added to what the reducer chose, and the request goes to the worker over its port
//! (`page-port`), which holds the settings and keys and makes the model call. The answer
//! comes back as an action; the port is opened on the first draft and again after Chrome
//! stopped the worker.

use std::cell::RefCell;

use page_port::WorkerPort;
use protocol::drafting::{DraftEvent, DraftInput, DraftRequest};

use crate::db::Db;
use crate::state::drafting::DraftAction;
use crate::state::{Action, Dispatch};

thread_local! {
    static PORT: RefCell<Option<WorkerPort>> = const { RefCell::new(None) };
    static NEXT_ID: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
}

/// The page state a trace of the step kept (not redacted), if any.
fn page_state(traces: &[serde_json::Value], trace_ids: &[String]) -> String {
    traces
        .iter()
        .filter(|t| t["id"].as_str().is_some_and(|id| trace_ids.iter().any(|i| i == id)))
        .filter_map(|t| t["params"]["page_state"].as_str())
        .find(|state| *state != "[redacted]")
        .unwrap_or_default()
        .to_owned()
}

fn connect(dispatch: &Dispatch) -> Option<WorkerPort> {
    let on_event = {
        let dispatch = dispatch.clone();
        // The narrow pair: this page compiles no reader for the worker's other events.
        move |event: DraftEvent| {
            if let DraftEvent::ThoughtsDrafted { run_id, step_index, result, .. } = event {
                dispatch.dispatch(Action::Draft(DraftAction::Answered {
                    run_id,
                    step_index,
                    result,
                }));
            }
        }
    };
    let dispatch = dispatch.clone();
    WorkerPort::connect(on_event, move || {
        PORT.with(|port| port.borrow_mut().take());
        dispatch.dispatch(Action::Draft(DraftAction::Lost));
    })
}

pub async fn ask(
    db: &Db,
    dispatch: &Dispatch,
    mut input: DraftInput,
    screenshot_key: Option<String>,
    trace_ids: Vec<String>,
) {
    if !trace_ids.is_empty() {
        input.page_state =
            page_state(&db.traces(&input.run_id).await.unwrap_or_default(), &trace_ids);
    }
    if let Some(key) = screenshot_key
        && let Ok(Some(data)) = db.screenshot_bytes(&key).await
    {
        input.screenshot = Some(annotation_store::base64(&data));
    }
    let id = NEXT_ID.with(|n| n.replace(n.get() + 1));
    let request = DraftRequest::DraftThoughts { id, input: Box::new(input.clone()) };
    let sent = PORT.with(|port| {
        let mut port = port.borrow_mut();
        if port.is_none() {
            *port = connect(dispatch);
        }
        port.as_ref().is_some_and(|p| p.send(&request))
    });
    if !sent {
        let result =
            Err("The extension's worker could not be reached; reload the page.".to_owned());
        let (run_id, step_index) = (input.run_id, input.step_index);
        dispatch.dispatch(Action::Draft(DraftAction::Answered { run_id, step_index, result }));
    }
}
