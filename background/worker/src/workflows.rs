//! Workflows in the worker: reflects a stopped recording into a workflow, and replays a
//! workflow in a tab with the engine's [`Replayer`], capturing it as an `AgentRun` like a
//! task (so the annotation page shows it) and broadcasting its progress to every page.
//!
//! A replay's state is stored after every step (`replays`), so Chrome may stop the worker at
//! any moment: a replay that was running comes back paused, numbered on, and resumable.
//! One agent thing runs at a time: a replay is refused while a task runs, and a task while a
//! replay runs.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use agent_engine::browser::CdpBrowser;
use agent_engine::executor::{CallContext, Capture, CaptureError, Checkpoint, Control};
use agent_engine::firewall::Firewall;
use agent_engine::observe::ObserveOptions;
use agent_engine::prompts::PromptSet;
use agent_engine::repair::RepairLedger;
use agent_engine::run::{AgentEvent, AgentRun, LlmTrace, StepRecord, iso8601};
use agent_engine::workflow::recording::Recording;
use agent_engine::workflow::reflect::{ReflectError, Reflector, StepReflection, build_workflow};
use agent_engine::workflow::replay::{ReplayLimits, ReplayState, ReplayStatus, Replayer};
use agent_engine::workflow::schema::Workflow;
use protocol::settings::Settings;
use protocol::workflow::{
    ParamSummary, ReflectProgress, ReflectStage, ReplayControl, ReplayProgress, WorkflowSummary,
};
use protocol::{TabId, WorkerEvent};
use serde::{Deserialize, Serialize};

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock};
use crate::http::FetchHttp;
use crate::store::Store;
use crate::tasks::SEARCH_URL;
use crate::workflow_store::WorkflowDb;

/// What the `replays` store keeps of a replay: enough to resume it after a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredReplay {
    workflow_id: String,
    version: u32,
    workflow_name: String,
    subtasks: u32,
    fast_path: bool,
    /// Why it is paused, when the worker paused it.
    #[serde(default)]
    why: Option<String>,
    state: ReplayState,
}

impl StoredReplay {
    fn progress(&self) -> ReplayProgress {
        let state = &self.state;
        let (status, why) = match &state.status {
            ReplayStatus::Running => ("running", None),
            ReplayStatus::Paused => ("paused", self.why.clone()),
            ReplayStatus::Cancelled => ("cancelled", None),
            ReplayStatus::Done => ("done", None),
            ReplayStatus::Failed { subtask, why } => {
                ("failed", Some(format!("Subtask {subtask:?}: {why}")))
            }
        };
        ReplayProgress {
            run_id: state.run.id.clone(),
            workflow_id: self.workflow_id.clone(),
            version: self.version,
            workflow_name: self.workflow_name.clone(),
            tab_id: state.tab,
            subtask: state.subtask as u32,
            subtasks: self.subtasks,
            step: state.step,
            model_calls: state.model_calls,
            calls_saved: state.calls_saved,
            status: status.to_owned(),
            why,
            extracts: state.extracts.clone(),
            question: state.question.clone(),
        }
    }

    fn is_live(&self) -> bool {
        matches!(self.state.status, ReplayStatus::Running | ReplayStatus::Paused)
    }
}

/// The reflections and the replay of this worker.
#[derive(Default)]
pub struct Workflows {
    db: RefCell<Option<Rc<WorkflowDb>>>,
    /// The control of the replay under way, if one is.
    running: RefCell<Option<Rc<Control>>>,
    /// The latest state of the running or paused replay (or the last one that ended).
    current: RefCell<Option<StoredReplay>>,
    /// The current replay's secret values, in memory only.
    secrets: RefCell<BTreeMap<String, String>>,
    /// Recordings being reflected now.
    reflecting: RefCell<Vec<String>>,
    /// Pass-A results by recording, kept so a failed reflection resumes where it stopped.
    pass_a: RefCell<BTreeMap<String, Vec<Option<StepReflection>>>>,
}

impl Workflows {
    async fn db(&self, worker: &Worker) -> Result<Rc<WorkflowDb>, String> {
        if let Some(db) = self.db.borrow().clone() {
            return Ok(db);
        }
        let db = Rc::new(WorkflowDb::new(&*worker.tasks.store().await?));
        Ok(self.db.borrow_mut().get_or_insert(db).clone())
    }

    /// Whether a live (running or paused) replay holds its tab.
    pub fn holds_tab(&self) -> bool {
        self.replay_running() || self.current.borrow().as_ref().is_some_and(StoredReplay::is_live)
    }

