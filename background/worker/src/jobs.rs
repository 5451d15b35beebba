//! The worker's job table: one row per task, replay, reflection, pipeline run and recording
//! it runs or holds, whatever runner carries it out.
//!
//! The rules (which jobs may run together, what a closed tab or a restart does, where a
//! stop goes) are the engine's `jobs` module; this table only holds the rows they are asked
//! about and carries out the side effects every job shares: the Jobs list sent to every
//! page, keeping Chrome from stopping a busy worker, the firewall's guard while any job
//! acts in tabs, and the end each caller (a pipeline step) awaits.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use agent_engine::firewall::Firewall;
use agent_engine::jobs::{self, Job, JobKind, JobStatus, Limits, TabClosed};
use agent_engine::providers::RetryWait;
use protocol::jobs::{JobSummary, ProviderWait};
use protocol::settings::Settings;
use protocol::{TabId, WorkerEvent};
use wasm_bindgen::prelude::*;

use crate::Worker;
use crate::chrome::{self, ChromeTabs};
use crate::signal::{Ended, Notify};

struct Row {
    summary: JobSummary,
    parent: Option<String>,
    ended: Rc<Ended<JobSummary>>,
}

impl Row {
    fn job(&self) -> Job {
        Job {
            id: self.summary.id.clone(),
            kind: self.summary.kind,
            tab: self.summary.tab_id,
            status: self.summary.status,
            parent: self.parent.clone(),
        }
    }
}

/// Pings Chrome while any job runs: extension API calls reset its 30-second idle timer, and
/// a model call can take longer than that with nothing else happening.
struct KeepAlive {
    interval: JsValue,
    _tick: Closure<dyn FnMut()>,
}

#[derive(Default)]
pub struct JobTable {
    rows: RefCell<Vec<Row>>,
    /// Stored jobs that could not be read: listed, never dropped in silence.
    unreadable: RefCell<Vec<JobSummary>>,
    keep_alive: RefCell<Option<KeepAlive>>,
    guarded: Cell<bool>,
    /// Actions outside any job (an MCP client's `act`, a tab's first page) holding the
    /// guard now: it stays on until the last lets go.
    holds: Cell<u32>,
    /// Told at every change of any row: what an MCP call waiting on a job watches.
    pub changes: Notify,
}

impl JobTable {
    fn rules(&self) -> Vec<Job> {
        self.rows.borrow().iter().map(Row::job).collect()
    }

    /// Whether `job` may start (or resume) beside the others; `Err` is for the panel.
    pub fn admit(&self, job: &Job, settings: &Settings) -> Result<(), String> {
        let limits = Limits { max_running: settings.agent.max_jobs.max(1) as usize };
        jobs::admit(&self.rules(), job, limits)
    }

    /// [`JobTable::admit`] for a job that counts against no limit (a recording).
    pub fn admit_unlimited(&self, job: &Job) -> Result<(), String> {
        jobs::admit(&self.rules(), job, Limits { max_running: usize::MAX })
    }

    pub fn summary(&self, id: &str) -> Option<JobSummary> {
        self.rows.borrow().iter().find(|r| r.summary.id == id).map(|r| r.summary.clone())
    }

    pub fn kind_of(&self, id: &str) -> Option<JobKind> {
        self.summary(id).map(|s| s.kind)
    }

    /// Adds or replaces a job's row. A row that ends resolves what callers await. Runners
    /// put a job's row at every save; one that says nothing new tells nobody.
    pub fn put(&self, worker: &Rc<Worker>, summary: JobSummary, parent: Option<String>) {
        let ended = !summary.status.is_live();
        let done = {
            let mut rows = self.rows.borrow_mut();
            match rows.iter_mut().find(|r| r.summary.id == summary.id) {
                Some(row)
                    if row.summary == summary && (parent.is_none() || row.parent == parent) =>
                {
                    return;
                }
                Some(row) => {
                    // A job that ended and starts again (a follow-up task in the same
                    // conversation) gets a fresh end to await.
                    if summary.status.is_live() && row.ended.get().is_some() {
                        row.ended = Ended::new();
                    }
                    row.summary = summary.clone();
                    if parent.is_some() {
                        row.parent = parent;
                    }
                    row.ended.clone()
                }
                None => {
                    let row = Row { summary: summary.clone(), parent, ended: Ended::new() };
                    let done = row.ended.clone();
                    rows.push(row);
                    done
                }
            }
        };
        if ended {
            done.resolve(summary);
        }
        self.changed(worker);
    }

