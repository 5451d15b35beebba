//! The agent's task in the worker: starts, steers and stops the engine's executor on the
//! panel's requests, broadcasts its events to every connected page, stores everything in
//! IndexedDB, and brings a task back (paused) after Chrome restarts the worker.
//!
//! One task runs at a time. Its checkpoint is stored after every step, so the worker may
//! die at any moment: a task that was running comes back paused and resumable.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use agent_engine::browser::CdpBrowser;
use agent_engine::capture::{Capture, CaptureError};
use agent_engine::executor::{Checkpoint, Control, Executor, Unreadable};
use agent_engine::observe::ObserveOptions;
use agent_engine::prompts::PromptSet;
use agent_engine::run::{AgentEvent, AgentRun, LlmTrace, StepRecord};
use protocol::agent::{Actor, ExecutionState, SessionSummary, TaskSnapshot, TaskStatus};
use protocol::settings::Settings;
use protocol::{Favourite, PanelRequest, WorkerEvent, favourites_problem};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock, Port};
use crate::http::FetchHttp;
use crate::store::{SessionRuns, Store};

/// Where `web_search` goes.
pub const SEARCH_URL: &str = "https://duckduckgo.com/?q=";

/// Said when a task comes back after the worker restarted.
const RESTARTED: &str =
    "Chrome stopped the agent's background worker. Nothing was lost: press Resume to continue.";

/// Pages connected over the port right now.
#[derive(Default)]
pub struct Ports(RefCell<Vec<Port>>);

impl Ports {
    pub fn add(&self, port: Port) {
        self.0.borrow_mut().push(port);
    }
    pub fn remove(&self, port: &Port) {
        let gone: &JsValue = port.as_ref();
        self.0.borrow_mut().retain(|p| AsRef::<JsValue>::as_ref(p) != gone);
    }
    pub fn count(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn broadcast(&self, event: &WorkerEvent) {
        for port in self.0.borrow().iter() {
            port.post(event);
        }
    }
}

/// The current task and the machinery around it.
#[derive(Default)]
pub struct Tasks {
    store: RefCell<Option<Rc<Store>>>,
    /// The latest state of the current session (updated at every save while running).
    current: RefCell<Option<Checkpoint>>,
    /// The control of the run under way, if one is.
    running: RefCell<Option<Rc<Control>>>,
    /// The run under way has saved a pause or an end and is returning: its control no
    /// longer reads follow-ups, resumes or cancels.
    stopping: Cell<bool>,
    /// Called when the run under way returns (see [`Tasks::run_returned`]).
    on_return: RefCell<Vec<js_sys::Function>>,
    /// Port requests, handled one at a time in arrival order (a follow-up must be applied
    /// before the resume sent right after it).
    queue: RefCell<VecDeque<(Port, JsValue)>>,
    draining: Cell<bool>,
}

/// The executor's [`Capture`] in the worker: IndexedDB for records, ports for events.
struct WorkerCapture<'a> {
    worker: &'a Worker,
    store: &'a Store,
}

impl Capture for WorkerCapture<'_> {
    fn new_id(&self) -> String {
        chrome::random_uuid()
    }

    fn emit(&self, event: &AgentEvent) {
        let tasks = &self.worker.tasks;
        if let Some(current) = tasks.current.borrow_mut().as_mut() {
            current.events.push(event.clone());
        }
        chrome::log(&format!(
            "[{:?} {:?}] step {}: {}",
            event.actor, event.state, event.step, event.details
        ));
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

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError> {
        if checkpoint.status != TaskStatus::Running {
            self.worker.tasks.stopping.set(true);
        }
        let status_changed =
            self.worker.tasks.current.borrow().as_ref().is_none_or(|c| {
                c.status != checkpoint.status || c.session_id != checkpoint.session_id
            });
        *self.worker.tasks.current.borrow_mut() = Some(checkpoint.clone());
        if status_changed {
            self.worker.tasks.broadcast_snapshot(self.worker, None);
        }
        self.store.put_checkpoint(checkpoint).await
    }
}

impl Tasks {
    pub(crate) async fn store(&self) -> Result<Rc<Store>, String> {
        if let Some(store) = self.store.borrow().clone() {
            return Ok(store);
        }
        let store = Rc::new(Store::open().await?);
        Ok(self.store.borrow_mut().get_or_insert(store).clone())
    }

