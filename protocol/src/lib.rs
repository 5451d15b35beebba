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

use serde::Serialize;

pub mod agent;
pub mod drafting;
pub mod jobs;
pub mod mcp;
pub mod recording;
pub mod settings;
pub mod studio;
pub mod workflow;

/// The name a page gives `chrome.runtime.connect` to reach the agent.
pub const PANEL_PORT: &str = "alphascout.panel";

pub use run_contract::TabId;

/// What a page asks of the worker over the port. `id` is chosen by the page and echoed in
/// the answer, so several requests can be in flight at once.
///
/// The worker reads every variant. The side panel is the one page that writes this enum;
/// the variants it never sends are `skip_serializing`, so its bundle carries no writer for
/// them. The other pages send those through their own narrow enums (`StudioRequest`,
/// `WorkflowsRequest`, `DraftRequest`), which the wire tests hold to these.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
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
    /// The snapshot of the task shown in `tab_id`'s panel, if any (answered with `task`).
    /// Without a tab: the most recently active task.
    CurrentTask {
        id: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<TabId>,
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
    /// The stored conversations, newest first (answered with `sessions`).
    ListSessions {
        id: u32,
    },
    /// Makes a stored conversation the current one of `tab_id`'s panel, so the panel shows
    /// it and a message continues it. Refused while that tab's task runs, or while the
    /// conversation runs in another tab; a paused task the tab showed stays paused in its own
    /// checkpoint. Answered with `task` (and the snapshot is broadcast).
    OpenSession {
        id: u32,
        session_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<TabId>,
    },
    /// Deletes a conversation's chat history (its checkpoint). Captured runs, steps and
    /// traces stay for annotation. Refused for the running task. Answered with `sessions`.
    DeleteSession {
        id: u32,
        session_id: String,
    },
    /// The quick-start prompts (answered with `favourites`).
    GetFavourites {
        id: u32,
    },
    /// Replaces the quick-start prompts; checked with [`favourites_problem`]. Answered with
    /// `favourites` as stored, or `failed` saying what is wrong.
    SaveFavourites {
        id: u32,
        favourites: Vec<Favourite>,
    },
    /// One tiny call with `model` as edited in Settings (answered with `connection`).
    /// `key` is a newly typed key; `None` uses the key stored for `role`. The key in `model`
    /// serializes as `***` and is ignored.
    TestConnection {
        id: u32,
        role: settings::ModelRole,
        model: Box<settings::ModelConfig>,
        #[serde(default)]
        key: Option<String>,
    },
    /// Settings' "Test" of an MCP server as edited: `initialize` and `tools/list` (answered
    /// with `connection`). `token` is a newly typed token; `None` uses the one stored for the
    /// server's name, and only while its origin is the same.
    TestMcpServer {
        id: u32,
        server: Box<settings::McpServer>,
        #[serde(default)]
        token: Option<String>,
    },
    /// The Prompt Studio tries a prompt (answered with `studio_result`).
    #[serde(skip_serializing)]
    StudioRun {
        id: u32,
        run: Box<studio::StudioRun>,
    },
    /// The Prompt Studio saves or reverts prompt files (answered with `prompt_overrides`,
    /// or `failed` when the files as saved would not load).
    #[serde(skip_serializing)]
    SavePrompts {
        id: u32,
        edits: studio::PromptEdits,
    },
    /// Runs a pipeline file on `input` in `tab_id` (answered with `pipeline_result`): its
    /// `text` as written, and its `pipeline` as parsed by the sender; without that, the text
    /// must be JSON (the worker reads no YAML).
    #[serde(skip_serializing)]
    RunPipeline {
        id: u32,
        text: String,
        #[serde(default)]
        pipeline: Option<serde_json::Value>,
        input: serde_json::Value,
        #[serde(default)]
        tab_id: Option<TabId>,
    },
    /// Runs the newest published version of pipeline `name` (the side panel's `/run`).
    RunPublished {
        id: u32,
        name: String,
        input: serde_json::Value,
        tab_id: TabId,
    },
    /// Stops the pipeline run started by request `run`, after its current step.
    #[serde(skip_serializing)]
    CancelPipeline {
        id: u32,
        run: u32,
    },
    /// Stores a pipeline file as its next version; with `publish`, only if the publish gate
    /// lets it (answered with `pipeline_saved`). `text` and `pipeline` as in `RunPipeline`.
    #[serde(skip_serializing)]
    SavePipeline {
        id: u32,
        text: String,
        #[serde(default)]
        pipeline: Option<serde_json::Value>,
        publish: bool,
    },
    /// Every stored pipeline version (answered with `pipelines`).
    #[serde(skip_serializing)]
    ListPipelines {
        id: u32,
    },
    /// Starts recording `tab_id` (answered with `recording`).
    StartRecording {
        id: u32,
        tab_id: TabId,
    },
    /// Ends the recording: its steps are folded and stored (answered with `recording`).
    StopRecording {
        id: u32,
    },
    /// The Ctrl+I offer: opened, or what was chosen in it (answered with `recording`).
    RecordingNote {
        id: u32,
        note: recording::RecordingNote,
    },
    /// Names a stopped recording for the task it shows (answered with `done`); a name a
    /// person gives is kept when the recording is reflected.
    NameRecording {
        id: u32,
        recording_id: String,
        name: String,
    },
    /// Where the recording stands (answered with `recording`).
    #[serde(skip_serializing)]
    CurrentRecording {
        id: u32,
    },
    /// Reflects a stopped recording into a workflow (answered at once; progress follows as
    /// [`WorkerEvent::Reflection`]). Retrying a failed one keeps its pass-A results.
    #[serde(skip_serializing)]
    ReflectRecording {
        id: u32,
        recording_id: String,
    },
    /// The Workflows page stored a version of workflow `workflow_id` (it writes IndexedDB
    /// itself): MCP clients are told the tools changed (answered with `done`).
    #[serde(skip_serializing)]
    WorkflowSaved {
        id: u32,
        workflow_id: String,
    },
    /// Replays version `version` of a workflow in `tab_id` with `params` (examples fill the
    /// rest); progress follows as [`WorkerEvent::Replay`].
    StartReplay {
        id: u32,
        workflow_id: String,
        version: u32,
        tab_id: TabId,
        #[serde(default)]
        params: std::collections::BTreeMap<String, String>,
        /// Off: every step asks the model (the benchmark compares both).
        #[serde(default = "yes")]
        fast_path: bool,
    },
    ReplayControl {
        id: u32,
        run_id: String,
        action: workflow::ReplayControl,
    },
    /// Pause & Steer for a replay: steering while it runs (read at its next step), or the
    /// answer to its question (or a message) while it is paused, which resumes it.
    ReplayMessage {
        id: u32,
        run_id: String,
        text: String,
    },
    /// The replay under way or paused, answered as [`WorkerEvent::Replay`] with this id.
    #[serde(skip_serializing)]
    CurrentReplay {
        id: u32,
    },
    /// Every workflow's latest version, answered as [`WorkerEvent::Workflows`].
    ListWorkflows {
        id: u32,
    },
    /// Every job the worker runs or holds, answered as [`WorkerEvent::Jobs`].
    ListJobs {
        id: u32,
    },
    /// The open web tabs with their titles and URLs (from the debugger's target list, so
    /// no `tabs` permission is needed), answered as [`WorkerEvent::Tabs`].
    #[serde(skip_serializing)]
    ListTabs {
        id: u32,
    },
    /// Stops the job `job_id` (a [`jobs::JobSummary::id`]) whatever its kind; answered with
    /// `done`, or `failed` when no such job is live.
    StopJob {
        id: u32,
        job_id: String,
    },
    /// The annotation page asks for a draft of one step's three thoughts with the
    /// Navigator's model (answered with `thoughts_drafted`; the trace is stored).
    #[serde(skip_serializing)]
    DraftThoughts {
        id: u32,
        input: Box<drafting::DraftInput>,
    },
}

