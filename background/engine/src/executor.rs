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

use protocol::TabId;

use crate::Clock;
use crate::actions::{Action, ActionOutcome};
use crate::agents::Claim;
use crate::memory::Budget;
use crate::providers::{Http, LlmError, Usage};
use crate::repair::{RepairLedger, StructuredError};
use crate::run::{Actor, AgentEvent, EventDetail, EventKind, ExecutionState, TaskStatus, iso8601};
use crate::truncate;
use run_contract::telemetry::{LogEntry, LogKind};

mod ask;
mod capture;
mod checkpoint;
mod control;
mod gate;
mod plan;
mod step;
pub mod stored;

pub use ask::{
    CallContext, CallError, CallSpec, TracedAnswer, USER_TURN, actor_of, decode_answer, traced_call,
};
pub use capture::{Capture, CaptureError};
use checkpoint::MAX_EVENTS;
pub use checkpoint::{Checkpoint, Counters, EXTRACT_CHARS, Notes, UserMessage};
pub use control::Control;
use plan::plan_needs_review;
use step::{DoneClaim, StepEnd};
pub use step::{describe_action, target_of};
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
    /// Whether element `id` of the latest page state holds a secret (a password, a card
    /// number, a one-time code), so what is typed into it is masked wherever it is kept.
    fn is_secret(&self, _tab: TabId, _id: u32) -> bool {
        false
    }
}

