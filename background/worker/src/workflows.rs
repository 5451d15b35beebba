//! Workflows in the worker: reflects a stopped recording into a workflow, and replays a
//! workflow in a tab with the engine's [`Replayer`], capturing it as an `AgentRun` like a
//! task (so the annotation page shows it) and broadcasting its progress to every page.
//!
//! A replay's state is stored after every step (`replays`, versioned: `jobs::stored`), so
//! Chrome may stop the worker at any moment: a replay that was running comes back paused,
//! numbered on, and resumable. Each replay is a job: the job table admits it beside the
//! others (one job per tab, a limit on how many run), and several replay at once.

use std::cell::RefCell;
use std::collections::BTreeMap;

use lean::SortedMap;
use std::rc::Rc;

use agent_engine::executor::{CaptureError, Checkpoint, Control};
use agent_engine::jobs::stored::{REPLAY_FORMAT, StoredReplay};
use agent_engine::jobs::{self, Job, JobKind, JobStatus};
use agent_engine::prompts::PromptSet;
use agent_engine::repair::{RepairLedger, WaitWatcher};
use agent_engine::run::{AgentEvent, iso8601};
use agent_engine::workflow::recording::Recording;
use agent_engine::workflow::reflect::ReflectError;
use agent_engine::workflow::replay::{ReplayLimits, ReplayState, ReplayStatus, Replayer};
use agent_engine::workflow::schema::Workflow;
use protocol::jobs::JobSummary;
use protocol::settings::Settings;
use protocol::workflow::{
    ParamSummary, ReflectProgress, ReflectStage, ReplayControl, ReplayProgress, WorkflowSummary,
};
use protocol::{TabId, WorkerEvent};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;

use crate::Worker;
use crate::authoring::{self, Host};
use crate::capture::{Reporter, StoreCapture};
use crate::chrome;
use crate::store::Store;
use crate::tasks::{self, prompt_set};
use crate::workflow_store::WorkflowDb;

/// One replay held in memory: running, paused, or the last that ended.
struct ReplaySlot {
    row: StoredReplay,
    /// The control of its run under way, if one is.
    running: Option<Rc<Control>>,
    /// Its secret values, in memory only.
    secrets: BTreeMap<String, String>,
    /// The pipeline run that started it and awaits it.
    parent: Option<String>,
}

/// The reflections and the replays of this worker.
#[derive(Default)]
pub struct Workflows {
    db: RefCell<Option<Rc<WorkflowDb>>>,
    /// Replays by run id.
    replays: RefCell<SortedMap<String, ReplaySlot>>,
    /// Recordings being reflected now.
    reflecting: RefCell<Vec<String>>,
    /// Pass-A results by recording, kept so a failed reflection resumes where it stopped.
    pass_a: RefCell<SortedMap<String, Vec<Value>>>,
}

impl Workflows {
    async fn db(&self, worker: &Worker) -> Result<Rc<WorkflowDb>, String> {
        if let Some(db) = self.db.borrow().clone() {
            return Ok(db);
        }
        let db = Rc::new(WorkflowDb::new(&*worker.tasks.store().await?));
        Ok(self.db.borrow_mut().get_or_insert(db).clone())
    }

    /// The newest replay, for a page that asks without naming one.
    pub fn snapshot(&self) -> Option<Box<ReplayProgress>> {
        let replays = self.replays.borrow();
        let newest = replays.values().max_by(|a, b| {
            (a.row.is_live(), &a.row.state.run.updated_at)
                .cmp(&(b.row.is_live(), &b.row.state.run.updated_at))
        });
        newest.map(|slot| Box::new(slot.row.progress()))
    }

    /// The newest replay as an answer (`id`) or a broadcast.
    pub fn event(&self, id: Option<u32>) -> WorkerEvent {
        WorkerEvent::Replay { id, replay: self.snapshot() }
    }

    /// Every replay held, for a page that connects (each panel shows its tab's).
    pub fn events(&self) -> Vec<WorkerEvent> {
        let replays = self.replays.borrow();
        let events = replays.values().map(|slot| WorkerEvent::Replay {
            id: None,
            replay: Some(Box::new(slot.row.progress())),
        });
        events.collect()
    }

