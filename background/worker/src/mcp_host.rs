//! The extension's side of the MCP server: the worker's end of Chrome native messaging to
//! the native host `alphascout-mcp` (messages in `mcp_tools::bridge`), connected only while
//! Settings allow MCP clients, and the tools it carries out for them.
//!
//! Every tool takes the path the side panel's request for the same thing takes: a task
//! goes through `Tasks::start_job` (an answer through `follow_up` and `resume`, as the
//! panel's Send on a question), a replay through `Workflows::start_job`, a pipeline through
//! `pipelines::run_published`, a stop through the job table's, page state through the
//! observer and an action through `Hands` under the settings' firewall. So the firewall,
//! the scheme rules, the jobs' admission and secret masking apply as for the panel. No tool
//! reads settings or keys back to the client.
//!
//! The host forwards each client's requests with ids unique in the host; every answer names
//! its request's id. A malformed message is logged and ignored.

use lean::{SortedMap, SortedSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use agent_engine::actions::{Action, Tabs};
use agent_engine::firewall::Firewall;
use agent_engine::jobs::{Job, JobKind, JobStatus};
use agent_engine::observe::ObserveOptions;
use agent_engine::pipeline::parsed;
use agent_engine::prompts::PromptSet;
use agent_engine::run::AgentEvent;
use agent_engine::structured::Schema;
use mcp_tools::bridge::{Content, ErrorCode, FromExtension, ToExtension};
use mcp_tools::calls::{self, Call, check_params};
use mcp_tools::catalogue::{self, ParamEntry, PipelineEntry, Published, WorkflowEntry};
use mcp_tools::outcome::{JobOutcome, Status};
use protocol::agent::{EventDetail, TaskStatus};
use protocol::jobs::JobSummary;
use protocol::mcp::{McpClient, McpStatus, host_problem};
use protocol::settings::Settings;
use protocol::workflow::ReplayProgress;
use protocol::{TabId, WorkerEvent};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock, Port};
use crate::signal::within;
use crate::store::Store;
use crate::tasks::hands;

/// Said to a client while Settings do not allow MCP clients.
pub const SWITCHED_OFF: &str = "MCP clients are switched off in AlphaScout: switch on Settings → \
                                Allow MCP clients in its side panel.";

#[derive(Default)]
pub struct McpHost {
    port: RefCell<Option<Port>>,
    /// Settings' "Allow MCP clients", as last read or saved.
    allowed: Cell<bool>,
    /// Why the host is not connected, for Settings.
    problem: RefCell<Option<String>>,
    clients: RefCell<SortedMap<u32, McpClient>>,
    /// Calls under way, by request id; a cancelled or orphaned one is answered no more.
    open: RefCell<SortedSet<u64>>,
    /// Calls waiting on a job that asked for progress: id → (job id, last step told).
    progress: RefCell<SortedMap<u64, (String, u32)>>,
    /// Pipeline runs a call started: their request number → the call's id.
    pipelines: RefCell<SortedMap<u32, u64>>,
    /// Pipeline runs started so far: each takes a request number counted down from the
    /// top, so it never meets a page's own.
    pipeline_runs: Cell<u32>,
}

/// A refused call: its error code and the sentence the panel would show.
struct Refusal {
    code: ErrorCode,
    message: String,
}

fn refuse(code: ErrorCode) -> impl Fn(String) -> Refusal {
    move |message| Refusal { code, message }
}

fn not_found(message: impl Into<String>) -> Refusal {
    Refusal { code: ErrorCode::NotFound, message: message.into() }
}

impl McpHost {
    /// After the worker starts: connects when Settings allow it.
    pub async fn start(worker: Rc<Worker>) {
        let allowed = match worker.tasks.store().await {
            Ok(store) => store.settings().await.ok().flatten().is_some_and(|s| s.allow_mcp_clients),
            Err(_) => false,
        };
        McpHost::apply(&worker, allowed);
    }

