//! Replay: a workflow (parameters already substituted) run subtask by subtask in a tab.
//!
//! Each step first tries the **fast path**: the subtask's next reference step, when its
//! recorded target matches exactly one element of the page state now (by tag, role, type,
//! name, `name`, placeholder and link), is carried out without a model call. The next look
//! checks where it led against the recording (the page the next recorded step was on), and
//! any doubt (no match, several, an action that failed, a page elsewhere than recorded, a
//! step only a model can do such as an extract) hands the rest of the subtask to the model.
//! A subtask whose reference steps all went through the fast path and checked out is done
//! without asking the model at all.
//!
//! Otherwise a step is one call of `prompts/replay/`: the task, the subtask and its expected
//! outcome, the parameters, the task memory, this subtask's recent history, its reference
//! steps, and the upstream extracts its dependencies name. The answer is exactly one of the
//! Navigator's actions (or `done`), an observation, the updated memory and any values it
//! extracted, stored under their variable names for later subtasks.
//!
//! Everything is captured as an [`AgentRun`] through [`Capture`]: one run subtask per
//! workflow subtask, a step per action with its screenshot and three thoughts, every trace.
//! Pause and cancel come from the executor's [`Control`]; a paused replay is a
//! [`ReplayState`] that a later [`Replayer::run`] continues from the start of the subtask it
//! stopped in.

use std::collections::BTreeMap;

use protocol::TabId;
use protocol::jobs::JobStatus;
use run_contract::digest::sha256_hex;
use run_contract::telemetry::{LogEntry, LogKind};
use serde::Serialize;
use serde_json::json;

use super::recording::{SECRET_MASK, TargetDescriptor};
use super::schema::{ActionKind, Workflow, WorkflowStep};
use crate::actions::{Action, ActionOutcome, Tabs, WaitLimits};
use crate::browser::CdpBrowser;
use crate::cdp::Cdp;
use crate::executor::{
    Browser, CallContext, CallError, CallSpec, Capture, PageView, decode_answer, target_of,
    traced_call,
};
use crate::page_state::Element;
use crate::providers::{Http, ModelConfig, Usage};
use crate::repair::RepairLedger;
use crate::run::{
    Actor, AgentRun, ExecutedAction, ReplayOrigin, ReviewStatus, ScreenshotRef, StepAction,
    StepOutcome, StepRecord, Subtask, SubtaskStatus, Thoughts, iso8601,
};
use crate::{Clock, truncate, untrusted};

pub const REPLAY_PROMPT: &str = "replay";

/// The user's latest messages the model sees at each step.
const MESSAGES_SHOWN: usize = 5;

/// How long a step waits for its screenshot (the same bound as a task's).
pub use crate::browser::SCREENSHOT_WAIT_MS;

/// The browser as replay uses it: the executor's, plus the elements of the latest look for
/// matching recorded targets.
#[allow(async_fn_in_trait)]
pub trait ReplayBrowser: Browser {
    fn elements(&self, tab: TabId) -> Vec<Element>;

    /// [`Browser::perform`] for a fast-path action whose next recorded step acts on an
    /// element already on the page: nothing new is awaited, so typing does not wait for a
    /// suggestion list to open (half a second on every typed field otherwise).
    async fn perform_awaiting_nothing_new(&self, tab: TabId, action: &Action) -> ActionOutcome {
        self.perform(tab, action).await
    }
}

impl<C: Cdp, K: Clock, T: Tabs> ReplayBrowser for CdpBrowser<'_, C, K, T> {
    fn elements(&self, tab: TabId) -> Vec<Element> {
        self.observer.last_elements(tab).unwrap_or_default()
    }

    async fn perform_awaiting_nothing_new(&self, tab: TabId, action: &Action) -> ActionOutcome {
        let limits = WaitLimits { suggestions_ms: 0.0, ..WaitLimits::default() };
        self.perform_within(tab, action, limits).await
    }
}

