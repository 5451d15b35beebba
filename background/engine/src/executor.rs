//! The Executor of seed `001_…` §4–§5: the Planner / Navigator loop with the ThinkingAgent
//! as exit gate and arbiter, pause and steer, questions to the user, follow-ups, and a
//! checkpoint after every step.
//!
//! A task's whole state is a [`Checkpoint`], plain serde data. [`Executor::run`] works on
//! it until the task pauses or ends, saving it through [`Capture`] as it goes, and then
//! returns. A pause is therefore the same thing whether the user pressed Pause, the agent
//! asked a question, or Chrome stopped the worker: a stored checkpoint that a later `run`
//! continues. The shell builds a new `Executor` for each `run`, so settings edited while
//! paused (a fixed API key, another model) apply on resume.
//!
//! The shell steers a running task through [`Control`]: pause and cancel interrupt an
//! in-flight model call at once (its future is dropped, which aborts the request) and stop
//! an action sequence between two actions; follow-ups are applied at the next step.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Poll, Waker};

use protocol::TabId;
use protocol::agent::Spend;
use protocol::settings::{ModelConfig, Settings};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use base64::Engine;

use crate::Clock;
use crate::actions::{Action, ActionOutcome};
use crate::agents::{
    self, Claim, LastStep, MEMORY_VARS, NavigatorOutput, PlannerOutput, STATE_VARS, ThinkingOutput,
};
use crate::detector::LoopDetector;
use crate::memory::{Budget, Memory, StepMemory};
use crate::prompts::PromptSet;
use crate::providers::{ChatMessage, ChatRequest, Http, LlmError, PriceTable, Usage};
use crate::repair::{RepairLedger, RepairPolicy, StructuredError, ask_structured};
use crate::run::{
    Actor, AgentEvent, AgentRun, Capture, EventDetail, EventKind, ExecutedAction, ExecutionState,
    LlmTrace, PromptChars, ReviewStatus, ScreenshotRef, StepAction, StepRecord, Subtask,
    TaskStatus, Thoughts, iso8601, redact,
};
use crate::truncate;

pub mod stored;
pub use stored::{CHECKPOINT_VERSION, Unreadable, read_checkpoint};

/// The page as the executor needs it for one step.
#[derive(Debug, Clone, PartialEq)]
pub struct PageView {
    pub url: String,
    pub title: String,
    /// The page state the Navigator reads.
    pub text: String,
    /// Changes since the previous look, for the reflection; "" on a first look.
    pub comparison: String,
    /// A hash of what the page shows, for the stagnation detector.
    pub hash: String,
}

/// Why the browser could not be used.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserError {
    /// The tab is closed or cannot be controlled; retrying will not help.
    pub fatal: bool,
    pub message: String,
}

/// The browser as the executor uses it. [`crate::browser::CdpBrowser`] implements it over
/// CDP; the executor's tests use a scripted one.
#[allow(async_fn_in_trait)]
pub trait Browser {
    async fn observe(&self, tab: TabId) -> Result<PageView, BrowserError>;
    /// A JPEG of the viewport: plain for the run capture, or with each element of the
    /// latest page state outlined and numbered (`marks`) for a vision model.
    async fn screenshot(&self, tab: TabId, marks: bool) -> Option<Vec<u8>>;
    async fn perform(&self, tab: TabId, action: &Action) -> ActionOutcome;
    /// How a person would name element `id` of the latest page state.
    fn describe(&self, tab: TabId, id: u32) -> String;
}

/// What the shell asks of a running task; shared between the shell and [`Executor::run`].
#[derive(Default)]
pub struct Control {
    pause: Cell<bool>,
    cancel: Cell<bool>,
    follow_ups: RefCell<Vec<String>>,
    wakers: RefCell<Vec<Waker>>,
}

impl Control {
    pub fn request_pause(&self) {
        self.pause.set(true);
        self.wake();
    }
    pub fn request_cancel(&self) {
        self.cancel.set(true);
        self.wake();
    }
    /// Steering while running: applied at the next step.
    pub fn push_follow_up(&self, text: &str) {
        self.follow_ups.borrow_mut().push(text.to_owned());
    }
    fn interrupted(&self) -> bool {
        self.pause.get() || self.cancel.get()
    }
    fn wake(&self) {
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }
    /// Runs `work` unless a pause or cancel comes first; then `work` is dropped (an HTTP
    /// request in it is aborted) and `None` returned.
    pub async fn race<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if self.interrupted() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(value) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(value));
            }
            self.wakers.borrow_mut().push(cx.waker().clone());
            // A request made while `work` was being polled has woken no one yet.
            if self.interrupted() { Poll::Ready(None) } else { Poll::Pending }
        })
        .await
    }
}

/// Counters the thresholds and the prompts use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Counters {
    pub successes: u32,
    pub failures: u32,
    pub consecutive_failures: u32,
    pub pauses: u32,
    pub resumes: u32,
    pub thinking_calls: u32,
}

/// One line of the seed's §7 log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub at: f64,
    pub step: u32,
    /// thinking | pause | resume | follow_up | user_input | failure
    pub kind: String,
    pub message: String,
}

/// Notes the ThinkingAgent left for the other agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The shape it was stored in: [`CHECKPOINT_VERSION`] once read (an older one is
    /// upgraded as it is read); none stored means version 1.
    #[serde(default = "stored::unversioned")]
    pub version: u32,
    pub session_id: String,
    pub tab_id: TabId,
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
    #[serde(default)]
    pub log: Vec<LogEntry>,
}

const MAX_EVENTS: usize = 400;
const MAX_LOG: usize = 400;
const MAX_FINDING: usize = 1500;
/// Characters of extracted text the Navigator's next prompt shows, for all of a step's
/// extracts together; extracting again on the same page reads on from there.
pub const EXTRACT_CHARS: usize = 5000;

impl Checkpoint {
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
            log: Vec::new(),
        }
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

    fn question(&self) -> Option<&str> {
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
        agent_status: "running".into(),
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
    }
}

