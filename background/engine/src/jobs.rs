//! The job runtime's rules, as plain functions over the table of jobs.
//!
//! A job is anything the worker runs on the person's behalf: a task, a workflow replay, a
//! reflection, a pipeline run or a recording. The worker keeps one [`Job`] row per job it
//! runs or holds; before it starts, routes, restores or ends one it asks these functions,
//! and carries out the answer (spawn the run, signal its `Control`, store, broadcast).
//!
//! The rules:
//! - **Tabs.** At most one job drives a tab. A paused task's tab takes a new task (the
//!   session rules decide whether it continues or replaces it); any other paused job keeps
//!   its tab until it is resumed or stopped. A recording and a task are never on one tab.
//!   A job started by another (a pipeline step's task or replay) works in its parent's tab.
//! - **How many.** At most [`Limits::max_running`] jobs that call models run at once
//!   (recordings are the person's own work and do not count; a child job counts as its
//!   parent).
//! - **Restart.** After Chrome restarts the worker, a job that was running comes back as
//!   [`after_restart`] says: tasks and replays paused and resumable, a recording going on,
//!   a reflection or pipeline run ended saying why (neither can pick up mid-call).
//! - **Closed tab.** A live job whose tab closes ends with [`TAB_CLOSED`]; what it captured
//!   stays. A recording stops and keeps its steps.
//! - **Routing.** A stop, pause, steer or answer names its job by id and reaches that job
//!   only ([`route`]).

pub mod stored;

use protocol::TabId;
pub use protocol::jobs::{JobKind, JobStatus};

/// A job as the rules see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: String,
    pub kind: JobKind,
    /// The tab it drives now (none for a reflection).
    pub tab: Option<TabId>,
    pub status: JobStatus,
    /// The job that started it and waits for it (a pipeline run), if any.
    pub parent: Option<String>,
}

impl Job {
    pub fn new(id: impl Into<String>, kind: JobKind, tab: Option<TabId>) -> Job {
        Job { id: id.into(), kind, tab, status: JobStatus::Running, parent: None }
    }

    pub fn with_parent(mut self, parent: impl Into<String>) -> Job {
        self.parent = Some(parent.into());
        self
    }

    pub fn with_status(mut self, status: JobStatus) -> Job {
        self.status = status;
        self
    }

    fn is_live(&self) -> bool {
        self.status.is_live()
    }

    /// Whether it counts against [`Limits::max_running`].
    fn counts(&self) -> bool {
        self.status == JobStatus::Running
            && self.kind != JobKind::Recording
            && self.parent.is_none()
    }
}

/// How many jobs may run at once (Settings' `agent.max_jobs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_running: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_running: 3 }
    }
}

/// Said when a job's tab was closed under it.
pub const TAB_CLOSED: &str =
    "The tab was closed, so this job ended. Everything it captured until then is kept.";

/// Whether `new` may start beside `jobs`; `Err` is the sentence the panel shows.
///
/// `new.id` may already be in the table (a paused job resuming): its own row is ignored.
pub fn admit(jobs: &[Job], new: &Job, limits: Limits) -> Result<(), String> {
    let others = || jobs.iter().filter(|j| j.id != new.id && j.is_live());
    if let Some(tab) = new.tab.filter(|_| new.kind.drives_tab()) {
        let parent = new.parent.as_deref();
        for other in others().filter(|j| j.tab == Some(tab) && j.kind.drives_tab()) {
            if Some(other.id.as_str()) == parent || other.parent.as_deref() == Some(&new.id) {
                continue;
            }
            let recording = (other.kind == JobKind::Recording) != (new.kind == JobKind::Recording);
            if recording {
                return Err(if other.kind == JobKind::Recording {
                    "This tab is being recorded: stop the recording before the agent works here."
                } else {
                    "The agent works in this tab: record in another tab, or stop the job first."
                }
                .into());
            }
            match (other.status, other.kind, new.kind) {
                // A new task in a tab whose task is paused: the session rules continue or
                // replace it.
                (JobStatus::Paused, JobKind::Task, JobKind::Task) => {}
                (JobStatus::Running, kind, _) => {
                    return Err(format!(
                        "A {} is running in this tab: stop it, or use another tab.",
                        noun(kind)
                    ));
                }
                (_, kind, _) => {
                    return Err(format!(
                        "A paused {} holds this tab: resume or stop it first, or use another tab.",
                        noun(kind)
                    ));
                }
            }
        }
    }
    let counts = Job { status: JobStatus::Running, ..new.clone() }.counts();
    let running = others().filter(|j| j.counts()).count();
    if counts && running >= limits.max_running {
        return Err(format!(
            "{running} jobs are running, the most Settings allow at once: wait for one to \
             end, stop one in the Jobs list, or raise the limit in Settings."
        ));
    }
    Ok(())
}

