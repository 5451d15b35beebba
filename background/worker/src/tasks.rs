//! The agent's tasks in the worker: starts, steers and stops the engine's executor on the
//! panels' requests, broadcasts their events to every connected page, stores everything in
//! IndexedDB, and brings tasks back (paused) after Chrome restarts the worker.
//!
//! Several tasks run at once, each a job in its own tab (the job table admits them). Each
//! tab's panel shows one conversation; a request names its conversation by session id and
//! reaches only that one. Every checkpoint is stored after every step, so the worker may die
//! at any moment: each task that was running comes back paused and resumable.

use std::cell::RefCell;
use std::collections::BTreeMap;

use lean::SortedMap;
use std::rc::Rc;

use agent_engine::actions::{Hands, WaitLimits};
use agent_engine::browser::CdpBrowser;
use agent_engine::executor::CaptureError;
use agent_engine::executor::{Checkpoint, Control, Executor, Unreadable};
use agent_engine::firewall::Firewall;
use agent_engine::jobs::{self, Job, JobKind, JobStatus};
use agent_engine::observe::ObserveOptions;
use agent_engine::prompts::PromptSet;
use agent_engine::repair::WaitWatcher;
use agent_engine::run::AgentEvent;
use agent_engine::session::{self, Cancel, FollowUp, NewTask, Open, Resume, Sessions};
use protocol::TabId;
use protocol::agent::{SessionStatus, SessionSummary, TaskSnapshot, TaskStatus};
use protocol::jobs::JobSummary;
use protocol::settings::Settings;
use protocol::{Favourite, WorkerEvent, favourites_problem};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::capture::{Reporter, StoreCapture};
use crate::chrome::{self, ChromeTabs, PerformanceClock, Port};
use crate::http::FetchHttp;
use crate::signal::{Notify, within};
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

/// One conversation held in memory: shown in a panel, running, or paused.
struct Slot {
    cp: Checkpoint,
    /// The control of its run under way, if one is.
    running: Option<Rc<Control>>,
    /// Its run has saved a pause or an end and is returning: the control no longer reads
    /// follow-ups, resumes or cancels.
    stopping: bool,
    /// The pipeline run that started it and awaits it.
    parent: Option<String>,
}

impl Slot {
    /// A conversation with no run under way.
    fn idle(cp: Checkpoint, parent: Option<String>) -> Slot {
        Slot { cp, running: None, stopping: false, parent }
    }
}

/// The conversations in memory and which panel shows which.
#[derive(Default)]
pub struct Tasks {
    store: RefCell<Option<Rc<Store>>>,
    /// Session id → its slot.
    slots: RefCell<SortedMap<String, Slot>>,
    /// Panel tab → the session its panel shows.
    shown: RefCell<SortedMap<TabId, String>>,
    /// Told whenever a run returns.
    returned: Notify,
}

/// A task's events and checkpoints: into its session's slot, to every port.
struct TaskReporter<'a> {
    worker: &'a Rc<Worker>,
    session: String,
}

impl Reporter for TaskReporter<'_> {
    fn emit(&self, event: &AgentEvent) {
        let tasks = &self.worker.tasks;
        let panel_tab = tasks.with_slot(&self.session, |slot| {
            slot.cp.events.push(event.clone());
            slot.cp.panel_tab()
        });
        chrome::log(&format!(
            "[{:?} {:?}] step {}: {}",
            event.actor, event.state, event.step, event.details
        ));
        self.worker.ports.broadcast(&WorkerEvent::Agent { event: event.clone(), panel_tab });
        self.worker.mcp.on_agent_event(&self.session, event);
    }

    async fn save_checkpoint(
        &self,
        store: &Store,
        checkpoint: &Checkpoint,
    ) -> Result<(), CaptureError> {
        let tasks = &self.worker.tasks;
        let status_changed = tasks
            .with_slot(&self.session, |slot| {
                if checkpoint.status != TaskStatus::Running {
                    slot.stopping = true;
                }
                let changed = slot.cp.status != checkpoint.status;
                slot.cp = checkpoint.clone();
                changed
            })
            .unwrap_or(true);
        if status_changed {
            tasks.broadcast_snapshot(self.worker, &self.session);
        }
        tasks.sync_job(self.worker, &self.session);
        store.put_checkpoint(checkpoint).await
    }
}

