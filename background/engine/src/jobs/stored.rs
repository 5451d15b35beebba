//! Jobs as they are stored: versioned, upgraded step by step when read, and never dropped
//! in silence (what cannot be read comes back as an [`UnreadableJob`] the Jobs list shows).
//!
//! A task's state is its `Checkpoint` (`executor::stored`). A replay's is a
//! [`StoredReplay`] in the `replays` store. Changing its shape: a new field with a sensible
//! default gets `#[serde(default)]`; anything else raises [`REPLAY_FORMAT`] and appends the
//! step from the previous version to [`REPLAY_UPGRADES`], with a fixture of the previous
//! release's row and a test that reads it.

use serde::Serialize;
use serde_json::{Map, Value};

use protocol::jobs::{JobKind, JobStatus, JobSummary};
use protocol::workflow::ReplayProgress;

use crate::workflow::replay::{ReplayState, ReplayStatus};

/// The shape of a stored replay this build writes. Its key is `format`: a version-1 row
/// (stored before versions) had a `version` field that was the workflow's version.
pub const REPLAY_FORMAT: u32 = 2;

type Upgrade = fn(&mut Map<String, Value>);

/// `REPLAY_UPGRADES[n - 1]` turns a format-`n` row into format `n + 1`.
const REPLAY_UPGRADES: [Upgrade; REPLAY_FORMAT as usize - 1] = [replay_from_1];

/// Format 1 named the workflow's version `version`; format 2 calls it `workflowVersion`
/// and keeps the row's own format in `format`.
fn replay_from_1(row: &mut Map<String, Value>) {
    if let Some(version) = row.remove("version") {
        row.insert("workflowVersion".into(), version);
    }
}

/// What the `replays` store keeps of a replay: enough to show it and resume it after a
/// restart.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredReplay {
    pub format: u32,
    pub workflow_id: String,
    pub workflow_version: u32,
    pub workflow_name: String,
    pub subtasks: u32,
    pub fast_path: bool,
    /// Why it is paused, when the worker paused it (a restart, a closed tab).
    #[serde(default)]
    pub why: Option<String>,
    pub state: ReplayState,
}

impl StoredReplay {
    pub fn status(&self) -> JobStatus {
        self.state.status.job_status()
    }

    pub fn is_live(&self) -> bool {
        self.status().is_live()
    }

    /// Why it paused or failed, for a person.
    pub fn why(&self) -> Option<String> {
        match &self.state.status {
            ReplayStatus::Paused => self.why.clone(),
            ReplayStatus::Failed { subtask, why } => Some(format!("Subtask {subtask:?}: {why}")),
            _ => None,
        }
    }

    pub fn progress(&self) -> ReplayProgress {
        let state = &self.state;
        ReplayProgress {
            run_id: state.run.id.clone(),
            workflow_id: self.workflow_id.clone(),
            version: self.workflow_version,
            workflow_name: self.workflow_name.clone(),
            tab_id: state.tab,
            subtask: state.subtask as u32,
            subtasks: self.subtasks,
            step: state.step,
            model_calls: state.model_calls,
            calls_saved: state.calls_saved,
            fast_path: self.fast_path,
            status: self.status(),
            why: self.why(),
            extracts: state.extracts.clone(),
            question: state.question.clone(),
        }
    }

    /// Its row in the Jobs list (the tab's title is the shell's to fill in).
    pub fn summary(&self) -> JobSummary {
        JobSummary {
            id: self.state.run.id.clone(),
            kind: JobKind::Replay,
            tab_id: Some(self.state.tab),
            tab_title: String::new(),
            title: self.workflow_name.clone(),
            status: self.status(),
            question: self.state.question.clone(),
            why: self.why(),
            // Paused with no question and no reason of the worker's: the person paused it.
            paused_by_user: self.status() == JobStatus::Paused
                && self.state.question.is_none()
                && self.why.is_none(),
            step: self.state.step,
            spend: Default::default(),
            waiting: None,
            driven_by: self.state.run.driven_by.clone(),
        }
    }

    /// Ends it as failed, saying why (a closed tab, a restart that cannot resume it).
    pub fn fail(&mut self, why: &str, at: &str) {
        let subtask = format!("{}", self.state.subtask + 1);
        self.state.status = ReplayStatus::Failed { subtask, why: why.to_owned() };
        // An ended replay waits for no answer; its run says why, as the replay loop's do.
        self.state.question = None;
        self.state.run.final_answer = self.why();
        self.state.run.agent_status = JobStatus::Failed;
        self.state.run.updated_at = at.to_owned();
    }

    /// Pauses it, saying why.
    pub fn pause(&mut self, why: &str) {
        self.state.status = ReplayStatus::Paused;
        self.state.run.agent_status = JobStatus::Paused;
        self.why = Some(why.to_owned());
    }
}

/// A stored job that could not be read. It stays stored; the Jobs list shows it, saying
/// why, so an upgrade never loses a paused job without a word.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableJob {
    pub key: String,
    pub kind: JobKind,
    pub reason: String,
    /// What could still be read of its name.
    pub title: Option<String>,
}

impl UnreadableJob {
    pub fn log_line(&self) -> String {
        format!(
            "the stored {:?} job {} could not be read (kept): {}",
            self.kind, self.key, self.reason
        )
    }

    pub fn summary(&self) -> JobSummary {
        let title = self.title.as_deref().unwrap_or("(unknown)");
        JobSummary {
            id: self.key.clone(),
            kind: self.kind,
            tab_id: None,
            tab_title: String::new(),
            title: title.to_owned(),
            status: JobStatus::Failed,
            question: None,
            why: Some(format!("Could not be read: {}. It is kept as it was stored.", self.reason)),
            paused_by_user: false,
            step: 0,
            spend: Default::default(),
            waiting: None,
            driven_by: None,
        }
    }
}

/// Reads a replay row stored under `key`, upgrading an older format first.
pub fn read_replay(key: &str, value: Value) -> Result<StoredReplay, UnreadableJob> {
    let unreadable = |reason: String, row: Option<&Map<String, Value>>| UnreadableJob {
        key: key.to_owned(),
        kind: JobKind::Replay,
        reason,
        title: row.and_then(|r| r.get("workflowName")).and_then(Value::as_str).map(str::to_owned),
    };
    let Value::Object(mut row) = value else {
        return Err(unreadable("it is not an object".into(), None));
    };
    let format = match row.get("format") {
        None | Some(Value::Null) => 1,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(unreadable(
                    format!("its format is {v}, which no release wrote"),
                    Some(&row),
                ));
            }
        },
    };
    if format > u64::from(REPLAY_FORMAT) {
        let reason = format!(
            "it was stored by a newer version of AlphaScout (replay format {format}; this one \
             reads up to {REPLAY_FORMAT})"
        );
        return Err(unreadable(reason, Some(&row)));
    }
    for upgrade in &REPLAY_UPGRADES[format as usize - 1..] {
        upgrade(&mut row);
    }
    row.insert("format".into(), Value::from(REPLAY_FORMAT));
    let name = row.get("workflowName").cloned();
    serde_json::from_value(Value::Object(row)).map_err(|error| {
        let mut kept = Map::new();
        if let Some(name) = name {
            kept.insert("workflowName".into(), name);
        }
        unreadable(format!("format {format} data that does not fit: {error}"), Some(&kept))
    })
}
