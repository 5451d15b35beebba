//! The agent's task as pages see it: who said what (events), and where the task stands
//! (its snapshot). The worker pushes these over the panel port; the panel's reducer folds
//! them into what people see.

pub use run_contract::telemetry::Telemetry;
use serde::Serialize;

use crate::TabId;

/// Who an event comes from. The panel gives each a distinct look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    System,
    User,
    Planner,
    Navigator,
    Thinking,
}

/// The execution states of seed `001_…`, as `TASK_*`, `STEP_*` and `ACT_*` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionState {
    TaskStart,
    TaskOk,
    TaskFail,
    TaskCancel,
    TaskPause,
    TaskResume,
    StepStart,
    StepOk,
    StepFail,
    StepCancel,
    ActStart,
    ActOk,
    ActFail,
}

/// What an event's `details` hold, so a page can render it without parsing prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Work under way: a plan, a goal, an action.
    Progress,
    /// The agent waits for the user's answer to `details`.
    Question,
    /// The final answer (markdown).
    Answer,
    /// Something failed; `details` says what to do next.
    Error,
    /// A message the user sent (a task, an answer, steering).
    Message,
}

/// One thing that happened in a task.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct AgentEvent {
    pub session_id: String,
    pub run_id: String,
    pub actor: Actor,
    pub state: ExecutionState,
    pub kind: EventKind,
    /// The step this belongs to (0 before the first).
    pub step: u32,
    /// Human-readable: a question, an answer, a goal, an error with its next step.
    pub details: String,
    /// The facts behind `details`, for pages to act on: the panel builds its step cards
    /// and buttons from these and never parses the text, so wording can change freely.
    #[serde(default)]
    pub detail: EventDetail,
    /// Milliseconds since the Unix epoch.
    pub at: f64,
}

/// What an event is about, as data. `details` is the same told for a person.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventDetail {
    /// Nothing beyond `details` (a message, an answer, a notice).
    #[default]
    None,
    /// The Navigator opened step `number` (1-based).
    StepOpened { number: u32 },
    /// The Navigator's goal for the step under way (`details`).
    Goal,
    /// An action began; `label` says what it does to what.
    ActionStarted { label: String },
    /// The action `label` ended: done (`ok`), failed, or `skipped` because the page changed
    /// under it; `message` is its outcome.
    ActionEnded { label: String, ok: bool, skipped: bool, message: String },
    /// Step `number` ended, all its actions done (`ok`) or not.
    StepEnded { number: u32, ok: bool },
    /// The Planner's plan: its next steps.
    Plan { steps: String },
    /// The Planner believes the task is done.
    PlannerDone,
    /// The problem is in the model settings (`what`: the API key, the model name…): the
    /// panel offers a way to Settings.
    NeedsSettings { what: String },
    /// The ThinkingAgent's verdict, called for `reason` (`title` names the occasion, e.g.
    /// "After your message"): what it `decided` ("continue the plan", "re-plan", "ask the
    /// user", "approve"), what it found `missing`, and its instructions to each agent (empty
    /// when none).
    Verdict {
        title: String,
        reason: String,
        decided: String,
        #[serde(default)]
        missing: String,
        #[serde(default)]
        to_planner: String,
        #[serde(default)]
        to_navigator: String,
    },
    /// The Planner or the Navigator asked for the user instead of acting (`need`, in its own
    /// words); the Navigator's asking step is the step `step` counts.
    AgentAsks { need: String },
    /// The model's answer did not follow the schema even after the repair loop (`details`
    /// holds the problems); `retried` when the task goes on and tries again.
    MalformedAnswer { retried: bool },
}

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    /// Waiting for the user. `question` is set when the agent asked one; `reason` says why
    /// it stopped (the user paused it, the agent needs help, the worker restarted).
    Paused {
        reason: String,
        #[serde(default)]
        question: Option<String>,
        /// Milliseconds since the epoch when the pause began, for "Resume anyway".
        since: f64,
        /// The person paused it (Pause & Steer): it waits on their resume, asks nothing.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_user: bool,
    },
    Done {
        answer: String,
    },
    Failed {
        error: String,
    },
    Cancelled,
}