    /// Settings' "Allow MCP clients" is `allowed` now: connect, or disconnect at once.
    pub fn apply(worker: &Rc<Worker>, allowed: bool) {
        let host = &worker.mcp;
        host.allowed.set(allowed);
        let connected = host.port.borrow().is_some();
        if allowed && !connected {
            *host.problem.borrow_mut() = None;
            match chrome::connect_mcp(mcp_tools::bridge::HOST_NAME) {
                Ok(port) => {
                    port.post(&FromExtension::Hello { version: env!("CARGO_PKG_VERSION").into() });
                    *host.port.borrow_mut() = Some(port);
                }
                Err(error) => {
                    *host.problem.borrow_mut() = Some(host_problem(&chrome::error_message(&error)));
                }
            }
        } else if !allowed && connected {
            if let Some(port) = host.port.borrow_mut().take() {
                port.disconnect();
            }
            host.gone(worker);
        }
        host.broadcast(worker);
    }

    /// What Settings shows.
    pub fn status(&self) -> McpStatus {
        McpStatus {
            allowed: self.allowed.get(),
            connected: self.port.borrow().is_some(),
            problem: self.problem.borrow().clone(),
            clients: self.clients.borrow().values().cloned().collect(),
        }
    }

    pub fn event(&self) -> WorkerEvent {
        WorkerEvent::Mcp { status: self.status() }
    }

    fn broadcast(&self, worker: &Worker) {
        worker.ports.broadcast(&self.event());
    }

    fn is_current(&self, port: &Port) -> bool {
        let port: &JsValue = port.as_ref();
        self.port.borrow().as_ref().is_some_and(|p| AsRef::<JsValue>::as_ref(p) == port)
    }

    fn post(&self, message: &FromExtension) {
        if let Some(port) = self.port.borrow().as_ref() {
            port.post(message);
        }
    }

    /// The host went away: its clients with it, and nobody waits for answers any more.
    fn gone(&self, worker: &Worker) {
        self.clients.borrow_mut().clear();
        self.open.borrow_mut().clear();
        self.progress.borrow_mut().clear();
        self.pipelines.borrow_mut().clear();
        worker.jobs.changes.notify();
    }

    /// The native port closed; `why` is Chrome's `lastError`, if it gave one.
    pub fn on_disconnect(worker: &Rc<Worker>, port: Port, why: String) {
        let host = &worker.mcp;
        if !host.is_current(&port) {
            return;
        }
        host.port.borrow_mut().take();
        chrome::log(&format!("the MCP host disconnected: {why}"));
        if host.allowed.get() {
            *host.problem.borrow_mut() = Some(host_problem(&why));
        }
        host.gone(worker);
        host.broadcast(worker);
    }

