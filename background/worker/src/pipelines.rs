//! Pipelines in the product: runs (from the Studio, or `/run` in the side panel on a
//! published one), their tools over the worker's tabs and `fetch`, cancel, and the stored
//! versions with the publish gate. The engine's `pipeline` module decides; this carries out.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use lean::{SortedMap, SortedSet};
use std::rc::Rc;

use agent_engine::jobs::{Job, JobKind, JobStatus, TAB_CLOSED};
use agent_engine::mcp::{McpClients, McpError, McpTool};
use agent_engine::observe::ObserveOptions;
use agent_engine::page_agent;
use agent_engine::pipeline::{
    Cancel, PipelineRun, PipelineTools, Problem, RunStatus, Runner, StepTrace, ToolCall,
    ToolFailure, check_publish, load, parsed,
};
use agent_engine::prompts::PromptSet;
use agent_engine::providers::Usage;
use agent_engine::run::{Actor, LlmTrace, PromptChars, SentPrompt, iso8601};
use protocol::agent::TaskStatus;
use protocol::jobs::JobSummary;
use protocol::settings::Settings;
use protocol::studio::StoredPipeline;
use protocol::workflow::ReplayControl;
use protocol::{TabId, WorkerEvent};
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock};
use crate::http::{FetchHttp, NoRedirectHttp};
use crate::store::Store;

/// Runs in flight (by the request that started them), and runs of versions not stored
/// yet, so a save right after a test run still counts it at the publish gate.
#[derive(Default)]
pub struct Pipelines {
    running: RefCell<SortedMap<u32, Rc<Cell<bool>>>>,
    unsaved_runs: RefCell<Vec<PipelineRun>>,
    /// Runs whose tab closed under them.
    closed: RefCell<SortedSet<u32>>,
}

/// The run's cancel flag, and its live view: each step's trace to every page.
struct Stop<'a> {
    flag: Rc<Cell<bool>>,
    worker: &'a Worker,
    id: u32,
}

impl Cancel for Stop<'_> {
    fn cancelled(&self) -> bool {
        self.flag.get()
    }

    fn step_finished(&self, trace: &StepTrace) {
        let step = serde_json::to_value(trace).unwrap_or_default();
        self.worker.ports.broadcast(&WorkerEvent::PipelineStep { run: self.id, step });
        self.worker.mcp.on_pipeline_step(self.id, trace);
    }
}

/// How many runs a stored version keeps for the gate.
const KEPT_RUNS: usize = 10;

/// The tools over this worker's tabs, its agent, its replays and `fetch`.
struct WorkerTools<'a> {
    worker: &'a Rc<Worker>,
    tab: Option<TabId>,
    /// The run's cancel flag: an agent task in flight is cancelled with it.
    stop: Rc<Cell<bool>>,
    /// The run's job id: tasks and replays it starts are its children.
    job: String,
    /// The MCP servers from Settings, tokens included (they stay in this worker), with a
    /// session each for the run.
    mcp: McpClients<'static, NoRedirectHttp>,
}

impl WorkerTools<'_> {
    fn tab(&self, asked: Option<TabId>) -> Result<TabId, ToolFailure> {
        asked.or(self.tab).ok_or_else(|| ToolFailure {
            message: "No tab to read: run the pipeline with a tab.".into(),
            recoverable: false,
        })
    }
}

fn failed(message: impl std::fmt::Display) -> ToolFailure {
    ToolFailure { message: message.to_string(), recoverable: true }
}

impl PipelineTools for WorkerTools<'_> {
    async fn call(&self, call: &ToolCall) -> Result<Value, ToolFailure> {
        match call {
            ToolCall::PageState { tab } => {
                let tab = self.tab(*tab)?;
                let observation = self
                    .worker
                    .observer
                    .observe(
                        &self.worker.sessions,
                        &PerformanceClock,
                        &ChromeTabs,
                        tab,
                        ObserveOptions::default(),
                    )
                    .await
                    .map_err(failed)?;
                Ok(json!({"url": observation.snapshot.url, "title": observation.snapshot.title,
                    "state": observation.text}))
            }
            ToolCall::Extract { tab, max_chars } => {
                let tab = self.tab(*tab)?;
                let max = max_chars.unwrap_or(8_000).clamp(200, 50_000);
                let expression = format!(
                    "({{...alphascout.readable({max}), url: location.href, title: document.title}})"
                );
                let read = page_agent::evaluate(&self.worker.sessions, tab, &expression)
                    .await
                    .map_err(failed)?;
                Ok(json!({"url": read["url"], "title": read["title"], "text": read["text"]}))
            }
            ToolCall::Http { method, url, headers, body } => {
                fetch(method, url, headers, body).await
            }
            ToolCall::AgentTask { task, tab } => self.agent_task(task, self.tab(*tab)?).await,
            ToolCall::WorkflowReplay { workflow, params } => {
                self.workflow_replay(workflow, params, self.tab(None)?).await
            }
            ToolCall::Mcp { server, name, arguments } => {
                self.mcp.call_tool(server, name, arguments).await.map_err(mcp_failure)
            }
        }
    }

    fn mcp_servers(&self) -> Vec<String> {
        self.mcp.names()
    }

    async fn list_mcp_tools(&self, server: &str) -> Result<Vec<McpTool>, ToolFailure> {
        self.mcp.list_tools(server).await.map_err(mcp_failure)
    }
}

