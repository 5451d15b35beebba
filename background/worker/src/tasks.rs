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
use agent_engine::executor::{Checkpoint, Control, Executor};
use agent_engine::prompts::PromptSet;
use agent_engine::run::{AgentEvent, AgentRun, Capture, LlmTrace, StepRecord};
use protocol::agent::{TaskSnapshot, TaskStatus};
use protocol::settings::Settings;
use protocol::{PanelRequest, WorkerEvent};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock, Port};
use crate::http::FetchHttp;
use crate::store::Store;

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

    async fn save_run(&self, run: &AgentRun) -> Result<(), String> {
        self.store.put_run(run).await
    }

    async fn save_step(&self, step: &StepRecord, screenshot: Option<&[u8]>) -> Result<(), String> {
        self.store.put_step(step, screenshot).await
    }

    async fn save_trace(&self, trace: &LlmTrace) -> Result<(), String> {
        self.store.put_trace(trace).await
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), String> {
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
    async fn store(&self) -> Result<Rc<Store>, String> {
        if let Some(store) = self.store.borrow().clone() {
            return Ok(store);
        }
        let store = Rc::new(Store::open().await?);
        Ok(self.store.borrow_mut().get_or_insert(store).clone())
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
        let latest = checkpoints
            .into_iter()
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

    /// Queues a port request; requests are handled strictly in order.
    pub fn enqueue(worker: Rc<Worker>, port: Port, message: JsValue) {
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
                let continuing = session_id.filter(|s| same_session(s));
                let previous = tasks.current.borrow_mut().take();
                let mut cp = match (continuing, previous) {
                    (Some(_), Some(mut cp)) if cp.status.is_finished() => {
                        cp.follow_up_task(&run_id, tab_id, &task, &settings, now);
                        cp
                    }
                    (_, previous) => {
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
                    Err(error) => failed(&error),
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
                    let parts = parts(worker, &store);
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
            PanelRequest::PageTitle { id, .. } | PanelRequest::PageState { id, .. } => {
                failed(&format!("request {id} is not a task request"))
            }
        }
    }

    /// Runs the current checkpoint until it pauses or ends.
    fn spawn_run(worker: Rc<Worker>, store: Rc<Store>, settings: Settings, prompts: PromptSet) {
        let control = Rc::new(Control::default());
        *worker.tasks.running.borrow_mut() = Some(control.clone());
        wasm_bindgen_futures::spawn_local(keep_alive(worker.clone()));
        wasm_bindgen_futures::spawn_local(async move {
            let Some(mut cp) = worker.tasks.current.borrow().clone() else { return };
            worker.tasks.broadcast_snapshot(&worker, None);
            let parts = parts(&worker, &store);
            executor(&parts, &settings, &prompts, &control).run(&mut cp).await;
            *worker.tasks.running.borrow_mut() = None;
            let finished = cp.status.is_finished();
            *worker.tasks.current.borrow_mut() = Some(cp);
            worker.tasks.broadcast_snapshot(&worker, None);
            if finished {
                worker.sessions.release_all().await;
            }
        });
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

fn parts<'a>(worker: &'a Worker, store: &'a Store) -> Parts<'a> {
    Parts {
        browser: CdpBrowser {
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
    let parts = parts(worker, store);
    let prompts = PromptSet::bundled();
    let control = Control::default();
    f(&executor(&parts, settings, &prompts, &control))
}
