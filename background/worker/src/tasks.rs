//! The agent's task in the worker: starts, steers and stops the engine's executor on the
//! panel's requests, broadcasts its events to every connected page, stores everything in
//! IndexedDB, and brings a task back (paused) after Chrome restarts the worker.
//!
//! One task runs at a time. Its checkpoint is stored after every step, so the worker may
//! die at any moment: a task that was running comes back paused and resumable.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use agent_engine::browser::CdpBrowser;
use agent_engine::executor::{Capture, CaptureError};
use agent_engine::executor::{Checkpoint, Control, Executor, Unreadable};
use agent_engine::firewall::Firewall;
use agent_engine::observe::ObserveOptions;
use agent_engine::prompts::PromptSet;
use agent_engine::run::{AgentEvent, AgentRun, LlmTrace, StepRecord};
use agent_engine::session::{self, Cancel, FollowUp, NewTask, Open, Resume, Sessions};
use protocol::TabId;
use protocol::agent::{SessionSummary, TaskSnapshot, TaskStatus};
use protocol::settings::Settings;
use protocol::{Favourite, WorkerEvent, favourites_problem};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock, Port};
use crate::http::FetchHttp;
use crate::store::Store;

/// Where `web_search` goes.
pub const SEARCH_URL: &str = "https://duckduckgo.com/?q=";

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
                telemetry: cp.run.telemetry.clone(),
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

    /// Whether a task runs now (a workflow replay must wait).
    pub fn task_running(&self) -> bool {
        self.running.borrow().is_some()
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
        let Some(mut cp) = session::to_restore(checkpoints.into_iter().filter_map(Result::ok))
        else {
            return;
        };
        if tasks.current.borrow().is_some() || tasks.running.borrow().is_some() {
            return;
        }
        tasks.pause_if_cut_off(&worker, &store, &mut cp).await;
        *tasks.current.borrow_mut() = Some(cp);
        tasks.broadcast_snapshot(&worker, None);
    }

    /// A checkpoint stored as running was cut off when Chrome stopped the worker: it comes
    /// back paused, saying so, and is stored that way.
    async fn pause_if_cut_off(&self, worker: &Worker, store: &Store, cp: &mut Checkpoint) {
        if cp.status != TaskStatus::Running {
            return;
        }
        if let Some(settings) = store.settings().await.ok().flatten() {
            with_executor(worker, store, &settings, |executor| {
                executor.pause_idle(cp, session::RESTARTED)
            });
        }
        if let Err(error) = store.put_checkpoint(cp).await {
            chrome::log(&format!("could not store the reopened checkpoint: {error}"));
        }
    }

    /// The store, or why the request cannot be served.
    async fn open_store(&self) -> Result<Rc<Store>, String> {
        self.store().await.map_err(|error| format!("Storage is unavailable: {error}"))
    }

    /// The store, once a run that is returning has returned: for the requests that act on
    /// the current session.
    async fn ready(&self) -> Result<Rc<Store>, String> {
        let store = self.open_store().await?;
        self.run_returned().await;
        Ok(store)
    }

    /// Runs `rule` against the sessions as they are now.
    fn check<R>(&self, rule: impl FnOnce(Sessions<'_>) -> Result<R, String>) -> Result<R, String> {
        let current = self.current.borrow();
        rule(Sessions { current: current.as_ref(), running: self.running.borrow().is_some() })
    }

    pub async fn get_settings(&self, id: u32) -> Result<WorkerEvent, String> {
        let settings = self.open_store().await?.settings().await?;
        Ok(WorkerEvent::Settings { id, settings: settings.map(Box::new), problems: vec![] })
    }

    pub async fn save_settings(
        &self,
        id: u32,
        mut settings: Settings,
        keys: &BTreeMap<String, String>,
    ) -> Result<WorkerEvent, String> {
        let store = self.open_store().await?;
        settings.restore_keys(keys);
        let mut problems = settings.problems();
        if let Ok(prompts) = PromptSet::with_overrides(&settings.prompt_overrides) {
            problems.extend(prompts.variant_problems(&settings.variants));
        }
        if problems.is_empty() {
            let previous = store.settings().await.ok().flatten();
            problems = settings.keep_keys_of(previous.as_ref());
        }
        if problems.is_empty() {
            store.put_settings(&settings).await?;
        }
        Ok(WorkerEvent::Settings { id, settings: Some(Box::new(settings)), problems })
    }

    pub async fn start(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        tab_id: TabId,
        task: &str,
        session_id: Option<&str>,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        if worker.workflows.replay_running() {
            return Err("A workflow replay is running: wait for it or stop it first.".into());
        }
        self.check(|sessions| sessions.start(task))?;
        let (settings, prompts) = run_settings(&store).await?;
        let (run_id, new_session_id) = (chrome::random_uuid(), chrome::random_uuid());
        let new = NewTask {
            tab_id,
            task,
            session_id,
            run_id: &run_id,
            new_session_id: &new_session_id,
            settings: &settings,
            epoch_ms: js_sys::Date::now(),
        };
        let mut current = self.current.borrow_mut().take();
        let started = session::start(&*store, &mut current, new).await;
        *self.current.borrow_mut() = current;
        started?;
        Tasks::spawn_run(worker.clone(), store, settings, prompts);
        Ok(WorkerEvent::Done { id })
    }

    pub async fn follow_up(
        &self,
        worker: &Worker,
        id: u32,
        session_id: &str,
        text: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        if self.check(|sessions| sessions.follow_up(session_id))? == FollowUp::Steer {
            if let Some(control) = self.running.borrow().clone() {
                control.push_follow_up(text);
            }
            return Ok(WorkerEvent::Done { id });
        }
        let settings = store.settings().await?.ok_or("Settings are missing.")?;
        let Some(mut cp) = self.current.borrow_mut().take() else {
            return Err("No task.".into());
        };
        with_executor(worker, &store, &settings, |executor| {
            executor.apply_follow_up(&mut cp, text)
        });
        let stored = store.put_checkpoint(&cp).await;
        *self.current.borrow_mut() = Some(cp);
        stored.map_err(|error| error.to_string())?;
        Ok(WorkerEvent::Done { id })
    }

    pub fn pause(&self, id: u32, session_id: &str) -> Result<WorkerEvent, String> {
        if self.check(|sessions| sessions.pause(session_id))?
            && let Some(control) = self.running.borrow().as_ref()
        {
            control.request_pause();
        }
        Ok(WorkerEvent::Done { id })
    }

    pub async fn resume(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        session_id: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        if worker.workflows.replay_running() {
            return Err("A workflow replay is running: wait for it or stop it first.".into());
        }
        if self.check(|sessions| sessions.resume(session_id))? == Resume::Run {
            let (settings, prompts) = run_settings(&store).await?;
            Tasks::spawn_run(worker.clone(), store, settings, prompts);
        }
        Ok(WorkerEvent::Done { id })
    }

    pub async fn cancel(
        &self,
        worker: &Worker,
        id: u32,
        session_id: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        if self.check(|sessions| sessions.cancel(session_id))? == Cancel::Interrupt {
            if let Some(control) = self.running.borrow().as_ref() {
                control.request_cancel();
            }
            return Ok(WorkerEvent::Done { id });
        }
        let Some(mut cp) = self.current.borrow_mut().take() else {
            return Err("No task.".into());
        };
        if let Some(settings) = store.settings().await.ok().flatten() {
            let parts = parts(worker, &store, &settings);
            let prompts = PromptSet::bundled();
            let control = Control::default();
            executor(&parts, &settings, &prompts, &control).cancel(&mut cp).await;
        } else {
            cp.status = TaskStatus::Cancelled;
            let _ = store.put_checkpoint(&cp).await;
        }
        *self.current.borrow_mut() = Some(cp);
        self.broadcast_snapshot(worker, None);
        worker.sessions.release_all().await;
        Ok(WorkerEvent::Done { id })
    }

    pub async fn list_sessions(&self, id: u32) -> Result<WorkerEvent, String> {
        let store = self.open_store().await?;
        Ok(WorkerEvent::Sessions { id, sessions: self.sessions(&store).await? })
    }

    pub async fn open_session(
        &self,
        worker: &Worker,
        id: u32,
        session_id: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        if self.check(|sessions| sessions.open(session_id))? == Open::Load {
            let mut cp = store
                .checkpoint(session_id)
                .await?
                .ok_or("That conversation is no longer stored.")?;
            // The current task stays as it is (a paused one paused) in its checkpoint.
            let previous = self.current.borrow_mut().take();
            if let Some(previous) = previous
                && let Err(error) = store.put_checkpoint(&previous).await
            {
                chrome::log(&format!("could not store the checkpoint left: {error}"));
            }
            self.pause_if_cut_off(worker, &store, &mut cp).await;
            *self.current.borrow_mut() = Some(cp);
            self.broadcast_snapshot(worker, None);
        }
        Ok(WorkerEvent::Task { id: Some(id), snapshot: self.snapshot() })
    }

    pub async fn delete_session(
        &self,
        worker: &Worker,
        id: u32,
        session_id: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready().await?;
        let current = self.check(|sessions| sessions.delete(session_id))?;
        store.delete_checkpoint(session_id).await?;
        if current {
            let gone = self.current.borrow_mut().take();
            self.broadcast_snapshot(worker, None);
            if gone.is_some_and(|cp| !cp.status.is_finished()) {
                // A paused task held its tab; nothing holds it now.
                worker.sessions.release_all().await;
            }
        }
        Ok(WorkerEvent::Sessions { id, sessions: self.sessions(&store).await? })
    }

    pub async fn favourites(&self, id: u32) -> Result<WorkerEvent, String> {
        let favourites = self.open_store().await?.favourites().await?;
        Ok(WorkerEvent::Favourites { id, favourites })
    }

    pub async fn save_favourites(
        &self,
        id: u32,
        favourites: Vec<Favourite>,
    ) -> Result<WorkerEvent, String> {
        let store = self.open_store().await?;
        let favourites: Vec<Favourite> = favourites
            .into_iter()
            .map(|f| Favourite {
                id: f.id.trim().to_owned(),
                title: f.title.trim().to_owned(),
                prompt: f.prompt.trim().to_owned(),
            })
            .collect();
        if let Some(problem) = favourites_problem(&favourites) {
            return Err(format!("The favourites were not saved. {problem}"));
        }
        store.put_favourites(&favourites).await?;
        Ok(WorkerEvent::Favourites { id, favourites })
    }

    /// The History's list (see [`session::history`]).
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
        self.check(|sessions| Ok(session::history(&checkpoints, &unreadable, &runs, sessions)))
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
            // The task's tabs go only where its settings allow while it runs.
            worker.sessions.guard(Some(Firewall::new(&settings))).await;
            let parts = parts(&worker, &store, &settings);
            executor(&parts, &settings, &prompts, &control).run(&mut cp).await;
            worker.sessions.guard(None).await;
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

/// Extension API calls reset Chrome's 30-second idle timer; a model call can take longer
/// than that with nothing else happening, so a running task pings while it runs.
async fn keep_alive(worker: Rc<Worker>) {
    use agent_engine::Clock;
    while worker.tasks.running.borrow().is_some() {
        PerformanceClock.sleep(20_000.0).await;
        chrome::ping().await;
    }
}

/// The settings and prompts a run needs, or what the person must fix first.
async fn run_settings(store: &Store) -> Result<(Settings, PromptSet), String> {
    let settings = store
        .settings()
        .await
        .ok()
        .flatten()
        .ok_or("Choose a model and enter its API key in Settings first.")?;
    let prompts = prompt_set(&settings)?;
    Ok((settings, prompts))
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
            firewall: Firewall::new(settings),
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