fn mcp_failure(error: McpError) -> ToolFailure {
    ToolFailure { message: error.message, recoverable: error.recoverable }
}

impl WorkerTools<'_> {
    /// Starts `task` as a new conversation in `tab`, as the side panel would (so the panel
    /// shows it, and a question it asks is answered there), as a job of this run's, and
    /// awaits its end. Cancelling the pipeline stops it.
    async fn agent_task(&self, task: &str, tab: TabId) -> Result<Value, ToolFailure> {
        let worker = self.worker;
        let session =
            worker.tasks.start_job(worker, tab, task, None, Some(&self.job), None).await.map_err(
                |message| ToolFailure {
                    message: format!("The agent task did not start: {message}"),
                    recoverable: true,
                },
            )?;
        let ended = worker.jobs.wait_end(&session).await;
        if self.stop.get() {
            return Err(ToolFailure { message: "Cancelled.".into(), recoverable: true });
        }
        let snapshot = worker.tasks.session_snapshot(&session);
        match snapshot.map(|s| (s.status, s.run_id)) {
            Some((TaskStatus::Done { answer }, run_id)) => {
                Ok(json!({"answer": answer, "run_id": run_id}))
            }
            Some((TaskStatus::Failed { error }, _)) => {
                Err(failed(format!("The agent task failed: {error}")))
            }
            Some((TaskStatus::Cancelled, _)) => Err(failed("The agent task was cancelled.")),
            _ => Err(failed(format!(
                "The agent task ended without an answer{}.",
                ended.and_then(|e| e.why).map(|why| format!(": {why}")).unwrap_or_default()
            ))),
        }
    }

    /// Replays the latest version of `workflow` (its id or its name) in the run's tab, as
    /// the side panel would (so the panel shows it, and a question it asks is answered
    /// there), as a job of this run's, and awaits its extracts. Cancelling the pipeline
    /// stops the replay.
    async fn workflow_replay(
        &self,
        workflow: &str,
        params: &Value,
        tab: TabId,
    ) -> Result<Value, ToolFailure> {
        let worker = self.worker;
        let flows = &worker.workflows;
        let refused = |message: String| ToolFailure { message, recoverable: false };
        let listed = match flows.list(worker, 0).await.map_err(failed)? {
            WorkerEvent::Workflows { workflows, .. } => workflows,
            _ => Vec::new(),
        };
        let found = listed
            .iter()
            .find(|w| w.id == workflow)
            .or_else(|| listed.iter().find(|w| w.name == workflow))
            .ok_or_else(|| refused(format!("There is no workflow {workflow:?}.")))?;
        let given: BTreeMap<String, String> = match params {
            Value::Null => BTreeMap::new(),
            Value::Object(map) => lean::map_of(map.iter().map(|(name, value)| {
                let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                (name.clone(), text)
            })),
            _ => return Err(refused("A replay's params must be an object of values.".into())),
        };
        let run_id = flows
            .start_job(worker, &found.id, found.version, tab, &given, true, Some(&self.job), None)
            .await
            .map_err(|message| failed(format!("The replay did not start: {message}")))?;
        worker.jobs.wait_end(&run_id).await;
        if self.stop.get() {
            return Err(ToolFailure { message: "Cancelled.".into(), recoverable: true });
        }
        let now = flows.progress(&run_id).ok_or_else(|| failed("The replay is gone."))?;
        match now.status {
            JobStatus::Done => Ok(json!({"extracts": now.extracts, "run_id": run_id,
                "model_calls": now.model_calls, "calls_saved": now.calls_saved})),
            JobStatus::Failed => {
                let why = now.why.unwrap_or_default();
                Err(failed(format!("The replay failed: {why}")))
            }
            _ => Err(failed("The replay was stopped.")),
        }
    }
}