    /// A message from the native host.
    pub fn on_message(worker: &Rc<Worker>, port: Port, message: JsValue) {
        let host = &worker.mcp;
        if !host.is_current(&port) {
            return;
        }
        let message: ToExtension = match capture_db::decode(message) {
            Ok(message) => message,
            Err(error) => return chrome::log(&format!("ignored a malformed MCP message: {error}")),
        };
        match message {
            ToExtension::ClientConnected { client, name, version, transport } => {
                let since = js_sys::Date::now();
                let client_row = McpClient { name, version, transport, since };
                host.clients.borrow_mut().insert(client, client_row);
                host.broadcast(worker);
            }
            ToExtension::ClientGone { client } => {
                host.clients.borrow_mut().remove(&client);
                host.broadcast(worker);
            }
            ToExtension::ListTools { id, .. } => {
                let worker = worker.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let answer = match worker.mcp.allowed.get() {
                        true => FromExtension::Tools { id, tools: tools(&worker).await },
                        false => disabled(id),
                    };
                    worker.mcp.post(&answer);
                });
            }
            ToExtension::Call { id, client, tool, arguments, progress } => {
                if !host.allowed.get() {
                    return host.post(&disabled(id));
                }
                host.open.borrow_mut().insert(id);
                let worker = worker.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let host = &worker.mcp;
                    let name = host.client_name(client);
                    let answer = call(&worker, id, &name, &tool, &arguments, progress).await;
                    let answer = answer.unwrap_or_else(|refused| FromExtension::Error {
                        id,
                        code: refused.code,
                        message: refused.message,
                    });
                    host.progress.borrow_mut().remove(&id);
                    if host.open.borrow_mut().remove(&id) {
                        host.post(&answer);
                    }
                });
            }
            ToExtension::Cancel { id } => {
                host.open.borrow_mut().remove(&id);
                host.progress.borrow_mut().remove(&id);
                worker.jobs.changes.notify();
            }
        }
    }

    fn client_name(&self, client: u32) -> String {
        let known = self.clients.borrow().get(&client).map(|c| c.name.clone());
        known.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| format!("MCP client {client}"))
    }

    fn is_open(&self, id: u64) -> bool {
        self.open.borrow().contains(&id)
    }

    /// A pipeline was published, or a workflow saved: the clients list the tools again.
    pub fn tools_changed(&self) {
        self.post(&FromExtension::ToolsChanged);
    }

    /// Tells each call waiting on `job` with progress about the step `event` opens: its
    /// goal, or else its first action.
    pub fn on_agent_event(&self, job: &str, event: &AgentEvent) {
        let message = match &event.detail {
            EventDetail::Goal => event.details.clone(),
            EventDetail::ActionStarted { label } => label.clone(),
            _ => return,
        };
        // `step` counts the steps before this one.
        self.step(job, event.step + 1, message);
    }

    /// A replay's step ended: each call waiting on it with progress hears of it.
    pub fn on_replay(&self, replay: &ReplayProgress) {
        let message = format!(
            "{}: step {}, subtask {} of {}",
            replay.workflow_name,
            replay.step,
            (replay.subtask + 1).min(replay.subtasks.max(1)),
            replay.subtasks
        );
        self.step(&replay.run_id, replay.step, message);
    }

    /// A pipeline step ended in a run a call started.
    pub fn on_pipeline_step(&self, run: u32, trace: &Value) {
        let Some(id) = self.pipelines.borrow().get(&run).copied() else { return };
        let told = self.progress.borrow().get(&id).map(|(_, told)| *told);
        let Some(told) = told else { return };
        let step = trace["step_id"].as_str().unwrap_or_default();
        let message = format!("{step}: {}", trace["status"].as_str().unwrap_or("ended"));
        self.step(&pipeline_job(run), told + 1, message);
    }

    fn step(&self, job: &str, step: u32, message: String) {
        let mut told = Vec::new();
        for (id, (waited, last)) in self.progress.borrow_mut().iter_mut() {
            if waited == job && step > *last {
                *last = step;
                told.push(*id);
            }
        }
        for id in told {
            self.post(&FromExtension::Progress {
                id,
                progress: f64::from(step),
                total: None,
                message: Some(message.clone()),
            });
        }
    }
}

fn disabled(id: u64) -> FromExtension {
    FromExtension::Error { id, code: ErrorCode::Disabled, message: SWITCHED_OFF.into() }
}

fn pipeline_job(run: u32) -> String {
    format!("pipeline:{run}")
}

thread_local! {
    /// The bundled prompts never change while the worker lives: parsed once, not per call.
    static ACTION_SCHEMA: Value = {
        let prompts = PromptSet::bundled();
        let navigator = prompts.prompt("navigator").map(|p| p.schema.as_value().clone());
        navigator.map(|schema| schema["$defs"]["action"].clone()).unwrap_or_else(|| json!({}))
    };
}

/// The Navigator's own action schema, from the bundled prompts.
fn action_schema() -> Value {
    ACTION_SCHEMA.with(Value::clone)
}

/// Every tool as the clients list them.
async fn tools(worker: &Rc<Worker>) -> Vec<mcp_tools::bridge::Tool> {
    catalogue::tools(&action_schema(), &published(worker).await)
}

