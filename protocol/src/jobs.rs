//! Jobs as pages see them: every task, replay, reflection, pipeline run and recording the
//! worker runs or holds, listed in every panel's Jobs view.
//!
//! The rules behind these (which jobs may run together, what a restart or a closed tab
//! does to each) are the engine's `jobs` module; this is only their wire shape.

use serde::Serialize;

use crate::TabId;
use crate::agent::Spend;

/// What kind of work a job is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// An agent task from a panel (its id is the conversation's session id).
    Task,
    /// A workflow replay (its id is the replay's run id).
    Replay,
    /// A recording being reflected into a workflow (its id is `reflect:<recording id>`).
    Reflection,
    /// A pipeline run (its id is `pipeline:<n>`).
    Pipeline,
    /// A person's recording (its id is the recording's id).
    Recording,
}

impl JobKind {
    /// The word the Jobs view shows.
    pub fn label(self) -> &'static str {
        match self {
            JobKind::Task => "Task",
            JobKind::Replay => "Replay",
            JobKind::Reflection => "Reflection",
            JobKind::Pipeline => "Pipeline",
            JobKind::Recording => "Recording",
        }
    }

    /// Whether a job of this kind drives (acts in) its tab, so no other job may drive it.
    pub fn drives_tab(self) -> bool {
        !matches!(self, JobKind::Reflection)
    }
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Running,
    /// Waiting for the person: paused by them, by a restart, or asking a question.
    Paused,
    Done,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub fn is_live(self) -> bool {
        matches!(self, JobStatus::Running | JobStatus::Paused)
    }

    pub fn label(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Paused => "paused",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }
}

/// One job in the Jobs view.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct JobSummary {
    /// Unique among the worker's jobs; requests name a job by it.
    pub id: String,
    pub kind: JobKind,
    /// The tab it works in (none for a reflection).
    #[serde(default)]
    pub tab_id: Option<TabId>,
    /// The tab's title as Chrome's debugger lists it, when known.
    #[serde(default)]
    pub tab_title: String,
    /// The task's text, the workflow's or the pipeline's name.
    pub title: String,
    pub status: JobStatus,
    /// The agent asked the person something and waits for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Why it paused or failed, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Paused by the person themselves (Pause & Steer), so nothing waits on them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused_by_user: bool,
    /// Steps taken so far.
    pub step: u32,
    #[serde(default)]
    pub spend: Spend,
    /// The provider asked to wait (a rate limit): what the panel shows meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ProviderWait>,
    /// The MCP client that started it (its `clientInfo` name), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven_by: Option<String>,
}

impl JobSummary {
    /// A job with nothing but its identity and state: no question, reason, steps or spend.
    pub fn new(
        id: impl Into<String>,
        kind: JobKind,
        tab_id: Option<TabId>,
        title: impl Into<String>,
        status: JobStatus,
    ) -> JobSummary {
        JobSummary {
            id: id.into(),
            kind,
            tab_id,
            tab_title: String::new(),
            title: title.into(),
            status,
            question: None,
            why: None,
            paused_by_user: false,
            step: 0,
            spend: Spend::default(),
            waiting: None,
            driven_by: None,
        }
    }

    /// Whether the person is needed: a question, or a pause they did not ask for.
    pub fn needs_user(&self) -> bool {
        self.status == JobStatus::Paused && !self.paused_by_user
    }
}

/// A model call waiting before it is retried, because the provider answered 429 or 5xx.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ProviderWait {
    /// The HTTP status the provider answered.
    pub status: u16,
    /// How long the call waits before the next attempt, in milliseconds.
    pub wait_ms: f64,
    /// The attempt that will follow (2 for the first retry).
    pub attempt: u32,
    /// Milliseconds since the epoch when the wait began.
    pub since: f64,
}

impl ProviderWait {
    /// "waiting for the provider, 4 s": what the panel shows, in whole seconds (at least 1).
    pub fn describe(&self) -> String {
        let secs = (self.wait_ms / 1000.0).ceil().max(1.0);
        let why = if self.status == 429 { "rate limit" } else { "server error" };
        format!("Waiting for the provider ({why}, HTTP {}), {secs:.0} s", self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_and_statuses_travel_as_words() {
        assert_eq!(serde_json::to_value(JobKind::Pipeline).unwrap(), json!("pipeline"));
        assert_eq!(serde_json::to_value(JobStatus::Paused).unwrap(), json!("paused"));
        assert!(!JobKind::Reflection.drives_tab() && JobKind::Recording.drives_tab());
    }

    #[test]
    fn a_provider_wait_reads_in_seconds() {
        let wait = ProviderWait { status: 429, wait_ms: 3_200.0, attempt: 2, since: 0.0 };
        assert_eq!(wait.describe(), "Waiting for the provider (rate limit, HTTP 429), 4 s");
    }
}