/// One HTTP request (the engine checked the origin against `http_origins`).
async fn fetch(
    method: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    body: &Option<Value>,
) -> Result<Value, ToolFailure> {
    let js = |e: JsValue| failed(chrome::error_message(&e));
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let sent = web_sys::Headers::new().map_err(js)?;
    for (name, value) in headers {
        sent.append(name, value).map_err(js)?;
    }
    init.set_headers(&sent);
    if let Some(body) = body {
        let text = match body {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        init.set_body(&JsValue::from_str(&text));
    }
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    // The extension asks for no host permissions: a server must allow it (CORS).
    let unreachable = |e: JsValue| {
        failed(format!(
            "The request to {url} got no answer ({}): the server could not be reached, or it does not allow requests from the extension (CORS).",
            chrome::error_message(&e)
        ))
    };
    let response: web_sys::Response = JsFuture::from(scope.fetch_with_str_and_init(url, &init))
        .await
        .map_err(unreachable)?
        .unchecked_into();
    let text = JsFuture::from(response.text().map_err(js)?).await.map_err(js)?;
    let text = text.as_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok(json!({"status": response.status(), "body": body}))
}

async fn settings(store: &Store) -> Result<(Settings, PromptSet), String> {
    let settings =
        store.settings().await?.ok_or("Choose a model and enter its API key in Settings first.")?;
    let prompts = PromptSet::with_overrides(&settings.prompt_overrides)
        .map_err(|e| format!("An edited prompt file has a problem: {e}"))?;
    Ok((settings, prompts))
}

/// Runs the parsed pipeline `file` on `input` in `tab`, stores each llm step's trace, and
/// answers with the run. `driven_by` names the MCP client that asked for it.
pub async fn run(
    worker: &Rc<Worker>,
    store: &Store,
    id: u32,
    file: Result<Value, Problem>,
    input: Value,
    tab: Option<TabId>,
    driven_by: Option<&str>,
) -> Result<WorkerEvent, String> {
    let (settings, prompts) = settings(store).await?;
    let loaded =
        file.map_err(|p| vec![p]).and_then(|f| load(&f, &prompts)).map_err(|problems| {
            let list: Vec<String> = problems.iter().map(Problem::to_string).collect();
            format!("The pipeline does not load: {}", list.join("; "))
        })?;
    let job = job_id(id);
    worker.jobs.admit(&Job::new(job.clone(), JobKind::Pipeline, tab), &settings)?;
    let stop = Rc::new(Cell::new(false));
    worker.pipelines.running.borrow_mut().insert(id, stop.clone());
    let title = loaded.pipeline.id.clone();
    let summary = |status, why| JobSummary {
        driven_by: driven_by.map(str::to_owned),
        ..summary(&job, &title, tab, status, why)
    };
    worker.jobs.put(worker, summary(JobStatus::Running, None), None);
    let mut models = vec![settings.models.navigator.clone()];
    models.extend([settings.models.planner.clone(), settings.models.thinking.clone()]);
    let tools = WorkerTools {
        worker,
        tab,
        stop: stop.clone(),
        job: job.clone(),
        mcp: McpClients::new(&NoRedirectHttp, settings.mcp_servers.clone()),
    };
    let cancel = Stop { flag: stop, worker, id };
    let runner = Runner {
        prompts: &prompts,
        http: &FetchHttp,
        clock: &PerformanceClock,
        tools: &tools,
        cancel: &cancel,
        models: &models,
        repair_model: settings.models.repair.as_ref(),
        repair_budget: settings.agent.repair_retries.max(1) * 4,
        redactions: &settings.agent.trace_redactions,
    };
    let started = js_sys::Date::now();
    let run = runner.run(&loaded.pipeline, input, json!({"tab": tab}), true).await;
    worker.pipelines.running.borrow_mut().remove(&id);
    let (status, why) = match &run.status {
        RunStatus::Ok => (JobStatus::Done, None),
        RunStatus::Failed => (JobStatus::Failed, run.error.as_ref().map(ToString::to_string)),
        RunStatus::Cancelled => (JobStatus::Cancelled, None),
    };
    let mut ended = worker.pipelines.closed.borrow_mut().remove(&id);
    if let (false, JobStatus::Failed, Some(tab)) = (ended, status, tab) {
        ended = chrome::tab_is_gone(tab).await;
    }
    let (status, why) =
        if ended { (JobStatus::Failed, Some(TAB_CLOSED.into())) } else { (status, why) };
    worker.jobs.put(worker, summary(status, why), None);
    let run_id = format!("pipeline:{}", chrome::random_uuid());
    for (n, trace) in run.steps.iter().enumerate() {
        let Some(call) = &trace.llm else { continue };
        let usage = call.usage;
        let llm = LlmTrace {
            id: chrome::random_uuid(),
            run_id: run_id.clone(),
            step: n as u32,
            role: Actor::System,
            prompt_id: call.prompt_id.clone(),
            variant: call.prompt_variant.clone(),
            prompt_hash: call.prompt_hash.clone(),
            revision_hash: call.revision_hash.clone(),
            params: json!({"pipeline": run.pipeline_id, "pipelineHash": run.pipeline_hash,
                "step": trace.step_id, "input": trace.input}),
            redacted: vec![],
            provider: call.provider.clone(),
            model: call.model.clone(),
            usage: Usage { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens },
            cost: 0.0,
            started_at: iso8601(started),
            duration_ms: trace.timing_ms,
            attempts: call.attempts.clone(),
            error: trace.error.as_ref().map(ToString::to_string),
            chars: PromptChars { total: call.prompt_text.chars().count(), ..Default::default() },
            prompt: SentPrompt {
                system: call.prompt_text.clone(),
                user: agent_engine::executor::USER_TURN.into(),
                temperature: call.temperature,
                ..Default::default()
            },
            fallback: None,
        };
        store.put_trace(&llm).await.map_err(|e| format!("A step's trace was not stored: {e}"))?;
    }
    remember_run(worker, store, &run).await?;
    let value = serde_json::to_value(&run).map_err(|e| e.to_string())?;
    Ok(WorkerEvent::PipelineResult { id, run: value })
}

/// Keeps the run with the stored version of the same hash, or in memory until one is saved.
async fn remember_run(worker: &Worker, store: &Store, run: &PipelineRun) -> Result<(), String> {
    let rows = stored(store).await?;
    let value = serde_json::to_value(run).map_err(|e| e.to_string())?;
    match rows.into_iter().filter(|r| r.hash == run.pipeline_hash).max_by_key(|r| r.version) {
        Some(mut row) => {
            row.runs.push(value);
            let excess = row.runs.len().saturating_sub(KEPT_RUNS);
            row.runs.drain(..excess);
            put(store, &row).await
        }
        None => {
            let mut unsaved = worker.pipelines.unsaved_runs.borrow_mut();
            unsaved.push(run.clone());
            let excess = unsaved.len().saturating_sub(KEPT_RUNS * 5);
            unsaved.drain(..excess);
            Ok(())
        }
    }
}

/// The newest published version of `name`, run in `tab`.
pub async fn run_published(
    worker: &Rc<Worker>,
    store: &Store,
    id: u32,
    name: &str,
    input: Value,
    tab: TabId,
    driven_by: Option<&str>,
) -> Result<WorkerEvent, String> {
    let Some(row) = published(store).await?.into_iter().find(|r| r.id == name) else {
        return Err(unpublished(name));
    };
    let file = parsed(&row.text, row.pipeline.as_ref());
    run(worker, store, id, file, input, Some(tab), driven_by).await
}

/// Said when no published pipeline is named `name`.
pub fn unpublished(name: &str) -> String {
    format!("No published pipeline is named {name:?}: publish it in the Prompt Studio first.")
}

/// The newest published version of every pipeline that has one.
pub async fn published(store: &Store) -> Result<Vec<StoredPipeline>, String> {
    let mut newest: SortedMap<String, StoredPipeline> = SortedMap::new();
    for row in stored(store).await?.into_iter().filter(|r| r.published) {
        if newest.get(&row.id).is_none_or(|kept| kept.version < row.version) {
            newest.insert(row.id.clone(), row);
        }
    }
    Ok(newest.into_values().collect())
}

/// Stops the run started by request `run` after its current step; a task or replay it
/// awaits is stopped too.
pub fn cancel(worker: &Rc<Worker>, id: u32, run: u32) -> Result<WorkerEvent, String> {
    let stop = worker.pipelines.running.borrow().get(&run).cloned();
    let Some(stop) = stop else { return Err("That pipeline run is not running.".into()) };
    stop.set(true);
    for (child, kind) in worker.jobs.children(&job_id(run)) {
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let stopped = match kind {
                JobKind::Task => worker.tasks.cancel(&worker, &child).await,
                JobKind::Replay => {
                    worker.workflows.control(&worker, &child, ReplayControl::Cancel).await
                }
                _ => return,
            };
            if let Err(error) = stopped {
                chrome::log(&format!("a pipeline's {kind:?} was not stopped: {error}"));
            }
        });
    }
    Ok(WorkerEvent::Done { id })
}