/// The published pipelines (newest versions) and the workflows (latest versions); what
/// cannot be read is logged and left out.
async fn published(worker: &Rc<Worker>) -> Published {
    let mut published = Published::default();
    let Ok(store) = worker.tasks.store().await else { return published };
    let settings = store.settings().await.ok().flatten();
    let overrides = settings.map(|s| s.prompt_overrides).unwrap_or_default();
    match crate::pipelines::published(&store).await {
        Ok(rows) => {
            for row in rows {
                // An edited prompt that no longer loads leaves the bundled ones to list by.
                let loaded = match parsed(&row.text, row.pipeline.as_ref()) {
                    Ok(file) => match crate::authoring::load(&file, &overrides).await {
                        Ok(loaded) => Some(loaded),
                        Err(_) => crate::authoring::load(&file, &Default::default()).await.ok(),
                    },
                    Err(_) => None,
                };
                published.pipelines.push(PipelineEntry {
                    description: loaded.as_ref().map(|p| p.description.clone()).unwrap_or_default(),
                    inputs: loaded.and_then(|p| p.inputs),
                    name: row.id,
                });
            }
        }
        Err(error) => chrome::log(&format!("MCP tools list no pipelines: {error}")),
    }
    match worker.workflows.latest(worker).await {
        Ok(workflows) => {
            for workflow in workflows {
                published.workflows.push(WorkflowEntry {
                    id: workflow.id,
                    name: workflow.name,
                    description: workflow.description,
                    params: workflow
                        .params
                        .into_iter()
                        .map(|p| ParamEntry {
                            example: if p.secret { String::new() } else { p.example },
                            name: p.name,
                            description: p.description,
                            secret: p.secret,
                        })
                        .collect(),
                });
            }
        }
        Err(error) => chrome::log(&format!("MCP tools list no workflows: {error}")),
    }
    published
}