/// How far replay goes before it gives up on a subtask.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayLimits {
    /// Steps (fast or not) per subtask.
    pub steps_per_subtask: u32,
    /// History entries of this subtask the model sees.
    pub history: usize,
    /// Send a screenshot with the page state.
    pub vision: bool,
    /// Try recorded steps without the model first (off: every step asks the model, as the
    /// benchmark compares).
    pub fast_path: bool,
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits { steps_per_subtask: 15, history: 6, vision: false, fast_path: true }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ReplayStatus {
    Running,
    Paused,
    Cancelled,
    Done,
    Failed { subtask: String, why: String },
}

impl ReplayStatus {
    pub fn job_status(&self) -> JobStatus {
        match self {
            ReplayStatus::Running => JobStatus::Running,
            ReplayStatus::Paused => JobStatus::Paused,
            ReplayStatus::Cancelled => JobStatus::Cancelled,
            ReplayStatus::Done => JobStatus::Done,
            ReplayStatus::Failed { .. } => JobStatus::Failed,
        }
    }
}

/// A replay's whole state: what a pause stores and a resume continues.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayState {
    pub run: AgentRun,
    pub tab: TabId,
    /// The resolved parameters (shown to the model).
    pub params: BTreeMap<String, String>,
    /// The subtask to run next.
    pub subtask: usize,
    pub memory: String,
    /// Extract variables → values.
    pub extracts: BTreeMap<String, String>,
    /// Steps recorded so far.
    pub step: u32,
    pub model_calls: u32,
    /// Model calls the fast path made unnecessary.
    pub calls_saved: u32,
    pub status: ReplayStatus,
    /// What the user said during the replay (steering, answers), oldest first; the model
    /// sees the latest ones at every step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// The model's question while the replay waits for the user's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

impl ReplayState {
    /// A replay of `workflow` (substituted with `params`) about to start in `tab`.
    pub fn new(
        workflow: &Workflow,
        params: BTreeMap<String, String>,
        tab: TabId,
        run_id: &str,
        at: &str,
        model: &str,
    ) -> ReplayState {
        let run = AgentRun {
            id: run_id.to_owned(),
            task_id: format!("workflow:{}", workflow.id),
            task_prompt: format!("{} (workflow v{})", workflow.name, workflow.version),
            follow_ups: Vec::new(),
            status: ReviewStatus::Draft,
            agent_status: JobStatus::Running,
            final_answer: None,
            created_at: at.to_owned(),
            updated_at: at.to_owned(),
            created_by: "workflow-replay".into(),
            reviewed_by: None,
            subtasks: Vec::new(),
            total_steps: 0,
            start_url: workflow.start_url.clone(),
            models: json!({ "replay": model }),
            usage: Usage::default(),
            cost: 0.0,
            telemetry: Default::default(),
            replay: Some(ReplayOrigin {
                workflow_id: workflow.id.clone(),
                version: workflow.version,
                params: params.clone(),
                ..ReplayOrigin::default()
            }),
            driven_by: None,
        };
        ReplayState {
            run,
            tab,
            params,
            subtask: 0,
            memory: String::new(),
            extracts: BTreeMap::new(),
            step: 0,
            model_calls: 0,
            calls_saved: 0,
            status: ReplayStatus::Running,
            messages: Vec::new(),
            question: None,
        }
    }
}

/// The model's answer for one replay step.
#[derive(Debug, Clone, PartialEq, tagged_de::FieldsDeserialize)]
struct ReplayAnswer {
    thought_changed: String,
    thought_state: String,
    thought_next: String,
    observation: String,
    memory: String,
    extracted: Vec<Extracted>,
    /// A question only the user can answer; the replay pauses until they do.
    #[serde(default)]
    ask_user: String,
    action: Action,
}

#[derive(Debug, Clone, PartialEq, tagged_de::FieldsDeserialize)]
struct Extracted {
    variable: String,
    value: String,
}