/// Why a model call gave no answer.
enum CallError {
    Interrupted,
    Failed(StructuredError),
}

/// The Navigator's `done`: its text and whether it succeeded or gave up.
struct DoneClaim {
    text: String,
    success: bool,
}

/// How a Navigator step went.
enum StepEnd {
    Interrupted,
    Finished {
        done: Option<DoneClaim>,
    },
    /// No usable answer from the model (already counted as a failure).
    NoAnswer(StructuredError),
    /// The tab is gone.
    Fatal(String),
}

/// Everything one `run` needs. Built by the shell for each run.
pub struct Executor<'a, H, B, C, K> {
    pub http: &'a H,
    pub browser: &'a B,
    pub capture: &'a C,
    pub clock: &'a K,
    pub control: &'a Control,
    pub prompts: &'a PromptSet,
    pub settings: &'a Settings,
    /// Milliseconds since the epoch, for timestamps.
    pub epoch_ms: &'a dyn Fn() -> f64,
}

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    fn budget(&self) -> Budget {
        Budget {
            full_steps: self.settings.agent.history_steps.max(1) as usize,
            chars: self.settings.agent.memory_budget_chars as usize,
        }
    }

    /// Adds an event to the checkpoint and sends it to the pages.
    pub fn emit(
        &self,
        cp: &mut Checkpoint,
        actor: Actor,
        state: ExecutionState,
        kind: EventKind,
        details: impl Into<String>,
    ) {
        self.emit_detail(cp, actor, state, kind, details, EventDetail::None);
    }

    /// [`Executor::emit`] with the facts behind the text, which pages act on.
    pub fn emit_detail(
        &self,
        cp: &mut Checkpoint,
        actor: Actor,
        state: ExecutionState,
        kind: EventKind,
        details: impl Into<String>,
        detail: EventDetail,
    ) {
        let event = AgentEvent {
            session_id: cp.session_id.clone(),
            run_id: cp.run.id.clone(),
            actor,
            state,
            kind,
            step: cp.step,
            details: details.into(),
            detail,
            at: (self.epoch_ms)(),
        };
        self.capture.emit(&event);
        cp.events.push(event);
        if cp.events.len() > MAX_EVENTS {
            cp.events.drain(..cp.events.len() - MAX_EVENTS);
        }
    }

    fn log(&self, cp: &mut Checkpoint, kind: &str, message: impl Into<String>) {
        cp.log.push(LogEntry {
            at: (self.epoch_ms)(),
            step: cp.step,
            kind: kind.to_owned(),
            message: message.into(),
        });
        if cp.log.len() > MAX_LOG {
            cp.log.remove(0);
        }
    }

    /// Saves the checkpoint and the run header. A storage failure is reported but does not
    /// stop the task: the agent's work in the tab matters more than the record of it.
    pub async fn save(&self, cp: &mut Checkpoint) {
        cp.run.updated_at = iso8601((self.epoch_ms)());
        cp.run.total_steps = cp.step;
        cp.run.agent_status = cp.status.label().to_owned();
        cp.run.follow_ups = cp.memory.follow_ups.iter().map(|f| f.text.clone()).collect();
        cp.run.usage =
            Usage { input_tokens: cp.spend.input_tokens, output_tokens: cp.spend.output_tokens };
        cp.run.cost = cp.spend.cost;
        if let Err(error) = self.capture.save_run(&cp.run).await {
            self.log(cp, "failure", format!("could not store the run: {error}"));
        }
        if let Err(error) = self.capture.save_checkpoint(cp).await {
            self.log(cp, "failure", format!("could not store the checkpoint: {error}"));
        }
    }

    /// `applyUserFollowUp`: the user's message joins memory, marked as theirs (and as the
    /// answer to the pending question, if any), and the Planner will re-plan with it.
    pub fn apply_follow_up(&self, cp: &mut Checkpoint, text: &str) {
        let answer_to = cp.question().map(str::to_owned);
        cp.memory.add_follow_up(text, cp.step, answer_to.clone());
        if let TaskStatus::Paused { question, .. } = &mut cp.status {
            *question = None;
        }
        cp.replan = true;
        let what = if answer_to.is_some() { "answer" } else { "steering" };
        self.log(cp, "follow_up", format!("applied the user's {what}: {}", truncate(text, 200)));
        self.emit(cp, Actor::User, ExecutionState::StepStart, EventKind::Message, text);
    }

    /// Pauses a task that is not running (Chrome restarted the worker, say).
    pub fn pause_idle(&self, cp: &mut Checkpoint, reason: &str) {
        self.pause(cp, Actor::System, reason, None);
    }

    fn pause(&self, cp: &mut Checkpoint, actor: Actor, reason: &str, question: Option<String>) {
        self.pause_detail(cp, actor, reason, question, EventDetail::None);
    }

    fn pause_detail(
        &self,
        cp: &mut Checkpoint,
        actor: Actor,
        reason: &str,
        question: Option<String>,
        detail: EventDetail,
    ) {
        cp.counters.pauses += 1;
        let (kind, details) = match &question {
            Some(q) => (EventKind::Question, q.clone()),
            None => (EventKind::Progress, reason.to_owned()),
        };
        self.log(
            cp,
            "pause",
            format!("{reason}{}", question.as_ref().map(|q| format!(": {q}")).unwrap_or_default()),
        );
        cp.status =
            TaskStatus::Paused { reason: reason.to_owned(), question, since: (self.epoch_ms)() };
        self.emit_detail(cp, actor, ExecutionState::TaskPause, kind, details, detail);
    }

    /// `requestUserInput(reason)`: pause with a question for the user.
    fn request_user_input(&self, cp: &mut Checkpoint, question: &str) {
        self.log(cp, "user_input", question);
        self.pause(cp, Actor::System, "The agent needs your input", Some(question.to_owned()));
    }

    /// Ends a task as cancelled (from a running or paused state).
    pub async fn cancel(&self, cp: &mut Checkpoint) {
        if cp.status.is_finished() {
            return;
        }
        cp.status = TaskStatus::Cancelled;
        self.emit(
            cp,
            Actor::User,
            ExecutionState::TaskCancel,
            EventKind::Progress,
            "Task stopped.",
        );
        self.save(cp).await;
    }

    /// Starts or continues the task until it pauses or ends.
    pub async fn run(&self, cp: &mut Checkpoint) {
        match &cp.status {
            TaskStatus::Paused { question, .. } => {
                cp.counters.resumes += 1;
                if let Some(question) = question.clone() {
                    // "Resume anyway": the question stays unanswered.
                    cp.memory.add_follow_up(
                        "(The user resumed without answering. Use your best judgment.)",
                        cp.step,
                        Some(question),
                    );
                }
                self.log(cp, "resume", "resumed");
                cp.status = TaskStatus::Running;
                cp.replan = true;
                self.emit(
                    cp,
                    Actor::User,
                    ExecutionState::TaskResume,
                    EventKind::Progress,
                    "Resumed.",
                );
            }
            TaskStatus::Running
                if cp.step == 0 && cp.events.iter().all(|e| e.run_id != cp.run.id) =>
            {
                let task = cp.memory.task.clone();
                self.emit(cp, Actor::User, ExecutionState::TaskStart, EventKind::Message, task);
            }
            TaskStatus::Running => {}
            _ => return,
        }
        self.save(cp).await;
        let ledger = RepairLedger::with_budget(cp.repairs_left);
        self.run_loop(cp, &ledger).await;
        cp.repairs_left = ledger.remaining();
        self.save(cp).await;
    }

    async fn run_loop(&self, cp: &mut Checkpoint, ledger: &RepairLedger) {
        let options = &self.settings.agent;
        loop {
            for text in self.control.follow_ups.take() {
                self.apply_follow_up(cp, &text);
            }
            if self.control.cancel.get() {
                cp.status = TaskStatus::Cancelled;
                self.emit(
                    cp,
                    Actor::User,
                    ExecutionState::TaskCancel,
                    EventKind::Progress,
                    "Task stopped.",
                );
                return;
            }
            if self.control.pause.get() {
                self.pause(cp, Actor::User, "Agent paused – you can adjust instructions now", None);
                return;
            }
            if cp.step >= cp.step_limit {
                cp.step_limit += options.max_steps;
                let question = format!(
                    "I have taken {} steps without finishing. Resume to let me continue, add instructions, or stop the task.",
                    cp.step
                );
                self.request_user_input(cp, &question);
                return;
            }

            let due = cp.step.is_multiple_of(options.planning_interval.max(1))
                && cp.planned_at != Some(cp.step)
                && plan_needs_review(cp);
            if cp.replan || due {
                match self.plan(cp, ledger).await {
                    Err(CallError::Interrupted) => continue,
                    Err(CallError::Failed(error)) => {
                        if self.model_failed(cp, Actor::Planner, &error) {
                            return;
                        }
                        continue;
                    }
                    Ok(planner) => {
                        if planner.done || !planner.web_task {
                            if self.exit_gate(cp, ledger, Claim::Planner(&planner)).await {
                                return;
                            }
                            continue;
                        }
                    }
                }
            }

            let mut claim = None;
            match self.navigate(cp, ledger).await {
                StepEnd::Interrupted => {
                    self.emit(
                        cp,
                        Actor::Navigator,
                        ExecutionState::StepCancel,
                        EventKind::Progress,
                        "Step interrupted.",
                    );
                    continue;
                }
                StepEnd::Fatal(message) => {
                    self.fail(cp, &message);
                    return;
                }
                StepEnd::NoAnswer(error) => {
                    if self.model_failed(cp, Actor::Navigator, &error) {
                        return;
                    }
                }
                StepEnd::Finished { done } => claim = done,
            }
            self.save(cp).await;

            let threshold = options.max_consecutive_failures.max(1);
            if cp.counters.consecutive_failures >= threshold * 2 {
                let question = format!(
                    "I keep failing at this ({} attempts in a row; the last: {}). How should I proceed?",
                    cp.counters.consecutive_failures,
                    truncate(&cp.last.outcome, 200)
                );
                self.request_user_input(cp, &question);
                return;
            }
            // The Navigator's `done` goes straight to the exit gate: a Planner call in
            // between would only repeat the claim. The gate reviews everything so far, so it
            // also stands in for this step's arbitration.
            if let Some(DoneClaim { text, success }) = claim {
                if self.exit_gate(cp, ledger, Claim::Navigator { text: &text, success }).await {
                    return;
                }
                // Not approved (or no verdict): the Planner takes over from the claim, as
                // the rejection's instructions say.
                cp.replan = true;
                continue;
            }
            let reason = if cp.counters.consecutive_failures == threshold {
                Some(format!("{threshold} steps failed in a row"))
            } else if let Some(detected) = cp.detector.check() {
                cp.detector.reset();
                Some(detected)
            } else if options.thinking_interval > 0
                && cp.step > 0
                && cp.step.is_multiple_of(options.thinking_interval)
            {
                Some(format!("a periodic review after {} steps", cp.step))
            } else {
                None
            };
            if let Some(reason) = reason
                && self.arbitrate(cp, ledger, &reason).await
            {
                return;
            }
        }
    }

    /// A model call that failed after retries and repairs. Settings problems pause the
    /// task with what to fix; other failures count, and pause with a question once they
    /// repeat. Returns true when the task paused.
    fn model_failed(&self, cp: &mut Checkpoint, actor: Actor, error: &StructuredError) -> bool {
        let message = error.to_string();
        cp.counters.failures += 1;
        cp.counters.consecutive_failures += 1;
        cp.last.outcome = format!("the model call failed: {message}");
        self.log(cp, "failure", format!("{actor:?}: {message}"));
        // Problems only the person can fix in the model settings.
        let settings_problem = match error {
            StructuredError::Provider(LlmError::Auth { .. }) => Some("the API key"),
            StructuredError::Provider(LlmError::ModelNotFound { .. }) => Some("the model name"),
            StructuredError::Provider(LlmError::BadRequest { .. }) => Some("the model settings"),
            _ => None,
        };
        let detail = settings_problem
            .map_or(EventDetail::None, |what| EventDetail::NeedsSettings { what: what.into() });
        self.emit_detail(
            cp,
            actor,
            ExecutionState::StepFail,
            EventKind::Error,
            message.clone(),
            detail.clone(),
        );
        let budget_gone = matches!(error, StructuredError::Invalid { budget_exhausted: true, .. });
        if let Some(what) = settings_problem {
            // The error event above says what is wrong; the question says what to do.
            let role = format!("{actor:?}").to_lowercase();
            let question =
                format!("Please fix {what} for the {role} in Settings, then press Resume.");
            self.log(cp, "user_input", &question);
            self.pause_detail(
                cp,
                Actor::System,
                "The agent needs your input",
                Some(question),
                detail,
            );
            return true;
        }
        if budget_gone
            || cp.counters.consecutive_failures
                >= self.settings.agent.max_consecutive_failures.max(1)
        {
            let question = format!(
                "I could not get a usable answer from the model ({message}). Resume to retry, try another model in Settings, or tell me how to proceed."
            );
            self.log(cp, "user_input", &question);
            let detail = EventDetail::NeedsSettings { what: "another model".into() };
            self.pause_detail(
                cp,
                Actor::System,
                "The agent needs your input",
                Some(question),
                detail,
            );
            return true;
        }
        false
    }

    fn fail(&self, cp: &mut Checkpoint, message: &str) {
        cp.status = TaskStatus::Failed { error: message.to_owned() };
        self.log(cp, "failure", message);
        self.emit(cp, Actor::System, ExecutionState::TaskFail, EventKind::Error, message);
    }

    async fn plan(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
    ) -> Result<PlannerOutput, CallError> {
        let page = match self.browser.observe(cp.tab_id).await {
            Ok(view) => format!("{} — {}", view.title, view.url),
            Err(error) => format!("(unavailable: {})", error.message),
        };
        let vars = agents::planner_vars(&cp.memory, self.budget(), &cp.notes.planner, &page);
        let planner: PlannerOutput = self.ask(cp, Actor::Planner, "planner", vars, ledger).await?;
        cp.replan = false;
        cp.planned_at = Some(cp.step);
        cp.off_plan = false;
        cp.notes.planner.clear();
        cp.memory.plan = planner.next_steps.clone();
        cp.memory.progress.push(truncate(&planner.observation, 300));
        cp.planner = Some(planner.clone());
        // Each plan opens a subtask covering the steps taken under it.
        if let Some(open) = cp.run.subtasks.last_mut()
            && open.step_range[0] >= cp.step
        {
            cp.run.subtasks.pop();
        }
        let title = planner.next_steps.lines().find(|l| !l.trim().is_empty()).unwrap_or("Plan");
        cp.run.subtasks.push(Subtask {
            id: format!("{}-{}", cp.run.id, cp.run.subtasks.len()),
            title: truncate(title.trim_start_matches(['-', '*', ' ', '1', '.']), 80),
            description: planner.next_steps.clone(),
            step_range: [cp.step, cp.step],
            status: "pending".into(),
        });
        let (details, detail) = if planner.done {
            let details =
                format!("I believe the task is done: {}", truncate(&planner.observation, 300));
            (details, EventDetail::PlannerDone)
        } else {
            let steps = planner.next_steps.clone();
            (format!("Plan: {steps}"), EventDetail::Plan { steps })
        };
        let (actor, state, kind) = (Actor::Planner, ExecutionState::StepOk, EventKind::Progress);
        self.emit_detail(cp, actor, state, kind, details, detail);
        Ok(planner)
    }

    /// The ThinkingAgent checks a claim of "done", the Planner's or the Navigator's (with
    /// the Planner's latest plan beside it). Returns true when the task ended or paused.
    async fn exit_gate(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
        claim: Claim<'_>,
    ) -> bool {
        let (reason, planner, claimed_answer) = match claim {
            Claim::Planner(planner) => (
                if planner.web_task {
                    "the Planner says the task is done"
                } else {
                    "the Planner says this needs no browsing and answered directly"
                },
                Some(planner.clone()),
                planner.final_answer.as_str(),
            ),
            Claim::Navigator { text, success } => (
                if success {
                    "the Navigator says the task is done"
                } else {
                    "the Navigator gave up on the task"
                },
                cp.planner.clone(),
                text,
            ),
            // Reviews go through `arbitrate`; a gate asked for one has no answer to offer.
            Claim::Review => ("a review of the progress", cp.planner.clone(), ""),
        };
        let verdict = match self.consult(cp, ledger, reason, claim, planner.as_ref()).await {
            Ok(verdict) => verdict,
            Err(paused) => return paused,
        };
        if verdict.approved {
            let answer = if verdict.final_answer.trim().is_empty() {
                claimed_answer.to_owned()
            } else {
                verdict.final_answer.clone()
            };
            cp.run.final_answer = Some(answer.clone());
            cp.status = TaskStatus::Done { answer: answer.clone() };
            self.emit(cp, Actor::Thinking, ExecutionState::TaskOk, EventKind::Answer, answer);
            return true;
        }
        self.apply_verdict(cp, &verdict, "Not done yet")
    }

    /// The ThinkingAgent arbitrates a detector or failure streak. Returns true when the
    /// task paused.
    async fn arbitrate(&self, cp: &mut Checkpoint, ledger: &RepairLedger, reason: &str) -> bool {
        let planner = cp.planner.clone();
        let verdict = match self.consult(cp, ledger, reason, Claim::Review, planner.as_ref()).await
        {
            Ok(verdict) => verdict,
            Err(paused) => return paused,
        };
        self.apply_verdict(cp, &verdict, &format!("Review ({reason})"))
    }

    /// Asks the ThinkingAgent, called for `reason`, and logs its decision (seed §7). `Err`
    /// when no verdict came, holding whether the task paused.
    async fn consult(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
        reason: &str,
        claim: Claim<'_>,
        planner: Option<&PlannerOutput>,
    ) -> Result<ThinkingOutput, bool> {
        let vars = agents::thinking_vars(&cp.memory, self.budget(), reason, claim, planner);
        let verdict: ThinkingOutput =
            match self.ask(cp, Actor::Thinking, "thinking", vars, ledger).await {
                Ok(verdict) => verdict,
                Err(CallError::Interrupted) => return Err(false),
                Err(CallError::Failed(error)) => {
                    return Err(self.model_failed(cp, Actor::Thinking, &error));
                }
            };
        cp.counters.thinking_calls += 1;
        self.log(
            cp,
            "thinking",
            format!(
                "{reason}: approved={} should_pause_for_user={} missing={:?} instructions={:?}",
                verdict.approved,
                verdict.should_pause_for_user,
                verdict.missing_pieces,
                truncate(&verdict.instructions_for_planner, 200)
            ),
        );
        Ok(verdict)
    }

    fn apply_verdict(&self, cp: &mut Checkpoint, verdict: &ThinkingOutput, title: &str) -> bool {
        cp.notes.planner = verdict.instructions_for_planner.clone();
        cp.notes.navigator = verdict.instructions_for_navigator.clone();
        cp.replan = true;
        let mut details = title.to_owned();
        if !verdict.missing_pieces.is_empty() {
            details.push_str(&format!(": missing {}", verdict.missing_pieces));
        }
        if !verdict.instructions_for_planner.is_empty() {
            details.push_str(&format!(". {}", verdict.instructions_for_planner));
        }
        self.emit(cp, Actor::Thinking, ExecutionState::StepOk, EventKind::Progress, details);
        if verdict.should_pause_for_user && !verdict.question_for_user.trim().is_empty() {
            self.request_user_input(cp, &verdict.question_for_user);
            return true;
        }
        false
    }

    /// One Navigator step: look, reflect and act, then record it.
    async fn navigate(&self, cp: &mut Checkpoint, ledger: &RepairLedger) -> StepEnd {
        let started = self.clock.now_ms();
        let index = cp.step;
        cp.step_traces.clear();
        self.emit_detail(
            cp,
            Actor::Navigator,
            ExecutionState::StepStart,
            EventKind::Progress,
            format!("Step {}", index + 1),
            EventDetail::StepOpened { number: index + 1 },
        );
        let mut view = match self.browser.observe(cp.tab_id).await {
            Ok(view) => view,
            Err(error) if error.fatal => return StepEnd::Fatal(error.message),
            Err(error) => {
                cp.counters.failures += 1;
                cp.counters.consecutive_failures += 1;
                cp.off_plan = true;
                cp.last.outcome = error.message.clone();
                self.emit(
                    cp,
                    Actor::Navigator,
                    ExecutionState::StepFail,
                    EventKind::Error,
                    error.message,
                );
                return StepEnd::Finished { done: None };
            }
        };
        // The allow/deny list also covers pages reached by clicking links.
        if let Err(refusal) = self.settings.url_permitted(&view.url) {
            let _ = self.browser.perform(cp.tab_id, &Action::Back).await;
            cp.last.outcome = format!("Went back: {refusal}");
            self.emit(cp, Actor::System, ExecutionState::ActFail, EventKind::Error, refusal);
            match self.browser.observe(cp.tab_id).await {
                Ok(back) => view = back,
                Err(error) => return StepEnd::Fatal(error.message),
            }
        }
        if cp.run.start_url.is_empty() {
            cp.run.start_url = view.url.clone();
        }
        cp.detector.record_page(&view.url, &view.hash);
        let screenshot = self.browser.screenshot(cp.tab_id, false).await;
        // Vision: the model also gets the viewport with the page state's ids drawn on it.
        let mut images = Vec::new();
        if self.settings.agent.vision
            && let Some(marked) = self.browser.screenshot(cp.tab_id, true).await
        {
            images.push(base64::engine::general_purpose::STANDARD.encode(marked));
        }

        let vars = agents::navigator_vars(
            &cp.memory,
            self.budget(),
            &cp.last,
            &view.comparison,
            cp.counters.successes,
            cp.counters.failures,
            &cp.notes.navigator,
            &view.text,
            self.settings.agent.max_actions_per_step,
        );
        let asked = self.ask_with_images(cp, Actor::Navigator, "navigator", vars, images, ledger);
        let output: NavigatorOutput = match asked.await {
            Ok(output) => output,
            Err(CallError::Interrupted) => return StepEnd::Interrupted,
            Err(CallError::Failed(error)) => return StepEnd::NoAnswer(error),
        };
        cp.notes.navigator.clear();
        let state = &output.current_state;
        self.emit_detail(
            cp,
            Actor::Navigator,
            ExecutionState::StepStart,
            EventKind::Progress,
            state.next_goal.clone(),
            EventDetail::Goal,
        );

        let mut executed = Vec::new();
        // The action that ended the sequence because its target changed, as recorded.
        let mut skipped = None;
        // The actions asked for but not carried out, and why, for the next prompt.
        let mut not_carried_out: Option<(String, usize)> = None;
        let mut done = None;
        let mut extracted = Vec::new();
        let mut extract_room = EXTRACT_CHARS;
        let max = self.settings.agent.max_actions_per_step.max(1) as usize;
        let actions: Vec<&Action> = output.actions.iter().take(max).collect();
        for (i, &action) in actions.iter().enumerate() {
            if self.control.interrupted() {
                not_carried_out = Some(("the task was paused or stopped first".into(), i));
                break;
            }
            let target = self.target(cp.tab_id, action);
            let label = describe_action(action, &target);
            self.emit_detail(
                cp,
                Actor::Navigator,
                ExecutionState::ActStart,
                EventKind::Progress,
                label.clone(),
                EventDetail::ActionStarted { label: label.clone() },
            );
            let outcome = match self.refused(action) {
                Some(refusal) => {
                    ActionOutcome { ok: false, message: refusal, ..Default::default() }
                }
                None => self.browser.perform(cp.tab_id, action).await,
            };
            if i > 0 && outcome.stale {
                // What the earlier actions did removed, hid or covered this target after the
                // model chose it: the plan is out of date, not wrong. Nothing was done, so it
                // counts neither way, and the Navigator redoes it on the new page state. (A
                // stale first action is an ordinary failure: the model used an old id.)
                let why = format!("the page changed under it: {}", outcome.message);
                let message = format!("skipped, {why}");
                self.emit_detail(
                    cp,
                    Actor::Navigator,
                    ExecutionState::ActFail,
                    EventKind::Progress,
                    format!("{label}: {message}"),
                    EventDetail::ActionEnded {
                        label: label.clone(),
                        ok: false,
                        skipped: true,
                        message,
                    },
                );
                skipped = Some(ExecutedAction {
                    action: action.clone(),
                    target,
                    ok: false,
                    message: format!("skipped, not carried out: {why}"),
                });
                not_carried_out = Some(("the page changed under them".into(), i));
                break;
            }
            if let Some(tab) = outcome.tab {
                cp.tab_id = tab;
            }
            let (state_name, kind) = if outcome.ok {
                (ExecutionState::ActOk, EventKind::Progress)
            } else {
                (ExecutionState::ActFail, EventKind::Error)
            };
            self.emit_detail(
                cp,
                Actor::Navigator,
                state_name,
                kind,
                format!("{label}: {}", outcome.message),
                EventDetail::ActionEnded {
                    label: label.clone(),
                    ok: outcome.ok,
                    skipped: false,
                    message: outcome.message.clone(),
                },
            );
            let mut signature = serde_json::to_string(action).unwrap_or_default();
            if let Some(text) = &outcome.extracted {
                cp.memory.add_finding(&truncate(text, MAX_FINDING));
                let read = cp.memory.read_extracted(&view.url, text, extract_room);
                extract_room -= read.shown;
                extracted.push(read.block);
                // Reading on through a long text is progress, not the same action again.
                signature.push_str(&format!("@{}", read.from));
            }
            cp.detector.record_action(&signature, outcome.ok);
            executed.push(ExecutedAction {
                action: action.clone(),
                target,
                ok: outcome.ok,
                message: outcome.message.clone(),
            });
            if outcome.done {
                let (text, success) = match action {
                    Action::Done { text, success } => (text.clone(), *success),
                    _ => (outcome.message.clone(), outcome.ok),
                };
                cp.memory.add_finding(&text);
                done = Some(DoneClaim { text, success });
                break;
            }
            // A navigation or another tab gives later ids another meaning; a failure means
            // the plan behind the rest did not hold. Other page changes do not end the
            // sequence: a later action whose target they changed reports itself stale.
            let why = if !outcome.ok {
                "an earlier action failed"
            } else if outcome.page_changed || outcome.tab.is_some() {
                "the page or tab changed before them"
            } else {
                continue;
            };
            not_carried_out = Some((why.into(), i + 1));
            break;
        }
        let ok = !executed.is_empty() && executed.iter().all(|a| a.ok);
        if ok {
            cp.counters.successes += 1;
            cp.counters.consecutive_failures = 0;
        } else {
            cp.counters.failures += 1;
            cp.counters.consecutive_failures += 1;
        }
        // The first step under a plan evaluates the step before it, which the plan already
        // took into account; later ones say whether the plan holds.
        let evaluated_success =
            state.evaluation_previous_goal.trim_start().to_lowercase().starts_with("success");
        if !ok || (cp.planned_at.is_some_and(|at| index > at) && !evaluated_success) {
            cp.off_plan = true;
        }
        let mut action_lines: Vec<String> = executed
            .iter()
            .map(|a| {
                format!(
                    "{} → {}: {}",
                    describe_action(&a.action, &a.target),
                    if a.ok { "ok" } else { "failed" },
                    truncate(&a.message, 200)
                )
            })
            .collect();
        if let Some(skip) = &skipped {
            action_lines.push(format!(
                "{} → {}",
                describe_action(&skip.action, &skip.target),
                truncate(&skip.message, 200)
            ));
        }
        let mut outcome = action_lines.join("\n");
        if let Some((why, from)) = not_carried_out
            && from < actions.len()
        {
            let rest: Vec<String> = actions[from..]
                .iter()
                .map(|a| describe_action(a, &self.target(cp.tab_id, a)))
                .collect();
            outcome.push_str(&format!(
                "\nNot carried out, because {why}: {}. Redo them on the new page state if they are still needed.",
                rest.join("; ")
            ));
        }
        // What was tried, from the actions themselves rather than back out of the lines.
        let tried: Vec<String> = executed
            .iter()
            .chain(skipped.as_ref())
            .map(|a| describe_action(&a.action, &a.target))
            .collect();
        cp.last = LastStep {
            action: format!("{} (expected: {})", tried.join("; "), state.next_goal),
            outcome,
            extracted: extracted.join("\n"),
        };
        cp.memory.record_step(StepMemory {
            index,
            url: view.url.clone(),
            evaluation: state.evaluation_previous_goal.clone(),
            goal: state.next_goal.clone(),
            actions: action_lines,
            ok,
        });
        cp.memory.add_finding(&state.memory);

        let screenshot_ref = screenshot.as_ref().map(|bytes| ScreenshotRef {
            // Content-addressed, as the sync server stores them: equal shots are one blob.
            key: sha256_hex(bytes),
            timestamp: iso8601((self.epoch_ms)()),
            mime: "image/jpeg".into(),
            bytes: bytes.len(),
        });
        executed.extend(skipped);
        let main = executed.first();
        let record = StepRecord {
            run_id: cp.run.id.clone(),
            index,
            url: view.url,
            title: view.title,
            screenshot: screenshot_ref,
            action: main.map_or_else(
                || StepAction { kind: "none".into(), target: String::new(), value: None },
                |a| step_action(&a.action, &a.target),
            ),
            actions: executed,
            thoughts: Thoughts {
                thought1: state.evaluation_previous_goal.clone(),
                thought2: state.memory.clone(),
                thought3: state.next_goal.clone(),
            },
            extended_thoughts: Vec::new(),
            verified: false,
            issues: Vec::new(),
            last_edited_by: "agent".into(),
            last_edited_at: iso8601((self.epoch_ms)()),
            outcome: if ok { "ok" } else { "failed" }.into(),
            trace_ids: std::mem::take(&mut cp.step_traces),
            duration_ms: self.clock.now_ms() - started,
        };
        cp.step += 1;
        if let Some(open) = cp.run.subtasks.last_mut() {
            open.step_range[1] = index;
        }
        if let Err(error) = self.capture.save_step(&record, screenshot.as_deref()).await {
            self.log(cp, "failure", format!("could not store step {}: {error}", index + 1));
        }
        let (state_name, kind) = if ok {
            (ExecutionState::StepOk, EventKind::Progress)
        } else {
            (ExecutionState::StepFail, EventKind::Error)
        };
        let summary = format!("Step {} {}", index + 1, if ok { "done" } else { "failed" });
        let ended = EventDetail::StepEnded { number: index + 1, ok };
        self.emit_detail(cp, Actor::Navigator, state_name, kind, summary, ended);
        StepEnd::Finished { done }
    }

    fn target(&self, tab: TabId, action: &Action) -> String {
        match action {
            Action::Click { id }
            | Action::Type { id, .. }
            | Action::Hover { id }
            | Action::ListOptions { id }
            | Action::SelectOption { id, .. }
            | Action::Scroll { id: Some(id), .. } => self.browser.describe(tab, *id),
            Action::GoToUrl { url } | Action::OpenTab { url } => url.clone(),
            Action::WebSearch { query } => query.clone(),
            Action::ScrollToText { text } => text.clone(),
            Action::ClickAt { x, y } => format!("({x}, {y})"),
            Action::SwitchTab { tab_id } | Action::CloseTab { tab_id } => format!("tab {tab_id}"),
            _ => String::new(),
        }
    }

    /// The allow/deny list, checked before going anywhere.
    fn refused(&self, action: &Action) -> Option<String> {
        match action {
            Action::GoToUrl { url } | Action::OpenTab { url } => {
                self.settings.url_permitted(url).err()
            }
            _ => None,
        }
    }

    /// Renders prompt `prompt_id`, asks the role's model for an answer that follows its
    /// schema (repairing within the run's budget), and records a trace either way.
    async fn ask<T: DeserializeOwned>(
        &self,
        cp: &mut Checkpoint,
        role: Actor,
        prompt_id: &str,
        vars: Value,
        ledger: &RepairLedger,
    ) -> Result<T, CallError> {
        self.ask_with_images(cp, role, prompt_id, vars, Vec::new(), ledger).await
    }

    async fn ask_with_images<T: DeserializeOwned>(
        &self,
        cp: &mut Checkpoint,
        role: Actor,
        prompt_id: &str,
        vars: Value,
        images: Vec<String>,
        ledger: &RepairLedger,
    ) -> Result<T, CallError> {
        let model = self.model(role);
        let variant = self.settings.variants.get(prompt_id).map(String::as_str);
        let rendered = match self.prompts.render(prompt_id, variant, &vars) {
            Ok(rendered) => rendered,
            Err(error) => {
                return Err(CallError::Failed(StructuredError::Provider(LlmError::BadRequest {
                    detail: format!("the prompt could not be rendered: {error}"),
                })));
            }
        };
        let prompt = self.prompts.prompt(prompt_id).expect("rendered prompts exist");
        let chat = ChatRequest {
            system: rendered.text.clone(),
            messages: vec![ChatMessage { images, ..ChatMessage::user(USER_TURN) }],
            schema: Some((prompt_id.to_owned(), prompt.schema.as_value().clone())),
            temperature: Some(0.0),
            max_tokens: None,
        };
        let started = self.clock.now_ms();
        let started_at = iso8601((self.epoch_ms)());
        let policy = RepairPolicy { max_repairs: self.settings.agent.repair_retries };
        let call = ask_structured(
            self.http,
            self.clock,
            model,
            self.settings.models.repair.as_ref(),
            prompt_id,
            &chat,
            &prompt.schema,
            policy,
            ledger,
        );
        let result = self.control.race(call).await;
        let duration_ms = self.clock.now_ms() - started;
        let (usage, attempts, error) = match &result {
            None => (Usage::default(), Vec::new(), Some("interrupted by the user".to_owned())),
            Some(Ok(answer)) => (answer.usage, answer.attempts.clone(), None),
            Some(Err(error @ StructuredError::Invalid { attempts, .. })) => {
                (Usage::default(), attempts.clone(), Some(error.to_string()))
            }
            Some(Err(error)) => (Usage::default(), Vec::new(), Some(error.to_string())),
        };
        let prices = PriceTable { per_million: self.settings.prices.clone() };
        let cost = prices.cost(&model.model, usage).unwrap_or(0.0);
        cp.spend.input_tokens += usage.input_tokens;
        cp.spend.output_tokens += usage.output_tokens;
        cp.spend.cost += cost;
        let mut params = vars;
        let redacted = redact(&mut params, &self.settings.agent.trace_redactions);
        scrub_keys(&mut params, self.settings);
        let trace = LlmTrace {
            id: self.capture.new_id(),
            run_id: cp.run.id.clone(),
            step: cp.step,
            role,
            prompt_id: rendered.prompt_id.clone(),
            variant: rendered.variant.clone(),
            prompt_hash: rendered.prompt_hash.clone(),
            revision_hash: rendered.revision_hash.clone(),
            chars: prompt_chars(&rendered.text, &params),
            params,
            redacted,
            provider: format!("{:?}", model.provider),
            model: model.model.clone(),
            usage,
            cost,
            started_at,
            duration_ms,
            attempts,
            error,
        };
        cp.step_traces.push(trace.id.clone());
        if let Err(error) = self.capture.save_trace(&trace).await {
            self.log(cp, "failure", format!("could not store a trace: {error}"));
        }
        match result {
            None => Err(CallError::Interrupted),
            Some(Err(error)) => Err(CallError::Failed(error)),
            // The schema and the types agree (a test holds them together), so this only
            // trips if an overridden schema allows what the engine cannot read.
            Some(Ok(answer)) => serde_json::from_value(answer.value).map_err(|e| {
                CallError::Failed(StructuredError::Invalid {
                    attempts: vec![crate::repair::Attempt {
                        model: model.model.clone(),
                        raw: String::new(),
                        problems: vec![e.to_string()],
                    }],
                    budget_exhausted: false,
                })
            }),
        }
    }

    fn model(&self, role: Actor) -> &ModelConfig {
        let models = &self.settings.models;
        match role {
            Actor::Planner => &models.planner,
            Actor::Thinking => &models.thinking,
            _ => &models.navigator,
        }
    }
}