    /// Changes one row in place (its step, spend, a question), if it is there.
    pub fn update(&self, worker: &Rc<Worker>, id: &str, change: impl FnOnce(&mut JobSummary)) {
        let Some(mut summary) = self.summary(id) else { return };
        change(&mut summary);
        self.put(worker, summary, None);
    }

    /// What `id`'s provider told it to wait, for its panel ("waiting for the provider").
    pub fn waiting(&self, worker: &Rc<Worker>, id: &str, wait: Option<RetryWait>) {
        let wait = wait.map(|w| ProviderWait {
            status: w.status,
            wait_ms: w.wait_ms,
            attempt: w.attempt,
            since: js_sys::Date::now(),
        });
        self.update(worker, id, |s| s.waiting = wait);
    }

    /// Resolves when `id` ends, with its last row (at once when it has ended or is unknown).
    pub async fn wait_end(&self, id: &str) -> Option<JobSummary> {
        let ended = self.rows.borrow().iter().find(|r| r.summary.id == id)?.ended.clone();
        Some(ended.wait().await)
    }

    /// The live jobs `parent` started (a pipeline run's task or replay).
    pub fn children(&self, parent: &str) -> Vec<(String, JobKind)> {
        let rows = self.rows.borrow();
        let mine = rows.iter().filter(|r| r.parent.as_deref() == Some(parent));
        mine.filter(|r| r.summary.status.is_live())
            .map(|r| (r.summary.id.clone(), r.summary.kind))
            .collect()
    }

    /// Drops a job's row (its conversation was deleted).
    pub fn forget(&self, worker: &Rc<Worker>, id: &str) {
        self.rows.borrow_mut().retain(|r| r.summary.id != id);
        self.changed(worker);
    }

    pub fn add_unreadable(&self, summary: JobSummary) {
        let mut list = self.unreadable.borrow_mut();
        if !list.iter().any(|s| s.id == summary.id) {
            list.push(summary);
        }
    }

    /// Every job, live ones first (newest first within each group as they were added).
    pub fn list(&self) -> Vec<JobSummary> {
        let rows = self.rows.borrow();
        let live = rows.iter().rev().filter(|r| r.summary.status.is_live());
        let ended = rows.iter().rev().filter(|r| !r.summary.status.is_live());
        live.chain(ended)
            .map(|r| r.summary.clone())
            .chain(self.unreadable.borrow().iter().cloned())
            .collect()
    }

    /// The list as an event (`id` when it answers a request), each tab's title filled in.
    pub async fn event(&self, id: Option<u32>) -> WorkerEvent {
        WorkerEvent::Jobs { id, jobs: self.titled().await }
    }

    /// [`JobTable::list`] with each tab's title (from the debugger's targets, which need no
    /// `tabs` permission).
    async fn titled(&self) -> Vec<JobSummary> {
        let mut list = self.list();
        if let Ok(tabs) = agent_engine::actions::Tabs::list(&ChromeTabs).await {
            for job in &mut list {
                if let Some(tab) = tabs.iter().find(|t| Some(t.id) == job.tab_id) {
                    job.tab_title = tab.title.clone();
                }
            }
        }
        list
    }

    /// Whether a live job holds `tab` (so it stays attached).
    pub fn holds(&self, tab: TabId) -> bool {
        jobs::held_tabs(&self.rules()).contains(&tab)
    }

    pub fn any_live(&self) -> bool {
        self.rows.borrow().iter().any(|r| r.summary.status.is_live())
    }

    /// Guards every attached tab with the firewall while a job acts in tabs.
    pub async fn guard(&self, worker: &Worker, settings: &Settings) {
        self.guard_with(worker, Firewall::new(settings)).await;
    }

    async fn guard_with(&self, worker: &Worker, firewall: Firewall) {
        if !self.guarded.replace(true) {
            // New tabs are held first, so none opened meanwhile slips through.
            worker.new_tabs.start().await;
            worker.sessions.guard(Some(firewall)).await;
        }
    }

