//! The wire between the background worker and the extension pages.
//!
//! Two channels exist:
//! * a long-lived `chrome.runtime` **port** named [`PANEL_PORT`], over which a page sends
//!   [`PanelRequest`]s and the worker pushes [`WorkerEvent`]s;
//! * one-shot `chrome.runtime.sendMessage` **debug requests** ([`DebugRequest`]), which tests
//!   and benchmarks use to ask the worker for figures without going through a UI.
//!
//! Every type is plain serde data with a `type` tag, so the JSON seen in DevTools reads like
//! the Rust enum. This crate knows nothing about Chrome, wasm or the engine's internals.

use serde::{Deserialize, Serialize};

pub mod agent;
pub mod settings;

/// The name a page gives `chrome.runtime.connect` to reach the agent.
pub const PANEL_PORT: &str = "alphascout.panel";

/// A browser tab as `chrome.tabs` numbers it.
pub type TabId = i32;

/// What a page asks of the worker over the port. `id` is chosen by the page and echoed in
/// the answer, so several requests can be in flight at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PanelRequest {
    /// Read the title of `tab_id` over CDP.
    PageTitle {
        id: u32,
        tab_id: TabId,
    },
    /// The page state the model would see for `tab_id` now (the panel's `/state`).
    PageState {
        id: u32,
        tab_id: TabId,
    },
    /// Start `task` in `tab_id`. With the `session_id` of a finished task it is a follow-up
    /// task in that session, keeping its memory.
    StartTask {
        id: u32,
        tab_id: TabId,
        task: String,
        #[serde(default)]
        session_id: Option<String>,
    },
    /// A message for the running or paused task: steering, or the answer to its question.
    FollowUp {
        id: u32,
        session_id: String,
        text: String,
    },
    /// Pause & Steer.
    Pause {
        id: u32,
        session_id: String,
    },
    /// Resume a paused task (also "Resume anyway" without an answer).
    Resume {
        id: u32,
        session_id: String,
    },
    Cancel {
        id: u32,
        session_id: String,
    },
    /// The current task's snapshot, if any (answered with `task`).
    CurrentTask {
        id: u32,
    },
    /// Settings with keys masked (answered with `settings`).
    GetSettings {
        id: u32,
    },
    /// Store settings; answered with `settings` (and its problems, when not stored).
    /// Keys travel in `keys` (role → key, only those typed anew): in `settings` they
    /// serialize as `***` like everywhere else. A role without a new key keeps its stored one.
    SaveSettings {
        id: u32,
        settings: Box<settings::Settings>,
        #[serde(default)]
        keys: std::collections::BTreeMap<String, String>,
    },
}

impl PanelRequest {
    /// `SaveSettings` carrying the keys of `settings` that were typed anew (not `***`).
    pub fn save_settings(id: u32, settings: settings::Settings) -> PanelRequest {
        let keys = settings
            .keys()
            .into_iter()
            .filter(|(_, key)| !key.is_empty() && key != "***")
            .collect();
        PanelRequest::SaveSettings { id, settings: Box::new(settings), keys }
    }

    pub fn id(&self) -> u32 {
        match self {
            PanelRequest::PageTitle { id, .. }
            | PanelRequest::PageState { id, .. }
            | PanelRequest::StartTask { id, .. }
            | PanelRequest::FollowUp { id, .. }
            | PanelRequest::Pause { id, .. }
            | PanelRequest::Resume { id, .. }
            | PanelRequest::Cancel { id, .. }
            | PanelRequest::CurrentTask { id }
            | PanelRequest::GetSettings { id }
            | PanelRequest::SaveSettings { id, .. } => *id,
        }
    }
}

/// What the worker sends a page over the port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerEvent {
    /// Sent once when a port connects, so the page knows the worker is alive.
    Hello {
        version: String,
    },
    PageTitle {
        id: u32,
        tab_id: TabId,
        title: String,
    },
    /// The page state text, its size and how long it took in the worker.
    PageState {
        id: u32,
        text: String,
        chars: usize,
        ms: f64,
    },
    /// A request failed; `message` is written for the person reading the panel.
    Failed {
        id: u32,
        message: String,
    },
    /// A request that needs no other answer was carried out.
    Done {
        id: u32,
    },
    /// Something happened in a task. Sent to every connected page.
    Agent {
        event: agent::AgentEvent,
    },
    /// Where a task stands: sent on connect, on every status change, and when asked (`id`).
    Task {
        #[serde(default)]
        id: Option<u32>,
        snapshot: Option<Box<agent::TaskSnapshot>>,
    },
    /// The settings (keys masked) and, after a save that was refused, why.
    Settings {
        id: u32,
        settings: Option<Box<settings::Settings>>,
        problems: Vec<(String, String)>,
    },
}