    /// Tells every page where `run_id` stands, and the job table.
    fn changed(&self, worker: &Rc<Worker>, run_id: &str) {
        let held = self.replays.borrow().get(run_id).map(|slot| {
            let mut summary = slot.row.summary();
            summary.spend.cost = slot.row.state.run.cost;
            summary.spend.input_tokens = slot.row.state.run.usage.input_tokens;
            summary.spend.output_tokens = slot.row.state.run.usage.output_tokens;
            summary.waiting = worker.jobs.summary(run_id).and_then(|j| j.waiting);
            (slot.row.progress(), summary, slot.parent.clone())
        });
        let Some((progress, summary, parent)) = held else { return };
        worker.mcp.on_replay(&progress);
        worker.ports.broadcast(&WorkerEvent::Replay { id: None, replay: Some(Box::new(progress)) });
        worker.jobs.put(worker, summary, parent);
    }

    /// Where `run_id` stands, when it is held here.
    pub fn progress(&self, run_id: &str) -> Option<ReplayProgress> {
        self.row(run_id).map(|row| row.progress())
    }

    fn row(&self, run_id: &str) -> Option<StoredReplay> {
        self.replays.borrow().get(run_id).map(|slot| slot.row.clone())
    }

    fn control_of(&self, run_id: &str) -> Option<Rc<Control>> {
        self.replays.borrow().get(run_id).and_then(|slot| slot.running.clone())
    }

    /// After a (re)start: every live replay comes back; one stored as running was cut off
    /// and comes back as the job rules say (paused, numbered on). A row that cannot be read
    /// is listed among the jobs, saying why.
    pub async fn restore(worker: Rc<Worker>) {
        let flows = &worker.workflows;
        let db = match flows.db(&worker).await {
            Ok(db) => db,
            Err(error) => return chrome::log(&error),
        };
        let rows = match db.replays().await {
            Ok(rows) => rows,
            Err(error) => return chrome::log(&error),
        };
        for row in rows {
            let mut row = match row {
                Ok(row) if row.is_live() => row,
                Ok(_) => continue,
                Err(unreadable) => {
                    chrome::log(&unreadable.log_line());
                    worker.jobs.add_unreadable(unreadable.summary());
                    continue;
                }
            };
            let run_id = row.state.run.id.clone();
            if flows.replays.borrow().contains_key(&run_id) {
                continue;
            }
            if let jobs::Restart::Pause { .. } = jobs::after_restart(JobKind::Replay, row.status())
            {
                row.pause("Chrome stopped the extension's worker mid-replay; resume to go on.");
                // A step stored just before the worker stopped is kept, and numbering goes on.
                if let Ok(count) = db.step_count(&run_id).await {
                    row.state.step = row.state.step.max(count);
                }
                if let Err(error) = db.put_replay(&run_id, &row).await {
                    chrome::log(&error);
                }
                if let Ok(store) = worker.tasks.store().await {
                    let _ = store.put_run(&row.state.run).await;
                }
            }
            let slot = ReplaySlot { row, running: None, secrets: BTreeMap::new(), parent: None };
            flows.replays.borrow_mut().insert(run_id.clone(), slot);
            flows.changed(&worker, &run_id);
        }
    }