impl TaskStatus {
    pub fn is_finished(&self) -> bool {
        matches!(self, TaskStatus::Done { .. } | TaskStatus::Failed { .. } | TaskStatus::Cancelled)
    }
    /// The job status this task status is (a task whose run was cut off is the caller's to
    /// call paused).
    pub fn job_status(&self) -> crate::jobs::JobStatus {
        use crate::jobs::JobStatus;
        match self {
            TaskStatus::Running => JobStatus::Running,
            TaskStatus::Paused { .. } => JobStatus::Paused,
            TaskStatus::Done { .. } => JobStatus::Done,
            TaskStatus::Failed { .. } => JobStatus::Failed,
            TaskStatus::Cancelled => JobStatus::Cancelled,
        }
    }

    /// The one-word state the panel's `status` hook reports.
    pub fn label(&self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Paused { .. } => "paused",
            TaskStatus::Done { .. } => "done",
            TaskStatus::Failed { .. } => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// Tokens and estimated cost so far.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// USD, from the price table; 0 when no model has a price.
    pub cost: f64,
}

/// Everything a page needs to show a session it (re)connects to.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct TaskSnapshot {
    pub session_id: String,
    /// The run (one per task or follow-up task) the agent is on.
    pub run_id: String,
    /// The tab the agent works in now (it may have opened or switched to another).
    pub tab_id: TabId,
    /// The tab whose panel shows this task: where it was started. A page shows a snapshot
    /// only in that tab's panel.
    #[serde(default)]
    pub panel_tab: Option<TabId>,
    pub task: String,
    pub status: TaskStatus,
    pub step: u32,
    pub spend: Spend,
    /// The session's events so far, oldest first (bounded by the worker).
    pub events: Vec<AgentEvent>,
    /// The run's telemetry: decisions, pauses, questions, steering, spend per role.
    #[serde(default)]
    pub telemetry: Telemetry,
}

impl TaskSnapshot {
    /// Whether the panel of `tab` shows this task (the one it was started from).
    pub fn shown_in(&self, tab: TabId) -> bool {
        self.panel_tab.unwrap_or(self.tab_id) == tab
    }
}

/// A stored conversation's state in the History: its task's, or that it cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Running,
    Paused,
    Done,
    Failed,
    Cancelled,
    Unreadable,
}

impl SessionStatus {
    /// The word on the wire and in `data-status`.
    pub fn label(self) -> &'static str {
        match self {
            SessionStatus::Running => "running",
            SessionStatus::Paused => "paused",
            SessionStatus::Done => "done",
            SessionStatus::Failed => "failed",
            SessionStatus::Cancelled => "cancelled",
            SessionStatus::Unreadable => "unreadable",
        }
    }

    /// How the History says it.
    pub fn describe(self) -> &'static str {
        match self {
            SessionStatus::Running => "Running",
            SessionStatus::Paused => "Paused",
            SessionStatus::Done => "Done",
            SessionStatus::Failed => "Failed",
            SessionStatus::Cancelled => "Cancelled",
            SessionStatus::Unreadable => "Could not be read",
        }
    }
}

impl From<&TaskStatus> for SessionStatus {
    fn from(status: &TaskStatus) -> SessionStatus {
        match status {
            TaskStatus::Running => SessionStatus::Running,
            TaskStatus::Paused { .. } => SessionStatus::Paused,
            TaskStatus::Done { .. } => SessionStatus::Done,
            TaskStatus::Failed { .. } => SessionStatus::Failed,
            TaskStatus::Cancelled => SessionStatus::Cancelled,
        }
    }
}

/// One stored conversation, as the History view lists it.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct SessionSummary {
    pub session_id: String,
    /// The session's first task, trimmed.
    pub title: String,
    /// The task it is on now (the latest follow-up task).
    pub task: String,
    /// Its task's state; `unreadable` when its stored checkpoint could not be read (the title
    /// then says why).
    pub status: SessionStatus,
    /// When its latest run last changed (ISO 8601, from the run).
    pub updated_at: String,
    /// How many tasks (runs) the session holds.
    pub runs: u32,
    /// The tab whose panel it was started from (None: stored before tabs were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panel_tab: Option<TabId>,
}
