//! The rules of chat sessions: which requests a session takes in which state, which
//! checkpoint a new task runs in, what comes back after a restart, and how the History lists
//! the stored ones.
//!
//! The worker holds the current checkpoint and whether a run is under way; it asks these
//! functions what a request means and carries out the answer (signal the running task's
//! `Control`, run the executor, store, broadcast). A refusal is the sentence the panel shows.

use protocol::TabId;
use protocol::agent::{Actor, ExecutionState, SessionStatus, SessionSummary, TaskStatus};
use protocol::settings::Settings;

use crate::executor::CaptureError;
use crate::executor::{Checkpoint, Unreadable};

/// Where checkpoints are stored, by session id. The worker's is IndexedDB.
#[allow(async_fn_in_trait)]
pub trait CheckpointStore {
    /// The stored checkpoint of `session_id`; `Err` says why it cannot be read.
    async fn checkpoint(&self, session_id: &str) -> Result<Option<Checkpoint>, String>;
    async fn put_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError>;
}

/// Said when a task comes back after the worker restarted.
pub const RESTARTED: &str =
    "Chrome stopped the agent's background worker. Nothing was lost: press Resume to continue.";

const NOT_CURRENT: &str = "That task is no longer current.";

/// The worker's sessions as a request finds them.
#[derive(Clone, Copy)]
pub struct Sessions<'a> {
    /// The session the panel shows, as it is in memory.
    pub current: Option<&'a Checkpoint>,
    /// A run of the current checkpoint is under way.
    pub running: bool,
}

/// What a follow-up message does.
#[derive(Debug, PartialEq)]
pub enum FollowUp {
    /// Steering: the running task reads it at its next step.
    Steer,
    /// The task is paused or ended: the message joins its memory now.
    Apply,
}

/// What a resume does.
#[derive(Debug, PartialEq)]
pub enum Resume {
    /// It is running already (a second press): nothing.
    AlreadyRunning,
    Run,
}

/// What a stop does.
#[derive(Debug, PartialEq)]
pub enum Cancel {
    /// Interrupt the run under way; it ends itself as cancelled.
    Interrupt,
    /// Nothing runs: end the checkpoint as cancelled here.
    Finish,
}

/// What opening a conversation from the History does.
#[derive(Debug, PartialEq)]
pub enum Open {
    /// It is the current one already.
    Current,
    /// Load it from the store; the current one stays as it is, in its own checkpoint.
    Load,
}

impl Sessions<'_> {
    fn is_current(&self, session_id: &str) -> bool {
        self.current.is_some_and(|cp| cp.session_id == session_id)
    }

    fn current_only(&self, session_id: &str) -> Result<(), String> {
        if self.is_current(session_id) { Ok(()) } else { Err(NOT_CURRENT.into()) }
    }

    /// A new task (or a follow-up task in a session) may start.
    pub fn start(&self, task: &str) -> Result<(), String> {
        if task.trim().is_empty() {
            return Err("Type a task first.".into());
        }
        if self.running {
            return Err(
                "A task is running. Send your message as steering, or stop the task first.".into(),
            );
        }
        Ok(())
    }

    pub fn follow_up(&self, session_id: &str) -> Result<FollowUp, String> {
        self.current_only(session_id)?;
        Ok(if self.running { FollowUp::Steer } else { FollowUp::Apply })
    }

    /// Pausing: `true` when there is a run to interrupt (a paused or ended task stays so).
    pub fn pause(&self, session_id: &str) -> Result<bool, String> {
        self.current_only(session_id)?;
        Ok(self.running)
    }

    pub fn resume(&self, session_id: &str) -> Result<Resume, String> {
        self.current_only(session_id)?;
        if self.running {
            return Ok(Resume::AlreadyRunning);
        }
        match self.current.map(|cp| &cp.status) {
            Some(TaskStatus::Paused { .. }) => Ok(Resume::Run),
            _ => Err("The task is not paused.".into()),
        }
    }

    pub fn cancel(&self, session_id: &str) -> Result<Cancel, String> {
        self.current_only(session_id)?;
        Ok(if self.running { Cancel::Interrupt } else { Cancel::Finish })
    }

    pub fn open(&self, session_id: &str) -> Result<Open, String> {
        if self.is_current(session_id) {
            return Ok(Open::Current);
        }
        if self.running {
            return Err("A task is running. Stop it, or wait until it ends, before opening another conversation.".into());
        }
        Ok(Open::Load)
    }

    /// Deleting a conversation (its checkpoint): `Ok(true)` when it is the current one.
    pub fn delete(&self, session_id: &str) -> Result<bool, String> {
        let current = self.is_current(session_id);
        if current && self.running {
            return Err(
                "This conversation's task is running. Stop it before deleting the conversation."
                    .into(),
            );
        }
        Ok(current)
    }
}

