//! Decodes requests from pages, runs them against the engine and encodes the answers.

use agent_engine::cdp::Sessions;
use agent_engine::page_info;
use protocol::{DebugError, DebugRequest, PanelRequest, WorkerEvent};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{ChromeDebugger, to_js};

/// Answers one port request. `None` when the message was not even a request (no id to
/// answer to).
pub async fn handle_panel_request(
    sessions: &Sessions<ChromeDebugger>,
    message: JsValue,
) -> Option<WorkerEvent> {
    let request: PanelRequest = match serde_wasm_bindgen::from_value(message) {
        Ok(request) => request,
        Err(error) => {
            crate::chrome::log(&format!("ignored a malformed panel request: {error}"));
            return None;
        }
    };
    Some(match request {
        PanelRequest::PageTitle { id, tab_id } => match page_info::title(sessions, tab_id).await {
            Ok(title) => WorkerEvent::PageTitle { id, tab_id, title },
            Err(error) => WorkerEvent::Failed { id, message: error.to_string() },
        },
    })
}

/// Answers one `chrome.runtime.sendMessage` debug request.
pub fn handle_debug_request(worker: &Worker, message: JsValue) -> JsValue {
    match serde_wasm_bindgen::from_value::<DebugRequest>(message) {
        Ok(DebugRequest::WorkerTimings) => to_js(&worker.timings()),
        Err(error) => to_js(&DebugError { error: format!("unknown request: {error}") }),
    }
}
