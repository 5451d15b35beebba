//! What a run leaves behind for annotators, in the shape of seed `000_…` §1 (`AgentRun` →
//! `Subtask` → `Step`), plus one trace per model call (seed `002_…`). The executor fills
//! these; the shell stores them (IndexedDB in the worker) through [`Capture`].
//!
//! Field names are camelCase, as the seed writes them, because the annotation page and
//! exports read these records as they are stored.
//!
//! A leaf crate: the engine writes these records, the Prompt Studio and the annotation page
//! read them, and none of those readers links the engine for it.

use protocol::jobs::JobStatus;
use run_contract::telemetry::Telemetry;
use serde::Serialize;
use serde_json::Value;

pub use protocol::agent::{Actor, AgentEvent, EventDetail, EventKind, ExecutionState, TaskStatus};
pub use run_contract::ActionKind;
use run_contract::action::Action;

pub use run_contract::ReviewStatus;

/// How a step's actions ended, as the words `ok`, `failed`, `cancelled` in storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepOutcome {
    Ok,
    Failed,
    Cancelled,
}

impl StepOutcome {
    /// `Ok` when every action of the step worked, else `Failed`.
    pub fn of(ok: bool) -> StepOutcome {
        if ok { StepOutcome::Ok } else { StepOutcome::Failed }
    }
}

/// Tokens a model call used.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One answer of a structured call, for the trace.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Attempt {
    pub model: String,
    pub raw: String,
    /// Why it was rejected; empty for the accepted one.
    pub problems: Vec<String>,
    /// What this answer cost.
    #[serde(default)]
    pub usage: Usage,
}

/// One task carried out by the agent.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRun {
    /// `agentRunId` in the annotation page's URL.
    pub id: String,
    /// `taskId`: the chat session; follow-up tasks in a session are further runs.
    pub task_id: String,
    pub task_prompt: String,
    /// Messages the user sent during the run (steering, answers), in order.
    pub follow_ups: Vec<String>,
    pub status: ReviewStatus,
    /// How the agent's task stands: running, paused, done, failed or cancelled (those
    /// words on the wire, as the annotation page and the sync server read them).
    pub agent_status: JobStatus,
    pub final_answer: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub created_by: String,
    pub reviewed_by: Option<String>,
    /// One per plan the Planner made: the steps carried out under it.
    pub subtasks: Vec<Subtask>,
    pub total_steps: u32,
    pub start_url: String,
    /// Models per role, by name (never keys).
    pub models: Value,
    pub usage: Usage,
    pub cost: f64,
    /// What the agents decided and why, the pauses, questions and steering, and the spend
    /// per role (seed `001_…` §7).
    #[serde(default)]
    pub telemetry: Telemetry,
    /// Set on a workflow's replay: which workflow, with what, and how much of it the fast
    /// path did, so replays are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayOrigin>,
    /// The MCP client (its `clientInfo` name) that started the run, when one did; runs
    /// captured before MCP read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven_by: Option<String>,
}

/// The workflow a replay ran and how it went without the model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplayOrigin {
    pub workflow_id: String,
    pub version: u32,
    /// The parameter values it ran with, examples filled in.
    pub params: std::collections::BTreeMap<String, String>,
    /// The fast path was on.
    pub fast_path: bool,
    /// Steps carried out so far, and those the fast path did without a model call.
    pub steps: u32,
    pub fast_path_steps: u32,
}