/// Everything one replay needs.
pub struct Replayer<'a, H, B, C, K> {
    pub cx: CallContext<'a, H, K>,
    pub browser: &'a B,
    pub capture: &'a C,
    pub model: &'a ModelConfig,
    pub ledger: &'a RepairLedger,
    pub limits: ReplayLimits,
    /// Secret parameters, token → value ([`Workflow::for_replay`]): put into what is typed
    /// at the last moment, so prompts, traces, records and the stored state keep the token.
    pub secrets: &'a BTreeMap<String, String>,
    /// Told the state after every step and every save, so the shell can store it: a replay
    /// cut off mid-subtask resumes with its memory, extracts and step numbering.
    pub on_state: &'a dyn Fn(&ReplayState),
}

/// What the next look must show for a fast-path action to count as having worked.
struct Expectation {
    /// The action, for the history and the model if it did not.
    did: String,
    /// Origin and path of the page the recording went on to.
    path: Option<String>,
}

/// How a subtask ended.
enum SubtaskEnd {
    Done,
    Stopped,
}

impl<H: Http, B: ReplayBrowser, C: Capture, K: Clock> Replayer<'_, H, B, C, K> {
    /// Runs `workflow` (substituted) from `state` until it ends or pauses; the run is saved
    /// as it goes and `state` says where it stands.
    pub async fn run(&self, workflow: &Workflow, state: &mut ReplayState) {
        state.status = ReplayStatus::Running;
        self.save(state).await;
        while state.subtask < workflow.subtasks.len() {
            match self.run_subtask(workflow, state).await {
                SubtaskEnd::Done => state.subtask += 1,
                SubtaskEnd::Stopped => break,
            }
        }
        if state.status == ReplayStatus::Running {
            state.status = ReplayStatus::Done;
        }
        self.save(state).await;
    }

    async fn save(&self, state: &mut ReplayState) {
        let run = &mut state.run;
        run.updated_at = iso8601((self.cx.epoch_ms)());
        run.total_steps = state.step;
        run.agent_status = state.status.job_status();
        if let Some(origin) = run.replay.as_mut() {
            origin.fast_path = self.limits.fast_path;
            origin.steps = state.step;
            origin.fast_path_steps = state.calls_saved;
        }
        run.final_answer = match &state.status {
            ReplayStatus::Done => Some(format!(
                "Replayed every subtask: {} model call(s), {} saved by the fast path.",
                state.model_calls, state.calls_saved
            )),
            ReplayStatus::Failed { subtask, why } => Some(format!("Subtask {subtask:?}: {why}")),
            _ => None,
        };
        // A failed save is not worth stopping a replay for: the work in the tab goes on.
        let _ = self.capture.save_run(run).await;
        (self.on_state)(state);
    }

    /// A line of the run's telemetry, as the executor writes them.
    fn log(&self, state: &mut ReplayState, kind: LogKind, message: &str) {
        let entry =
            LogEntry { at: (self.cx.epoch_ms)(), step: state.step, kind, message: message.into() };
        state.run.telemetry.push(entry);
    }

    /// Whether the user paused or cancelled, or the shell ended it (its tab closed); sets
    /// the status if so.
    fn stopped(&self, state: &mut ReplayState) -> bool {
        if self.cx.control.cancel_requested() {
            state.status = match self.cx.control.end_reason() {
                Some(why) => ReplayStatus::Failed { subtask: (state.subtask + 1).to_string(), why },
                None => ReplayStatus::Cancelled,
            };
        } else if self.cx.control.pause_requested() {
            state.status = ReplayStatus::Paused;
        }
        state.status != ReplayStatus::Running
    }

    async fn run_subtask(&self, workflow: &Workflow, state: &mut ReplayState) -> SubtaskEnd {
        let subtask = &workflow.subtasks[state.subtask];
        let references: Vec<(usize, &WorkflowStep)> =
            workflow.steps.iter().enumerate().filter(|(_, s)| s.subtask == subtask.id).collect();
        let first_step = state.step;
        // A subtask a pause interrupted starts again, in the run's same subtask.
        if state.run.subtasks.last().is_none_or(|s| s.id != subtask.id) {
            state.run.subtasks.push(Subtask {
                id: subtask.id.clone(),
                title: subtask.text.clone(),
                description: subtask.expected_outcome.clone(),
                step_range: [first_step, first_step],
                status: SubtaskStatus::Pending,
            });
        }
        // Where the replay stands now, so a resume starts at this subtask.
        (self.on_state)(state);
        let mut history: Vec<String> = Vec::new();
        let mut next_reference = 0;
        let mut fast = self.limits.fast_path;
        let mut expectation: Option<Expectation> = None;
        let end = loop {
            if self.stopped(state) {
                break SubtaskEnd::Stopped;
            }
            let started = self.cx.clock.now_ms();
            // Steering or an answer: the model reads it, so the fast path gives way.
            let said = self.cx.control.take_follow_ups();
            if !said.is_empty() {
                fast = false;
                state.question = None;
                for text in said {
                    history.push(format!("The user said: {text}"));
                    self.log(state, LogKind::FollowUp, &text);
                    state.messages.push(text);
                }
            }
            let view = match self.browser.observe(state.tab).await {
                Ok(view) => view,
                Err(error) => {
                    state.status = ReplayStatus::Failed {
                        subtask: subtask.id.clone(),
                        why: format!("the tab could not be read: {}", error.message),
                    };
                    break SubtaskEnd::Stopped;
                }
            };
            // Check the last fast-path action against the recording.
            if let Some(expected) = expectation.take()
                && let Some(path) = &expected.path
                && path_of(&view.url).as_deref() != Some(path.as_str())
            {
                fast = false;
                history.push(format!(
                    "{} (without the model) led to {}, not to {path} as when recorded: \
                     check the page and continue.",
                    expected.did, view.url
                ));
            }
            if fast && !references.is_empty() && next_reference == references.len() {
                // Every reference step went through and checked out: the subtask is done
                // without asking the model whether it is.
                state.calls_saved += 1;
                break SubtaskEnd::Done;
            }
            if state.step - first_step >= self.limits.steps_per_subtask {
                state.status = ReplayStatus::Failed {
                    subtask: subtask.id.clone(),
                    why: format!(
                        "its expected outcome was not reached in {} steps",
                        self.limits.steps_per_subtask
                    ),
                };
                break SubtaskEnd::Stopped;
            }
            let screenshot = self.screenshot(state.tab, false).await;
            if fast {
                let (index, reference) = references[next_reference];
                let next_url = workflow.steps.get(index + 1).and_then(|s| s.url.as_deref());
                let focus_known = next_reference > 0;
                let elements = self.browser.elements(state.tab);
                match fast_action(reference, &elements, focus_known) {
                    Some(action) => {
                        let target = target_of(self.browser, state.tab, &action);
                        // What the recording did next is on the page already: waiting for
                        // something to appear would only cost time.
                        let next_here = references
                            .get(next_reference + 1)
                            .is_some_and(|(_, next)| targets_one_of(next, &elements));
                        let outcome = self.perform(state.tab, &action, next_here).await;
                        if let Some(tab) = outcome.tab {
                            state.tab = tab;
                        }
                        let did = describe(&action, &target);
                        let thoughts = Thoughts {
                            thought1: format!("Reference step {}: {}", index + 1, reference.intent),
                            // Pass A may leave the target unsaid; the element found says it.
                            thought2: format!(
                                "The recorded target ({}) is the only match on this page.",
                                if reference.target.trim().is_empty() {
                                    target.as_str()
                                } else {
                                    reference.target.as_str()
                                }
                            ),
                            thought3: format!(
                                "I {did} without asking the model; expected: {}",
                                reference.post_action
                            ),
                        };
                        let notes = vec!["fast path: no model call".to_owned()];
                        let recorded = Recorded { started, thoughts, notes, trace_ids: Vec::new() };
                        self.record(state, &view, screenshot, &action, &target, &outcome, recorded)
                            .await;
                        history.push(format!("{did}: {}", outcome.message));
                        if outcome.ok && !outcome.stale {
                            state.calls_saved += 1;
                            next_reference += 1;
                            let recorded_here = reference.url.as_deref().and_then(path_of);
                            let recorded_next = next_url.and_then(path_of);
                            // Where the recording went next; only a known change is checked
                            // when the recording did not leave the page (the URL may carry
                            // the new parameters).
                            let path = match (recorded_here, recorded_next) {
                                (Some(here), Some(next)) if here == next => path_of(&view.url),
                                (_, next) => next,
                            };
                            expectation = Some(Expectation { did, path });
                        } else {
                            fast = false;
                        }
                        continue;
                    }
                    None => fast = false,
                }
            }
            // The model's step.
            let extract_variables: Vec<String> = references
                .iter()
                .filter(|(_, s)| s.action.kind == ActionKind::Extract)
                .filter_map(|(_, s)| {
                    let name = s.action.variable.as_deref()?;
                    let query = s.action.value.as_deref().unwrap_or(&s.intent);
                    Some(format!("{name}: {query}"))
                })
                .collect();
            let dependencies: Vec<String> = subtask
                .depends_on
                .iter()
                .filter_map(|name| state.extracts.get(name).map(|v| format!("{name} = {v}")))
                .collect();
            let recent = history.len().saturating_sub(self.limits.history);
            let vars = json!({
                "task_name": workflow.name,
                "task_description": workflow.description,
                "subtask": subtask.text,
                "expected_outcome": subtask.expected_outcome,
                "subtask_number": state.subtask + 1,
                "subtask_count": workflow.subtasks.len(),
                "params": state.params.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join("\n"),
                "extracts": (!dependencies.is_empty())
                    .then(|| untrusted::block("extracted_values", "", &dependencies.join("\n"))),
                "memory": (!state.memory.is_empty()).then(|| state.memory.clone()),
                "user_messages": (!state.messages.is_empty()).then(|| {
                    let from = state.messages.len().saturating_sub(MESSAGES_SHOWN);
                    state.messages[from..].join("\n")
                }),
                "reference_steps": reference_listing(&references),
                "extract_variables": (!extract_variables.is_empty()).then(|| extract_variables.join("\n")),
                "history": (!history.is_empty()).then(|| history[recent..].join("\n")),
                "step": state.step - first_step + 1,
                "step_limit": self.limits.steps_per_subtask,
                "page_state": view.text,
            });
            let images = if self.limits.vision {
                let marked = self.screenshot(state.tab, true).await;
                marked.map(|bytes| vec![base64_of(&bytes)]).unwrap_or_default()
            } else {
                Vec::new()
            };
            let spec = CallSpec {
                prompt_id: REPLAY_PROMPT,
                model: self.model,
                actor: Actor::Navigator,
                run_id: &state.run.id,
                step: state.step,
                trace_id: self.capture.new_id(),
                vars,
                images,
            };
            let asked = traced_call(&self.cx, spec, self.ledger).await;
            state.model_calls += 1;
            state.run.usage.input_tokens += asked.usage.input_tokens;
            state.run.usage.output_tokens += asked.usage.output_tokens;
            state.run.cost += asked.cost;
            let spend = state.run.telemetry.spend.entry_or_default(REPLAY_PROMPT.to_owned());
            spend.calls += 1;
            spend.input_tokens += asked.usage.input_tokens;
            spend.output_tokens += asked.usage.output_tokens;
            spend.cost += asked.cost;
            let trace_ids: Vec<String> = asked.trace.iter().map(|t| t.id.clone()).collect();
            if let Some(trace) = &asked.trace {
                let _ = self.capture.save_trace(trace).await;
            }
            let answer: ReplayAnswer =
                match asked.answer.and_then(|v| decode_answer(v, &self.model.model)) {
                    Ok(answer) => answer,
                    Err(CallError::Interrupted) => {
                        self.stopped(state);
                        break SubtaskEnd::Stopped;
                    }
                    Err(CallError::Failed(error)) => {
                        state.status = ReplayStatus::Failed {
                            subtask: subtask.id.clone(),
                            why: format!("the model gave no usable answer: {error}"),
                        };
                        break SubtaskEnd::Stopped;
                    }
                };
            state.memory = answer.memory.clone();
            let question = answer.ask_user.trim();
            if !question.is_empty() {
                // Asked like the agent asks: the replay pauses with the question, and the
                // answer comes back as a message on resume.
                state.question = Some(question.to_owned());
                state.status = ReplayStatus::Paused;
                self.log(state, LogKind::UserInput, question);
                break SubtaskEnd::Stopped;
            }
            let wanted: Vec<&str> =
                references.iter().filter_map(|(_, s)| s.action.variable.as_deref()).collect();
            for extracted in &answer.extracted {
                if wanted.contains(&extracted.variable.as_str()) {
                    state.extracts.insert(extracted.variable.clone(), extracted.value.clone());
                }
            }
            let thoughts = Thoughts {
                thought1: answer.thought_changed.clone(),
                thought2: answer.thought_state.clone(),
                thought3: answer.thought_next.clone(),
            };
            let notes = vec![format!("observation: {}", answer.observation)];
            if let Action::Done { success, text } = &answer.action {
                let missing: Vec<&str> =
                    wanted.iter().copied().filter(|v| !state.extracts.contains_key(*v)).collect();
                let outcome = if !success {
                    ActionOutcome { ok: false, message: text.clone(), ..Default::default() }
                } else if !missing.is_empty() {
                    ActionOutcome {
                        ok: false,
                        message: format!(
                            "Not done yet: extract {} first (report it in `extracted`).",
                            missing.join(", ")
                        ),
                        ..Default::default()
                    }
                } else {
                    ActionOutcome {
                        ok: true,
                        done: true,
                        message: text.clone(),
                        ..Default::default()
                    }
                };
                let recorded = Recorded { started, thoughts, notes, trace_ids };
                self.record(state, &view, screenshot, &answer.action, "", &outcome, recorded).await;
                if !success {
                    state.status = ReplayStatus::Failed {
                        subtask: subtask.id.clone(),
                        why: format!("the model could not reach the expected outcome: {text}"),
                    };
                    break SubtaskEnd::Stopped;
                }
                if outcome.ok {
                    break SubtaskEnd::Done;
                }
                history.push(format!("done refused: {}", outcome.message));
                continue;
            }
            let target = target_of(self.browser, state.tab, &answer.action);
            let outcome = self.perform(state.tab, &answer.action, false).await;
            if let Some(tab) = outcome.tab {
                state.tab = tab;
            }
            let mut line = format!("{}: {}", describe(&answer.action, &target), outcome.message);
            if let Some(text) = &outcome.extracted {
                line.push('\n');
                line.push_str(&untrusted::block("extracted_text", "", &truncate(text, 3000)));
            }
            history.push(line);
            let recorded = Recorded { started, thoughts, notes, trace_ids };
            self.record(state, &view, screenshot, &answer.action, &target, &outcome, recorded)
                .await;
        };
        if let Some(last) = state.run.subtasks.last_mut() {
            let start = last.step_range[0];
            last.step_range = [start, state.step.saturating_sub(1).max(start)];
        }
        self.save(state).await;
        end
    }

    /// A screenshot, or none after [`SCREENSHOT_WAIT_MS`]: Chrome may never paint a page
    /// that loaded in a background tab, and a capture then waits for a frame that does not
    /// come. The step is recorded without one rather than the replay stalling.
    async fn screenshot(&self, tab: TabId, marks: bool) -> Option<Vec<u8>> {
        crate::within(self.cx.clock, SCREENSHOT_WAIT_MS, self.browser.screenshot(tab, marks))
            .await
            .flatten()
    }

    /// Carries out `action` with secret tokens replaced by their values; `next_here`: see
    /// [`ReplayBrowser::perform_awaiting_nothing_new`].
    async fn perform(&self, tab: TabId, action: &Action, next_here: bool) -> ActionOutcome {
        let reveal = |text: &str| {
            self.secrets
                .iter()
                .fold(text.to_owned(), |text, (token, value)| text.replace(token, value))
        };
        let real = match action {
            Action::Type { id, text, clear } if !self.secrets.is_empty() => {
                Action::Type { id: *id, text: reveal(text), clear: *clear }
            }
            _ => action.clone(),
        };
        let mut outcome = if next_here {
            self.browser.perform_awaiting_nothing_new(tab, &real).await
        } else {
            self.browser.perform(tab, &real).await
        };
        // An outcome that echoes what was typed must not carry the secret on.
        for (token, value) in self.secrets.iter().filter(|(_, v)| !v.is_empty()) {
            outcome.message = outcome.message.replace(value, token);
        }
        outcome
    }

    /// Records one replay step (screenshot, action, thoughts) through [`Capture`].
    #[allow(clippy::too_many_arguments)]
    async fn record(
        &self,
        state: &mut ReplayState,
        view: &PageView,
        screenshot: Option<Vec<u8>>,
        action: &Action,
        target: &str,
        outcome: &ActionOutcome,
        recorded: Recorded,
    ) {
        let Recorded { started, thoughts, notes: extended_thoughts, trace_ids } = recorded;
        let at = iso8601((self.cx.epoch_ms)());
        let step = StepRecord {
            run_id: state.run.id.clone(),
            index: state.step,
            url: view.url.clone(),
            title: view.title.clone(),
            screenshot: screenshot.as_ref().map(|bytes| ScreenshotRef {
                key: sha256_hex(bytes),
                timestamp: at.clone(),
                mime: "image/jpeg".into(),
                bytes: bytes.len(),
            }),
            action: StepAction::of(action, target),
            actions: vec![ExecutedAction {
                action: action.clone(),
                target: target.to_owned(),
                ok: outcome.ok,
                message: outcome.message.clone(),
            }],
            thoughts,
            extended_thoughts,
            verified: false,
            issues: Vec::new(),
            last_edited_by: "agent".into(),
            last_edited_at: at,
            outcome: StepOutcome::of(outcome.ok),
            trace_ids,
            // From the look to the record: the model's time included, as a task's step.
            duration_ms: self.cx.clock.now_ms() - started,
            navigator: None,
            drafted_thoughts: Vec::new(),
        };
        let _ = self.capture.save_step(&step, screenshot.as_deref()).await;
        state.step += 1;
        (self.on_state)(state);
    }
}