/// The one user turn; the rendered prompt carries everything else as the system message.
const USER_TURN: &str = "Answer with the JSON object described above.";

/// Replaces any API key that appears in `params` (say, pasted into a task) with `***`.
fn scrub_keys(params: &mut Value, settings: &Settings) {
    let keys: Vec<String> = settings.keys().into_values().filter(|k| k.len() >= 8).collect();
    if keys.is_empty() {
        return;
    }
    fn walk(value: &mut Value, keys: &[String]) {
        match value {
            Value::String(text) => {
                for key in keys {
                    if text.contains(key.as_str()) {
                        *text = text.replace(key.as_str(), "***");
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, keys)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(v, keys)),
            _ => {}
        }
    }
    walk(params, &keys);
}

/// Whether a periodic planning point should call the Planner. A plan that is being followed
/// step after step would only be repeated, so it is reviewed only when something went other
/// than expected since it was made ([`Checkpoint::off_plan`]), or when the Navigator has
/// taken more steps than the plan lists (it is past the plan).
fn plan_needs_review(cp: &Checkpoint) -> bool {
    let Some(planned_at) = cp.planned_at else { return true };
    cp.off_plan || cp.step.saturating_sub(planned_at) > plan_items(&cp.memory.plan)
}

/// How many steps a plan lists: its non-empty lines, or its numbered items when it is
/// written on one line ("1. Open it. 2. Read the price.").
fn plan_items(plan: &str) -> u32 {
    let lines = plan.lines().filter(|l| !l.trim().is_empty()).count();
    if lines > 1 {
        return lines as u32;
    }
    let numbered = plan
        .split_whitespace()
        .filter(|word| {
            let digits = word.trim_end_matches(['.', ')']);
            digits.len() < word.len()
                && !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
        })
        .count();
    numbered.max(1) as u32
}

/// Splits a rendered prompt's size into template, page state and working memory.
fn prompt_chars(text: &str, params: &Value) -> PromptChars {
    let size = |names: &[&str]| -> usize {
        names
            .iter()
            .filter_map(|n| params.get(*n))
            .map(|v| match v {
                Value::String(s) => s.chars().count(),
                Value::Null => 0,
                other => other.to_string().chars().count(),
            })
            .sum()
    };
    let total = text.chars().count();
    let state = size(STATE_VARS);
    let history = size(MEMORY_VARS);
    PromptChars { system: total.saturating_sub(state + history), state, history, total }
}

/// `click "Add to cart"`, `type "kettle" into "Search"`, `go_to_url https://…`.
pub fn describe_action(action: &Action, target: &str) -> String {
    let name = serde_json::to_value(action)
        .ok()
        .and_then(|v| v.get("action").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    match action {
        Action::Type { text, .. } => format!("type {text:?} into {target}"),
        Action::SelectOption { option, .. } => format!("select {option:?} in {target}"),
        Action::SendKeys { keys } => format!("press {keys}"),
        Action::Done { success, .. } => {
            format!("done ({})", if *success { "success" } else { "gave up" })
        }
        _ if target.is_empty() => name,
        _ => format!("{name} {target}"),
    }
}

/// The step's action in the seed's vocabulary.
fn step_action(action: &Action, target: &str) -> StepAction {
    let (kind, value) = match action {
        Action::Click { .. } | Action::ClickAt { .. } => ("click", None),
        Action::Type { text, .. } => ("type", Some(text.clone())),
        Action::Scroll { screens, .. } => ("scroll", Some(screens.to_string())),
        Action::ScrollToText { text } => ("scroll", Some(text.clone())),
        Action::Wait { seconds } => ("wait", Some(seconds.to_string())),
        Action::SelectOption { option, .. } => ("select", Some(option.clone())),
        Action::GoToUrl { url } | Action::OpenTab { url } => ("navigate", Some(url.clone())),
        Action::Back | Action::Forward | Action::Reload => ("navigate", None),
        Action::WebSearch { query } => ("navigate", Some(query.clone())),
        Action::SendKeys { keys } => ("send_keys", Some(keys.clone())),
        Action::Done { text, .. } => ("done", Some(text.clone())),
        Action::Hover { .. } => ("hover", None),
        Action::ListOptions { .. } => ("list_options", None),
        Action::SwitchTab { .. } => ("switch_tab", None),
        Action::CloseTab { .. } => ("close_tab", None),
        Action::Extract { .. } => ("extract", None),
    };
    StepAction { kind: kind.into(), target: target.to_owned(), value }
}

#[cfg(test)]
mod tests;

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