    /// Whether a replay runs now (a task must wait).
    pub fn replay_running(&self) -> bool {
        self.running.borrow().is_some()
    }

    pub fn snapshot(&self) -> Option<Box<ReplayProgress>> {
        self.current.borrow().as_ref().map(|r| Box::new(r.progress()))
    }

    /// The replay as an event (`id` when it answers a request).
    pub fn event(&self, id: Option<u32>) -> WorkerEvent {
        WorkerEvent::Replay { id, replay: self.snapshot() }
    }

    fn broadcast(&self, worker: &Worker) {
        worker.ports.broadcast(&self.event(None));
    }

    /// After a (re)start: a replay stored as running was cut off; it comes back paused.
    pub async fn restore(worker: Rc<Worker>) {
        let flows = &worker.workflows;
        let db = match flows.db(&worker).await {
            Ok(db) => db,
            Err(error) => return chrome::log(&error),
        };
        let rows: Vec<StoredReplay> = match db.replays().await {
            Ok(rows) => rows,
            Err(error) => return chrome::log(&error),
        };
        let Some(mut row) = rows
            .into_iter()
            .filter(StoredReplay::is_live)
            .max_by(|a, b| a.state.run.updated_at.cmp(&b.state.run.updated_at))
        else {
            return;
        };
        if flows.current.borrow().is_some() {
            return;
        }
        if row.state.status == ReplayStatus::Running {
            row.state.status = ReplayStatus::Paused;
            row.state.run.agent_status = "paused".into();
            row.why =
                Some("Chrome stopped the extension's worker mid-replay; resume to go on.".into());
            // A step stored just before the worker stopped is kept, and numbering goes on.
            if let Ok(count) = db.step_count(&row.state.run.id).await {
                row.state.step = row.state.step.max(count);
            }
            if let Err(error) = db.put_replay(&row.state.run.id, &row).await {
                chrome::log(&error);
            }
            if let Ok(store) = worker.tasks.store().await {
                let _ = store.put_run(&row.state.run).await;
            }
        }
        *flows.current.borrow_mut() = Some(row);
        flows.broadcast(&worker);
    }