/// One-shot requests sent with `chrome.runtime.sendMessage`; the answer is the matching
/// `*Reply` type serialized as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum DebugRequest {
    /// How long the worker took to start; answered with [`WorkerTimings`].
    #[serde(rename = "debug.worker_timings")]
    WorkerTimings,
    /// The page state the model would see for a tab now; answered with [`PageStateReply`].
    /// Carries out one agent action (the Navigator's API) in a tab; answered with the
    /// action's outcome `{ok, message, page_changed, tab, extracted, done}`.
    #[serde(rename = "debug.act")]
    Act {
        #[serde(rename = "tabId")]
        tab_id: TabId,
        action: serde_json::Value,
    },
    /// A JPEG of the tab's viewport, with numbered boxes over the elements of its latest
    /// page state when `marks`; answered with `{data (base64), format, marks}`.
    #[serde(rename = "debug.screenshot")]
    Screenshot {
        #[serde(rename = "tabId")]
        tab_id: TabId,
        #[serde(default)]
        marks: bool,
    },
    /// One model call with `config` (a provider's settings) and `prompt`: "test
    /// connection". Answered with `{text, usage, model, attempts}` or `{error, kind}`.
    #[serde(rename = "debug.llm")]
    Llm {
        config: serde_json::Value,
        prompt: String,
        #[serde(default)]
        schema: Option<serde_json::Value>,
    },
    #[serde(rename = "debug.page_state")]
    PageState {
        #[serde(rename = "tabId")]
        tab_id: TabId,
        /// Extra pixels above and below the viewport to include.
        #[serde(default)]
        margin: Option<f64>,
    },
}

/// The answer to `debug.page_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageStateReply {
    /// The text the model reads.
    pub text: String,
    /// The listed elements, as the engine holds them (ids, boxes, attributes).
    pub elements: serde_json::Value,
    /// The comparison with the previous observation of this tab, if any.
    pub comparison: Option<serde_json::Value>,
    /// Where the time went: `in_page`, `snapshot`, `render`, `total` (ms, in the worker).
    pub timings_ms: serde_json::Value,
    /// Characters in `text`.
    pub chars: usize,
}

/// Start-up figures measured by the worker's bootstrap, in milliseconds since the worker's
/// global scope was created (`performance.timeOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkerTimings {
    /// When every `chrome.*` listener had been registered.
    pub listeners_registered_ms: f64,
    /// How long fetching, compiling and instantiating the wasm module took.
    pub wasm_instantiate_ms: f64,
    /// When Rust had taken over (listeners registered + instantiate + start-up).
    pub ready_ms: f64,
    /// When this answer was produced.
    pub answered_ms: f64,
}

/// The answer to a debug request that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebugError {
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_use_snake_case_type_tags_that_pages_can_write_by_hand() {
        let request: PanelRequest =
            serde_json::from_value(json!({"type": "page_title", "id": 7, "tab_id": 3})).unwrap();
        assert_eq!(request, PanelRequest::PageTitle { id: 7, tab_id: 3 });
        assert_eq!(request.id(), 7);
    }

    #[test]
    fn debug_requests_use_the_dotted_names_documented_in_the_readme() {
        let request: DebugRequest =
            serde_json::from_value(json!({"type": "debug.worker_timings"})).unwrap();
        assert_eq!(request, DebugRequest::WorkerTimings);
        let request: DebugRequest =
            serde_json::from_value(json!({"type": "debug.page_state", "tabId": 4})).unwrap();
        assert_eq!(request, DebugRequest::PageState { tab_id: 4, margin: None });
    }

    #[test]
    fn failures_carry_the_request_id() {
        let event = WorkerEvent::Failed { id: 2, message: "no".into() };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "failed", "id": 2, "message": "no"})
        );
    }
}