/// Carries out one call for the client named `client`.
async fn call(
    worker: &Rc<Worker>,
    id: u64,
    client: &str,
    tool: &str,
    arguments: &Value,
    progress: bool,
) -> Result<FromExtension, Refusal> {
    // Reading every pipeline and workflow is for the calls that name one, not every `act`.
    let published =
        if calls::needs_published(tool) { published(worker).await } else { Published::default() };
    let call =
        calls::read(tool, arguments, &published).map_err(refuse(ErrorCode::InvalidParams))?;
    let store = worker.tasks.store().await.map_err(refuse(ErrorCode::Internal))?;
    let settings = store.settings().await.ok().flatten();
    let firewall = settings.as_ref().map(Firewall::new).unwrap_or_default();
    let waits = Waits { worker, id, progress };
    match call {
        Call::RunTask { task, tab_id, url } => {
            let settings = needs_settings(settings)?;
            let tab = tab_for(worker, &settings, tab_id, url.as_deref()).await?;
            admit(worker, JobKind::Task, tab, &settings)?;
            let session = worker
                .tasks
                .start_job(worker, tab, &task, None, None, Some(client))
                .await
                .map_err(refuse(ErrorCode::Internal))?;
            waits.settled(&session, false).await
        }
        Call::Answer { job_id, text } => {
            let job = job(worker, &job_id)?;
            match job.kind {
                JobKind::Task => {
                    worker
                        .tasks
                        .follow_up(worker, &job_id, &text)
                        .await
                        .map_err(refuse(ErrorCode::Internal))?;
                    if job.status == JobStatus::Paused {
                        let resumed = worker.tasks.resume(worker, &job_id).await;
                        resumed.map_err(refuse(ErrorCode::Busy))?;
                    }
                }
                JobKind::Replay => {
                    let told = worker.workflows.message(worker, &job_id, text).await;
                    told.map_err(refuse(ErrorCode::Busy))?;
                }
                _ => {
                    return Err(Refusal {
                        code: ErrorCode::InvalidParams,
                        message: format!(
                            "Job {job_id} asks no questions: only tasks and replays do."
                        ),
                    });
                }
            }
            waits.settled(&job_id, job.status == JobStatus::Paused).await
        }
        Call::GetPageState { tab_id } => {
            page_tab(tab_id, &firewall).await?;
            let options = ObserveOptions {
                text_budget: settings.as_ref().map_or(ObserveOptions::default().text_budget, |s| {
                    s.agent.state_text_chars as usize
                }),
                ..ObserveOptions::default()
            };
            let observation = worker
                .observer
                .observe(&worker.sessions, &PerformanceClock, &ChromeTabs, tab_id, options)
                .await
                .map_err(|e| refuse(ErrorCode::Internal)(e.to_string()))?;
            Ok(FromExtension::Result {
                id,
                structured: Some(json!({"tab_id": tab_id, "text": observation.text})),
                content: vec![Content::Text { text: observation.text }],
                is_error: false,
            })
        }
        Call::Act { tab_id, action } => {
            let action = navigator_action(action)?;
            page_tab(tab_id, &firewall).await?;
            if let Some(holder) = worker.jobs.list().into_iter().find(|j| {
                j.tab_id == Some(tab_id) && j.status.is_live() && j.kind != JobKind::Reflection
            }) {
                return Err(Refusal {
                    code: ErrorCode::Busy,
                    message: format!(
                        "Job {} works in tab {tab_id}: stop it, or act in another tab.",
                        holder.id
                    ),
                });
            }
            // Guarded as a job's action is, until its page settled (`perform` waits).
            worker.jobs.hold_guard(worker, firewall.clone()).await;
            let outcome = hands(worker, &firewall).perform(tab_id, &action).await;
            worker.jobs.let_go(worker).await;
            Ok(FromExtension::Result {
                id,
                content: vec![Content::Text { text: outcome.message.clone() }],
                structured: serde_json::to_value(&outcome).ok(),
                is_error: !outcome.ok,
            })
        }
        Call::Screenshot { tab_id } => {
            page_tab(tab_id, &firewall).await?;
            let data = agent_engine::screenshot::capture(&worker.sessions, tab_id, None, 70)
                .await
                .map_err(|e| refuse(ErrorCode::Internal)(e.to_string()))?;
            Ok(FromExtension::Result {
                id,
                content: vec![Content::Image { data, mime_type: "image/jpeg".into() }],
                structured: None,
                is_error: false,
            })
        }
        Call::ListTabs => {
            let tabs = ChromeTabs.list().await.map_err(|e| {
                refuse(ErrorCode::Internal)(format!("The open tabs could not be listed: {e}"))
            })?;
            let lines: Vec<String> =
                tabs.iter().map(|t| format!("{}: {} ({})", t.id, t.title, t.url)).collect();
            Ok(FromExtension::Result {
                id,
                content: vec![Content::Text { text: lines.join("\n") }],
                structured: Some(json!({"tabs": tabs})),
                is_error: false,
            })
        }
        Call::ListWorkflows => {
            let listed =
                worker.workflows.list(worker, 0).await.map_err(refuse(ErrorCode::Internal))?;
            let WorkerEvent::Workflows { workflows, .. } = listed else {
                return Err(refuse(ErrorCode::Internal)(
                    "The workflows could not be listed.".into(),
                ));
            };
            let lines: Vec<String> = workflows
                .iter()
                .map(|w| {
                    let params: Vec<&str> = w.params.iter().map(|p| p.name.as_str()).collect();
                    format!(
                        "{} (id {}, version {}): params {}",
                        w.name,
                        w.id,
                        w.version,
                        params.join(", ")
                    )
                })
                .collect();
            Ok(FromExtension::Result {
                id,
                content: vec![Content::Text { text: lines.join("\n") }],
                structured: Some(json!({"workflows": workflows})),
                is_error: false,
            })
        }
        Call::ReplayWorkflow { workflow, params, tab_id, fast_path } => {
            let found = published
                .workflow(&workflow)
                .ok_or_else(|| {
                    not_found(format!(
                        "There is no workflow {workflow:?}: list_workflows says which there are."
                    ))
                })?
                .clone();
            check_params(tool, &found, &params).map_err(refuse(ErrorCode::InvalidParams))?;
            let settings = needs_settings(settings)?;
            let tab = tab_for(worker, &settings, tab_id, None).await?;
            admit(worker, JobKind::Replay, tab, &settings)?;
            let version = worker
                .workflows
                .latest(worker)
                .await
                .ok()
                .and_then(|all| all.into_iter().find(|w| w.id == found.id))
                .map(|w| w.version)
                .ok_or_else(|| not_found(format!("The workflow {workflow:?} is gone.")))?;
            let run_id = worker
                .workflows
                .start_job(worker, &found.id, version, tab, &params, fast_path, None, Some(client))
                .await
                .map_err(refuse(ErrorCode::Internal))?;
            waits.settled(&run_id, false).await
        }
        Call::RunPipeline { name, input, tab_id } => {
            if !published.pipelines.iter().any(|p| p.name == name) {
                return Err(not_found(crate::pipelines::unpublished(&name)));
            }
            let settings = needs_settings(settings)?;
            let tab = tab_for(worker, &settings, tab_id, None).await?;
            admit(worker, JobKind::Pipeline, tab, &settings)?;
            run_pipeline(&waits, &store, &name, input, tab, client).await
        }
        Call::JobStatus { job_id } => {
            job(worker, &job_id)?;
            let outcome = outcome(worker, &job_id).ok_or_else(|| unknown_job(&job_id))?;
            Ok(outcome.result(id))
        }
        Call::StopJob { job_id } => {
            job(worker, &job_id)?;
            worker.jobs.stop(worker, 0, &job_id).await.map_err(refuse(ErrorCode::Busy))?;
            // A running job stops at its next check: wait for that, a little.
            within(10_000.0, worker.jobs.wait_end(&job_id)).await;
            let outcome = outcome(worker, &job_id).ok_or_else(|| unknown_job(&job_id))?;
            Ok(outcome.result(id))
        }
    }
}