/// A task the panel asked to start.
pub struct NewTask<'a> {
    pub tab_id: TabId,
    pub task: &'a str,
    /// The conversation it continues, if the panel named one.
    pub session_id: Option<&'a str>,
    /// Ids for its run and, when it opens a new conversation, the session.
    pub run_id: &'a str,
    pub new_session_id: &'a str,
    pub settings: &'a Settings,
    pub epoch_ms: f64,
}

/// The checkpoint a new task runs in, which becomes `current` (marked running).
///
/// A follow-up task in a finished conversation continues it, keeping what the agents
/// learned: the current one, or a stored one (reopened from History, or the worker
/// restarted since). Anything else opens a new conversation; a paused current task it
/// replaces is ended as cancelled and stored. A stored conversation that cannot be read is
/// an error, rather than a silent start in a new one; `current` is then left as it was.
pub async fn start(
    store: &impl CheckpointStore,
    current: &mut Option<Checkpoint>,
    new: NewTask<'_>,
) -> Result<(), String> {
    let is_current = |session: &str| current.as_ref().is_some_and(|cp| cp.session_id == session);
    let stored = match new.session_id {
        Some(session) if !is_current(session) => store.checkpoint(session).await?,
        _ => None,
    };
    let continuing = new.session_id.is_some_and(is_current);
    let previous = current.take();
    let NewTask { tab_id, task, run_id, settings, epoch_ms, .. } = new;
    let mut cp = match (stored, continuing, previous) {
        (Some(mut cp), ..) if cp.status.is_finished() => {
            cp.follow_up_task(run_id, tab_id, task, settings, epoch_ms);
            cp
        }
        (_, true, Some(mut cp)) if cp.status.is_finished() => {
            cp.follow_up_task(run_id, tab_id, task, settings, epoch_ms);
            cp
        }
        (_, _, previous) => {
            if let Some(mut old) = previous
                && !old.status.is_finished()
            {
                old.status = TaskStatus::Cancelled;
                // The new task goes ahead either way; the old one's last state was stored
                // at its pause.
                let _ = store.put_checkpoint(&old).await;
            }
            Checkpoint::new_task(new.new_session_id, run_id, tab_id, task, settings, epoch_ms)
        }
    };
    cp.status = TaskStatus::Running;
    *current = Some(cp);
    Ok(())
}

/// After a (re)start, the conversations to bring back: every unfinished one, oldest first,
/// so where two were started from one tab, the newer is the one its panel shows. (One left
/// running must then be paused as `jobs::after_restart` says.)
pub fn to_restore(checkpoints: impl IntoIterator<Item = Checkpoint>) -> Vec<Checkpoint> {
    let mut live: Vec<Checkpoint> =
        checkpoints.into_iter().filter(|cp| !cp.status.is_finished()).collect();
    lean::sort_by(&mut live, |a, b| a.run.updated_at.cmp(&b.run.updated_at));
    live
}

/// What the runs store knows about one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionRuns {
    pub runs: u32,
    /// The task of its earliest run.
    pub first_task: Option<String>,
}

/// The History's list: every stored conversation, newest first. The current one is
/// described as it is in memory (the store may be a step behind); another that says running
/// was cut off by a restart and is paused in effect, as it would be when opened. One whose
/// checkpoint cannot be read is listed as unreadable, saying why.
pub fn history(
    checkpoints: &[Checkpoint],
    unreadable: &[Unreadable],
    runs: &lean::SortedMap<String, SessionRuns>,
    sessions: Sessions<'_>,
) -> Vec<SessionSummary> {
    let current = sessions.current;
    let mut list: Vec<SessionSummary> = checkpoints
        .iter()
        .map(|stored| {
            let is_current = current.filter(|c| c.session_id == stored.session_id);
            let cp = is_current.unwrap_or(stored);
            let mut summary = summary(cp, runs.get(&cp.session_id));
            if cp.status == TaskStatus::Running && !(sessions.running && is_current.is_some()) {
                summary.status = SessionStatus::Paused;
            }
            summary
        })
        .collect();
    list.extend(unreadable.iter().map(|u| match current {
        Some(cp) if cp.session_id == u.key => summary(cp, runs.get(&u.key)),
        _ => {
            let runs = runs.get(&u.key);
            u.summary(runs.and_then(|r| r.first_task.as_deref()), runs.map_or(0, |r| r.runs))
        }
    }));
    lean::sort_by(&mut list, |a, b| {
        b.updated_at.cmp(&a.updated_at).then_with(|| a.session_id.cmp(&b.session_id))
    });
    list
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
        status: SessionStatus::from(&cp.status),
        updated_at: cp.run.updated_at.clone(),
        runs: runs.map_or(1, |r| r.runs).max(1),
        panel_tab: Some(cp.panel_tab()),
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

#[cfg(test)]
mod tests;