impl ReplayOrigin {
    /// What tells this replay from the others: its values and the fast path's share,
    /// as in `size = M, product = socks · fast path 3 of 5 steps`.
    pub fn describe(&self) -> String {
        let values: Vec<String> =
            self.params.iter().map(|(name, value)| format!("{name} = {value}")).collect();
        let fast = if !self.fast_path {
            "fast path off".to_owned()
        } else {
            let steps = if self.steps == 1 { "step" } else { "steps" };
            format!("fast path {} of {} {steps}", self.fast_path_steps, self.steps)
        };
        match values.is_empty() {
            true => format!("no parameters · {fast}"),
            false => format!("{} · {fast}", values.join(", ")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subtask {
    pub id: String,
    pub title: String,
    pub description: String,
    /// First and last step index, inclusive.
    pub step_range: [u32; 2],
    pub status: SubtaskStatus,
}

/// How far annotation of a subtask has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubtaskStatus {
    #[default]
    Pending,
    Annotated,
    Reviewed,
}

/// Where a step's screenshot blob is stored.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotRef {
    /// The key of the blob in the screenshot store.
    pub key: String,
    pub timestamp: String,
    pub mime: String,
    pub bytes: usize,
}

/// The step's main action in the seed's terms. Read leniently (a missing field is empty):
/// the annotation page reads the same rows from imports and older captures.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct StepAction {
    /// The seed's six kinds and the rest of the one vocabulary; older captures' names are
    /// read as the kind they meant.
    #[serde(rename = "type", default)]
    pub kind: ActionKind,
    /// What was acted on, as a person would name it.
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(default)]
pub struct Thoughts {
    /// The evaluation of the previous step, or the start state.
    pub thought1: String,
    /// The current state assessment.
    pub thought2: String,
    /// The next action and its expected result.
    pub thought3: String,
}

impl StepAction {
    /// The record of `action` done on `target` (a person's name for it).
    pub fn of(action: &Action, target: &str) -> StepAction {
        StepAction { kind: action.kind(), target: target.to_owned(), value: action.step_value() }
    }
}

/// One of the three thoughts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, tagged_de::UnitDeserialize,
)]
pub enum Thought {
    #[serde(rename = "thought1")]
    One,
    #[serde(rename = "thought2")]
    Two,
    #[serde(rename = "thought3")]
    Three,
}

impl Thought {
    pub const ALL: [Thought; 3] = [Thought::One, Thought::Two, Thought::Three];

    pub fn key(self) -> &'static str {
        match self {
            Thought::One => "thought1",
            Thought::Two => "thought2",
            Thought::Three => "thought3",
        }
    }

    pub fn number(self) -> u8 {
        match self {
            Thought::One => 1,
            Thought::Two => 2,
            Thought::Three => 3,
        }
    }

    pub fn from_key(key: &str) -> Option<Thought> {
        Thought::ALL.into_iter().find(|t| t.key() == key)
    }
}

impl Thoughts {
    pub fn get(&self, which: Thought) -> &str {
        match which {
            Thought::One => &self.thought1,
            Thought::Two => &self.thought2,
            Thought::Three => &self.thought3,
        }
    }

    pub fn get_mut(&mut self, which: Thought) -> &mut String {
        match which {
            Thought::One => &mut self.thought1,
            Thought::Two => &mut self.thought2,
            Thought::Three => &mut self.thought3,
        }
    }
}

/// The Navigator's own notes at a step beside its three thoughts: its answer's
/// `evaluation_previous_goal`, `memory` and `next_goal`. Kept on the step so an annotator
/// can check and correct them, and the fine-tuning target carries the corrections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct NavigatorNotes {
    pub evaluation_previous_goal: String,
    pub memory: String,
    pub next_goal: String,
}

/// One of the Navigator's notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NavigatorNote {
    Evaluation,
    Memory,
    NextGoal,
}

impl NavigatorNote {
    pub const ALL: [NavigatorNote; 3] =
        [NavigatorNote::Evaluation, NavigatorNote::Memory, NavigatorNote::NextGoal];

    /// The field's name in the record (`navigator.<key>`).
    pub fn key(self) -> &'static str {
        match self {
            NavigatorNote::Evaluation => "evaluationPreviousGoal",
            NavigatorNote::Memory => "memory",
            NavigatorNote::NextGoal => "nextGoal",
        }
    }

    /// The field's name in the Navigator's answer (`current_state.<name>`).
    pub fn answer_key(self) -> &'static str {
        match self {
            NavigatorNote::Evaluation => "evaluation_previous_goal",
            NavigatorNote::Memory => "memory",
            NavigatorNote::NextGoal => "next_goal",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            NavigatorNote::Evaluation => "Evaluation of the previous goal",
            NavigatorNote::Memory => "Memory",
            NavigatorNote::NextGoal => "Next goal",
        }
    }
}

