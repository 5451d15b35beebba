//! Pipelines in the product: runs (from the Studio, or `/run` in the side panel on a
//! published one), their tools over the worker's tabs and `fetch`, cancel, and the stored
//! versions with the publish gate. The engine's `pipeline` module decides, in a wasm module
//! of its own (`authoring`); this carries out.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use lean::{SortedMap, SortedSet};
use std::rc::Rc;

use agent_engine::jobs::{Job, JobKind, JobStatus, TAB_CLOSED};
use agent_engine::observe::ObserveOptions;
use agent_engine::page_agent;
use agent_engine::pipeline::{Problem, ToolCall, ToolFailure, parsed};
use agent_engine::run::iso8601;
use protocol::agent::TaskStatus;
use protocol::jobs::JobSummary;
use protocol::settings::Settings;
use protocol::studio::StoredPipeline;
use protocol::workflow::ReplayControl;
use protocol::{TabId, WorkerEvent};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::future_to_promise;

use crate::Worker;
use crate::authoring::{self, Host};
use crate::chrome::{self, ChromeTabs, PerformanceClock};
use crate::store::Store;

/// Runs in flight (by the request that started them), and runs of versions not stored
/// yet, so a save right after a test run still counts it at the publish gate.
#[derive(Default)]
pub struct Pipelines {
    running: RefCell<SortedMap<u32, Rc<Cell<bool>>>>,
    unsaved_runs: RefCell<Vec<Value>>,
    /// Runs whose tab closed under them.
    closed: RefCell<SortedSet<u32>>,
}

/// How many runs a stored version keeps for the gate.
const KEPT_RUNS: usize = 10;

/// The tools over this worker's tabs, its agent, its replays and `fetch`.
struct WorkerTools {
    worker: Rc<Worker>,
    tab: Option<TabId>,
    /// The run's cancel flag: an agent task in flight is cancelled with it.
    stop: Rc<Cell<bool>>,
    /// The run's job id: tasks and replays it starts are its children.
    job: String,
}

impl WorkerTools {
    fn tab(&self, asked: Option<TabId>) -> Result<TabId, ToolFailure> {
        asked.or(self.tab).ok_or_else(|| ToolFailure {
            message: "No tab to read: run the pipeline with a tab.".into(),
            recoverable: false,
        })
    }