    /// Waits for a run that is returning (it saved a pause or an end), so that a request sent
    /// the moment the panel saw the pause or the end (a follow-up, resume, cancel, the next
    /// task) applies to the checkpoint the run leaves, instead of to a control nobody reads
    /// any more or being refused because a task still runs. Bounded: 10 s.
    async fn run_returned(&self) {
        if !self.stopping.get() || self.running.borrow().is_none() {
            return;
        }
        let mut resolver = None;
        let returned = js_sys::Promise::new(&mut |resolve, _| resolver = Some(resolve));
        self.on_return.borrow_mut().extend(resolver);
        let either = js_sys::Array::of2(&returned, &chrome::delay(10_000.0));
        let _ = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::race(&either)).await;
    }

    pub fn snapshot(&self) -> Option<Box<TaskSnapshot>> {
        self.current.borrow().as_ref().map(|cp| {
            Box::new(TaskSnapshot {
                session_id: cp.session_id.clone(),
                run_id: cp.run.id.clone(),
                tab_id: cp.tab_id,
                task: cp.memory.task.clone(),
                status: cp.status.clone(),
                step: cp.step,
                spend: cp.spend,
                events: cp.events.clone(),
            })
        })
    }

    fn broadcast_snapshot(&self, worker: &Worker, id: Option<u32>) {
        worker.ports.broadcast(&WorkerEvent::Task { id, snapshot: self.snapshot() });
    }

    /// Whether the tab of a live (running or paused) task must stay attached.
    pub fn holds_tab(&self) -> bool {
        self.running.borrow().is_some()
            || self.current.borrow().as_ref().is_some_and(|cp| !cp.status.is_finished())
    }

    /// After a (re)start: the most recent unfinished task comes back, paused.
    pub async fn restore(worker: Rc<Worker>) {
        let tasks = &worker.tasks;
        let store = match tasks.store().await {
            Ok(store) => store,
            Err(error) => return chrome::log(&format!("could not open the run store: {error}")),
        };
        let checkpoints = match store.checkpoints().await {
            Ok(checkpoints) => checkpoints,
            Err(error) => return chrome::log(&format!("could not read checkpoints: {error}")),
        };
        // One that cannot be read was logged by the store, and the History lists it.
        let latest = checkpoints
            .into_iter()
            .filter_map(Result::ok)
            .filter(|cp| !cp.status.is_finished())
            .max_by(|a, b| a.run.updated_at.cmp(&b.run.updated_at));
        let Some(mut cp) = latest else { return };
        if tasks.current.borrow().is_some() || tasks.running.borrow().is_some() {
            return;
        }
        let settings = store.settings().await.ok().flatten();
        if cp.status == TaskStatus::Running
            && let Some(settings) = settings
        {
            with_executor(&worker, &store, &settings, |executor| {
                executor.pause_idle(&mut cp, RESTARTED)
            });
        }
        *tasks.current.borrow_mut() = Some(cp.clone());
        if let Err(error) = store.put_checkpoint(&cp).await {
            chrome::log(&format!("could not store the restored checkpoint: {error}"));
        }
        tasks.broadcast_snapshot(&worker, None);
    }

    /// Queues a port request; requests are handled strictly in order. A connection test
    /// runs beside the queue: it can take as long as the model's timeout, and a Pause must
    /// not wait behind it.
    pub fn enqueue(worker: Rc<Worker>, port: Port, message: JsValue) {
        let kind = js_sys::Reflect::get(&message, &"type".into()).ok().and_then(|t| t.as_string());
        if kind.as_deref() == Some("test_connection") {
            wasm_bindgen_futures::spawn_local(async move {
                if let Some(event) = crate::requests::handle_panel_request(&worker, message).await {
                    port.post(&event);
                }
            });
            return;
        }
        worker.tasks.queue.borrow_mut().push_back((port, message));
        if worker.tasks.draining.replace(true) {
            return;
        }
        wasm_bindgen_futures::spawn_local(async move {
            loop {
                let next = worker.tasks.queue.borrow_mut().pop_front();
                let Some((port, message)) = next else { break };
                if let Some(event) = crate::requests::handle_panel_request(&worker, message).await {
                    port.post(&event);
                }
            }
            worker.tasks.draining.set(false);
        });
    }

    /// Handles the task and settings requests of the panel.
    pub async fn handle(worker: &Rc<Worker>, request: PanelRequest) -> WorkerEvent {
        let tasks = &worker.tasks;
        let id = request.id();
        let store = match tasks.store().await {
            Ok(store) => store,
            Err(error) => {
                return WorkerEvent::Failed {
                    id,
                    message: format!("Storage is unavailable: {error}"),
                };
            }
        };
        let failed = |message: &str| WorkerEvent::Failed { id, message: message.to_owned() };
        let same_session = |session: &str| {
            tasks.current.borrow().as_ref().is_some_and(|cp| cp.session_id == session)
        };
        match request {
            PanelRequest::GetSettings { id } => match store.settings().await {
                Ok(settings) => {
                    WorkerEvent::Settings { id, settings: settings.map(Box::new), problems: vec![] }
                }
                Err(error) => failed(&error),
            },
            PanelRequest::SaveSettings { id, settings, keys } => {
                let mut settings = *settings;
                settings.restore_keys(&keys);
                let problems = settings.problems();
                if !problems.is_empty() {
                    return WorkerEvent::Settings {
                        id,
                        settings: Some(Box::new(settings)),
                        problems,
                    };
                }
                if let Ok(Some(previous)) = store.settings().await {
                    settings.restore_keys(&previous.keys());
                }
                match store.put_settings(&settings).await {
                    Ok(()) => {
                        WorkerEvent::Settings { id, settings: Some(Box::new(settings)), problems }
                    }
                    Err(error) => failed(&error),
                }
            }
            PanelRequest::CurrentTask { id } => {
                WorkerEvent::Task { id: Some(id), snapshot: tasks.snapshot() }
            }
            PanelRequest::StartTask { id, tab_id, task, session_id } => {
                if task.trim().is_empty() {
                    return failed("Type a task first.");
                }
                tasks.run_returned().await;
                if tasks.running.borrow().is_some() {
                    return failed(
                        "A task is running. Send your message as steering, or stop the task first.",
                    );
                }
                let Some(settings) = store.settings().await.ok().flatten() else {
                    return failed("Choose a model and enter its API key in Settings first.");
                };
                let prompts = match prompt_set(&settings) {
                    Ok(prompts) => prompts,
                    Err(message) => return failed(&message),
                };
                let run_id = chrome::random_uuid();
                let now = js_sys::Date::now();
                // A follow-up in a finished conversation that is not current (reopened from
                // History, or the worker restarted since) continues from its checkpoint; a
                // paused current task stays paused in its own.
                let stored = match &session_id {
                    Some(session) if !same_session(session) => {
                        match store.checkpoint(session).await {
                            Ok(stored) => stored,
                            // Unreadable: say so, rather than start over in a new session.
                            Err(error) => return failed(&error),
                        }
                    }
                    _ => None,
                };
                let continuing = session_id.filter(|s| same_session(s));
                let previous = tasks.current.borrow_mut().take();
                let mut cp = match (stored, continuing, previous) {
                    (Some(mut cp), ..) if cp.status.is_finished() => {
                        cp.follow_up_task(&run_id, tab_id, &task, &settings, now);
                        cp
                    }
                    (_, Some(_), Some(mut cp)) if cp.status.is_finished() => {
                        cp.follow_up_task(&run_id, tab_id, &task, &settings, now);
                        cp
                    }
                    (_, _, previous) => {
                        // A paused task left behind is finished off as cancelled.
                        if let Some(mut old) = previous
                            && !old.status.is_finished()
                        {
                            old.status = TaskStatus::Cancelled;
                            let _ = store.put_checkpoint(&old).await;
                        }
                        let session = chrome::random_uuid();
                        Checkpoint::new_task(&session, &run_id, tab_id, &task, &settings, now)
                    }
                };
                cp.status = TaskStatus::Running;
                *tasks.current.borrow_mut() = Some(cp);
                Tasks::spawn_run(worker.clone(), store, settings, prompts);
                WorkerEvent::Done { id }
            }
            PanelRequest::FollowUp { id, session_id, text } => {
                tasks.run_returned().await;
                if !same_session(&session_id) {
                    return failed("That task is no longer current.");
                }
                if let Some(control) = tasks.running.borrow().clone() {
                    control.push_follow_up(&text);
                    return WorkerEvent::Done { id };
                }
                let Some(settings) = store.settings().await.ok().flatten() else {
                    return failed("Settings are missing.");
                };
                let Some(mut cp) = tasks.current.borrow_mut().take() else {
                    return failed("No task.");
                };
                with_executor(worker, &store, &settings, |executor| {
                    executor.apply_follow_up(&mut cp, &text)
                });
                let result = store.put_checkpoint(&cp).await;
                *tasks.current.borrow_mut() = Some(cp);
                match result {
                    Ok(()) => WorkerEvent::Done { id },
                    Err(error) => failed(&error.to_string()),
                }
            }
            PanelRequest::Pause { id, session_id } => {
                if !same_session(&session_id) {
                    return failed("That task is no longer current.");
                }
                if let Some(control) = tasks.running.borrow().as_ref() {
                    control.request_pause();
                }
                WorkerEvent::Done { id }
            }
            PanelRequest::Resume { id, session_id } => {
                tasks.run_returned().await;
                if !same_session(&session_id) {
                    return failed("That task is no longer current.");
                }
                if tasks.running.borrow().is_some() {
                    return WorkerEvent::Done { id };
                }
                let paused = tasks
                    .current
                    .borrow()
                    .as_ref()
                    .is_some_and(|cp| matches!(cp.status, TaskStatus::Paused { .. }));
                if !paused {
                    return failed("The task is not paused.");
                }
                let Some(settings) = store.settings().await.ok().flatten() else {
                    return failed("Choose a model and enter its API key in Settings first.");
                };
                let prompts = match prompt_set(&settings) {
                    Ok(prompts) => prompts,
                    Err(message) => return failed(&message),
                };
                Tasks::spawn_run(worker.clone(), store, settings, prompts);
                WorkerEvent::Done { id }
            }
            PanelRequest::Cancel { id, session_id } => {
                tasks.run_returned().await;
                if !same_session(&session_id) {
                    return failed("That task is no longer current.");
                }
                if let Some(control) = tasks.running.borrow().as_ref() {
                    control.request_cancel();
                    return WorkerEvent::Done { id };
                }
                let Some(mut cp) = tasks.current.borrow_mut().take() else {
                    return failed("No task.");
                };
                let settings = store.settings().await.ok().flatten();
                if let Some(settings) = settings {
                    let parts = parts(worker, &store, &settings);
                    let prompts = PromptSet::bundled();
                    let control = Control::default();
                    executor(&parts, &settings, &prompts, &control).cancel(&mut cp).await;
                } else {
                    cp.status = TaskStatus::Cancelled;
                    let _ = store.put_checkpoint(&cp).await;
                }
                *tasks.current.borrow_mut() = Some(cp);
                tasks.broadcast_snapshot(worker, None);
                let _ = worker.sessions.release_all().await;
                WorkerEvent::Done { id }
            }
            PanelRequest::ListSessions { id } => match tasks.sessions(&store).await {
                Ok(sessions) => WorkerEvent::Sessions { id, sessions },
                Err(error) => failed(&error),
            },
            PanelRequest::OpenSession { id, session_id } => {
                tasks.run_returned().await;
                if same_session(&session_id) {
                    return WorkerEvent::Task { id: Some(id), snapshot: tasks.snapshot() };
                }
                if tasks.running.borrow().is_some() {
                    return failed(
                        "A task is running. Stop it, or wait until it ends, before opening another conversation.",
                    );
                }
                let mut cp = match store.checkpoint(&session_id).await {
                    Ok(Some(cp)) => cp,
                    Ok(None) => return failed("That conversation is no longer stored."),
                    Err(error) => return failed(&error),
                };
                // The current task stays as it is (a paused one paused) in its checkpoint.
                let previous = tasks.current.borrow_mut().take();
                if let Some(previous) = previous
                    && let Err(error) = store.put_checkpoint(&previous).await
                {
                    chrome::log(&format!("could not store the checkpoint left: {error}"));
                }
                if cp.status == TaskStatus::Running {
                    // Left running when Chrome stopped the worker: it comes back paused.
                    if let Some(settings) = store.settings().await.ok().flatten() {
                        with_executor(worker, &store, &settings, |executor| {
                            executor.pause_idle(&mut cp, RESTARTED)
                        });
                    }
                    if let Err(error) = store.put_checkpoint(&cp).await {
                        chrome::log(&format!("could not store the reopened checkpoint: {error}"));
                    }
                }
                *tasks.current.borrow_mut() = Some(cp);
                tasks.broadcast_snapshot(worker, None);
                WorkerEvent::Task { id: Some(id), snapshot: tasks.snapshot() }
            }
            PanelRequest::DeleteSession { id, session_id } => {
                tasks.run_returned().await;
                let current = same_session(&session_id);
                if current && tasks.running.borrow().is_some() {
                    return failed(
                        "This conversation's task is running. Stop it before deleting the conversation.",
                    );
                }
                if let Err(error) = store.delete_checkpoint(&session_id).await {
                    return failed(&error);
                }
                if current {
                    let gone = tasks.current.borrow_mut().take();
                    tasks.broadcast_snapshot(worker, None);
                    if gone.is_some_and(|cp| !cp.status.is_finished()) {
                        // A paused task held its tab; nothing holds it now.
                        worker.sessions.release_all().await;
                    }
                }
                match tasks.sessions(&store).await {
                    Ok(sessions) => WorkerEvent::Sessions { id, sessions },
                    Err(error) => failed(&error),
                }
            }
            PanelRequest::GetFavourites { id } => match store.favourites().await {
                Ok(favourites) => WorkerEvent::Favourites { id, favourites },
                Err(error) => failed(&error),
            },
            PanelRequest::SaveFavourites { id, favourites } => {
                let favourites: Vec<Favourite> = favourites
                    .into_iter()
                    .map(|f| Favourite {
                        id: f.id.trim().to_owned(),
                        title: f.title.trim().to_owned(),
                        prompt: f.prompt.trim().to_owned(),
                    })
                    .collect();
                if let Some(problem) = favourites_problem(&favourites) {
                    return failed(&format!("The favourites were not saved. {problem}"));
                }
                match store.put_favourites(&favourites).await {
                    Ok(()) => WorkerEvent::Favourites { id, favourites },
                    Err(error) => failed(&error),
                }
            }
            PanelRequest::TestConnection { id, role, model, key } => {
                crate::connection::test(&store, id, role, *model, key).await
            }
            PanelRequest::PageTitle { id, .. } | PanelRequest::PageState { id, .. } => {
                failed(&format!("request {id} is not a task request"))
            }
        }
    }

    /// The stored conversations, newest first. The current one is described as it is in
    /// memory (the store may be a step behind); another that says running was cut off by a
    /// restart and is paused in effect, as it would be when opened. One whose checkpoint
    /// cannot be read is listed as unreadable, saying why.
    async fn sessions(&self, store: &Store) -> Result<Vec<SessionSummary>, String> {
        let (mut checkpoints, mut unreadable) =
            (Vec::<Checkpoint>::new(), Vec::<Unreadable>::new());
        for read in store.checkpoints().await? {
            match read {
                Ok(cp) => checkpoints.push(cp),
                Err(cannot) => unreadable.push(cannot),
            }
        }
        let ids: Vec<&str> = checkpoints
            .iter()
            .map(|cp| cp.session_id.as_str())
            .chain(unreadable.iter().map(|u| u.key.as_str()))
            .collect();
        let runs = store.session_runs(&ids).await.unwrap_or_else(|error| {
            chrome::log(&format!("History lists sessions without their runs: {error}"));
            Default::default()
        });
        let current = self.current.borrow();
        let running = self.running.borrow().is_some();
        let mut sessions: Vec<SessionSummary> = checkpoints
            .iter()
            .map(|stored| {
                let is_current = current.as_ref().filter(|c| c.session_id == stored.session_id);
                let cp = is_current.unwrap_or(stored);
                let mut summary = summary(cp, runs.get(&cp.session_id));
                if cp.status == TaskStatus::Running && !(running && is_current.is_some()) {
                    summary.status = "paused".into();
                }
                summary
            })
            .collect();
        sessions.extend(unreadable.iter().map(|u| match current.as_ref() {
            Some(cp) if cp.session_id == u.key => summary(cp, runs.get(&u.key)),
            _ => {
                let runs = runs.get(&u.key);
                u.summary(runs.and_then(|r| r.first_task.as_deref()), runs.map_or(0, |r| r.runs))
            }
        }));
        sessions.sort_by(|a, b| {
            b.updated_at.cmp(&a.updated_at).then_with(|| a.session_id.cmp(&b.session_id))
        });
        Ok(sessions)
    }

    /// Runs the current checkpoint until it pauses or ends.
    fn spawn_run(worker: Rc<Worker>, store: Rc<Store>, settings: Settings, prompts: PromptSet) {
        let control = Rc::new(Control::default());
        *worker.tasks.running.borrow_mut() = Some(control.clone());
        worker.tasks.stopping.set(false);
        wasm_bindgen_futures::spawn_local(keep_alive(worker.clone()));
        wasm_bindgen_futures::spawn_local(async move {
            let Some(mut cp) = worker.tasks.current.borrow().clone() else { return };
            worker.tasks.broadcast_snapshot(&worker, None);
            let parts = parts(&worker, &store, &settings);
            executor(&parts, &settings, &prompts, &control).run(&mut cp).await;
            *worker.tasks.running.borrow_mut() = None;
            worker.tasks.stopping.set(false);
            let finished = cp.status.is_finished();
            *worker.tasks.current.borrow_mut() = Some(cp);
            for resolve in worker.tasks.on_return.take() {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
            worker.tasks.broadcast_snapshot(&worker, None);
            if finished {
                worker.sessions.release_all().await;
            }
        });
    }
}