/// A run needs settings (a model and its key) as a panel's does.
fn needs_settings(settings: Option<Settings>) -> Result<Settings, Refusal> {
    settings.ok_or_else(|| Refusal {
        code: ErrorCode::Internal,
        message: "Choose a model and enter its API key in AlphaScout's Settings first.".into(),
    })
}

/// The job table's admission, asked first so a busy tab is refused as such (the runner
/// asks it again, with the same rules).
fn admit(worker: &Worker, kind: JobKind, tab: TabId, settings: &Settings) -> Result<(), Refusal> {
    let job = Job::new("mcp:new", kind, Some(tab));
    worker.jobs.admit(&job, settings).map_err(refuse(ErrorCode::Busy))
}

fn unknown_job(job_id: &str) -> Refusal {
    not_found(format!(
        "There is no job {job_id:?}: run_task, replay_workflow and run_pipeline give job ids."
    ))
}

fn job(worker: &Worker, job_id: &str) -> Result<JobSummary, Refusal> {
    worker.jobs.summary(job_id).ok_or_else(|| unknown_job(job_id))
}

/// `tab`, when it is open.
async fn known_tab(tab: TabId) -> Result<protocol::TabInfo, Refusal> {
    let tabs = ChromeTabs.list().await.map_err(|e| {
        refuse(ErrorCode::Internal)(format!("The open tabs could not be listed: {e}"))
    })?;
    tabs.into_iter()
        .find(|t| t.id == tab)
        .ok_or_else(|| not_found(format!("There is no tab {tab}: list_tabs says which are open.")))
}

/// `tab`, when it is open and shows a page the firewall lets the agent read.
async fn page_tab(tab: TabId, firewall: &Firewall) -> Result<(), Refusal> {
    let info = known_tab(tab).await?;
    firewall.check(&info.url).map_err(refuse(ErrorCode::Denied))
}

/// The tab a job works in: the one asked for, or a new one (at `url`, once the firewall
/// allows it, navigated under the job's guard so a redirect is checked too).
async fn tab_for(
    worker: &Rc<Worker>,
    settings: &Settings,
    asked: Option<TabId>,
    url: Option<&str>,
) -> Result<TabId, Refusal> {
    if let Some(tab) = asked {
        return known_tab(tab).await.map(|t| t.id);
    }
    let firewall = Firewall::new(settings);
    if let Some(url) = url {
        firewall.check(url).map_err(refuse(ErrorCode::Denied))?;
    }
    let tab = ChromeTabs
        .open("about:blank")
        .await
        .map_err(|e| refuse(ErrorCode::Internal)(format!("A new tab could not be opened: {e}")))?;
    if let Some(url) = url {
        // Guarded until the page settled; the job then guards its tab itself.
        worker.jobs.hold_guard(worker, firewall.clone()).await;
        let go = Action::GoToUrl { url: url.to_owned() };
        let went = hands(worker, &firewall).perform(tab, &go).await;
        worker.jobs.let_go(worker).await;
        if !went.ok {
            return Err(refuse(ErrorCode::Denied)(went.message));
        }
    }
    Ok(tab)
}

/// `action` as one Navigator action, checked against the Navigator's schema.
fn navigator_action(action: Value) -> Result<Action, Refusal> {
    let invalid = refuse(ErrorCode::InvalidParams);
    let schema = Schema::compile(action_schema()).map_err(|e| invalid(e.to_string()))?;
    if let Some(problem) = schema.validate(&action).into_iter().next() {
        return Err(invalid(format!("act's action{}: {}", problem.path, problem.message)));
    }
    serde_json::from_value(action).map_err(|e| invalid(format!("act's action: {e}")))
}