    /// Carries out a tool call on this worker's tabs (the engine makes requests itself).
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
            ToolCall::AgentTask { task, tab } => self.agent_task(task, self.tab(*tab)?).await,
            ToolCall::WorkflowReplay { workflow, params } => {
                self.workflow_replay(workflow, params, self.tab(None)?).await
            }
            ToolCall::Http { .. } | ToolCall::Mcp { .. } => {
                Err(failed("The pipeline engine makes requests itself."))
            }
        }
    }

    /// Starts `task` as a new conversation in `tab`, as the side panel would (so the panel
    /// shows it, and a question it asks is answered there), as a job of this run's, and
    /// awaits its end. Cancelling the pipeline stops it.
    async fn agent_task(&self, task: &str, tab: TabId) -> Result<Value, ToolFailure> {
        let worker = &self.worker;
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
        let worker = &self.worker;
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

fn failed(message: impl std::fmt::Display) -> ToolFailure {
    ToolFailure { message: message.to_string(), recoverable: true }
}

async fn settings(store: &Store) -> Result<Settings, String> {
    Ok(store.settings().await?.ok_or("Choose a model and enter its API key in Settings first.")?)
}

/// A finished run, how it ended (by its own account: a closed tab is the job's), and its
/// error as a sentence.
pub struct Ran {
    pub run: Value,
    pub status: JobStatus,
    pub why: Option<String>,
}

impl Ran {
    /// What the Studio and the panel are sent.
    pub fn event(self, id: u32) -> WorkerEvent {
        WorkerEvent::PipelineResult { id, run: self.run }
    }
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
) -> Result<Ran, String> {
    let settings = settings(store).await?;
    let file = file.map_err(|problem| format!("The pipeline does not load: {problem}"))?;
    let loaded = authoring::load(&file, &settings.prompt_overrides).await?;
    let job = job_id(id);
    worker.jobs.admit(&Job::new(job.clone(), JobKind::Pipeline, tab), &settings)?;
    let stop = Rc::new(Cell::new(false));
    worker.pipelines.running.borrow_mut().insert(id, stop.clone());
    let summary = |status, why| JobSummary {
        driven_by: driven_by.map(str::to_owned),
        ..summary(&job, &loaded.id, tab, status, why)
    };
    worker.jobs.put(worker, summary(JobStatus::Running, None), None);
    let tools = WorkerTools { worker: worker.clone(), tab, stop: stop.clone(), job: job.clone() };
    let host = host(worker, id, tools, stop);
    let run_id = format!("pipeline:{}", chrome::random_uuid());
    let request = json!({"file": file, "settings": settings, "keys": settings.keys(),
        "input": input, "context": {"tab": tab}, "run_id": run_id});
    let ran = authoring::run(&request, &host).await;
    drop(host);
    worker.pipelines.running.borrow_mut().remove(&id);
    let mut ran = match ran {
        Ok(ran) => ran,
        Err(error) => {
            worker.jobs.put(worker, summary(JobStatus::Failed, Some(error.clone())), None);
            return Err(error);
        }
    };
    let why = ran["why"].as_str().map(str::to_owned);
    let status = match ran["run"]["status"].as_str() {
        Some("ok") => JobStatus::Done,
        Some("cancelled") => JobStatus::Cancelled,
        _ => JobStatus::Failed,
    };
    let failed_why = if status == JobStatus::Failed { why.clone() } else { None };
    let ran_status = status;
    let mut ended = worker.pipelines.closed.borrow_mut().remove(&id);
    if let (false, JobStatus::Failed, Some(tab)) = (ended, status, tab) {
        ended = chrome::tab_is_gone(tab).await;
    }
    let (status, job_why) =
        if ended { (JobStatus::Failed, Some(TAB_CLOSED.into())) } else { (status, failed_why) };
    worker.jobs.put(worker, summary(status, job_why), None);
    if let Value::Array(traces) = ran["traces"].take() {
        for trace in &traces {
            store
                .put_trace_value(trace)
                .await
                .map_err(|e| format!("A step's trace was not stored: {e}"))?;
        }
    }
    let run = ran["run"].take();
    remember_run(worker, store, &run).await?;
    Ok(Ran { run, status: ran_status, why })
}

/// What a run lends the pipeline engine: its tools, its cancel flag, and its live view (each
/// step's trace to every page).
fn host(worker: &Rc<Worker>, id: u32, tools: WorkerTools, stop: Rc<Cell<bool>>) -> Host {
    let answered = |answer: Result<Value, ToolFailure>| match answer {
        Ok(value) => Ok(JsValue::from_str(&value.to_string())),
        Err(failure) => Err(JsValue::from_str(&lean::write_json(&failure).unwrap_or_default())),
    };
    let tools = Rc::new(tools);
    let tool = Closure::<dyn Fn(String) -> js_sys::Promise>::new(move |call: String| {
        let tools = tools.clone();
        future_to_promise(async move {
            match serde_json::from_str::<ToolCall>(&call) {
                Ok(call) => answered(tools.call(&call).await),
                Err(e) => answered(Err(failed(format!("A tool call this cannot read: {e}")))),
            }
        })
    });
    let step = {
        let worker = worker.clone();
        Closure::<dyn Fn(String)>::new(move |trace: String| {
            let step: Value = serde_json::from_str(&trace).unwrap_or_default();
            worker.mcp.on_pipeline_step(id, &step);
            worker.ports.broadcast(&WorkerEvent::PipelineStep { run: id, step });
        })
    };
    Host::new()
        .with("tool", tool)
        .with("cancelled", Closure::<dyn Fn() -> bool>::new(move || stop.get()))
        .with("step", step)
}

/// Keeps the run with the stored version of the same hash, or in memory until one is saved.
async fn remember_run(worker: &Worker, store: &Store, run: &Value) -> Result<(), String> {
    let rows = stored(store).await?;
    let hash = run["pipeline_hash"].as_str().unwrap_or_default();
    match rows.into_iter().filter(|r| r.hash == hash).max_by_key(|r| r.version) {
        Some(mut row) => {
            row.runs.push(run.clone());
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
) -> Result<Ran, String> {
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
    let settings = settings(store).await?;
    let rows = stored(store).await?;
    let mut runs: Vec<Value> = rows.iter().flat_map(|r| r.runs.iter()).cloned().collect();
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
    let mut report = authoring::check(&file, &settings.prompt_overrides, &runs).await?;
    let problems =
        |list: Value| -> Vec<Problem> { serde_json::from_value(list).unwrap_or_default() };
    let (errors, warnings) =
        (problems(report["errors"].take()), problems(report["warnings"].take()));
    let (Some(hash), Some(pipeline_id)) = (report["hash"].as_str(), report["id"].as_str()) else {
        return Ok(refused(errors, warnings));
    };
    if publish && !errors.is_empty() {
        return Ok(refused(errors, warnings));
    }
    let version =
        rows.iter().filter(|r| r.id == pipeline_id).map(|r| r.version).max().unwrap_or(0) + 1;
    let own_runs: Vec<Value> = runs
        .iter()
        .filter(|r| r["pipeline_hash"] == hash && r["status"] != "cancelled")
        .rev()
        .take(KEPT_RUNS)
        .cloned()
        .collect();
    let row = StoredPipeline {
        id: pipeline_id.to_owned(),
        version,
        text: text.to_owned(),
        pipeline: Some(file),
        hash: hash.to_owned(),
        saved_at: iso8601(js_sys::Date::now()),
        published: publish,
        runs: own_runs.into_iter().rev().collect(),
    };
    put(store, &row).await?;
    // Published or not, this version may add, rename or withdraw a pipeline's tool.
    worker.mcp.tools_changed();
    Ok(WorkerEvent::PipelineSaved { id, version, published: publish, errors: vec![], warnings })
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