/// The executor's [`Capture`] for one session: IndexedDB for records, ports for events.
type WorkerCapture<'a> = StoreCapture<'a, TaskReporter<'a>>;

fn snapshot_of(cp: &Checkpoint) -> TaskSnapshot {
    TaskSnapshot {
        session_id: cp.session_id.clone(),
        run_id: cp.run.id.clone(),
        tab_id: cp.tab_id,
        panel_tab: Some(cp.panel_tab()),
        task: cp.memory.task.clone(),
        status: cp.status.clone(),
        step: cp.step,
        spend: cp.spend,
        events: cp.events.clone(),
        telemetry: cp.run.telemetry.clone(),
    }
}

/// A task's row in the Jobs list.
fn job_of(cp: &Checkpoint, running: bool) -> JobSummary {
    let (status, question, why) = match &cp.status {
        // Stored as running but no run under way: cut off, paused in effect.
        TaskStatus::Running if !running => (JobStatus::Paused, None, None),
        TaskStatus::Running => (JobStatus::Running, None, None),
        TaskStatus::Paused { reason, question, .. } => {
            (JobStatus::Paused, question.clone(), Some(reason.clone()))
        }
        TaskStatus::Done { .. } => (JobStatus::Done, None, None),
        TaskStatus::Failed { error } => (JobStatus::Failed, None, Some(error.clone())),
        TaskStatus::Cancelled => (JobStatus::Cancelled, None, None),
    };
    JobSummary {
        id: cp.session_id.clone(),
        kind: JobKind::Task,
        tab_id: Some(cp.tab_id),
        tab_title: String::new(),
        title: cp.memory.task.clone(),
        status,
        question,
        why,
        paused_by_user: matches!(cp.status, TaskStatus::Paused { by_user: true, .. }),
        step: cp.step,
        spend: cp.spend,
        waiting: None,
        driven_by: cp.run.driven_by.clone(),
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

    fn with_slot<R>(&self, session: &str, f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
        self.slots.borrow_mut().get_mut(session).map(f)
    }

    /// Tells `session`'s run under way, if one is, through its control.
    fn tell_run(&self, session: &str, tell: impl FnOnce(&Control)) {
        let control = self.slots.borrow().get(session).and_then(|slot| slot.running.clone());
        if let Some(control) = control {
            tell(&control);
        }
    }

    fn shown_in(&self, tab: TabId) -> Option<String> {
        self.shown.borrow().get(&tab).cloned()
    }

    /// Waits for `session`'s run if it is returning (it saved a pause or an end), so that a
    /// request sent the moment the panel saw the pause or the end (a follow-up, resume,
    /// cancel, the next task) applies to the checkpoint the run leaves, instead of to a
    /// control nobody reads any more. Bounded: 10 s.
    async fn run_returned(&self, session: &str) {
        let returning =
            || self.slots.borrow().get(session).is_some_and(|s| s.stopping && s.running.is_some());
        if returning() {
            within(10_000.0, self.returned.until(|| !returning())).await;
        }
    }

    /// The snapshot the panel of `tab` shows; without a tab, the most recent one.
    pub fn snapshot(&self, tab: Option<TabId>) -> Option<Box<TaskSnapshot>> {
        let slots = self.slots.borrow();
        let cp = match tab {
            Some(tab) => slots.get(self.shown_in(tab)?.as_str()).map(|s| &s.cp),
            None => {
                slots.values().map(|s| &s.cp).max_by(|a, b| a.run.updated_at.cmp(&b.run.updated_at))
            }
        }?;
        Some(Box::new(snapshot_of(cp)))
    }

    /// `session`'s snapshot, when it is in memory.
    pub fn session_snapshot(&self, session: &str) -> Option<TaskSnapshot> {
        self.slots.borrow().get(session).map(|slot| snapshot_of(&slot.cp))
    }

    /// Every shown conversation's snapshot: what a page that connects is sent.
    pub fn snapshots(&self) -> Vec<WorkerEvent> {
        let slots = self.slots.borrow();
        self.shown
            .borrow()
            .values()
            .filter_map(|session| slots.get(session))
            .map(|slot| WorkerEvent::Task {
                id: None,
                snapshot: Some(Box::new(snapshot_of(&slot.cp))),
            })
            .collect()
    }

    fn broadcast_snapshot(&self, worker: &Worker, session: &str) {
        let snapshot = self.slots.borrow().get(session).map(|s| Box::new(snapshot_of(&s.cp)));
        if snapshot.is_some() {
            worker.ports.broadcast(&WorkerEvent::Task { id: None, snapshot });
        }
    }

    /// Puts `session`'s row in the job table as it stands.
    fn sync_job(&self, worker: &Rc<Worker>, session: &str) {
        let row = self.slots.borrow().get(session).map(|slot| {
            let mut job = job_of(&slot.cp, slot.running.is_some());
            // A wait the provider asked for stays until its call tells otherwise.
            job.waiting = worker.jobs.summary(session).and_then(|j| j.waiting);
            (job, slot.parent.clone())
        });
        if let Some((job, parent)) = row {
            worker.jobs.put(worker, job, parent);
        }
    }

    /// After a (re)start: every unfinished conversation comes back, each in the panel of
    /// the tab it was started from; one that was running comes back paused.
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
        for cp in session::to_restore(checkpoints.into_iter().filter_map(Result::ok)) {
            if tasks.slots.borrow().contains_key(&cp.session_id) {
                continue;
            }
            let session = cp.session_id.clone();
            tasks.shown.borrow_mut().insert(cp.panel_tab(), session.clone());
            // In memory before it is paused, so the pause's events name their panel.
            tasks.slots.borrow_mut().insert(session.clone(), Slot::idle(cp, None));
            tasks.pause_if_cut_off(&worker, &store, &session).await;
            tasks.broadcast_snapshot(&worker, &session);
            tasks.sync_job(&worker, &session);
        }
    }

    /// `session`'s checkpoint (in memory) stored as running was cut off when Chrome stopped
    /// the worker: it comes back as the job rules say (paused, saying so), and is stored so.
    async fn pause_if_cut_off(&self, worker: &Rc<Worker>, store: &Rc<Store>, session: &str) {
        let Some(mut cp) = self.slots.borrow().get(session).map(|s| s.cp.clone()) else {
            return;
        };
        let cp = &mut cp;
        let status =
            if cp.status == TaskStatus::Running { JobStatus::Running } else { JobStatus::Paused };
        let jobs::Restart::Pause { why } = jobs::after_restart(JobKind::Task, status) else {
            return;
        };
        if let Some(settings) = store.settings().await.ok().flatten() {
            with_executor(worker, store, &settings, &cp.session_id.clone(), async |executor| {
                executor.pause_idle(cp, why)
            })
            .await;
        }
        if let Err(error) = store.put_checkpoint(cp).await {
            chrome::log(&format!("could not store the reopened checkpoint: {error}"));
        }
        let cp = cp.clone();
        self.with_slot(session, |slot| slot.cp = cp);
    }

    /// The store, or why the request cannot be served.
    async fn open_store(&self) -> Result<Rc<Store>, String> {
        self.store().await.map_err(|error| format!("Storage is unavailable: {error}"))
    }

    /// The store, once `session`'s run that is returning has returned.
    async fn ready(&self, session: &str) -> Result<Rc<Store>, String> {
        let store = self.open_store().await?;
        self.run_returned(session).await;
        Ok(store)
    }

    /// Runs `rule` against `session` as it is now (it must be in memory to be acted on).
    fn check<R>(
        &self,
        session: &str,
        rule: impl FnOnce(Sessions<'_>) -> Result<R, String>,
    ) -> Result<R, String> {
        let slots = self.slots.borrow();
        let slot = slots.get(session);
        rule(Sessions {
            current: slot.map(|s| &s.cp),
            running: slot.is_some_and(|s| s.running.is_some()),
        })
    }

    /// Runs `rule` against the conversation `tab`'s panel shows.
    fn check_tab<R>(
        &self,
        tab: TabId,
        rule: impl FnOnce(Sessions<'_>) -> Result<R, String>,
    ) -> Result<R, String> {
        let session = self.shown_in(tab).unwrap_or_default();
        self.check(&session, rule)
    }

    pub async fn get_settings(&self, id: u32) -> Result<WorkerEvent, String> {
        let settings = self.open_store().await?.settings().await?;
        let variants = prompt_variants(settings.as_ref());
        Ok(WorkerEvent::Settings {
            id,
            settings: settings.map(Box::new),
            problems: vec![],
            variants,
        })
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
        let variants = prompt_variants(Some(&settings));
        Ok(WorkerEvent::Settings { id, settings: Some(Box::new(settings)), problems, variants })
    }

    /// Starts a task in `tab` (a new conversation, or a follow-up task in `session_id`),
    /// as a job of its own or of `parent`'s; answers its session id. `driven_by` names the
    /// MCP client that asked for it, kept in its run.
    pub async fn start_job(
        &self,
        worker: &Rc<Worker>,
        tab: TabId,
        task: &str,
        session_id: Option<&str>,
        parent: Option<&str>,
        driven_by: Option<&str>,
    ) -> Result<String, String> {
        let shown = self.shown_in(tab);
        let store = self.ready(shown.as_deref().unwrap_or_default()).await?;
        self.check_tab(tab, |sessions| sessions.start(task))?;
        if let Some(named) = session_id.filter(|s| Some(*s) != shown.as_deref()) {
            let elsewhere =
                self.slots.borrow().get(named).map(|s| (s.cp.panel_tab(), s.running.is_some()));
            if let Some((other, running)) = elsewhere
                && (running || other != tab)
            {
                return Err(
                    "That conversation is open in another tab's panel: continue it there.".into()
                );
            }
        }
        let (settings, prompts) = run_settings(&store).await?;
        let job_id = session_id.or(shown.as_deref()).unwrap_or("new task").to_owned();
        let mut job = Job::new(job_id, JobKind::Task, Some(tab));
        job.parent = parent.map(str::to_owned);
        worker.jobs.admit(&job, &settings)?;
        let (run_id, new_session_id) = (chrome::random_uuid(), chrome::random_uuid());
        let new = NewTask {
            tab_id: tab,
            task,
            session_id,
            run_id: &run_id,
            new_session_id: &new_session_id,
            settings: &settings,
            epoch_ms: js_sys::Date::now(),
        };
        // The session rules see the conversation this tab's panel shows as the current one.
        let mut current =
            shown.as_ref().and_then(|s| self.slots.borrow_mut().remove(s)).map(|s| s.cp);
        let before = current.as_ref().map(|cp| (cp.session_id.clone(), cp.status.clone()));
        let started = session::start(&*store, &mut current, new).await;
        let Some(mut cp) = current else { return started.map(|()| String::new()) };
        if let Err(error) = started {
            // Left as it was.
            let session = cp.session_id.clone();
            self.slots.borrow_mut().insert(session, Slot::idle(cp, None));
            return Err(error);
        }
        cp.panel_tab = Some(tab);
        cp.run.driven_by = driven_by.map(str::to_owned);
        let session = cp.session_id.clone();
        // A paused conversation the tab showed that the new one replaced ended cancelled.
        if let Some((old, status)) = before
            && old != session
            && !status.is_finished()
        {
            worker.jobs.update(worker, &old, |job| job.status = JobStatus::Cancelled);
        }
        self.shown.borrow_mut().insert(tab, session.clone());
        let parent = parent.map(str::to_owned);
        self.slots.borrow_mut().insert(session.clone(), Slot::idle(cp, parent));
        Tasks::spawn_run(worker.clone(), session.clone(), store, settings, prompts);
        Ok(session)
    }

    pub async fn follow_up(
        &self,
        worker: &Rc<Worker>,
        session_id: &str,
        text: &str,
    ) -> Result<(), String> {
        let store = self.ready(session_id).await?;
        if self.check(session_id, |sessions| sessions.follow_up(session_id))? == FollowUp::Steer {
            self.tell_run(session_id, |control| control.push_follow_up(text));
            return Ok(());
        }
        let settings = store.settings().await?.ok_or("Settings are missing.")?;
        let mut cp = self.checkpoint(session_id)?;
        with_executor(worker, &store, &settings, session_id, async |executor| {
            executor.apply_follow_up(&mut cp, text)
        })
        .await;
        let stored = store.put_checkpoint(&cp).await;
        self.with_slot(session_id, |slot| slot.cp = cp);
        self.sync_job(worker, session_id);
        stored.map_err(|error| error.to_string())?;
        Ok(())
    }

    pub fn pause(&self, session_id: &str) -> Result<(), String> {
        if self.check(session_id, |sessions| sessions.pause(session_id))? {
            self.tell_run(session_id, Control::request_pause);
        }
        Ok(())
    }

    pub async fn resume(&self, worker: &Rc<Worker>, session_id: &str) -> Result<(), String> {
        let store = self.ready(session_id).await?;
        if self.check(session_id, |sessions| sessions.resume(session_id))? == Resume::Run {
            let (settings, prompts) = run_settings(&store).await?;
            let job = self.slots.borrow().get(session_id).map(|s| {
                let mut job = Job::new(session_id, JobKind::Task, Some(s.cp.tab_id));
                job.parent = s.parent.clone();
                job
            });
            if let Some(job) = job {
                worker.jobs.admit(&job, &settings)?;
            }
            Tasks::spawn_run(worker.clone(), session_id.to_owned(), store, settings, prompts);
        }
        Ok(())
    }

    pub async fn cancel(&self, worker: &Rc<Worker>, session_id: &str) -> Result<(), String> {
        let store = self.ready(session_id).await?;
        if self.check(session_id, |sessions| sessions.cancel(session_id))? == Cancel::Interrupt {
            self.tell_run(session_id, Control::request_cancel);
            return Ok(());
        }
        let mut cp = self.checkpoint(session_id)?;
        if let Some(settings) = store.settings().await.ok().flatten() {
            with_executor(worker, &store, &settings, session_id, async |executor| {
                executor.cancel(&mut cp).await
            })
            .await;
        } else {
            cp.status = TaskStatus::Cancelled;
            let _ = store.put_checkpoint(&cp).await;
        }
        self.keep_and_tell(worker, session_id, cp);
        Ok(())
    }

    /// `session`'s tab closed: the task ends as failed, saying so, keeping what it captured.
    /// A running one is interrupted first and ends so as its run returns.
    pub async fn tab_closed(&self, worker: &Rc<Worker>, session: &str, running: bool) {
        if running {
            // It ends failed with the sentence at its next check, never as cancelled.
            if let Some(control) = self.with_slot(session, |slot| slot.running.clone()).flatten() {
                control.request_end(jobs::TAB_CLOSED);
            }
            return;
        }
        let (Ok(store), Some(mut cp)) =
            (self.open_store().await, self.slots.borrow().get(session).map(|s| s.cp.clone()))
        else {
            return;
        };
        if let Some(settings) = store.settings().await.ok().flatten() {
            with_executor(worker, &store, &settings, session, async |executor| {
                executor.end_failed(&mut cp, jobs::TAB_CLOSED).await
            })
            .await;
        }
        self.keep_and_tell(worker, session, cp);
    }

    /// `cp` becomes `session`'s checkpoint; every page and the job table are told.
    fn keep_and_tell(&self, worker: &Rc<Worker>, session: &str, cp: Checkpoint) {
        self.with_slot(session, |slot| slot.cp = cp);
        self.broadcast_snapshot(worker, session);
        self.sync_job(worker, session);
    }

    /// A copy of `session`'s checkpoint, or that there is no task.
    fn checkpoint(&self, session: &str) -> Result<Checkpoint, String> {
        self.slots.borrow().get(session).map(|s| s.cp.clone()).ok_or_else(|| "No task.".into())
    }

    pub async fn list_sessions(&self, id: u32) -> Result<WorkerEvent, String> {
        let store = self.open_store().await?;
        Ok(WorkerEvent::Sessions { id, sessions: self.sessions(&store).await? })
    }

    /// Shows a stored conversation in `tab`'s panel (it becomes that panel's current one).
    pub async fn open_session(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        session_id: &str,
        tab: Option<TabId>,
    ) -> Result<WorkerEvent, String> {
        let tab = match tab {
            Some(tab) => tab,
            None => self
                .slots
                .borrow()
                .get(session_id)
                .map(|s| s.cp.panel_tab())
                .ok_or("Open it from a tab's panel.")?,
        };
        let shown = self.shown_in(tab);
        let store = self.ready(shown.as_deref().unwrap_or_default()).await?;
        if self.check_tab(tab, |sessions| sessions.open(session_id))? == Open::Load {
            let in_memory = self.slots.borrow().get(session_id).map(|s| s.running.is_some());
            match in_memory {
                Some(true) => return Err(
                    "That conversation's task is running in another tab: open that tab's panel."
                        .into(),
                ),
                Some(false) => {}
                None => {
                    let mut cp = store
                        .checkpoint(session_id)
                        .await?
                        .ok_or("That conversation is no longer stored.")?;
                    // Shown in this tab's panel from now on, its pause's events too.
                    cp.panel_tab = Some(tab);
                    self.slots.borrow_mut().insert(session_id.to_owned(), Slot::idle(cp, None));
                    self.pause_if_cut_off(worker, &store, session_id).await;
                }
            }
            // The conversation the tab showed stays as it is (a paused one paused, listed
            // among the jobs); another tab that showed this one no longer does.
            self.shown.borrow_mut().retain(|_, s| s != session_id);
            self.shown.borrow_mut().insert(tab, session_id.to_owned());
            self.with_slot(session_id, |slot| slot.cp.panel_tab = Some(tab));
            if let Some(old) = shown
                && self.slots.borrow().get(&old).is_some_and(|s| s.cp.status.is_finished())
            {
                self.slots.borrow_mut().remove(&old);
            }
            self.broadcast_snapshot(worker, session_id);
            self.sync_job(worker, session_id);
        }
        Ok(WorkerEvent::Task { id: Some(id), snapshot: self.snapshot(Some(tab)) })
    }

    pub async fn delete_session(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        session_id: &str,
    ) -> Result<WorkerEvent, String> {
        let store = self.ready(session_id).await?;
        self.check(session_id, |sessions| sessions.delete(session_id))?;
        store.delete_checkpoint(session_id).await?;
        if self.slots.borrow_mut().remove(session_id).is_some() {
            self.shown.borrow_mut().retain(|_, s| s != session_id);
            worker.jobs.forget(worker, session_id);
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

    /// The History's list (see [`session::history`]): conversations in memory as they are
    /// there, a running one as running.
    async fn sessions(&self, store: &Store) -> Result<Vec<SessionSummary>, String> {
        let (mut checkpoints, mut unreadable) =
            (Vec::<Checkpoint>::new(), Vec::<Unreadable>::new());
        for read in store.checkpoints().await? {
            match read {
                Ok(cp) => checkpoints.push(cp),
                Err(cannot) => unreadable.push(cannot),
            }
        }
        for cp in &mut checkpoints {
            if let Some(slot) = self.slots.borrow().get(&cp.session_id) {
                *cp = slot.cp.clone();
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
        let none = Sessions { current: None, running: false };
        let mut list = session::history(&checkpoints, &unreadable, &runs, none);
        let slots = self.slots.borrow();
        for summary in &mut list {
            if slots.get(&summary.session_id).is_some_and(|s| s.running.is_some()) {
                summary.status = SessionStatus::Running;
            }
        }
        Ok(list)
    }

    /// Runs `session`'s checkpoint until it pauses or ends.
    fn spawn_run(
        worker: Rc<Worker>,
        session: String,
        store: Rc<Store>,
        settings: Settings,
        prompts: PromptSet,
    ) {
        let waits = {
            let (worker, session) = (worker.clone(), session.clone());
            WaitWatcher::new(move |wait| worker.jobs.waiting(&worker, &session, wait))
        };
        let control = Rc::new(Control::watching(waits));
        let started = worker.tasks.with_slot(&session, |slot| {
            slot.running = Some(control.clone());
            slot.stopping = false;
            slot.cp.clone()
        });
        let Some(mut cp) = started else { return };
        // In the table before anyone awaits its end.
        worker.tasks.sync_job(&worker, &session);
        wasm_bindgen_futures::spawn_local(async move {
            let tasks = &worker.tasks;
            tasks.broadcast_snapshot(&worker, &session);
            // The task's tabs go only where its settings allow while it runs.
            worker.jobs.guard(&worker, &settings).await;
            let parts = parts(&worker, &store, &settings, &session);
            let executor = executor(&parts, &settings, &prompts, &control);
            executor.run(&mut cp).await;
            // Ended from outside (its tab closed) as it was returning with a pause.
            if let Some(why) = control.end_reason() {
                executor.end_failed(&mut cp, &why).await;
            }
            tasks.with_slot(&session, |slot| {
                slot.running = None;
                slot.stopping = false;
                slot.cp = cp;
            });
            tasks.returned.notify();
            tasks.broadcast_snapshot(&worker, &session);
            tasks.sync_job(&worker, &session);
        });
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
/// The prompts with the Settings' edits, or why an edit does not load.
pub(crate) fn prompt_set(settings: &Settings) -> Result<PromptSet, String> {
    PromptSet::with_overrides(&settings.prompt_overrides).map_err(|error| {
        format!("An edited prompt file has a problem: {error}. Fix it in Settings.")
    })
}

pub(crate) type WorkerBrowser<'a> =
    CdpBrowser<'a, chrome::ChromeDebugger, PerformanceClock, ChromeTabs>;
type WorkerExecutor<'a> =
    Executor<'a, FetchHttp, WorkerBrowser<'a>, WorkerCapture<'a>, PerformanceClock>;

/// The worker's browser and capture, which an executor borrows.
struct Parts<'a> {
    browser: WorkerBrowser<'a>,
    capture: WorkerCapture<'a>,
}

/// Hands that carry out one action under `firewall`, with the worker's debugger, clock and
/// tabs, as the agent's do.
pub(crate) fn hands<'a>(
    worker: &'a Worker,
    firewall: &'a Firewall,
) -> Hands<'a, chrome::ChromeDebugger, PerformanceClock, ChromeTabs> {
    Hands {
        sessions: &worker.sessions,
        clock: &PerformanceClock,
        tabs: &ChromeTabs,
        search_url: SEARCH_URL,
        limits: WaitLimits::default(),
        firewall,
    }
}

/// The browser a task or a replay acts through, under `settings`' firewall and text budget.
pub(crate) fn browser<'a>(worker: &'a Worker, settings: &Settings) -> WorkerBrowser<'a> {
    CdpBrowser {
        observe: ObserveOptions {
            text_budget: settings.agent.state_text_chars as usize,
            ..ObserveOptions::default()
        },
        sessions: &worker.sessions,
        observer: &worker.observer,
        clock: &PerformanceClock,
        tabs: &ChromeTabs,
        search_url: SEARCH_URL,
        firewall: Firewall::new(settings),
    }
}

fn parts<'a>(
    worker: &'a Rc<Worker>,
    store: &'a Store,
    settings: &Settings,
    session: &str,
) -> Parts<'a> {
    Parts {
        browser: browser(worker, settings),
        capture: StoreCapture {
            store,
            reporter: TaskReporter { worker, session: session.to_owned() },
        },
    }
}

fn executor<'a>(
    parts: &'a Parts<'a>,
    settings: &'a Settings,
    prompts: &'a PromptSet,
    control: &'a Control,
) -> WorkerExecutor<'a> {
    Executor {
        cx: engine_web::call_context(control, prompts, settings),
        browser: &parts.browser,
        capture: &parts.capture,
    }
}

/// Runs `f` with a one-off executor, for changes to a task that is not running.
/// Runs `f` with an executor of `session` outside any run: bundled prompts, its own control.
async fn with_executor<R>(
    worker: &Rc<Worker>,
    store: &Store,
    settings: &Settings,
    session: &str,
    f: impl AsyncFnOnce(&WorkerExecutor<'_>) -> R,
) -> R {
    let parts = parts(worker, store, settings, session);
    let prompts = PromptSet::bundled();
    let control = Control::default();
    f(&executor(&parts, settings, &prompts, &control)).await
}

/// The variants each prompt has, with the Studio's overrides (which may add some).
fn prompt_variants(settings: Option<&Settings>) -> lean::StrMap<Vec<String>> {
    let overrides = settings.map(|s| s.prompt_overrides.clone()).unwrap_or_default();
    PromptSet::with_overrides(&overrides).unwrap_or_else(|_| PromptSet::bundled()).variant_names()
}
