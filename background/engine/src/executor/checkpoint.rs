//! [`Checkpoint`]: a task's whole state, and the run record a new task starts.

use protocol::TabId;
use protocol::agent::Spend;
use protocol::jobs::JobStatus;
use protocol::settings::Settings;
use serde::Serialize;

use super::ask::mask_in;
use super::stored::{self, CHECKPOINT_VERSION};
use crate::agents::{LastStep, PlannerOutput};
use crate::detector::LoopDetector;
use crate::memory::Memory;
use crate::providers::Usage;
use crate::run::{AgentEvent, AgentRun, ReviewStatus, TaskStatus, iso8601};
use crate::truncate;

/// Counters the thresholds and the prompts use.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct Counters {
    pub successes: u32,
    pub failures: u32,
    pub consecutive_failures: u32,
    pub pauses: u32,
    pub resumes: u32,
    pub thinking_calls: u32,
}

/// A message from the user that the ThinkingAgent has not yet weighed (the entry gate).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct UserMessage {
    pub text: String,
    /// The question it answers, if the task was paused on one.
    pub answers: Option<String>,
}

/// Notes the ThinkingAgent left for the other agents.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct Notes {
    pub planner: String,
    pub navigator: String,
}

/// A task's whole state: enough to continue it after a pause or a worker restart.
///
/// It is stored as it serializes, and a stored one must still read after an upgrade: a
/// change to its shape (here or in the types it holds) gives every new field a
/// `#[serde(default)]` or raises [`CHECKPOINT_VERSION`] with an upgrade step in
/// [`stored`], and stored ones are read through [`read_checkpoint`].
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Checkpoint {
    /// The shape it was stored in: [`CHECKPOINT_VERSION`] once read (an older one is
    /// upgraded as it is read); none stored means version 1.
    #[serde(default = "stored::unversioned")]
    pub version: u32,
    pub session_id: String,
    /// The tab the agent works in now.
    pub tab_id: TabId,
    /// The tab whose panel shows the task: where it was started (the agent may move on to
    /// tabs it opens). None in checkpoints stored before jobs ran side by side: `tab_id`.
    #[serde(default)]
    pub panel_tab: Option<TabId>,
    pub status: TaskStatus,
    pub run: AgentRun,
    /// Steps taken in this run.
    pub step: u32,
    /// The step count at which the agent stops to ask (raised when the user resumes).
    pub step_limit: u32,
    pub memory: Memory,
    #[serde(default)]
    pub last: LastStep,
    #[serde(default)]
    pub counters: Counters,
    #[serde(default)]
    pub detector: LoopDetector,
    #[serde(default)]
    pub planner: Option<PlannerOutput>,
    #[serde(default)]
    pub notes: Notes,
    /// Plan again before the next Navigator step.
    #[serde(default)]
    pub replan: bool,
    /// The step the Planner last planned at.
    #[serde(default)]
    pub planned_at: Option<u32>,
    /// Since the last plan a step failed, or the Navigator judged a step under it other than
    /// a success: the next periodic planning point re-plans (see `plan_needs_review`).
    #[serde(default)]
    pub off_plan: bool,
    /// Traces of the step under way, for its record.
    #[serde(default)]
    pub step_traces: Vec<String>,
    pub repairs_left: u32,
    #[serde(default)]
    pub spend: Spend,
    /// The latest events (bounded), for a page that reconnects.
    #[serde(default)]
    pub events: Vec<AgentEvent>,
    /// The user's messages since the ThinkingAgent last looked, oldest first.
    #[serde(default)]
    pub unreviewed: Vec<UserMessage>,
    /// A record could not be stored because storage is full: the task pauses to say so.
    /// Not stored (it could not be, and a restarted worker finds out again).
    #[serde(skip)]
    pub storage_full: bool,
    /// What was typed into secret fields in this run, longest first: masked in everything
    /// kept from then on, whatever the field becomes (a password shown as text by the
    /// page's "show" toggle, a value the model repeats). Held in memory only, never stored:
    /// a worker that restarts mid-task knows the fields, not the values.
    #[serde(skip)]
    pub secrets: Vec<String>,
}

/// Shorter secrets are masked in the step that typed them only: masking every later
/// occurrence of "12" would garble every page after it.
const STICKY_SECRET_CHARS: usize = 4;

pub(super) const MAX_EVENTS: usize = 400;
pub(super) const MAX_FINDING: usize = 1500;
/// Characters of extracted text the Navigator's next prompt shows, for all of a step's
/// extracts together; extracting again on the same page reads on from there.
pub const EXTRACT_CHARS: usize = 5000;

impl Checkpoint {
    /// The tab whose panel shows this task.
    pub fn panel_tab(&self) -> TabId {
        self.panel_tab.unwrap_or(self.tab_id)
    }