fn noun(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Task => "task",
        JobKind::Replay => "replay",
        JobKind::Reflection => "reflection",
        JobKind::Pipeline => "pipeline run",
        JobKind::Recording => "recording",
    }
}

/// What becomes of a stored job when the worker starts again.
#[derive(Debug, Clone, PartialEq)]
pub enum Restart {
    /// As it was (paused or ended jobs).
    Keep,
    /// It was running: paused, saying why; the person resumes it.
    Pause { why: &'static str },
    /// It goes on by itself (a recording: the page kept recording meanwhile).
    Continue,
    /// It cannot pick up mid-way: ended as failed, saying why.
    Fail { why: &'static str },
}

/// Said of a task or replay paused by a restart.
pub const RESTARTED: &str = crate::session::RESTARTED;
/// Said of a reflection or pipeline run cut off by a restart.
pub const CUT_OFF: &str =
    "Chrome stopped the extension's background worker mid-run. Start it again to retry.";

/// The rule for a job of `kind` found `status` after a restart.
pub fn after_restart(kind: JobKind, status: JobStatus) -> Restart {
    if status != JobStatus::Running {
        return Restart::Keep;
    }
    match kind {
        JobKind::Task | JobKind::Replay => Restart::Pause { why: RESTARTED },
        JobKind::Recording => Restart::Continue,
        JobKind::Reflection | JobKind::Pipeline => Restart::Fail { why: CUT_OFF },
    }
}

/// What to do with one job when its tab closed.
#[derive(Debug, Clone, PartialEq)]
pub enum TabClosed {
    /// Running: interrupt it; it ends as failed with [`TAB_CLOSED`].
    Interrupt { id: String },
    /// Paused: end it as failed with [`TAB_CLOSED`] now.
    End { id: String },
    /// A recording: stop it and keep what it recorded.
    StopRecording { id: String },
}

/// The jobs that `tab` closing ends, and how (jobs elsewhere are untouched).
pub fn on_tab_closed(jobs: &[Job], tab: TabId) -> Vec<TabClosed> {
    jobs.iter()
        .filter(|j| j.is_live() && j.tab == Some(tab))
        .map(|j| match (j.kind, j.status) {
            (JobKind::Recording, _) => TabClosed::StopRecording { id: j.id.clone() },
            (_, JobStatus::Running) => TabClosed::Interrupt { id: j.id.clone() },
            _ => TabClosed::End { id: j.id.clone() },
        })
        .collect()
}

/// A request to a job from a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    Pause,
    Resume,
    Stop,
    /// A message: steering while it runs, an answer (which resumes it) while it is paused.
    Message,
}

/// What a routed command does to its job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Routed {
    /// Signal the running job's control (pause, cancel, or push the message).
    Signal,
    /// Start its run again (a resume, or an answer to a paused job).
    Run,
    /// End the paused job here, as cancelled.
    Finish,
    /// Nothing to do (a pause of a paused job, a resume of a running one).
    Nothing,
}

/// Finds the job a command names and says what the command does to it. Commands reach
/// only the job they name: a job of another tab is never touched.
pub fn route<'a>(jobs: &'a [Job], id: &str, command: Command) -> Result<(&'a Job, Routed), String> {
    let job = jobs.iter().find(|j| j.id == id).ok_or("That job is no longer known.")?;
    let routed = match (job.status, command) {
        (status, _) if !status.is_live() => return Err("That job has ended.".into()),
        (JobStatus::Running, Command::Resume) => Routed::Nothing,
        (JobStatus::Running, _) => Routed::Signal,
        (_, Command::Pause) => Routed::Nothing,
        (_, Command::Resume | Command::Message) if job.kind == JobKind::Recording => {
            Routed::Nothing
        }
        (_, Command::Resume | Command::Message) => Routed::Run,
        (_, Command::Stop) => Routed::Finish,
    };
    Ok((job, routed))
}

/// The jobs that must keep their tabs attached: every live one's tab.
pub fn held_tabs(jobs: &[Job]) -> Vec<TabId> {
    let mut tabs: Vec<TabId> = jobs.iter().filter(|j| j.is_live()).filter_map(|j| j.tab).collect();
    lean::sort(&mut tabs);
    tabs.dedup();
    tabs
}

/// Whether any job that acts in tabs runs now (the firewall's guard stays on while one does).
pub fn any_running(jobs: &[Job]) -> bool {
    jobs.iter().any(|j| {
        j.status == JobStatus::Running && j.kind.drives_tab() && j.kind != JobKind::Recording
    })
}

#[cfg(test)]
mod tests;