/// What the shell asks of a running task; shared between the shell and [`Executor::run`].
/// Everything one `run` needs. Built by the shell for each run.
pub struct Executor<'a, H, B, C, K> {
    /// The model calls' side (and the clock, control, settings and epoch every part reads).
    pub cx: CallContext<'a, H, K>,
    pub browser: &'a B,
    pub capture: &'a C,
}

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    fn budget(&self) -> Budget {
        Budget {
            full_steps: self.cx.settings.agent.history_steps.max(1) as usize,
            chars: self.cx.settings.agent.memory_budget_chars as usize,
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
            at: (self.cx.epoch_ms)(),
        };
        self.capture.emit(&event);
        cp.events.push(event);
        if cp.events.len() > MAX_EVENTS {
            cp.events.drain(..cp.events.len() - MAX_EVENTS);
        }
    }

    /// Adds a line to the run's telemetry (seed §7).
    fn log(&self, cp: &mut Checkpoint, kind: LogKind, message: impl Into<String>) {
        let entry =
            LogEntry { at: (self.cx.epoch_ms)(), step: cp.step, kind, message: message.into() };
        cp.run.telemetry.push(entry);
    }

    /// Saves the checkpoint and the run header. A storage failure is reported but does not
    /// stop the task: the agent's work in the tab matters more than the record of it.
    pub async fn save(&self, cp: &mut Checkpoint) {
        cp.run.updated_at = iso8601((self.cx.epoch_ms)());
        cp.run.total_steps = cp.step;
        cp.run.agent_status = cp.status.job_status();
        cp.run.follow_ups = cp.memory.follow_ups.iter().map(|f| f.text.clone()).collect();
        cp.run.usage =
            Usage { input_tokens: cp.spend.input_tokens, output_tokens: cp.spend.output_tokens };
        cp.run.cost = cp.spend.cost;
        cp.run.telemetry.pauses = cp.counters.pauses;
        cp.run.telemetry.resumes = cp.counters.resumes;
        cp.run.telemetry.thinking_calls = cp.counters.thinking_calls;
        let saved = self.capture.save_run(&cp.run).await;
        self.stored(cp, "the run", saved);
        let saved = self.capture.save_checkpoint(cp).await;
        self.stored(cp, "the checkpoint", saved);
    }

    /// Logs a record that could not be stored. A full disk also stops the task at the next
    /// point it can pause: every later step would be lost too.
    fn stored(&self, cp: &mut Checkpoint, what: &str, result: Result<(), CaptureError>) {
        if let Err(error) = result {
            self.log(cp, LogKind::Failure, format!("could not store {what}: {error}"));
            if let CaptureError::Full(_) = error {
                cp.storage_full = true;
            }
        }
    }

    /// `applyUserFollowUp`: the user's message joins memory, marked as theirs (and as the
    /// answer to the pending question, if any), and the ThinkingAgent decides what it means
    /// for the task before the next step (re-plan, continue, or ask back).
    pub fn apply_follow_up(&self, cp: &mut Checkpoint, text: &str) {
        let answer_to = cp.question().map(str::to_owned);
        cp.memory.add_follow_up(text, cp.step, answer_to.clone());
        if let TaskStatus::Paused { question, .. } = &mut cp.status {
            *question = None;
        }
        // The ThinkingAgent weighs it before the next step (the entry gate).
        cp.unreviewed.push(UserMessage { text: text.to_owned(), answers: answer_to.clone() });
        let what = if answer_to.is_some() { "answer" } else { "steering" };
        self.log(
            cp,
            LogKind::FollowUp,
            format!("applied the user's {what}: {}", truncate(text, 200)),
        );
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
            LogKind::Pause,
            format!("{reason}{}", question.as_ref().map(|q| format!(": {q}")).unwrap_or_default()),
        );
        cp.status = TaskStatus::Paused {
            reason: reason.to_owned(),
            question,
            since: (self.cx.epoch_ms)(),
            by_user: actor == Actor::User,
        };
        self.emit_detail(cp, actor, ExecutionState::TaskPause, kind, details, detail);
    }

    /// `requestUserInput(reason)`: pause with a question for the user.
    fn request_user_input(&self, cp: &mut Checkpoint, question: &str) {
        self.request_user_input_detail(cp, question.to_owned(), EventDetail::None);
    }

    /// [`Self::request_user_input`] with the facts behind the question for the pages.
    fn request_user_input_detail(
        &self,
        cp: &mut Checkpoint,
        question: String,
        detail: EventDetail,
    ) {
        self.log(cp, LogKind::UserInput, &question);
        let reason = "The agent needs your input";
        self.pause_detail(cp, Actor::System, reason, Some(question), detail);
    }

    /// Ends a task as cancelled (from a running or paused state).
    pub async fn cancel(&self, cp: &mut Checkpoint) {
        if cp.status.is_finished() {
            return;
        }
        self.mark_cancelled(cp);
        self.save(cp).await;
    }

    /// The task is cancelled, as the person asked, and every page is told.
    fn mark_cancelled(&self, cp: &mut Checkpoint) {
        cp.status = TaskStatus::Cancelled;
        let (actor, state) = (Actor::User, ExecutionState::TaskCancel);
        self.emit(cp, actor, state, EventKind::Progress, "Task stopped.");
    }

    /// Ends the task as failed because of something outside it (its tab was closed), or
    /// turns a stop that this caused into that failure. Everything captured stays.
    pub async fn end_failed(&self, cp: &mut Checkpoint, why: &str) {
        if cp.status.is_finished() && cp.status != TaskStatus::Cancelled {
            return;
        }
        self.mark_ended(cp, why);
        self.save(cp).await;
    }

    fn mark_ended(&self, cp: &mut Checkpoint, why: &str) {
        cp.status = TaskStatus::Failed { error: why.to_owned() };
        self.emit(cp, Actor::System, ExecutionState::TaskFail, EventKind::Error, why);
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
                self.log(cp, LogKind::Resume, "resumed");
                cp.status = TaskStatus::Running;
                // A message sent while paused goes to the entry gate, which decides.
                cp.replan = cp.unreviewed.is_empty();
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
        let ledger = RepairLedger::with_budget(cp.repairs_left).watched(self.cx.control.waits());
        self.run_loop(cp, &ledger).await;
        cp.repairs_left = ledger.remaining();
        self.save(cp).await;
    }

    async fn run_loop(&self, cp: &mut Checkpoint, ledger: &RepairLedger) {
        let options = &self.cx.settings.agent;
        loop {
            for text in self.cx.control.follow_ups.take() {
                self.apply_follow_up(cp, &text);
            }
            if self.cx.control.cancel.get() {
                match self.cx.control.end_reason() {
                    Some(why) => self.mark_ended(cp, &why),
                    None => self.mark_cancelled(cp),
                }
                return;
            }
            if std::mem::take(&mut cp.storage_full) {
                let question = "The browser's storage for AlphaScout is full, so this run is no longer being recorded. Free space (delete old conversations in History, or export and delete runs on the annotation page), then press Resume.";
                self.request_user_input(cp, question);
                return;
            }
            if self.cx.control.pause.get() {
                self.pause(cp, Actor::User, "Agent paused – you can adjust instructions now", None);
                return;
            }
            if !cp.unreviewed.is_empty() {
                match self.entry_gate(cp, ledger).await {
                    Some(true) => return,
                    Some(false) => {}
                    None => continue,
                }
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
                        let need = planner.ask_user.trim();
                        if !need.is_empty() {
                            if self.agent_asks(cp, ledger, Actor::Planner, need).await {
                                return;
                            }
                            continue;
                        }
                        if planner.done || !planner.web_task {
                            if self.exit_gate(cp, ledger, Claim::Planner(&planner)).await {
                                return;
                            }
                            continue;
                        }
                    }
                }
            }

            let (mut claim, mut abort) = (None, false);
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
                StepEnd::Finished { done, abort: aborted } => (claim, abort) = (done, aborted),
                StepEnd::Asks(need) => {
                    self.save(cp).await;
                    if self.agent_asks(cp, ledger, Actor::Navigator, &need).await {
                        return;
                    }
                    continue;
                }
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
            let reason = if abort {
                Some("the Navigator decided to abort its approach".to_owned())
            } else if cp.counters.consecutive_failures == threshold {
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
        self.log(cp, LogKind::Failure, format!("{actor:?}: {message}"));
        // Problems only the person can fix in the model settings.
        let settings_problem = match error {
            StructuredError::Provider(LlmError::Auth { .. }) => Some("the API key"),
            StructuredError::Provider(LlmError::ModelNotFound { .. }) => Some("the model name"),
            StructuredError::Provider(LlmError::BadRequest { .. }) => Some("the model settings"),
            _ => None,
        };
        let budget_gone = matches!(error, StructuredError::Invalid { budget_exhausted: true, .. });
        let gives_up = budget_gone
            || cp.counters.consecutive_failures
                >= self.cx.settings.agent.max_consecutive_failures.max(1);
        let detail = match (settings_problem, error) {
            (Some(what), _) => EventDetail::NeedsSettings { what: what.into() },
            // The problems are for whoever debugs the prompt; the panel folds them away.
            (None, StructuredError::Invalid { .. }) => {
                EventDetail::MalformedAnswer { retried: !gives_up }
            }
            (None, _) => EventDetail::None,
        };
        self.emit_detail(
            cp,
            actor,
            ExecutionState::StepFail,
            EventKind::Error,
            message.clone(),
            detail.clone(),
        );
        if let Some(what) = settings_problem {
            // The error event above says what is wrong; the question says what to do.
            let role = format!("{actor:?}").to_ascii_lowercase();
            let question =
                format!("Please fix {what} for the {role} in Settings, then press Resume.");
            self.request_user_input_detail(cp, question, detail);
            return true;
        }
        if gives_up {
            // The question is for a person: the schema's complaints stay in the error above.
            let question = format!(
                "I could not get a usable answer from the model ({}). Resume to retry, try another model in Settings, or tell me how to proceed.",
                error.headline().trim_end_matches('.')
            );
            let detail = EventDetail::NeedsSettings { what: "another model".into() };
            self.request_user_input_detail(cp, question, detail);
            return true;
        }
        false
    }

    fn fail(&self, cp: &mut Checkpoint, message: &str) {
        cp.status = TaskStatus::Failed { error: message.to_owned() };
        self.log(cp, LogKind::Failure, message);
        self.emit(cp, Actor::System, ExecutionState::TaskFail, EventKind::Error, message);
    }
}

#[cfg(test)]
mod tests;