    /// Holds the guard for an action taken outside any job (an MCP client's `act`), as a
    /// job's run does: a redirect, a script's navigation or a tab the page opens meets the
    /// firewall. It stays on until [`JobTable::let_go`], called once the page settled.
    pub async fn hold_guard(&self, worker: &Worker, firewall: Firewall) {
        self.holds.set(self.holds.get() + 1);
        self.guard_with(worker, firewall).await;
    }

    /// Ends a [`JobTable::hold_guard`]; the guard goes when no job nor hold needs it.
    pub async fn let_go(&self, worker: &Worker) {
        self.holds.set(self.holds.get().saturating_sub(1));
        self.lift_guard_if_idle(worker).await;
    }

    async fn lift_guard_if_idle(&self, worker: &Worker) {
        if self.guarded.get() && self.holds.get() == 0 && !jobs::any_running(&self.rules()) {
            self.guarded.set(false);
            // New tabs first: none of a job's held tabs may load once its guard is gone.
            worker.new_tabs.stop().await;
            worker.sessions.guard(None).await;
        }
    }

    /// After any change: tell every page, keep the worker alive while jobs run, lift the
    /// guard when none acts in tabs any more, and let go of tabs nothing holds.
    fn changed(&self, worker: &Rc<Worker>) {
        self.changes.notify();
        let running = jobs::any_running(&self.rules());
        let pings = self.rows.borrow().iter().any(|r| r.summary.status == JobStatus::Running);
        self.keep_alive(pings);
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let jobs = &worker.jobs;
            if !running {
                jobs.lift_guard_if_idle(&worker).await;
            }
            worker.ports.broadcast(&jobs.event(None).await);
            if !jobs.any_live() && !worker.recorder.holds_tab() {
                worker.sessions.release_all().await;
            }
        });
    }

    fn keep_alive(&self, on: bool) {
        let mut keep = self.keep_alive.borrow_mut();
        match (on, keep.is_some()) {
            (true, false) => {
                let tick = Closure::<dyn FnMut()>::new(|| {
                    wasm_bindgen_futures::spawn_local(chrome::ping());
                });
                let interval = chrome::set_interval(tick.as_ref().unchecked_ref(), 20_000);
                *keep = Some(KeepAlive { interval, _tick: tick });
            }
            (false, true) => {
                if let Some(old) = keep.take() {
                    chrome::clear_interval(&old.interval);
                }
            }
            _ => {}
        }
    }

    /// A tab closed: every live job in it ends (see [`jobs::on_tab_closed`]).
    pub async fn tab_closed(&self, worker: &Rc<Worker>, tab: TabId) {
        for what in jobs::on_tab_closed(&self.rules(), tab) {
            let (id, running) = match &what {
                TabClosed::Interrupt { id } => (id.clone(), true),
                TabClosed::End { id } => (id.clone(), false),
                TabClosed::StopRecording { .. } => {
                    if let Err(error) = worker.recorder.stop(worker, 0).await {
                        chrome::log(&format!("the closed tab's recording: {error}"));
                    }
                    continue;
                }
            };
            match self.kind_of(&id) {
                Some(JobKind::Task) => worker.tasks.tab_closed(worker, &id, running).await,
                Some(JobKind::Replay) => worker.workflows.tab_closed(worker, &id).await,
                Some(JobKind::Pipeline) => crate::pipelines::tab_closed(worker, &id),
                _ => {}
            }
        }
    }

    /// Stops job `id` whatever its kind (the Jobs view's Stop).
    pub async fn stop(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        job: &str,
    ) -> Result<WorkerEvent, String> {
        let summary = self.summary(job).ok_or("That job is no longer known.")?;
        jobs::route(&self.rules(), job, jobs::Command::Stop)?;
        match summary.kind {
            JobKind::Task => {
                worker.tasks.cancel(worker, job).await.map(|()| WorkerEvent::Done { id })
            }
            JobKind::Replay => {
                let cancel = protocol::workflow::ReplayControl::Cancel;
                worker
                    .workflows
                    .control(worker, job, cancel)
                    .await
                    .map(|()| WorkerEvent::Done { id })
            }
            JobKind::Pipeline => crate::pipelines::stop(worker, id, job),
            JobKind::Recording => worker.recorder.stop(worker, id).await,
            JobKind::Reflection => {
                Err("A reflection cannot be stopped midway; it ends after its current call.".into())
            }
        }
    }
}