    /// Starts reflecting a stopped recording; progress is broadcast.
    pub async fn reflect(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        recording_id: &str,
    ) -> Result<WorkerEvent, String> {
        let db = self.db(worker).await?;
        let recording = db.stopped_recording(recording_id).await?;
        if recording.steps.is_empty() {
            return Err(ReflectError::Empty.to_string());
        }
        if self.reflecting.borrow().iter().any(|r| r == recording_id) {
            return Err("That recording is being reflected already.".into());
        }
        let store = worker.tasks.store().await?;
        let settings = store
            .settings()
            .await?
            .ok_or("Choose a model and enter its API key in Settings first.")?;
        let prompts = prompt_set(&settings)?;
        self.reflecting.borrow_mut().push(recording_id.to_owned());
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let id = recording.id.clone();
            reflect_recording(&worker, &db, &store, &settings, &prompts, recording).await;
            worker.workflows.reflecting.borrow_mut().retain(|r| *r != id);
        });
        Ok(WorkerEvent::Done { id })
    }

    /// Starts a replay of `workflow_id` version `version` in `tab`.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_replay(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        workflow_id: &str,
        version: u32,
        tab: TabId,
        params: &BTreeMap<String, String>,
        fast_path: bool,
    ) -> Result<WorkerEvent, String> {
        if worker.tasks.task_running() {
            return Err("A task is running: pause or stop it before replaying a workflow.".into());
        }
        if self.replay_running() {
            return Err("A replay is running already: wait for it or stop it first.".into());
        }
        if self.current.borrow().as_ref().is_some_and(|r| r.state.status == ReplayStatus::Paused) {
            return Err("A replay is paused: resume or stop it before starting another.".into());
        }
        let db = self.db(worker).await?;
        let workflow = db.workflow(workflow_id, version).await?;
        let input = workflow.for_replay(params).map_err(|problems| {
            let list: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            format!("The workflow cannot be replayed yet: {}", list.join("; "))
        })?;
        let store = worker.tasks.store().await?;
        let settings = store
            .settings()
            .await?
            .ok_or("Choose a model and enter its API key in Settings first.")?;
        prompt_set(&settings)?;
        let run_id = chrome::random_uuid();
        let at = iso8601(js_sys::Date::now());
        let state = ReplayState::new(
            &workflow,
            input.params.clone(),
            tab,
            &run_id,
            &at,
            &settings.models.navigator.model,
        );
        let row = StoredReplay {
            workflow_id: workflow.id.clone(),
            version: workflow.version,
            workflow_name: workflow.name.clone(),
            subtasks: workflow.subtasks.len() as u32,
            fast_path,
            why: None,
            state,
        };
        db.put_replay(&run_id, &row).await?;
        *self.current.borrow_mut() = Some(row);
        *self.secrets.borrow_mut() = input.secrets;
        spawn_replay(worker.clone(), db, store, settings, input.workflow, None);
        Ok(WorkerEvent::Replay { id: Some(id), replay: self.snapshot() })
    }

    /// Every workflow's latest version with its replay form's fields.
    pub async fn list(&self, worker: &Worker, id: u32) -> Result<WorkerEvent, String> {
        let workflows = self.db(worker).await?.latest_workflows().await?;
        let workflows = workflows
            .into_iter()
            .map(|w| WorkflowSummary {
                id: w.id,
                version: w.version,
                name: w.name,
                params: w
                    .params
                    .into_iter()
                    .map(|p| ParamSummary {
                        example: if p.secret { String::new() } else { p.example },
                        name: p.name,
                        description: p.description,
                        secret: p.secret,
                    })
                    .collect(),
            })
            .collect();
        Ok(WorkerEvent::Workflows { id, workflows })
    }

    /// Steering for the running replay, or the answer that resumes a paused one.
    pub async fn message(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        run_id: &str,
        text: String,
    ) -> Result<WorkerEvent, String> {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Err("Write a message first.".into());
        }
        self.act(worker, id, run_id, ReplayControl::Resume, Some(text)).await
    }

    pub async fn control(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        run_id: &str,
        action: ReplayControl,
    ) -> Result<WorkerEvent, String> {
        self.act(worker, id, run_id, action, None).await
    }

    /// A control, with a message when the user wrote one (it resumes a paused replay).
    async fn act(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        run_id: &str,
        action: ReplayControl,
        follow_up: Option<String>,
    ) -> Result<WorkerEvent, String> {
        let matches = self.current.borrow().as_ref().is_some_and(|r| r.state.run.id == run_id);
        if !matches {
            return Err("That replay is not the current one.".into());
        }
        if let Some(control) = self.running.borrow().clone() {
            match action {
                ReplayControl::Pause => control.request_pause(),
                ReplayControl::Cancel => control.request_cancel(),
                ReplayControl::Resume => {}
            }
            if let Some(text) = &follow_up {
                control.push_follow_up(text);
            }
            return Ok(WorkerEvent::Done { id });
        }
        let Some(row) = self.current.borrow().clone() else { return Err("No replay.".into()) };
        if row.state.status != ReplayStatus::Paused {
            return Err("That replay has ended.".into());
        }
        let db = self.db(worker).await?;
        let store = worker.tasks.store().await?;
        match action {
            ReplayControl::Pause => {}
            ReplayControl::Cancel => {
                let mut row = row;
                row.state.status = ReplayStatus::Cancelled;
                row.state.run.agent_status = "cancelled".into();
                row.state.run.updated_at = iso8601(js_sys::Date::now());
                store.put_run(&row.state.run).await.map_err(|e| e.to_string())?;
                db.put_replay(run_id, &row).await?;
                *self.current.borrow_mut() = Some(row);
                self.broadcast(worker);
                worker.sessions.release_all().await;
            }
            ReplayControl::Resume => {
                if worker.tasks.task_running() {
                    return Err("A task is running: pause or stop it first.".into());
                }
                let workflow = db.workflow(&row.workflow_id, row.version).await?;
                // The given values (secrets as tokens) are in the state; a secret's value is
                // only in memory and must be given again after a restart.
                let secret_params: Vec<&str> =
                    workflow.params.iter().filter(|p| p.secret).map(|p| p.name.as_str()).collect();
                let mut given = row.state.params.clone();
                given.retain(|name, _| !secret_params.contains(&name.as_str()));
                let mut secrets_known = BTreeMap::new();
                for name in &secret_params {
                    let token = agent_engine::workflow::schema::secret_token(name);
                    match self.secrets.borrow().get(&token) {
                        Some(value) => {
                            given.insert((*name).to_owned(), value.clone());
                            secrets_known.insert(token, value.clone());
                        }
                        None => {
                            return Err(format!(
                                "The secret {{{name}}} is not kept after a restart: start the \
                                 replay again with it."
                            ));
                        }
                    }
                }
                let input = workflow.for_replay(&given).map_err(|problems| {
                    problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; ")
                })?;
                let settings = store
                    .settings()
                    .await?
                    .ok_or("Choose a model and enter its API key in Settings first.")?;
                prompt_set(&settings)?;
                if let Some(current) = self.current.borrow_mut().as_mut() {
                    current.why = None;
                }
                spawn_replay(worker.clone(), db, store, settings, input.workflow, follow_up);
            }
        }
        Ok(WorkerEvent::Done { id })
    }
}