/// Where `job_id` stands, as a client reads it.
fn outcome(worker: &Worker, job_id: &str) -> Option<JobOutcome> {
    let summary = worker.jobs.summary(job_id)?;
    let mut outcome = JobOutcome::new(job_id, status_of(&summary));
    outcome.question = summary.question.clone();
    outcome.why = summary.why.clone();
    if outcome.status == Status::Asking && outcome.question.is_none() {
        // Paused for the person without a question (a provider error, the step limit):
        // what it needs is its reason.
        outcome.question = summary.why.clone();
    }
    match summary.kind {
        JobKind::Task => {
            if let Some(snapshot) = worker.tasks.session_snapshot(job_id) {
                outcome.run_id = Some(snapshot.run_id);
                outcome.session_id = Some(snapshot.session_id);
                if let TaskStatus::Done { answer } = snapshot.status {
                    outcome.answer = Some(Value::String(answer));
                }
            }
        }
        JobKind::Replay => {
            outcome.run_id = Some(job_id.to_owned());
            if let Some(progress) = worker.workflows.progress(job_id)
                && progress.status == JobStatus::Done
            {
                outcome.answer = Some(json!(progress.extracts));
            }
        }
        _ => {}
    }
    Some(outcome)
}

fn status_of(job: &JobSummary) -> Status {
    match job.status {
        JobStatus::Running => Status::Running,
        JobStatus::Paused if job.paused_by_user => Status::Paused,
        JobStatus::Paused => Status::Asking,
        JobStatus::Done => Status::Done,
        JobStatus::Failed => Status::Failed,
        JobStatus::Cancelled => Status::Stopped,
    }
}

/// A call waiting on a job, telling it progress when it asked for it.
struct Waits<'a> {
    worker: &'a Rc<Worker>,
    id: u64,
    progress: bool,
}

impl Waits<'_> {
    /// Waits until `job` ends or asks (a job the person paused is waited on), and answers
    /// where it stands; `resuming`: it was asking and must first be seen running again.
    async fn settled(&self, job: &str, resuming: bool) -> Result<FromExtension, Refusal> {
        let (worker, id) = (self.worker, self.id);
        if self.progress {
            worker.mcp.progress.borrow_mut().insert(id, (job.to_owned(), 0));
        }
        let status = || outcome(worker, job).map(|o| o.status);
        let gone = || !worker.mcp.is_open(id);
        if resuming {
            let running = || gone() || status() != Some(Status::Asking);
            within(10_000.0, worker.jobs.changes.until(running)).await;
        }
        let returns = || gone() || status().is_none_or(|s| s.settled() && s != Status::Paused);
        worker.jobs.changes.until(returns).await;
        worker.mcp.progress.borrow_mut().remove(&id);
        let outcome = outcome(worker, job).ok_or_else(|| unknown_job(job))?;
        Ok(outcome.result(id))
    }
}

/// Runs the published pipeline `name` as the side panel's `/run` does, telling progress per
/// step, and answers with its output.
async fn run_pipeline(
    waits: &Waits<'_>,
    store: &Store,
    name: &str,
    input: Value,
    tab: TabId,
    client: &str,
) -> Result<FromExtension, Refusal> {
    let (worker, id) = (waits.worker, waits.id);
    let host = &worker.mcp;
    let run = u32::MAX - host.pipeline_runs.get();
    host.pipeline_runs.set(host.pipeline_runs.get().wrapping_add(1) % (u32::MAX / 2));
    host.pipelines.borrow_mut().insert(run, id);
    if waits.progress {
        host.progress.borrow_mut().insert(id, (pipeline_job(run), 0));
    }
    let ran =
        crate::pipelines::run_published(worker, store, run, name, input, tab, Some(client)).await;
    host.pipelines.borrow_mut().remove(&run);
    let job_id = pipeline_job(run);
    let mut ran = ran.map_err(refuse(ErrorCode::Busy))?;
    let status = match ran.status {
        JobStatus::Done => Status::Done,
        JobStatus::Cancelled => Status::Stopped,
        _ => Status::Failed,
    };
    let mut outcome = JobOutcome::new(job_id, status);
    outcome.answer = Some(ran.run["output"].take()).filter(|o| !o.is_null());
    outcome.why = ran.why;
    Ok(outcome.result(id))
}