    /// Starts reflecting a stopped recording; progress is broadcast.
    pub async fn reflect(&self, worker: &Rc<Worker>, recording_id: &str) -> Result<(), String> {
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
        // An edited prompt that does not load is said now, not after the job started.
        prompt_set(&settings)?;
        // Named as its traces are: the recording's own id is its recording job's.
        let job = format!("reflect:{recording_id}");
        worker.jobs.admit(&Job::new(job.clone(), JobKind::Reflection, None), &settings)?;
        self.reflecting.borrow_mut().push(recording_id.to_owned());
        let title = format!("Reflect: {}", recording.name);
        worker.jobs.put(worker, reflection_job(&job, &title, JobStatus::Running), None);
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let id = recording.id.clone();
            reflect_recording(&worker, &db, &store, &settings, recording).await;
            worker.workflows.reflecting.borrow_mut().retain(|r| *r != id);
            // A failed reflection keeps its pass-A results for the retry.
            let failed = worker.workflows.pass_a.borrow().contains_key(&id);
            let status = if failed { JobStatus::Failed } else { JobStatus::Done };
            worker.jobs.put(&worker, reflection_job(&job, &title, status), None);
        });
        Ok(())
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
        let run_id = self
            .start_job(worker, workflow_id, version, tab, params, fast_path, None, None)
            .await?;
        let replay = self.row(&run_id).map(|row| Box::new(row.progress()));
        Ok(WorkerEvent::Replay { id: Some(id), replay })
    }

    /// Starts a replay as a job of its own or of `parent`'s; answers its run id.
    /// `driven_by` names the MCP client that asked for it, kept in its run.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_job(
        &self,
        worker: &Rc<Worker>,
        workflow_id: &str,
        version: u32,
        tab: TabId,
        params: &BTreeMap<String, String>,
        fast_path: bool,
        parent: Option<&str>,
        driven_by: Option<&str>,
    ) -> Result<String, String> {
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
        let mut job = Job::new(run_id.clone(), JobKind::Replay, Some(tab));
        job.parent = parent.map(str::to_owned);
        worker.jobs.admit(&job, &settings)?;
        let at = iso8601(js_sys::Date::now());
        let mut state = ReplayState::new(
            &workflow,
            input.params.clone(),
            tab,
            &run_id,
            &at,
            &settings.models.navigator.model,
        );
        state.run.driven_by = driven_by.map(str::to_owned);
        let row = StoredReplay {
            format: REPLAY_FORMAT,
            workflow_id: workflow.id.clone(),
            workflow_version: workflow.version,
            workflow_name: workflow.name.clone(),
            subtasks: workflow.subtasks.len() as u32,
            fast_path,
            why: None,
            state,
        };
        db.put_replay(&run_id, &row).await?;
        let slot = ReplaySlot {
            row,
            running: None,
            secrets: input.secrets,
            parent: parent.map(str::to_owned),
        };
        self.replays.borrow_mut().insert(run_id.clone(), slot);
        spawn_replay(worker.clone(), run_id.clone(), db, store, settings, input.workflow, None);
        Ok(run_id)
    }

    /// Every workflow's latest version.
    pub async fn latest(&self, worker: &Worker) -> Result<Vec<Workflow>, String> {
        self.db(worker).await?.latest_workflows().await
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
        run_id: &str,
        text: String,
    ) -> Result<(), String> {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Err("Write a message first.".into());
        }
        self.act(worker, run_id, ReplayControl::Resume, Some(text)).await
    }

    pub async fn control(
        &self,
        worker: &Rc<Worker>,
        run_id: &str,
        action: ReplayControl,
    ) -> Result<(), String> {
        self.act(worker, run_id, action, None).await
    }

    /// A control, with a message when the user wrote one (it resumes a paused replay).
    async fn act(
        &self,
        worker: &Rc<Worker>,
        run_id: &str,
        action: ReplayControl,
        follow_up: Option<String>,
    ) -> Result<(), String> {
        let Some(row) = self.row(run_id) else {
            return Err("That replay is not known here.".into());
        };
        if let Some(control) = self.control_of(run_id) {
            match action {
                ReplayControl::Pause => control.request_pause(),
                ReplayControl::Cancel => control.request_cancel(),
                ReplayControl::Resume => {}
            }
            if let Some(text) = &follow_up {
                control.push_follow_up(text);
            }
            return Ok(());
        }
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
                row.state.run.agent_status = JobStatus::Cancelled;
                row.state.run.updated_at = iso8601(js_sys::Date::now());
                store.put_run(&row.state.run).await.map_err(|e| e.to_string())?;
                db.put_replay(run_id, &row).await?;
                if let Some(slot) = self.replays.borrow_mut().get_mut(run_id) {
                    slot.row = row;
                    slot.secrets.clear();
                }
                self.changed(worker, run_id);
            }
            ReplayControl::Resume => {
                let workflow = db.workflow(&row.workflow_id, row.workflow_version).await?;
                // The given values (secrets as tokens) are in the state; a secret's value is
                // only in memory and must be given again after a restart.
                let secret_params: Vec<&str> =
                    workflow.params.iter().filter(|p| p.secret).map(|p| p.name.as_str()).collect();
                let mut given = row.state.params.clone();
                given.retain(|name, _| !secret_params.contains(&name.as_str()));
                let known = self.replays.borrow().get(run_id).map(|s| s.secrets.clone());
                let known = known.unwrap_or_default();
                for name in &secret_params {
                    let token = agent_engine::workflow::schema::secret_token(name);
                    match known.get(&token) {
                        Some(value) => {
                            given.insert((*name).to_owned(), value.clone());
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
                let parent = self.replays.borrow().get(run_id).and_then(|s| s.parent.clone());
                let mut job = Job::new(run_id, JobKind::Replay, Some(row.state.tab));
                job.parent = parent;
                worker.jobs.admit(&job, &settings)?;
                if let Some(slot) = self.replays.borrow_mut().get_mut(run_id) {
                    slot.row.why = None;
                }
                let workflow = input.workflow;
                spawn_replay(
                    worker.clone(),
                    run_id.to_owned(),
                    db,
                    store,
                    settings,
                    workflow,
                    follow_up,
                );
            }
        }
        Ok(())
    }

    /// `run_id`'s tab closed: it ends as failed, saying so; what it captured stays.
    pub async fn tab_closed(&self, worker: &Rc<Worker>, run_id: &str) {
        if let Some(control) = self.control_of(run_id) {
            // It ends failed with the sentence at its next check, never as cancelled.
            return control.request_end(jobs::TAB_CLOSED);
        }
        let Some(mut row) = self.row(run_id) else { return };
        row.fail(jobs::TAB_CLOSED, &iso8601(js_sys::Date::now()));
        if let (Ok(db), Ok(store)) = (self.db(worker).await, worker.tasks.store().await) {
            let _ = store.put_run(&row.state.run).await;
            if let Err(error) = db.put_replay(run_id, &row).await {
                chrome::log(&error);
            }
        }
        if let Some(slot) = self.replays.borrow_mut().get_mut(run_id) {
            slot.row = row;
            slot.secrets.clear();
        }
        self.changed(worker, run_id);
    }
}