/// Both passes over `recording`, broadcasting progress; pass-A results survive a failure.
async fn reflect_recording(
    worker: &Worker,
    db: &WorkflowDb,
    store: &Store,
    settings: &Settings,
    prompts: &PromptSet,
    recording: Recording,
) {
    let flows = &worker.workflows;
    let tell = |stage: ReflectStage| {
        worker.ports.broadcast(&WorkerEvent::Reflection {
            progress: ReflectProgress { recording_id: recording.id.clone(), stage },
        });
    };
    let keys: Vec<String> = recording
        .steps
        .iter()
        .filter_map(|s| s.screenshot.clone())
        .chain(recording.end_screenshot.clone())
        .collect();
    // Vision when the model takes images (the Settings' vision switch says it does).
    let vision = settings.agent.vision;
    let screenshots = if vision { db.screenshots_base64(&keys).await } else { BTreeMap::new() };
    let control = Control::default();
    let ledger = RepairLedger::with_budget(settings.agent.repair_budget);
    let new_id = || chrome::random_uuid();
    let reflector = Reflector {
        cx: CallContext {
            http: &FetchHttp,
            clock: &PerformanceClock,
            control: &control,
            prompts,
            settings,
            epoch_ms: &|| js_sys::Date::now(),
        },
        model: &settings.models.planner,
        vision,
        screenshots: &screenshots,
        new_id: &new_id,
        ledger: &ledger,
    };
    let save_traces = async |traces: &mut Vec<LlmTrace>| {
        for trace in traces.drain(..) {
            if let Err(error) = store.put_trace(&trace).await {
                chrome::log(&format!("a reflection trace was not stored: {error}"));
            }
        }
    };
    let mut done = flows.pass_a.borrow_mut().remove(&recording.id).unwrap_or_default();
    done.resize(recording.steps.len(), None);
    let mut traces = Vec::new();
    let count = recording.steps.len() as u32;
    for index in 0..recording.steps.len() {
        if done[index].is_some() {
            continue;
        }
        tell(ReflectStage::Step { step: index as u32, of: count });
        let result = reflector.reflect_step(&recording, index, &mut traces).await;
        save_traces(&mut traces).await;
        match result {
            Ok(reflection) => done[index] = Some(reflection),
            Err(error) => {
                flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
                return tell(ReflectStage::Failed { why: error.to_string() });
            }
        }
    }
    let steps: Vec<StepReflection> = done.iter().flatten().cloned().collect();
    tell(ReflectStage::Task);
    let task = reflector.reflect_task(&recording, &steps, &mut traces).await;
    save_traces(&mut traces).await;
    let task = match task {
        Ok(task) => task,
        Err(error) => {
            flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
            return tell(ReflectStage::Failed { why: error.to_string() });
        }
    };
    let workflow_id = chrome::random_uuid();
    let at = iso8601(js_sys::Date::now());
    let workflow = build_workflow(&recording, &steps, &task, &workflow_id, &at);
    match db.put_workflow(&workflow).await {
        Ok(()) => tell(ReflectStage::Done { workflow_id }),
        Err(error) => {
            flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
            tell(ReflectStage::Failed { why: format!("The workflow was not saved: {error}") })
        }
    }
}

/// The replay's [`Capture`]: records like a task's, events to every page.
struct ReplayCapture<'a> {
    worker: &'a Worker,
    store: &'a Store,
}