/// What a step's record says besides the page and the action.
struct Recorded {
    /// When the step began (its look), on the replay's clock.
    started: f64,
    thoughts: Thoughts,
    notes: Vec<String>,
    trace_ids: Vec<String>,
}

/// The action for reference step `step` when its recorded target matches exactly one
/// element of `elements` (and the step is one a fast path can do at all). `focus_known`:
/// the previous step of this subtask went through the fast path, so the focus is where the
/// recording had it.
pub fn fast_action(step: &WorkflowStep, elements: &[Element], focus_known: bool) -> Option<Action> {
    let value = step.action.value.clone();
    // A masked secret or an unfilled parameter is never typed.
    if value.as_deref().is_some_and(|v| v.contains(SECRET_MASK) || v.contains('{')) {
        return None;
    }
    // The one element a recorded descriptor matches now.
    let only = |descriptor: Option<&TargetDescriptor>| -> Option<u32> {
        let descriptor = descriptor?;
        let mut found = elements.iter().filter(|e| matches(descriptor, e));
        let only = found.next()?;
        found.next().is_none().then_some(only.id)
    };
    let target = || only(step.action.descriptor.as_ref());
    match &step.action.kind {
        ActionKind::Click => Some(Action::Click { id: target()? }),
        ActionKind::Type => Some(Action::Type { id: target()?, text: value?, clear: true }),
        ActionKind::Select => {
            Some(Action::SelectOption { id: target()?, option: value?, deselect: false })
        }
        ActionKind::Navigate => Some(Action::GoToUrl { url: value? }),
        // Keys go to whatever has focus.
        ActionKind::Key if focus_known => Some(Action::SendKeys { keys: value? }),
        ActionKind::Scroll if step.action.descriptor.is_none() => {
            Some(Action::Scroll { id: None, screens: step.action.screens? })
        }
        ActionKind::DoubleClick => Some(Action::DoubleClick { id: target()? }),
        ActionKind::RightClick => Some(Action::RightClick { id: target()? }),
        // Onto the element it was dropped on, else by the distance it moved.
        ActionKind::Drag => {
            let id = target()?;
            match (only(step.action.to.as_ref()), step.action.offset) {
                (Some(to), _) => {
                    Some(Action::Drag { id, to: Some(to), to_text: None, dx: 0.0, dy: 0.0 })
                }
                (None, Some([dx, dy])) if dx != 0.0 || dy != 0.0 => {
                    Some(Action::Drag { id, to: None, to_text: None, dx, dy })
                }
                _ => None,
            }
        }
        // A copy of a selection in the page's text needs the model to select it again.
        ActionKind::Copy => Some(Action::Copy { id: Some(target()?) }),
        ActionKind::Paste => Some(Action::Paste { id: target()? }),
        _ => None,
    }
}