pub(crate) fn yes() -> bool {
    true
}

impl PanelRequest {
    /// `SaveSettings` carrying the keys of `settings` that were typed anew (not `***`).
    pub fn save_settings(id: u32, settings: settings::Settings) -> PanelRequest {
        let keys = lean::map_of(
            settings.keys().into_iter().filter(|(_, key)| !key.is_empty() && key != "***"),
        );
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
            | PanelRequest::CurrentTask { id, .. }
            | PanelRequest::GetSettings { id }
            | PanelRequest::SaveSettings { id, .. }
            | PanelRequest::ListSessions { id }
            | PanelRequest::OpenSession { id, .. }
            | PanelRequest::DeleteSession { id, .. }
            | PanelRequest::GetFavourites { id }
            | PanelRequest::SaveFavourites { id, .. }
            | PanelRequest::TestConnection { id, .. }
            | PanelRequest::TestMcpServer { id, .. }
            | PanelRequest::StudioRun { id, .. }
            | PanelRequest::SavePrompts { id, .. }
            | PanelRequest::RunPipeline { id, .. }
            | PanelRequest::RunPublished { id, .. }
            | PanelRequest::CancelPipeline { id, .. }
            | PanelRequest::SavePipeline { id, .. }
            | PanelRequest::ListPipelines { id }
            | PanelRequest::StartRecording { id, .. }
            | PanelRequest::StopRecording { id }
            | PanelRequest::RecordingNote { id, .. }
            | PanelRequest::NameRecording { id, .. }
            | PanelRequest::CurrentRecording { id }
            | PanelRequest::ReflectRecording { id, .. }
            | PanelRequest::WorkflowSaved { id, .. }
            | PanelRequest::StartReplay { id, .. }
            | PanelRequest::ReplayControl { id, .. }
            | PanelRequest::ReplayMessage { id, .. }
            | PanelRequest::CurrentReplay { id }
            | PanelRequest::ListWorkflows { id }
            | PanelRequest::ListJobs { id }
            | PanelRequest::ListTabs { id }
            | PanelRequest::StopJob { id, .. }
            | PanelRequest::DraftThoughts { id, .. } => *id,
        }
    }
}