/// The Jobs view's Stop for job `job` (`pipeline:<n>`).
pub fn stop(worker: &Rc<Worker>, id: u32, job: &str) -> Result<WorkerEvent, String> {
    let run = job.strip_prefix("pipeline:").and_then(|n| n.parse().ok());
    let run = run.ok_or("That pipeline run is not known.")?;
    cancel(worker, id, run)
}

/// The run's tab closed: it stops, and ends saying why.
pub fn tab_closed(worker: &Rc<Worker>, job: &str) {
    if let Some(run) = job.strip_prefix("pipeline:").and_then(|n| n.parse().ok()) {
        worker.pipelines.closed.borrow_mut().insert(run);
        let _ = cancel(worker, 0, run);
    }
}

/// A pipeline run's id among the jobs.
fn job_id(request: u32) -> String {
    format!("pipeline:{request}")
}

fn summary(
    job: &str,
    title: &str,
    tab: Option<TabId>,
    status: JobStatus,
    why: Option<String>,
) -> JobSummary {
    JobSummary { why, ..JobSummary::new(job, JobKind::Pipeline, tab, title, status) }
}

/// Stores `text` (with its `pipeline` as parsed by the sender) as the next version of its
/// pipeline; with `publish`, only when the publish gate has no error (its warnings come
/// back either way).
pub async fn save(
    worker: &Worker,
    store: &Store,
    id: u32,
    text: &str,
    pipeline: Option<&Value>,
    publish: bool,
) -> Result<WorkerEvent, String> {
    let (_, prompts) = settings(store).await?;
    let rows = stored(store).await?;
    let mut runs: Vec<PipelineRun> = rows
        .iter()
        .flat_map(|r| r.runs.iter())
        .filter_map(|r| serde_json::from_value(r.clone()).ok())
        .collect();
    runs.extend(worker.pipelines.unsaved_runs.borrow().iter().cloned());
    let refused = |errors, warnings| WorkerEvent::PipelineSaved {
        id,
        version: 0,
        published: false,
        errors,
        warnings,
    };
    let file = match parsed(text, pipeline) {
        Ok(file) => file,
        Err(problem) => return Ok(refused(vec![problem], vec![])),
    };
    let report = check_publish(&file, &prompts, &runs);
    let (Some(hash), Ok(loaded)) = (report.pipeline_hash.clone(), load(&file, &prompts)) else {
        return Ok(refused(report.errors, report.warnings));
    };
    if publish && report.blocked() {
        return Ok(refused(report.errors, report.warnings));
    }
    let pipeline_id = loaded.pipeline.id.clone();
    let version =
        rows.iter().filter(|r| r.id == pipeline_id).map(|r| r.version).max().unwrap_or(0) + 1;
    let own_runs: Vec<Value> = runs
        .iter()
        .filter(|r| r.pipeline_hash == hash && r.status != RunStatus::Cancelled)
        .rev()
        .take(KEPT_RUNS)
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    let row = StoredPipeline {
        id: pipeline_id,
        version,
        text: text.to_owned(),
        pipeline: Some(file),
        hash,
        saved_at: iso8601(js_sys::Date::now()),
        published: publish,
        runs: own_runs.into_iter().rev().collect(),
    };
    put(store, &row).await?;
    // Published or not, this version may add, rename or withdraw a pipeline's tool.
    worker.mcp.tools_changed();
    Ok(WorkerEvent::PipelineSaved {
        id,
        version,
        published: publish,
        errors: vec![],
        warnings: report.warnings,
    })
}

pub async fn list(store: &Store, id: u32) -> Result<WorkerEvent, String> {
    Ok(WorkerEvent::Pipelines { id, pipelines: stored(store).await? })
}

async fn stored(store: &Store) -> Result<Vec<StoredPipeline>, String> {
    let values = capture_db::all(&store.database(), capture_db::PIPELINES)
        .await
        .map_err(|e| format!("The pipelines could not be read: {e}"))?;
    Ok(values.into_iter().filter_map(|v| capture_db::decode(v).ok()).collect())
}

async fn put(store: &Store, row: &StoredPipeline) -> Result<(), String> {
    capture_db::put(&store.database(), capture_db::PIPELINES, None, row)
        .await
        .map_err(|e| format!("The pipeline was not stored: {e}"))
}