/// Whether recorded `step` acts on one of `elements`. A key goes to the focus, which is
/// on the page already (the field just typed into).
fn targets_one_of(step: &WorkflowStep, elements: &[Element]) -> bool {
    match &step.action.descriptor {
        _ if step.action.kind == ActionKind::Key => true,
        Some(descriptor) => elements.iter().any(|e| matches(descriptor, e)),
        None => false,
    }
}

/// Whether `element` is what `descriptor` recorded: every identifying field the recording
/// has must agree, and it must have at least one that names the element.
fn matches(descriptor: &TargetDescriptor, element: &Element) -> bool {
    let same = |a: &str, b: &str| normalise(a) == normalise(b);
    let agrees = |recorded: &Option<String>, now: &Option<String>| match recorded {
        Some(recorded) => now.as_deref().is_some_and(|now| same(recorded, now)),
        None => true,
    };
    let names_it = !descriptor.name.trim().is_empty()
        || descriptor.name_attr.is_some()
        || descriptor.placeholder.is_some()
        || descriptor.href.is_some();
    names_it
        && !element.disabled
        && same(&descriptor.tag, &element.tag)
        && agrees(&descriptor.role, &element.role)
        && agrees(&descriptor.input_type, &element.input_type)
        && agrees(&descriptor.name_attr, &element.name)
        && agrees(&descriptor.placeholder, &element.placeholder)
        && agrees(&descriptor.href, &element.href)
        && (descriptor.name.trim().is_empty() || same(&descriptor.name, &element.text))
}

fn normalise(text: &str) -> String {
    text_case::lowercase(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Origin and path of `url`, without query or fragment (which carry the parameters).
fn path_of(url: &str) -> Option<String> {
    let parsed = run_contract::url::WebUrl::parse(url)?;
    Some(format!("{}{}", parsed.origin(), parsed.path()))
}

fn describe(action: &Action, target: &str) -> String {
    crate::executor::describe_action(action, target)
}

/// The subtask's recorded steps for the prompt: one line each.
fn reference_listing(references: &[(usize, &WorkflowStep)]) -> String {
    references
        .iter()
        .enumerate()
        .map(|(n, (_, step))| {
            let value = match (&step.action.value, step.action.screens) {
                (Some(v), _) => format!(" {v:?}"),
                (None, Some(screens)) => format!(" {screens} screens"),
                (None, None) => String::new(),
            };
            let variable =
                step.action.variable.as_deref().map(|v| format!(" → {v}")).unwrap_or_default();
            format!(
                "{}. {}{value}{variable} on {}: {} (expected before: {}; after: {})",
                n + 1,
                step.action.kind,
                untrusted::inline(if step.target.is_empty() { "the page" } else { &step.target }),
                step.intent,
                step.expected_current_state,
                step.post_action,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests;