/// What the worker sends a page over the port.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
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
    /// A draft of one step's thoughts (`draft_thoughts`), or why there is none, in a line
    /// for a person.
    #[serde(skip_deserializing)]
    ThoughtsDrafted {
        id: u32,
        run_id: String,
        step_index: u32,
        result: Result<drafting::DraftedThoughts, String>,
    },
    /// A request that needs no other answer was carried out.
    Done {
        id: u32,
    },
    /// Something happened in a task or replay. Sent to every connected page; a panel shows
    /// it only when `panel_tab` is its tab (the tab the job was started from).
    Agent {
        event: agent::AgentEvent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        panel_tab: Option<TabId>,
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
        problems: Vec<run_contract::Problem>,
        /// Prompt id → its variants (bundled and overridden), for Settings' choice of one.
        #[serde(default)]
        variants: lean::StrMap<Vec<String>>,
    },
    /// The stored conversations, newest first.
    Sessions {
        id: u32,
        sessions: Vec<agent::SessionSummary>,
    },
    /// The quick-start prompts as stored.
    Favourites {
        id: u32,
        favourites: Vec<Favourite>,
    },
    /// The outcome of `test_connection`: "Connected: … answered in … ms", or what failed,
    /// written for a person (never the key).
    Connection {
        id: u32,
        ok: bool,
        message: String,
    },
    /// What a Studio run did.
    #[serde(skip_deserializing)]
    StudioResult {
        id: u32,
        result: Box<studio::StudioRunResult>,
    },
    /// The prompt overrides as stored after a save.
    #[serde(skip_deserializing)]
    PromptOverrides {
        id: u32,
        overrides: std::collections::BTreeMap<String, String>,
    },
    /// A pipeline run: the engine's `PipelineRun` (status, output, error in the seed's
    /// shape, one trace per step).
    PipelineResult {
        id: u32,
        run: serde_json::Value,
    },
    /// A pipeline save: stored as `version` (0 when refused), published or not, and what
    /// the publish gate said.
    #[serde(skip_deserializing)]
    PipelineSaved {
        id: u32,
        version: u32,
        published: bool,
        errors: Vec<run_contract::Problem>,
        warnings: Vec<run_contract::Problem>,
    },
    /// Every stored pipeline version.
    #[serde(skip_deserializing)]
    Pipelines {
        id: u32,
        pipelines: Vec<studio::StoredPipeline>,
    },
    /// One step of the pipeline run started by request `run` just ended or was skipped
    /// (its `StepTrace`), sent to every page while the run goes on. Not an answer: the run's
    /// answer is its `pipeline_result`.
    #[serde(skip_deserializing)]
    PipelineStep {
        run: u32,
        step: serde_json::Value,
    },
    /// Where the recording stands: sent on connect, on every change, and when asked (`id`).
    /// `None`: nothing is being recorded.
    Recording {
        #[serde(default)]
        id: Option<u32>,
        status: Option<recording::RecordingStatus>,
    },
    #[serde(skip_deserializing)]
    Reflection {
        progress: workflow::ReflectProgress,
    },
    /// A replay's progress; `id` when it answers a request.
    Replay {
        #[serde(default)]
        id: Option<u32>,
        replay: Option<Box<workflow::ReplayProgress>>,
    },
    Workflows {
        id: u32,
        workflows: Vec<workflow::WorkflowSummary>,
    },
    #[serde(skip_deserializing)]
    Tabs {
        id: u32,
        tabs: Vec<TabInfo>,
    },
    /// Every live job, and those that ended since the worker started; sent on connect, on
    /// every change, and when asked (`id`).
    Jobs {
        #[serde(default)]
        id: Option<u32>,
        jobs: Vec<jobs::JobSummary>,
    },
    /// The MCP server's state (Settings' "Allow MCP clients"); sent on connect and on every
    /// change.
    Mcp {
        status: mcp::McpStatus,
    },
    /// Never sent. What the side panel, the one page that reads this enum whole, reads for the
    /// events marked `skip_deserializing`: the Studio's, the Workflows page's and the
    /// annotation page's, which each read them through their own narrow enum. Their readers
    /// are left out of the panel's bundle.
    #[serde(other, skip_serializing)]
    Ignored,
}