/// How History shows one conversation. Its title is its first task: from the runs store
/// when that has its runs, else from the events kept in the checkpoint.
fn summary(cp: &Checkpoint, runs: Option<&SessionRuns>) -> SessionSummary {
    let first_event = || {
        cp.events
            .iter()
            .find(|e| e.actor == Actor::User && e.state == ExecutionState::TaskStart)
            .map(|e| e.details.clone())
    };
    let title = runs
        .and_then(|r| r.first_task.clone())
        .or_else(first_event)
        .unwrap_or_else(|| cp.memory.task.clone());
    SessionSummary {
        session_id: cp.session_id.clone(),
        title: clip(&title, 300),
        task: clip(&cp.memory.task, 300),
        status: cp.status.label().to_owned(),
        updated_at: cp.run.updated_at.clone(),
        runs: runs.map_or(1, |r| r.runs).max(1),
    }
}

/// `text` trimmed, and cut at `max` characters with an ellipsis.
fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_owned(),
    }
}

/// Extension API calls reset Chrome's 30-second idle timer; a model call can take longer
/// than that with nothing else happening, so a running task pings while it runs.
async fn keep_alive(worker: Rc<Worker>) {
    use agent_engine::Clock;
    while worker.tasks.running.borrow().is_some() {
        PerformanceClock.sleep(20_000.0).await;
        chrome::ping().await;
    }
}

