//! The Prompt Studio's requests and answers on the worker's port (`studio.html`). Keys live
//! only in the worker: what comes back has them masked as `***`.

use std::collections::BTreeMap;

use run_contract::Problem;
use serde::Serialize;
use serde_json::Value;

use crate::settings::ModelRole;

/// Try a prompt: render `prompt_id`'s `variant` with the stored overrides and then
/// `overrides` (the Studio's unsaved drafts) on top, and ask `role`'s model through the
/// agents' path (repairs included). The trace is stored under run id `studio:<uuid>`.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StudioRun {
    pub prompt_id: String,
    pub variant: String,
    #[serde(default)]
    pub overrides: BTreeMap<String, String>,
    pub vars: Value,
    pub role: ModelRole,
}

/// One HTTP exchange with a provider, keys masked.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct HttpExchange {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// `None` when no response came (timeout, network).
    pub status: Option<u16>,
    pub response: String,
}

/// One answer of the model (the first, then each repair).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StudioAttempt {
    pub model: String,
    pub raw: String,
    /// Why the answer was rejected, as the repair loop told the model; empty when accepted.
    pub problems: Vec<String>,
    /// The JSON found in the answer, if any.
    pub output: Option<Value>,
    pub violations: Vec<Problem>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What a Studio run did.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StudioRunResult {
    pub run_id: String,
    /// Empty when nothing was sent (the prompt could not be rendered).
    pub trace_id: String,
    pub prompt_id: String,
    pub variant: String,
    pub prompt_hash: String,
    pub revision_hash: String,
    pub model: String,
    pub exchanges: Vec<HttpExchange>,
    pub attempts: Vec<StudioAttempt>,
    /// The accepted, schema-valid answer.
    pub output: Option<Value>,
    pub error: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: f64,
    pub latency_ms: f64,
}

/// Prompt file edits to store: path under `prompts/` → new text, or `None` to go back to
/// the bundled file. Every saved text is also kept as a numbered version.
pub type PromptEdits = lean::StrMap<Option<String>>;

/// A pipeline file as the `pipelines` store keeps it (key `[id, version]`), with the
/// runs of this version (newest last, a few), which the publish gate reads.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredPipeline {
    pub id: String,
    pub version: u32,
    pub text: String,
    /// The file as parsed when it was saved: what the worker runs (it reads no YAML).
    /// Versions saved before it was kept have none; a JSON text still runs without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<Value>,
    pub hash: String,
    pub saved_at: String,
    pub published: bool,
    #[serde(default)]
    pub runs: Vec<Value>,
}

/// What the Prompt Studio reads of the worker's events, each written as its `WorkerEvent`
/// namesake; every other event is `Other`. A page that decoded every event would compile a
/// reader for the whole protocol (a third of its bundle); `wire_tests` holds the two alike.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StudioEvent {
    Failed {
        id: u32,
        message: String,
    },
    Settings {
        settings: Option<SettingsPrompts>,
    },
    StudioResult {
        id: u32,
        result: Box<StudioRunResult>,
    },
    PromptOverrides {
        id: u32,
        overrides: BTreeMap<String, String>,
    },
    PipelineResult {
        id: u32,
        run: Value,
    },
    PipelineSaved {
        id: u32,
        version: u32,
        published: bool,
        errors: Vec<Problem>,
        warnings: Vec<Problem>,
    },
    Pipelines {
        id: u32,
        pipelines: Vec<StoredPipeline>,
    },
    PipelineStep {
        run: u32,
        step: Value,
    },
    Tabs {
        id: u32,
        tabs: Vec<crate::TabInfo>,
    },
    #[serde(other)]
    Other,
}

/// The one part of the settings the Studio reads: the edited prompt files (the rest of
/// `Settings` is left unread, so the page compiles no reader for it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct SettingsPrompts {
    #[serde(default)]
    pub prompt_overrides: BTreeMap<String, String>,
}

/// What the Prompt Studio asks of the worker, each written as its `PanelRequest` namesake, so
/// the page compiles a writer for these requests only; `wire_tests` holds the two alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StudioRequest {
    GetSettings {
        id: u32,
    },
    ListTabs {
        id: u32,
    },
    StudioRun {
        id: u32,
        run: Box<StudioRun>,
    },
    SavePrompts {
        id: u32,
        edits: PromptEdits,
    },
    RunPipeline {
        id: u32,
        text: String,
        pipeline: Option<Value>,
        input: Value,
        tab_id: Option<crate::TabId>,
    },
    CancelPipeline {
        id: u32,
        run: u32,
    },
    SavePipeline {
        id: u32,
        text: String,
        pipeline: Option<Value>,
        publish: bool,
    },
    ListPipelines {
        id: u32,
    },
}

impl StudioRequest {
    /// The id its answer will carry.
    pub fn id(&self) -> u32 {
        match self {
            StudioRequest::GetSettings { id }
            | StudioRequest::ListTabs { id }
            | StudioRequest::StudioRun { id, .. }
            | StudioRequest::SavePrompts { id, .. }
            | StudioRequest::RunPipeline { id, .. }
            | StudioRequest::CancelPipeline { id, .. }
            | StudioRequest::SavePipeline { id, .. }
            | StudioRequest::ListPipelines { id } => *id,
        }
    }
}