/// A reflection's row in the Jobs list.
fn reflection_job(job: &str, title: &str, status: JobStatus) -> JobSummary {
    let why = (status == JobStatus::Failed)
        .then(|| "The reflection failed; retry it from the Workflows page.".to_owned());
    JobSummary { why, ..JobSummary::new(job, JobKind::Reflection, None, title, status) }
}

/// Both passes over `recording`, broadcasting progress; pass-A results survive a failure.
async fn reflect_recording(
    worker: &Rc<Worker>,
    db: &WorkflowDb,
    store: &Rc<Store>,
    settings: &Settings,
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
        .filter_map(|s| s.moment.screenshot.clone())
        .chain(recording.end_screenshot.clone())
        .collect();
    // Vision when the model takes images (the Settings' vision switch says it does).
    let vision = settings.agent.vision;
    let screenshots = if vision { db.screenshots_base64(&keys).await } else { BTreeMap::new() };
    let done = flows.pass_a.borrow_mut().remove(&recording.id).unwrap_or_default();
    let workflow_id = chrome::random_uuid();
    let request = json!({"recording": recording, "settings": settings, "keys": settings.keys(),
        "screenshots": screenshots, "done": done, "workflow_id": workflow_id,
        "at": iso8601(js_sys::Date::now())});
    let answer = authoring::reflect(&request, &reflect_host(worker, store, &recording.id)).await;
    let mut answer = match answer {
        Ok(answer) => answer,
        Err(why) => {
            flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
            return tell(ReflectStage::Failed { why, details: None });
        }
    };
    // Pass A's results stay opaque here: the engine reads them on a retry.
    let done: Vec<Value> = serde_json::from_value(answer["done"].take()).unwrap_or_default();
    let Ok(workflow) = serde_json::from_value::<Workflow>(answer["workflow"].take()) else {
        // Stopped: the engine said why.
        flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
        return;
    };
    match db.put_workflow(&workflow).await {
        Ok(()) => {
            // The recording takes the task's name unless a person named it; a name that
            // cannot be stored costs the workflow nothing.
            let task_name = answer["task_name"].as_str().unwrap_or_default();
            let _ = worker.recorder.name(worker, &recording.id, task_name, false).await;
            // A new workflow is a new tool for MCP clients.
            worker.mcp.tools_changed();
            tell(ReflectStage::Done { workflow_id })
        }
        Err(error) => {
            flows.pass_a.borrow_mut().insert(recording.id.clone(), done);
            let why = format!("The workflow was not saved: {error}");
            tell(ReflectStage::Failed { why, details: None })
        }
    }
}