/// A browser tab as the agent lists them: its title and URL tell a person which it is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct TabInfo {
    pub id: i32,
    pub url: String,
    pub title: String,
}

/// A quick-start prompt: shown as a chip on an empty chat; clicking it fills the chat box.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Favourite {
    /// Chosen by the page; unique in the list.
    pub id: String,
    pub title: String,
    pub prompt: String,
}

/// How many favourites can be stored.
pub const MAX_FAVOURITES: usize = 200;
/// The longest title of a favourite, in characters.
pub const MAX_FAVOURITE_TITLE: usize = 200;
/// The longest prompt of a favourite, in characters.
pub const MAX_FAVOURITE_PROMPT: usize = 10_000;

impl Favourite {
    /// What is wrong with this favourite's fields, written for a person; `None` when fine.
    pub fn problem(&self) -> Option<String> {
        let title = self.title.trim().chars().count();
        let prompt = self.prompt.trim().chars().count();
        if title == 0 {
            Some("Give the favourite a title.".into())
        } else if title > MAX_FAVOURITE_TITLE {
            Some(format!("Keep the title within {MAX_FAVOURITE_TITLE} characters."))
        } else if prompt == 0 {
            Some("Type the prompt it puts in the chat box.".into())
        } else if prompt > MAX_FAVOURITE_PROMPT {
            Some(format!("The prompt has {prompt} characters; the most is {MAX_FAVOURITE_PROMPT}."))
        } else {
            None
        }
    }
}