    /// A fresh task in a new session.
    pub fn new_task(
        session_id: &str,
        run_id: &str,
        tab_id: TabId,
        task: &str,
        settings: &Settings,
        epoch_ms: f64,
    ) -> Checkpoint {
        Checkpoint {
            version: CHECKPOINT_VERSION,
            session_id: session_id.to_owned(),
            tab_id,
            panel_tab: Some(tab_id),
            status: TaskStatus::Running,
            run: new_run(run_id, session_id, task, settings, epoch_ms),
            step: 0,
            step_limit: settings.agent.max_steps,
            memory: Memory::new(task),
            last: LastStep::default(),
            counters: Counters::default(),
            detector: LoopDetector::default(),
            planner: None,
            notes: Notes::default(),
            replan: true,
            planned_at: None,
            off_plan: false,
            step_traces: Vec::new(),
            repairs_left: settings.agent.repair_budget,
            spend: Spend::default(),
            events: Vec::new(),
            unreviewed: Vec::new(),
            storage_full: false,
            secrets: Vec::new(),
        }
    }

    /// Remembers `text`, typed into a secret field; true when it is one to mask from now
    /// on that was not known yet.
    pub(super) fn learn_secret(&mut self, text: &str) -> bool {
        if text.chars().count() < STICKY_SECRET_CHARS || self.secrets.iter().any(|s| s == text) {
            return false;
        }
        self.secrets.push(text.to_owned());
        lean::sort_by_key(&mut self.secrets, |s| std::cmp::Reverse(s.len()));
        true
    }

    /// Masks the known secrets in all the checkpoint keeps (events, memory, the last step,
    /// notes, the plan, traces, the run's log, the loop detector's signatures), through the
    /// one JSON form a checkpoint is read from anyway.
    pub(super) fn mask_secrets(&mut self) {
        if self.secrets.is_empty() {
            return;
        }
        // What is never stored is not in that form: kept aside and put back.
        let (secrets, storage_full) = (std::mem::take(&mut self.secrets), self.storage_full);
        mask_in(self, &secrets);
        self.secrets = secrets;
        self.storage_full = storage_full;
    }

    /// A follow-up task after this one ended: a new run in the same session, keeping what
    /// the agents learned.
    pub fn follow_up_task(
        &mut self,
        run_id: &str,
        tab_id: TabId,
        task: &str,
        settings: &Settings,
        epoch_ms: f64,
    ) {
        let answer = match &self.status {
            TaskStatus::Done { answer } => truncate(answer, 400),
            other => format!("({})", other.label()),
        };
        let previous = std::mem::replace(&mut self.memory.task, task.to_owned());
        self.memory
            .progress
            .push(format!("Earlier task \"{}\": {answer}", truncate(&previous, 200)));
        for follow_up in std::mem::take(&mut self.memory.follow_ups) {
            self.memory.progress.push(format!("Earlier user message: {}", follow_up.text));
        }
        self.memory.plan.clear();
        self.memory.reading = None;
        self.tab_id = tab_id;
        self.panel_tab = Some(tab_id);
        self.run = new_run(run_id, &self.session_id, task, settings, epoch_ms);
        self.status = TaskStatus::Running;
        self.step = 0;
        self.step_limit = settings.agent.max_steps;
        self.counters = Counters::default();
        self.detector = LoopDetector::default();
        self.planner = None;
        self.notes = Notes::default();
        self.replan = true;
        self.planned_at = None;
        self.off_plan = false;
        self.repairs_left = settings.agent.repair_budget;
    }

    pub(super) fn question(&self) -> Option<&str> {
        match &self.status {
            TaskStatus::Paused { question: Some(q), .. } => Some(q),
            _ => None,
        }
    }
}

fn new_run(id: &str, session: &str, task: &str, settings: &Settings, at: f64) -> AgentRun {
    let models = &settings.models;
    AgentRun {
        id: id.to_owned(),
        task_id: session.to_owned(),
        task_prompt: task.to_owned(),
        follow_ups: Vec::new(),
        status: ReviewStatus::Draft,
        agent_status: JobStatus::Running,
        final_answer: None,
        created_at: iso8601(at),
        updated_at: iso8601(at),
        created_by: "agent".into(),
        reviewed_by: None,
        subtasks: Vec::new(),
        total_steps: 0,
        start_url: String::new(),
        models: serde_json::json!({
            "planner": models.planner.model,
            "navigator": models.navigator.model,
            "thinking": models.thinking.model,
            "repair": models.repair.as_ref().map(|m| m.model.clone()),
        }),
        usage: Usage::default(),
        cost: 0.0,
        telemetry: Default::default(),
        replay: None,
        driven_by: None,
    }
}