impl NavigatorNotes {
    pub fn get(&self, which: NavigatorNote) -> &str {
        match which {
            NavigatorNote::Evaluation => &self.evaluation_previous_goal,
            NavigatorNote::Memory => &self.memory,
            NavigatorNote::NextGoal => &self.next_goal,
        }
    }

    pub fn get_mut(&mut self, which: NavigatorNote) -> &mut String {
        match which {
            NavigatorNote::Evaluation => &mut self.evaluation_previous_goal,
            NavigatorNote::Memory => &mut self.memory,
            NavigatorNote::NextGoal => &mut self.next_goal,
        }
    }
}

/// One action as carried out, with its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ExecutedAction {
    pub action: Action,
    pub target: String,
    pub ok: bool,
    pub message: String,
}

/// One Navigator step: what the agent saw, thought and did.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub run_id: String,
    pub index: u32,
    pub url: String,
    pub title: String,
    pub screenshot: Option<ScreenshotRef>,
    pub action: StepAction,
    /// Every action of the step in order (the first is `action`).
    pub actions: Vec<ExecutedAction>,
    pub thoughts: Thoughts,
    pub extended_thoughts: Vec<String>,
    pub verified: bool,
    pub issues: Vec<Value>,
    pub last_edited_by: String,
    pub last_edited_at: String,
    pub outcome: StepOutcome,
    pub trace_ids: Vec<String>,
    pub duration_ms: f64,
    /// The Navigator's notes beside its thoughts; none on steps it did not answer for
    /// (recorded, replayed, imported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub navigator: Option<NavigatorNotes>,
    /// The thoughts whose text a model drafted and a person accepted (seed §7.G), so training
    /// can leave them out or weight them; see `annotation_core::drafting`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drafted_thoughts: Vec<Thought>,
}

/// Characters of a rendered prompt by where they come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct PromptChars {
    /// The template and shared rules.
    pub system: usize,
    /// The page state.
    pub state: usize,
    /// Working memory: history, progress, findings, follow-ups, plan.
    pub history: usize,
    pub total: usize,
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmTrace {
    pub id: String,
    pub run_id: String,
    pub step: u32,
    pub role: Actor,
    pub prompt_id: String,
    pub variant: String,
    pub prompt_hash: String,
    pub revision_hash: String,
    /// The template's variables, with the `redacted` paths replaced.
    pub params: Value,
    pub redacted: Vec<String>,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub cost: f64,
    pub started_at: String,
    pub duration_ms: f64,
    /// Every answer, including the ones repaired.
    pub attempts: Vec<Attempt>,
    pub error: Option<String>,
    pub chars: PromptChars,
    /// The exact prompt sent, rendered from `params` (so the `redacted` parts read
    /// `[redacted]` here too).
    #[serde(default)]
    pub prompt: SentPrompt,
    /// Why the edited prompt file could not be rendered, when the bundled one was sent
    /// instead (seed 003's fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// What a model call sent: its rendered messages and its parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct SentPrompt {
    pub system: String,
    pub user: String,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The name the answer's JSON schema is sent under.
    pub schema_name: Option<String>,
    /// Screenshots sent with it (not stored in the trace: the step's own screenshot is).
    pub images: usize,
}

/// Milliseconds since the epoch as ISO 8601 UTC (`2026-11-22T06:37:49.123Z`); a clock
/// before 1970 reads as the epoch.
pub fn iso8601(epoch_ms: f64) -> String {
    run_contract::time::format_ms(epoch_ms.max(0.0) as i64)
}