/// What a reflection lends the engine: its progress goes to every page, its traces to the
/// store.
fn reflect_host(worker: &Rc<Worker>, store: &Rc<Store>, recording_id: &str) -> Host {
    let (worker, id) = (worker.clone(), recording_id.to_owned());
    let tell = Closure::<dyn Fn(String)>::new(move |stage: String| {
        match serde_json::from_str::<ReflectStage>(&stage) {
            Ok(stage) => worker.ports.broadcast(&WorkerEvent::Reflection {
                progress: ReflectProgress { recording_id: id.clone(), stage },
            }),
            Err(error) => chrome::log(&format!("a reflection's progress was unreadable: {error}")),
        }
    });
    let store = store.clone();
    let traces = Closure::<dyn Fn(String) -> js_sys::Promise>::new(move |traces: String| {
        let store = store.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let traces: Vec<Value> = serde_json::from_str(&traces).unwrap_or_default();
            for trace in &traces {
                if let Err(error) = store.put_trace_value(trace).await {
                    chrome::log(&format!("a reflection trace was not stored: {error}"));
                }
            }
            Ok(JsValue::UNDEFINED)
        })
    });
    Host::new().with("tell", tell).with("traces", traces)
}

/// A replay's events go to every page; its state is stored apart (`on_state`), so it keeps no
/// checkpoint.
struct ReplayReporter<'a> {
    worker: &'a Worker,
    panel_tab: Option<TabId>,
}

impl Reporter for ReplayReporter<'_> {
    fn emit(&self, event: &AgentEvent) {
        let panel_tab = self.panel_tab;
        self.worker.ports.broadcast(&WorkerEvent::Agent { event: event.clone(), panel_tab });
    }

    async fn save_checkpoint(&self, _: &Store, _: &Checkpoint) -> Result<(), CaptureError> {
        Ok(())
    }
}

/// Runs replay `run_id` (its stored state) until it pauses or ends.
fn spawn_replay(
    worker: Rc<Worker>,
    run_id: String,
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
    let started = worker.workflows.replays.borrow_mut().get_mut(&run_id).map(|slot| {
        slot.running = Some(control.clone());
        (slot.row.clone(), slot.secrets.clone())
    });
    let Some((row, secrets)) = started else { return };
    // In the table before anyone awaits its end.
    worker.workflows.changed(&worker, &run_id);
    wasm_bindgen_futures::spawn_local(async move {
        let flows = &worker.workflows;
        let mut state = row.state.clone();
        let prompts = prompt_set(&settings).unwrap_or_else(|_| PromptSet::bundled());
        worker.jobs.guard(&worker, &settings).await;
        let browser = tasks::browser(&worker, &settings);
        let panel_tab = Some(state.tab);
        let reporter = ReplayReporter { worker: &worker, panel_tab };
        let capture = StoreCapture { store: &store, reporter };
        let waits = {
            let (worker, run_id) = (worker.clone(), run_id.clone());
            WaitWatcher::new(move |wait| worker.jobs.waiting(&worker, &run_id, wait))
        };
        let ledger = RepairLedger::with_budget(settings.agent.repair_budget).watched(waits);
        // Stored after every step, in order (IndexedDB commits same-store writes in the
        // order they were made), and shown to every page.
        let on_state = |state: &ReplayState| {
            let row = {
                let mut replays = flows.replays.borrow_mut();
                let Some(slot) = replays.get_mut(&run_id) else { return };
                slot.row.state = state.clone();
                slot.row.clone()
            };
            flows.changed(&worker, &run_id);
            let db = db.clone();
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(error) = db.put_replay(&row.state.run.id, &row).await {
                    chrome::log(&error);
                }
            });
        };
        let replayer = Replayer {
            cx: engine_web::call_context(&control, &prompts, &settings),
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
        let failed = matches!(state.status, ReplayStatus::Failed { .. });
        // Ended from outside (its tab closed) as it was returning with a pause; or its own
        // step found the tab gone before the tab listener did.
        let ended = match control.end_reason() {
            Some(why) => Some(why),
            None if failed && chrome::tab_is_gone(state.tab).await => Some(jobs::TAB_CLOSED.into()),
            None => None,
        };
        let row = {
            let mut replays = flows.replays.borrow_mut();
            let Some(slot) = replays.get_mut(&run_id) else { return };
            slot.running = None;
            slot.row.state = state;
            if let Some(why) = ended.filter(|_| slot.row.is_live() || failed) {
                slot.row.fail(&why, &iso8601(js_sys::Date::now()));
            }
            if !slot.row.is_live() {
                slot.secrets.clear();
            }
            slot.row.clone()
        };
        if row.status() == JobStatus::Failed {
            let _ = store.put_run(&row.state.run).await;
        }
        if let Err(error) = db.put_replay(&run_id, &row).await {
            chrome::log(&error);
        }
        flows.changed(&worker, &run_id);
    });
}
