//! Runs and steps as the worker stores them (`agent-engine::run::{AgentRun, StepRecord}`,
//! camelCase), plus the fields annotation adds.
//!
//! The page reads these records and writes them back. Fields this crate does not name are
//! kept in `extra` and written back as they were, so a newer worker's fields survive an
//! older page's save. A test holds these types to the engine's.

use run_contract::telemetry::Telemetry;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The review status flow: draft → in-review → approved | rejected → archived.
pub use run_contract::ReviewStatus;
/// The step's action and thoughts are the capture's own types, read leniently.
pub use run_records::{ActionKind, NavigatorNote, NavigatorNotes, StepAction, Thought, Thoughts};

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Subtask {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// First and last step index, inclusive.
    pub step_range: [u32; 2],
    /// pending | annotated | reviewed
    #[serde(default = "pending")]
    pub status: String,
}

fn pending() -> String {
    "pending".into()
}

/// One captured run with its annotation header.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    #[serde(default)]
    pub task_id: String,
    #[serde(default)]
    pub task_prompt: String,
    #[serde(default)]
    pub follow_ups: Vec<String>,
    #[serde(default)]
    pub status: ReviewStatus,
    /// How the agent's task ended: running, paused, done, failed or cancelled.
    #[serde(default)]
    pub agent_status: String,
    #[serde(default)]
    pub final_answer: Option<String>,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
    #[serde(default)]
    pub created_by: String,
    #[serde(default)]
    pub reviewed_by: Option<String>,
    #[serde(default)]
    pub subtasks: Vec<Subtask>,
    #[serde(default)]
    pub total_steps: u32,
    #[serde(default)]
    pub start_url: String,
    #[serde(default)]
    pub models: Value,
    #[serde(default)]
    pub usage: Value,
    #[serde(default)]
    pub cost: f64,
    // ---- annotation fields, absent on a freshly captured run ----
    /// Who annotates the run (a user name or sync user id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotator: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Names of the collections the run is in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collections: Vec<String>,
    /// The latest local version number (0: never saved by the page).
    #[serde(default)]
    pub version: u32,
    /// The run's quality score (0–100), kept current by the page on every save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// The server's version this copy was last synced at (`If-Match`), if ever synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<i64>,
    /// What the agents decided and why, pauses, questions, steering and spend per role, as
    /// captured (seed `001_…` §7); read-only here.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Telemetry::is_empty"
    )]
    pub telemetry: Telemetry,
    /// On a workflow's replay: the workflow, its parameter values and the fast path's share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<run_records::ReplayOrigin>,
    /// The MCP client that started the run, when one did (`run::AgentRun::driven_by`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven_by: Option<String>,
    /// Time spent annotating the run in this browser, in ms, added at every save (seed §7.H
    /// "time to annotate"). Local, like `collections`: sync neither sends nor replaces it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub active_ms: u64,
    /// How many times the run was submitted for review here (seed §7.H "review iterations").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub review_rounds: u32,
    /// Whatever else the record holds, written back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct ScreenshotRef {
    pub key: String,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default)]
    pub mime: String,
    #[serde(default)]
    pub bytes: usize,
}

/// Where a step stands in annotation (the left panel's status dot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepState {
    NeedsAnnotation,
    Done,
    Flagged,
}

/// One captured step with its annotation fields.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub run_id: String,
    pub index: u32,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub screenshot: Option<ScreenshotRef>,
    #[serde(default)]
    pub action: StepAction,
    /// Every action of the step as carried out (engine shapes, kept as they are).
    #[serde(default)]
    pub actions: Vec<Value>,
    #[serde(default)]
    pub thoughts: Thoughts,
    #[serde(default)]
    pub extended_thoughts: Vec<String>,
    /// Marked complete by an annotator.
    #[serde(default)]
    pub verified: bool,
    /// Issues flagged on the step (seed §1 `Issue`, see [`crate::issues`]); an open one flags
    /// it for review.
    #[serde(default)]
    pub issues: Vec<Value>,
    #[serde(default)]
    pub last_edited_by: String,
    #[serde(default)]
    pub last_edited_at: String,
    /// ok | failed | cancelled
    #[serde(default)]
    pub outcome: String,
    #[serde(default)]
    pub trace_ids: Vec<String>,
    #[serde(default)]
    pub duration_ms: f64,
    /// The Navigator's notes beside its thoughts (evaluation, memory, next goal), editable;
    /// none on steps the Navigator did not answer for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub navigator: Option<NavigatorNotes>,
    /// The thoughts whose text a model drafted and a person accepted (see
    /// [`crate::drafting`]).
    #[serde(default, deserialize_with = "null_as_default", skip_serializing_if = "Vec::is_empty")]
    pub drafted_thoughts: Vec<Thought>,
    /// The server's version of this step when last synced (`baseVersion`), if ever synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Step {
    /// Flagged while an issue is open (marking it complete keeps its issues); done once
    /// marked complete; else it needs annotation.
    pub fn state(&self) -> StepState {
        if self.issues.iter().any(crate::issues::value_is_open) {
            StepState::Flagged
        } else if self.verified {
            StepState::Done
        } else {
            StepState::NeedsAnnotation
        }
    }
}

/// Percentage of a run's steps marked complete.
pub fn progress(steps: &[Step]) -> u8 {
    if steps.is_empty() {
        return 0;
    }
    let done = steps.iter().filter(|s| s.state() == StepState::Done).count();
    (done * 100 / steps.len()) as u8
}

/// Subtask statuses (seed §2 "pending → annotated → reviewed").
pub const SUBTASK_PENDING: &str = "pending";
pub const SUBTASK_ANNOTATED: &str = "annotated";
pub const SUBTASK_REVIEWED: &str = "reviewed";

/// Where a subtask stands: pending while a step in it is not complete (or has an open
/// issue), annotated once every one is, reviewed once the run is also approved.
pub fn subtask_status(subtask: &Subtask, steps: &[Step], run_status: ReviewStatus) -> &'static str {
    let [first, last] = subtask.step_range;
    let mut inside = steps.iter().filter(|s| s.index >= first && s.index <= last).peekable();
    if inside.peek().is_none() || inside.any(|s| s.state() != StepState::Done) {
        SUBTASK_PENDING
    } else if matches!(run_status, ReviewStatus::Approved | ReviewStatus::Archived) {
        SUBTASK_REVIEWED
    } else {
        SUBTASK_ANNOTATED
    }
}

/// Sets every subtask's status from its steps (see [`subtask_status`]); saves do this.
pub fn update_subtasks(run: &mut Run, steps: &[Step]) {
    let status = run.status;
    for subtask in &mut run.subtasks {
        subtask.status = subtask_status(subtask, steps, status).to_owned();
    }
}

/// The step to open first: the first not marked complete, else the first.
pub fn first_incomplete(steps: &[Step]) -> Option<u32> {
    steps.iter().find(|s| s.state() != StepState::Done).or(steps.first()).map(|s| s.index)
}

/// A field a server may send as `null` when it has none: read as its default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests;