impl Capture for ReplayCapture<'_> {
    fn new_id(&self) -> String {
        chrome::random_uuid()
    }
    fn emit(&self, event: &AgentEvent) {
        self.worker.ports.broadcast(&WorkerEvent::Agent { event: event.clone() });
    }
    async fn save_run(&self, run: &AgentRun) -> Result<(), CaptureError> {
        self.store.put_run(run).await
    }
    async fn save_step(
        &self,
        step: &StepRecord,
        screenshot: Option<&[u8]>,
    ) -> Result<(), CaptureError> {
        self.store.put_step(step, screenshot).await
    }
    async fn save_trace(&self, trace: &LlmTrace) -> Result<(), CaptureError> {
        self.store.put_trace(trace).await
    }
    async fn save_checkpoint(&self, _: &Checkpoint) -> Result<(), CaptureError> {
        Ok(())
    }
}

/// Runs the current replay (its stored state) until it pauses or ends.
fn spawn_replay(
    worker: Rc<Worker>,
    db: Rc<WorkflowDb>,
    store: Rc<Store>,
    settings: Settings,
    workflow: Workflow,
    follow_up: Option<String>,
) {
    let control = Rc::new(Control::default());
    // An answer given while paused is read at the replay's first step, as steering is.
    if let Some(text) = follow_up {
        control.push_follow_up(&text);
    }
    *worker.workflows.running.borrow_mut() = Some(control.clone());
    wasm_bindgen_futures::spawn_local(keep_alive(worker.clone()));
    wasm_bindgen_futures::spawn_local(async move {
        let flows = &worker.workflows;
        let Some(row) = flows.current.borrow().clone() else { return };
        let mut state = row.state.clone();
        let prompts = match prompt_set(&settings) {
            Ok(prompts) => prompts,
            Err(_) => PromptSet::bundled(),
        };
        worker.sessions.guard(Some(Firewall::new(&settings))).await;
        let browser = CdpBrowser {
            observe: ObserveOptions {
                text_budget: settings.agent.state_text_chars as usize,
                ..ObserveOptions::default()
            },
            sessions: &worker.sessions,
            observer: &worker.observer,
            clock: &PerformanceClock,
            tabs: &ChromeTabs,
            search_url: SEARCH_URL,
            firewall: Firewall::new(&settings),
        };
        let capture = ReplayCapture { worker: &worker, store: &store };
        let ledger = RepairLedger::with_budget(settings.agent.repair_budget);
        let secrets = flows.secrets.borrow().clone();
        // Stored after every step, in order (IndexedDB commits same-store writes in the
        // order they were made), and shown to every page.
        let on_state = |state: &ReplayState| {
            let row = {
                let mut current = flows.current.borrow_mut();
                let Some(row) = current.as_mut() else { return };
                row.state = state.clone();
                row.clone()
            };
            flows.broadcast(&worker);
            let db = db.clone();
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(error) = db.put_replay(&row.state.run.id, &row).await {
                    chrome::log(&error);
                }
            });
        };
        let replayer = Replayer {
            cx: CallContext {
                http: &FetchHttp,
                clock: &PerformanceClock,
                control: &control,
                prompts: &prompts,
                settings: &settings,
                epoch_ms: &|| js_sys::Date::now(),
            },
            browser: &browser,
            capture: &capture,
            model: &settings.models.navigator,
            ledger: &ledger,
            limits: ReplayLimits {
                vision: settings.agent.vision,
                fast_path: row.fast_path,
                ..ReplayLimits::default()
            },
            secrets: &secrets,
            on_state: &on_state,
        };
        replayer.run(&workflow, &mut state).await;
        worker.sessions.guard(None).await;
        *flows.running.borrow_mut() = None;
        let ended = !matches!(state.status, ReplayStatus::Paused);
        if let Some(current) = flows.current.borrow_mut().as_mut() {
            current.state = state;
        }
        let row = flows.current.borrow().clone();
        if let Some(row) = row
            && let Err(error) = db.put_replay(&row.state.run.id, &row).await
        {
            chrome::log(&error);
        }
        if ended {
            flows.secrets.borrow_mut().clear();
        }
        flows.broadcast(&worker);
        if ended && !worker.tasks.holds_tab() {
            worker.sessions.release_all().await;
        }
    });
}

/// A model call can outlast Chrome's 30-second idle timer: ping while a replay runs.
async fn keep_alive(worker: Rc<Worker>) {
    use agent_engine::Clock;
    while worker.workflows.replay_running() {
        PerformanceClock.sleep(20_000.0).await;
        chrome::ping().await;
    }
}

fn prompt_set(settings: &Settings) -> Result<PromptSet, String> {
    PromptSet::with_overrides(&settings.prompt_overrides).map_err(|error| {
        format!("An edited prompt file has a problem: {error}. Fix it in Settings.")
    })
}