/// What is wrong with a list of favourites, written for a person; `None` when it can be
/// stored. The worker refuses a save with this message; the panel checks its editor with
/// [`Favourite::problem`], the same rules.
pub fn favourites_problem(favourites: &[Favourite]) -> Option<String> {
    if favourites.len() > MAX_FAVOURITES {
        return Some(format!(
            "At most {MAX_FAVOURITES} favourites can be saved; remove some first."
        ));
    }
    // At most MAX_FAVOURITES ids: a list is enough, and no B-tree copy in the panel's bundle.
    let mut ids: Vec<&str> = Vec::new();
    for (n, favourite) in favourites.iter().enumerate() {
        let name = match favourite.title.trim() {
            "" => format!("Favourite {}", n + 1),
            title => format!("Favourite \"{title}\""),
        };
        if let Some(problem) = favourite.problem() {
            return Some(format!("{name}: {problem}"));
        }
        if favourite.id.trim().is_empty() || ids.contains(&favourite.id.as_str()) {
            return Some(format!("{name}: it needs an id of its own."));
        }
        ids.push(favourite.id.as_str());
    }
    None
}

/// One-shot requests sent with `chrome.runtime.sendMessage`; the answer is the matching
/// `*Reply` type serialized as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
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
    /// A stored recording (the newest when `id` is absent), folded into steps as Stop
    /// would: answered with `{recording, status, events, jsonl}`.
    #[serde(rename = "debug.recording")]
    Recording {
        #[serde(default)]
        id: Option<String>,
    },
}