/// The bundled prompts with the user's edits, checked before a run starts: a broken edit
/// would fail every call, so it is reported instead.
fn prompt_set(settings: &Settings) -> Result<PromptSet, String> {
    PromptSet::with_overrides(&settings.prompt_overrides).map_err(|error| {
        format!("An edited prompt file has a problem: {error}. Fix it in Settings.")
    })
}

fn epoch_ms() -> f64 {
    js_sys::Date::now()
}

type WorkerBrowser<'a> = CdpBrowser<'a, chrome::ChromeDebugger, PerformanceClock, ChromeTabs>;
type WorkerExecutor<'a> =
    Executor<'a, FetchHttp, WorkerBrowser<'a>, WorkerCapture<'a>, PerformanceClock>;

/// The worker's browser and capture, which an executor borrows.
struct Parts<'a> {
    browser: WorkerBrowser<'a>,
    capture: WorkerCapture<'a>,
}

fn parts<'a>(worker: &'a Worker, store: &'a Store, settings: &Settings) -> Parts<'a> {
    let observe = ObserveOptions {
        text_budget: settings.agent.state_text_chars as usize,
        ..ObserveOptions::default()
    };
    Parts {
        browser: CdpBrowser {
            observe,
            sessions: &worker.sessions,
            observer: &worker.observer,
            clock: &PerformanceClock,
            tabs: &ChromeTabs,
            search_url: SEARCH_URL,
        },
        capture: WorkerCapture { worker, store },
    }
}

fn executor<'a>(
    parts: &'a Parts<'a>,
    settings: &'a Settings,
    prompts: &'a PromptSet,
    control: &'a Control,
) -> WorkerExecutor<'a> {
    Executor {
        http: &FetchHttp,
        browser: &parts.browser,
        capture: &parts.capture,
        clock: &PerformanceClock,
        control,
        prompts,
        settings,
        epoch_ms: &epoch_ms,
    }
}

/// Runs `f` with a one-off executor, for changes to a task that is not running.
fn with_executor<R>(
    worker: &Worker,
    store: &Store,
    settings: &Settings,
    f: impl FnOnce(&WorkerExecutor<'_>) -> R,
) -> R {
    let parts = parts(worker, store, settings);
    let prompts = PromptSet::bundled();
    let control = Control::default();
    f(&executor(&parts, settings, &prompts, &control))
}