/// Replaces the value at each dot-path of `paths` in `params` with `"[redacted]"`, and
/// returns the paths that existed.
pub fn redact(params: &mut Value, paths: &[String]) -> Vec<String> {
    let mut done = Vec::new();
    for path in paths {
        let pointer = format!("/{}", path.replace('.', "/"));
        if let Some(node) = params.pointer_mut(&pointer) {
            *node = Value::String("[redacted]".into());
            done.push(path.clone());
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_replay_is_told_apart_by_its_values_and_the_fast_paths_share() {
        let mut origin = ReplayOrigin {
            workflow_id: "wf".into(),
            version: 2,
            params: [("size".to_owned(), "M".to_owned()), ("product".into(), "socks".into())]
                .into(),
            fast_path: true,
            steps: 5,
            fast_path_steps: 3,
        };
        assert_eq!(origin.describe(), "product = socks, size = M · fast path 3 of 5 steps");
        origin.fast_path = false;
        origin.params.clear();
        assert_eq!(origin.describe(), "no parameters · fast path off");
    }

    #[test]
    fn a_run_names_the_mcp_client_that_drove_it_and_older_runs_still_read() {
        let run = json!({
            "id": "r", "taskId": "s", "taskPrompt": "Find the kettle", "followUps": [],
            "status": "draft", "agentStatus": "done", "finalAnswer": null,
            "createdAt": "2026-11-22T06:37:49.123Z", "updatedAt": "2026-11-22T06:37:49.123Z",
            "createdBy": "agent", "reviewedBy": null, "subtasks": [], "totalSteps": 0,
            "startUrl": "", "models": {}, "usage": {"input_tokens": 0, "output_tokens": 0},
            "cost": 0.0
        });
        let old: AgentRun = serde_json::from_value(run.clone()).expect("a run from before MCP");
        assert_eq!(old.driven_by, None);
        assert!(serde_json::to_value(&old).unwrap().get("drivenBy").is_none());
        let mut driven = run;
        driven["drivenBy"] = json!("Claude Desktop");
        let driven: AgentRun = serde_json::from_value(driven).unwrap();
        assert_eq!(driven.driven_by.as_deref(), Some("Claude Desktop"));
        assert_eq!(serde_json::to_value(&driven).unwrap()["drivenBy"], "Claude Desktop");
    }

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_795_329_469_123.0), "2026-11-22T06:37:49.123Z");
        assert_eq!(iso8601(951_782_400_000.0), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn redaction_replaces_existing_paths_only() {
        let mut params = json!({"task": "log in", "page": {"state": "pw=hunter2"}});
        let done = redact(&mut params, &["page.state".into(), "nope.x".into()]);
        assert_eq!(done, ["page.state"]);
        assert_eq!(params, json!({"task": "log in", "page": {"state": "[redacted]"}}));
    }

    #[test]
    fn a_step_action_stored_by_an_older_version_reads_in_todays_vocabulary() {
        let read = |kind: &str| {
            serde_json::from_value::<StepAction>(serde_json::json!({"type": kind, "target": "x"}))
                .unwrap()
                .kind
        };
        // Tasks stored `send_keys`; replays stored the Navigator's tags.
        assert_eq!(read("send_keys"), ActionKind::Key);
        assert_eq!(read("go_to_url"), ActionKind::Navigate);
        assert_eq!(read("select_option"), ActionKind::Select);
        assert_eq!(read("upload_file"), ActionKind::Other("upload_file".into()));
        let missing = serde_json::from_value::<StepAction>(serde_json::json!({})).unwrap();
        assert_eq!(missing.kind, ActionKind::None);
    }

    #[test]
    fn steps_serialize_in_the_seed_shape() {
        let step = StepRecord {
            run_id: "r".into(),
            index: 0,
            url: "u".into(),
            title: "t".into(),
            screenshot: None,
            action: StepAction {
                kind: ActionKind::Click,
                target: "Add to cart".into(),
                value: None,
            },
            actions: vec![],
            thoughts: Thoughts::default(),
            extended_thoughts: vec![],
            verified: false,
            issues: vec![],
            last_edited_by: "agent".into(),
            last_edited_at: "x".into(),
            outcome: StepOutcome::Ok,
            trace_ids: vec![],
            duration_ms: 1.0,
            navigator: None,
            drafted_thoughts: vec![],
        };
        let json = serde_json::to_value(&step).unwrap();
        assert_eq!(json["action"]["type"], "click");
        assert!(json["thoughts"]["thought1"].is_string());
        assert!(json.get("lastEditedBy").is_some() && json.get("runId").is_some());
    }
}