/// The answer to `debug.page_state`.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct DebugError {
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// `event` read by a page's narrow enum `N` and written back: what the page understood.
    fn read_as<N: Serialize + serde::de::DeserializeOwned>(event: &WorkerEvent) -> Value {
        let narrow: N = serde_json::from_value(serde_json::to_value(event).unwrap()).unwrap();
        serde_json::to_value(narrow).unwrap()
    }

    #[test]
    fn the_studio_and_workflows_pages_read_their_events_as_the_worker_writes_them() {
        use studio::{StoredPipeline, StudioEvent, StudioRunResult};
        use workflow::{ReflectProgress, ReflectStage, ReplayProgress, WorkflowsEvent};
        let tabs = vec![TabInfo { id: 4, url: "https://a.test/".into(), title: "A".into() }];
        let problem = run_contract::Problem::new("/steps/0", "no id");
        let result = StudioRunResult {
            run_id: "r".into(),
            trace_id: "t".into(),
            prompt_id: "navigator".into(),
            variant: "default".into(),
            prompt_hash: "h".into(),
            revision_hash: "v".into(),
            model: "m".into(),
            exchanges: vec![],
            attempts: vec![],
            output: Some(json!({"a": 1})),
            error: None,
            input_tokens: 3,
            output_tokens: 4,
            cost: 0.5,
            latency_ms: 12.0,
        };
        let pipeline = StoredPipeline {
            id: "p".into(),
            version: 2,
            text: "id: p".into(),
            pipeline: Some(json!({"id": "p"})),
            hash: "h".into(),
            saved_at: "2026-01-01T00:00:00Z".into(),
            published: true,
            runs: vec![json!({})],
        };
        let studio = [
            WorkerEvent::Failed { id: 1, message: "no".into() },
            WorkerEvent::StudioResult { id: 2, result: Box::new(result) },
            WorkerEvent::PromptOverrides { id: 3, overrides: [("a".into(), "b".into())].into() },
            WorkerEvent::PipelineResult { id: 4, run: json!({"status": "ok"}) },
            WorkerEvent::PipelineSaved {
                id: 5,
                version: 2,
                published: false,
                errors: vec![problem.clone()],
                warnings: vec![problem],
            },
            WorkerEvent::Pipelines { id: 6, pipelines: vec![pipeline] },
            WorkerEvent::PipelineStep { run: 7, step: json!({"step": "s"}) },
            WorkerEvent::Tabs { id: 8, tabs: tabs.clone() },
        ];
        for event in &studio {
            assert_eq!(read_as::<StudioEvent>(event), serde_json::to_value(event).unwrap());
        }
        let model = json!({"provider": "open_ai", "base_url": "", "api_key": "***", "model": "m",
            "timeout_ms": 1000, "max_retries": 0});
        let models = json!({"planner": model, "navigator": model, "thinking": model});
        let mut full: settings::Settings =
            serde_json::from_value(json!({ "models": models })).unwrap();
        full.prompt_overrides.insert("navigator/A.md".into(), "Edited".into());
        let settings = WorkerEvent::Settings {
            id: 9,
            settings: Some(Box::new(full)),
            problems: vec![],
            variants: lean::StrMap::new(),
        };
        assert_eq!(
            read_as::<StudioEvent>(&settings),
            json!({"type": "settings", "settings": {"prompt_overrides": {"navigator/A.md": "Edited"}}})
        );

        let replay = ReplayProgress {
            run_id: "r".into(),
            workflow_id: "w".into(),
            version: 1,
            workflow_name: "Buy tea".into(),
            tab_id: 4,
            subtask: 0,
            subtasks: 2,
            step: 3,
            model_calls: 1,
            calls_saved: 2,
            fast_path: false,
            status: jobs::JobStatus::Paused,
            why: Some("asked".into()),
            extracts: [("price".into(), "3".into())].into(),
            question: Some("Which?".into()),
        };
        let workflows = [
            WorkerEvent::Hello { version: "1".into() },
            WorkerEvent::Failed { id: 1, message: "no".into() },
            WorkerEvent::Done { id: 2 },
            WorkerEvent::Reflection {
                progress: ReflectProgress {
                    recording_id: "rec".into(),
                    stage: ReflectStage::Failed { why: "w".into(), details: Some("d".into()) },
                },
            },
            WorkerEvent::Replay { id: Some(3), replay: Some(Box::new(replay)) },
            WorkerEvent::Tabs { id: 8, tabs },
        ];
        for event in &workflows {
            assert_eq!(read_as::<WorkflowsEvent>(event), serde_json::to_value(event).unwrap());
        }
        // Every other event is read as `Other`, not refused.
        let other = WorkerEvent::Done { id: 1 };
        assert_eq!(read_as::<StudioEvent>(&other), json!({"type": "other"}));
        let other = WorkerEvent::Favourites { id: 1, favourites: vec![] };
        assert_eq!(read_as::<WorkflowsEvent>(&other), json!({"type": "other"}));
    }

    /// `request` as sent, and as the worker reads it, each as `Debug` writes it: the narrow
    /// enums' variants are their `PanelRequest` namesakes field for field, so the two are
    /// the same text when nothing was lost (the full enum has no writer for these).
    fn as_the_worker_reads(request: &(impl Serialize + std::fmt::Debug)) -> (String, String) {
        let sent = serde_json::to_value(request).unwrap();
        let read: PanelRequest = serde_json::from_value(sent).unwrap();
        (format!("{request:?}"), format!("{read:?}"))
    }

    #[test]
    fn the_studio_and_workflows_pages_write_requests_as_the_worker_reads_them() {
        use studio::{StudioRequest, StudioRun};
        use workflow::{ReplayControl, WorkflowsRequest};
        let run = StudioRun {
            prompt_id: "navigator".into(),
            variant: "A".into(),
            overrides: [("navigator/A.md".into(), "Edited".into())].into(),
            vars: json!({"task": "t"}),
            role: settings::ModelRole::Navigator,
        };
        let studio = [
            StudioRequest::GetSettings { id: 1 },
            StudioRequest::ListTabs { id: 2 },
            StudioRequest::StudioRun { id: 3, run: Box::new(run) },
            StudioRequest::SavePrompts {
                id: 4,
                edits: [("a.md".to_owned(), Some("x".into())), ("b.md".to_owned(), None)].into(),
            },
            StudioRequest::RunPipeline {
                id: 5,
                text: "id: p".into(),
                pipeline: Some(json!({"id": "p"})),
                input: json!({}),
                tab_id: Some(7),
            },
            StudioRequest::RunPipeline {
                id: 6,
                text: "{\"id\": \"p\"}".into(),
                pipeline: None,
                input: json!(1),
                tab_id: None,
            },
            StudioRequest::CancelPipeline { id: 7, run: 5 },
            StudioRequest::SavePipeline {
                id: 8,
                text: "id: p".into(),
                pipeline: Some(json!({"id": "p"})),
                publish: true,
            },
            StudioRequest::ListPipelines { id: 9 },
        ];
        for request in &studio {
            let (sent, read) = as_the_worker_reads(request);
            assert_eq!(sent, read);
            assert_eq!(serde_json::to_value(request).unwrap()["id"], request.id());
        }
        let workflows = [
            WorkflowsRequest::ListTabs { id: 1 },
            WorkflowsRequest::StartReplay {
                id: 2,
                workflow_id: "w".into(),
                version: 3,
                tab_id: 4,
                params: [("query".into(), "tea".into())].into(),
                fast_path: false,
            },
            WorkflowsRequest::CurrentReplay { id: 3 },
            WorkflowsRequest::ReplayControl {
                id: 4,
                run_id: "r".into(),
                action: ReplayControl::Pause,
            },
            WorkflowsRequest::ReplayMessage { id: 5, run_id: "r".into(), text: "go on".into() },
            WorkflowsRequest::NameRecording { id: 6, recording_id: "rec".into(), name: "N".into() },
            WorkflowsRequest::ReflectRecording { id: 7, recording_id: "rec".into() },
            WorkflowsRequest::WorkflowSaved { id: 8, workflow_id: "w".into() },
        ];
        for request in &workflows {
            let (sent, read) = as_the_worker_reads(request);
            assert_eq!(sent, read);
            assert_eq!(serde_json::to_value(request).unwrap()["id"], request.id());
        }
    }

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
    fn history_favourite_and_connection_requests_have_snake_case_tags() {
        let cases = [
            (json!({"type": "list_sessions", "id": 1}), PanelRequest::ListSessions { id: 1 }),
            (
                json!({"type": "open_session", "id": 2, "session_id": "s1"}),
                PanelRequest::OpenSession { id: 2, session_id: "s1".into(), tab_id: None },
            ),
            (
                json!({"type": "delete_session", "id": 3, "session_id": "s1"}),
                PanelRequest::DeleteSession { id: 3, session_id: "s1".into() },
            ),
            (json!({"type": "get_favourites", "id": 4}), PanelRequest::GetFavourites { id: 4 }),
            (
                json!({"type": "save_favourites", "id": 5,
                       "favourites": [{"id": "f1", "title": "Kettle", "prompt": "Find a kettle"}]}),
                PanelRequest::SaveFavourites {
                    id: 5,
                    favourites: vec![Favourite {
                        id: "f1".into(),
                        title: "Kettle".into(),
                        prompt: "Find a kettle".into(),
                    }],
                },
            ),
        ];
        for (wire, request) in cases {
            assert_eq!(serde_json::from_value::<PanelRequest>(wire.clone()).unwrap(), request);
            assert_eq!(serde_json::to_value(&request).unwrap(), wire);
            assert_eq!(request.id(), wire["id"].as_u64().unwrap() as u32);
        }
    }

    #[test]
    fn a_connection_test_carries_a_typed_key_apart_from_the_masked_model() {
        let model = json!({"provider": "open_ai", "base_url": "", "api_key": "***",
            "model": "gpt-test", "timeout_ms": 30000, "max_retries": 2});
        let request: PanelRequest = serde_json::from_value(json!({"type": "test_connection",
            "id": 6, "role": "navigator", "model": model, "key": "sk-typed"}))
        .unwrap();
        let PanelRequest::TestConnection { id: 6, role, model, key } = &request else {
            panic!("{request:?}")
        };
        assert_eq!((*role, key.as_deref()), (settings::ModelRole::Navigator, Some("sk-typed")));
        assert_eq!(model.model, "gpt-test");
        let stored: PanelRequest = serde_json::from_value(json!({"type": "test_connection",
            "id": 7, "role": "planner", "model": model}))
        .unwrap();
        assert!(matches!(stored, PanelRequest::TestConnection { key: None, .. }), "stored key");
        // A role the panel does not know is refused where the request is read.
        let unknown = serde_json::from_value::<PanelRequest>(json!({"type": "test_connection",
            "id": 8, "role": "critic", "model": model}));
        assert!(unknown.is_err(), "{unknown:?}");
        assert_eq!(
            serde_json::to_value(WorkerEvent::Connection {
                id: 6,
                ok: false,
                message: "no".into()
            })
            .unwrap(),
            json!({"type": "connection", "id": 6, "ok": false, "message": "no"})
        );
    }

    #[test]
    fn sessions_and_favourites_answers_read_like_the_rust_types() {
        let event = WorkerEvent::Sessions {
            id: 1,
            sessions: vec![agent::SessionSummary {
                session_id: "s1".into(),
                title: "Find a kettle".into(),
                task: "And a toaster?".into(),
                status: agent::SessionStatus::Done,
                updated_at: "2025-01-02T03:04:05.000Z".into(),
                runs: 2,
                panel_tab: None,
            }],
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "sessions", "id": 1, "sessions": [{"session_id": "s1",
                "title": "Find a kettle", "task": "And a toaster?", "status": "done",
                "updated_at": "2025-01-02T03:04:05.000Z", "runs": 2}]})
        );
        let favourites = WorkerEvent::Favourites { id: 2, favourites: vec![] };
        assert_eq!(
            serde_json::to_value(&favourites).unwrap(),
            json!({"type": "favourites", "id": 2, "favourites": []})
        );
    }

    #[test]
    fn favourites_are_checked_for_titles_prompts_ids_and_sizes() {
        let favourite = |id: &str, title: &str, prompt: &str| Favourite {
            id: id.into(),
            title: title.into(),
            prompt: prompt.into(),
        };
        assert_eq!(favourites_problem(&[favourite("a", "Kettle", "Find a kettle")]), None);
        let untitled = favourites_problem(&[favourite("a", " ", "Find")]).unwrap();
        assert!(untitled.starts_with("Favourite 1:") && untitled.contains("title"), "{untitled}");
        let empty = favourites_problem(&[favourite("a", "Kettle", "\n")]).unwrap();
        assert!(empty.starts_with("Favourite \"Kettle\":") && empty.contains("prompt"), "{empty}");
        let long = favourite("a", "Long", &"x".repeat(MAX_FAVOURITE_PROMPT + 1));
        assert!(favourites_problem(&[long]).unwrap().contains("10000"));
        assert!(
            favourites_problem(&[favourite("a", "A", "a"), favourite("a", "B", "b")])
                .unwrap()
                .contains("id")
        );
        let many: Vec<Favourite> =
            (0..=MAX_FAVOURITES).map(|i| favourite(&i.to_string(), "T", "p")).collect();
        assert!(favourites_problem(&many).unwrap().contains("At most 200"));
        assert!(favourites_problem(&many[..MAX_FAVOURITES]).is_none());
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
