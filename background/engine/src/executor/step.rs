//! One Navigator step: look, ask, act, and record it.

use base64::Engine;
use protocol::TabId;
use serde_json::Value;

use protocol::settings::ModelRole;

use super::Capture;
use super::ask::CallError;
use super::ask::{SECRET_MASK, mask_in, mask_text, masked};
use super::checkpoint::{EXTRACT_CHARS, MAX_FINDING};
use super::{Browser, Checkpoint, Executor, PageView};
use crate::Clock;
use crate::actions::{Action, ActionOutcome};
use crate::agents::{self, Decision, LastStep, NavigatorOutput};
use crate::firewall::Firewall;
use crate::memory::StepMemory;
use crate::providers::Http;
use crate::repair::{RepairLedger, StructuredError};
use crate::run::{
    Actor, EventDetail, EventKind, ExecutedAction, ExecutionState, NavigatorNotes, ScreenshotRef,
    StepAction, StepOutcome, StepRecord, Thoughts, iso8601,
};
use crate::truncate;
use run_contract::ActionKind;
use run_contract::digest::sha256_hex;

/// The Navigator's `done`: its text and whether it succeeded or gave up.
pub(super) struct DoneClaim {
    pub(super) text: String,
    pub(super) success: bool,
}

/// How a Navigator step went.
pub(super) enum StepEnd {
    Interrupted,
    Finished {
        done: Option<DoneClaim>,
        /// The Navigator judged its approach failing (seed `003_…`'s `abort`).
        abort: bool,
    },
    /// The Navigator needs the user (seed `001_…` §5.6): what it says it needs.
    Asks(String),
    /// No usable answer from the model (already counted as a failure).
    NoAnswer(StructuredError),
    /// The tab is gone.
    Fatal(String),
}

/// What a step saw before asking the Navigator.
struct Look {
    view: PageView,
    /// The plain viewport, for the step's record.
    screenshot: Option<Vec<u8>>,
    /// The viewport with the page state's ids drawn on it, for a vision model.
    images: Vec<String>,
    /// Why the tab's page may not be read or acted on (it stays on it after going back).
    off_limits: Option<String>,
}

/// What became of the actions the Navigator asked for.
#[derive(Default)]
struct Acted {
    executed: Vec<ExecutedAction>,
    /// The action that ended the sequence because its target changed, as recorded.
    skipped: Option<ExecutedAction>,
    /// The actions asked for but not carried out: why, and from which index.
    not_carried_out: Option<(String, usize)>,
    done: Option<DoneClaim>,
    /// Extracted text blocks, for the next prompt.
    extracted: Vec<String>,
    /// The Navigator asked for the user instead of acting.
    asked: Option<String>,
    /// Texts typed into fields found secret only when focused, by field id.
    found_secrets: Vec<(u32, String)>,
}

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    /// One Navigator step: look, reflect and act, then record it.
    pub(super) async fn navigate(&self, cp: &mut Checkpoint, ledger: &RepairLedger) -> StepEnd {
        let started = self.cx.clock.now_ms();
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
        let mut look = match self.look(cp).await {
            Ok(look) => look,
            Err(end) => return end,
        };
        let vars = agents::navigator_vars(
            &cp.memory,
            self.budget(),
            &cp.last,
            &look.view.comparison,
            cp.counters.successes,
            cp.counters.failures,
            &cp.notes.navigator,
            &look.view.text,
            self.cx.settings.agent.max_actions_per_step,
            (index, cp.step_limit),
        );
        let images = std::mem::take(&mut look.images);
        let asked = self.call(cp, ModelRole::Navigator, vars, images, ledger).await;
        let (output, mut trace): (NavigatorOutput, _) = match asked {
            (Ok(output), trace) => (output, trace),
            (Err(error), trace) => {
                self.store_trace(cp, trace.as_ref()).await;
                return match error {
                    CallError::Interrupted => StepEnd::Interrupted,
                    CallError::Failed(error) => StepEnd::NoAnswer(error),
                };
            }
        };
        // Text typed into a secret field (a password, a card number, a one-time code) is
        // masked in everything kept of the step: its trace, record, events and memory; and
        // so is every value typed into one earlier in the task.
        let typed = self.secrets(cp.tab_id, &output.actions);
        for (_, text) in &typed {
            cp.learn_secret(text);
        }
        let unmasked = output.actions.clone();
        let secrets = step_secrets(&typed, &cp.secrets);
        let output = mask_output(output, &typed, &secrets);
        // A trace the mask cannot be applied to is not kept rather than kept unmasked.
        trace = trace.and_then(|t| masked(&t, &secrets));
        self.store_trace(cp, trace.as_ref()).await;
        cp.notes.navigator.clear();
        self.emit_detail(
            cp,
            Actor::Navigator,
            ExecutionState::StepStart,
            EventKind::Progress,
            output.current_state.next_goal.clone(),
            EventDetail::Goal,
        );
        let need = output.ask_user.trim();
        if !need.is_empty() {
            // Nothing is carried out: the question comes first.
            let asked = Acted { asked: Some(need.to_owned()), ..Acted::default() };
            self.record(cp, started, look, &output, &[], asked).await;
            return StepEnd::Asks(need.to_owned());
        }
        let max = self.cx.settings.agent.max_actions_per_step.max(1) as usize;
        let actions: Vec<&Action> = output.actions.iter().take(max).collect();
        let acted =
            self.act(cp, &actions, &unmasked, &look.view.url, look.off_limits.as_deref()).await;
        // A field that turned into a secret one only when focused: what was kept of the
        // step before that was known is masked now.
        let mut acted = acted;
        let output = match acted.found_secrets.is_empty() {
            true => output,
            false => {
                let mut typed = typed;
                typed.append(&mut acted.found_secrets);
                let secrets = step_secrets(&typed, &cp.secrets);
                if let Some(trace) = trace.and_then(|t| masked(&t, &secrets)) {
                    self.store_trace(cp, Some(&trace)).await;
                }
                for action in acted.executed.iter_mut().chain(acted.skipped.as_mut()) {
                    mask_in(action, &secrets);
                }
                mask_output(output, &typed, &secrets)
            }
        };
        let actions: Vec<&Action> = output.actions.iter().take(max).collect();
        let done = self.record(cp, started, look, &output, &actions, acted).await;
        cp.mask_secrets();
        let abort = output.current_state.decision == Decision::Abort;
        StepEnd::Finished { done, abort }
    }

    /// Observes the tab (going back from a page the allow/deny list refuses) and takes the
    /// step's screenshots. `Err` ends the step: the tab is gone, or it could not be read
    /// (counted as a failed step).
    async fn look(&self, cp: &mut Checkpoint) -> Result<Look, StepEnd> {
        let mut view = match self.browser.observe(cp.tab_id).await {
            Ok(view) => view,
            Err(error) if error.fatal => return Err(StepEnd::Fatal(error.message)),
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
                return Err(StepEnd::Finished { done: None, abort: false });
            }
        };
        // The allow/deny list and the web-only rule also cover pages reached by clicking
        // links: go back from one, and if that does not leave it, read nothing of it.
        let firewall = Firewall::new(self.cx.settings);
        let mut off_limits = None;
        if let Err(refusal) = firewall.check(&view.url) {
            let _ = self.browser.perform(cp.tab_id, &Action::Back).await;
            cp.last.outcome = format!("Went back: {refusal}");
            self.emit(cp, Actor::System, ExecutionState::ActFail, EventKind::Error, refusal);
            match self.browser.observe(cp.tab_id).await {
                Ok(back) => view = back,
                Err(error) => return Err(StepEnd::Fatal(error.message)),
            }
            if let Err(refusal) = firewall.check(&view.url) {
                view = withheld(&view.url, &refusal);
                off_limits = Some(refusal);
            }
        }
        // A value typed into a secret field earlier may show on the page now (a "show
        // password" toggle turned its field into a text field): masked before anything sees it.
        for text in [&mut view.url, &mut view.title, &mut view.text, &mut view.comparison] {
            mask_text(text, &cp.secrets, SECRET_MASK);
        }
        if cp.run.start_url.is_empty() {
            cp.run.start_url = view.url.clone();
        }
        cp.detector.record_page(&view.url, &view.hash);
        if off_limits.is_some() {
            return Ok(Look { view, screenshot: None, images: Vec::new(), off_limits });
        }
        let screenshot = self.browser.screenshot(cp.tab_id, false).await;
        let mut images = Vec::new();
        if self.cx.settings.agent.vision
            && let Some(marked) = self.browser.screenshot(cp.tab_id, true).await
        {
            images.push(base64::engine::general_purpose::STANDARD.encode(marked));
        }
        Ok(Look { view, screenshot, images, off_limits: None })
    }

    /// Carries out the actions in order until one ends the sequence: `done`, a failure, a
    /// navigation or tab change, or (after the first) a target the page changed under.
    /// `actions` are as recorded (secrets masked); `unmasked` (the same, in order) are what
    /// is carried out.
    async fn act(
        &self,
        cp: &mut Checkpoint,
        actions: &[&Action],
        unmasked: &[Action],
        url: &str,
        off_limits: Option<&str>,
    ) -> Acted {
        let mut acted = Acted::default();
        let mut extract_room = EXTRACT_CHARS;
        for (i, &action) in actions.iter().enumerate() {
            if self.cx.control.interrupted() {
                acted.not_carried_out = Some(("the task was paused or stopped first".into(), i));
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
            let outcome = match self.refused(action, off_limits) {
                Some(refusal) => {
                    ActionOutcome { ok: false, message: refusal, ..Default::default() }
                }
                None => self.browser.perform(cp.tab_id, &unmasked[i]).await,
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
                acted.skipped = Some(ExecutedAction {
                    action: action.clone(),
                    target,
                    ok: false,
                    message: format!("skipped, not carried out: {why}"),
                });
                acted.not_carried_out = Some(("the page changed under them".into(), i));
                break;
            }
            let mut label = label;
            if outcome.secret
                && let Action::Type { id, text, .. } = &unmasked[i]
                && !text.is_empty()
                && !matches!(action, Action::Type { text, .. } if text == SECRET_MASK)
            {
                cp.learn_secret(text);
                label = label.replace(text.as_str(), SECRET_MASK);
                acted.found_secrets.push((*id, text.clone()));
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
                let read = cp.memory.read_extracted(url, text, extract_room);
                extract_room -= read.shown;
                acted.extracted.push(read.block);
                // Reading on through a long text is progress, not the same action again.
                signature.push_str(&format!("@{}", read.from));
            }
            cp.detector.record_action(&signature, outcome.ok);
            acted.executed.push(ExecutedAction {
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
                acted.done = Some(DoneClaim { text, success });
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
            acted.not_carried_out = Some((why.into(), i + 1));
            break;
        }
        acted
    }

    /// Counts the step, tells the next prompt and the memory what happened, and stores the
    /// step's record. Returns the Navigator's claim of "done", if it made one.
    async fn record(
        &self,
        cp: &mut Checkpoint,
        started: f64,
        look: Look,
        output: &NavigatorOutput,
        actions: &[&Action],
        acted: Acted,
    ) -> Option<DoneClaim> {
        let Acted { mut executed, skipped, not_carried_out, done, extracted, asked, .. } = acted;
        let state = &output.current_state;
        let index = cp.step;
        // A step that asked the user did nothing that could fail.
        let ok = asked.is_some() || (!executed.is_empty() && executed.iter().all(|a| a.ok));
        match (asked.is_some(), ok) {
            (true, _) => {}
            (false, true) => {
                cp.counters.successes += 1;
                cp.counters.consecutive_failures = 0;
            }
            (false, false) => {
                cp.counters.failures += 1;
                cp.counters.consecutive_failures += 1;
            }
        }
        // The first step under a plan evaluates the step before it, which the plan already
        // took into account; later ones say whether the plan holds.
        let evaluated_success = state
            .evaluation_previous_goal
            .trim_start()
            .get(..7)
            .is_some_and(|w| w.eq_ignore_ascii_case("success"));
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
        if let Some(need) = &asked {
            action_lines.push(format!("asked for the user: {}", truncate(need, 200)));
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
        let Look { view, screenshot, .. } = look;
        cp.memory.record_step(StepMemory {
            index,
            url: view.url.clone(),
            evaluation: state.evaluation_previous_goal.clone(),
            goal: state.next_goal.clone(),
            actions: action_lines,
            ok,
            // `2026-11-24T14:02:11.123Z` → `14:02:11Z`.
            at: iso8601((self.cx.epoch_ms)())
                .get(11..19)
                .map(|t| format!("{t}Z"))
                .unwrap_or_default(),
        });
        cp.memory.add_finding(&state.memory);

        let screenshot_ref = screenshot.as_ref().map(|bytes| ScreenshotRef {
            // Content-addressed, as the sync server stores them: equal shots are one blob.
            key: sha256_hex(bytes),
            timestamp: iso8601((self.cx.epoch_ms)()),
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
            action: match (main, &asked) {
                (Some(a), _) => StepAction::of(&a.action, &a.target),
                (None, Some(need)) => StepAction {
                    kind: ActionKind::AskUser,
                    target: "the user".into(),
                    value: Some(need.clone()),
                },
                (None, None) => {
                    StepAction { kind: ActionKind::None, target: String::new(), value: None }
                }
            },
            actions: executed,
            thoughts: thoughts(state),
            extended_thoughts: state
                .extended_thoughts
                .iter()
                .filter(|t| !t.trim().is_empty())
                .cloned()
                .collect(),
            verified: false,
            issues: Vec::new(),
            last_edited_by: "agent".into(),
            last_edited_at: iso8601((self.cx.epoch_ms)()),
            outcome: StepOutcome::of(ok),
            trace_ids: std::mem::take(&mut cp.step_traces),
            duration_ms: self.cx.clock.now_ms() - started,
            navigator: Some(NavigatorNotes {
                evaluation_previous_goal: state.evaluation_previous_goal.clone(),
                memory: state.memory.clone(),
                next_goal: state.next_goal.clone(),
            }),
            drafted_thoughts: Vec::new(),
        };
        cp.step += 1;
        if let Some(open) = cp.run.subtasks.last_mut() {
            open.step_range[1] = index;
        }
        let saved = self.capture.save_step(&record, screenshot.as_deref()).await;
        self.stored(cp, &format!("step {}", index + 1), saved);
        let (state_name, kind) = if ok {
            (ExecutionState::StepOk, EventKind::Progress)
        } else {
            (ExecutionState::StepFail, EventKind::Error)
        };
        let summary = format!("Step {} {}", index + 1, if ok { "done" } else { "failed" });
        let ended = EventDetail::StepEnded { number: index + 1, ok };
        self.emit_detail(cp, Actor::Navigator, state_name, kind, summary, ended);
        done
    }

    fn target(&self, tab: TabId, action: &Action) -> String {
        target_of(self.browser, tab, action)
    }

    /// The texts the Navigator asks to type into secret fields, by field id (longest first,
    /// so masking one never leaves part of another).
    fn secrets(&self, tab: TabId, actions: &[Action]) -> Vec<(u32, String)> {
        let mut secrets: Vec<(u32, String)> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Type { id, text, .. }
                    if !text.is_empty() && self.browser.is_secret(tab, *id) =>
                {
                    Some((*id, text.clone()))
                }
                _ => None,
            })
            .collect();
        lean::sort_by_key(&mut secrets, |(_, text)| std::cmp::Reverse(text.len()));
        secrets
    }

    /// Why `action` may not be carried out: a destination the firewall refuses, or any
    /// action on the page itself while the tab shows one it refuses (`off_limits`).
    fn refused(&self, action: &Action, off_limits: Option<&str>) -> Option<String> {
        match action {
            Action::GoToUrl { url } | Action::OpenTab { url } => {
                Firewall::new(self.cx.settings).check(url).err()
            }
            Action::WebSearch { .. }
            | Action::SwitchTab { .. }
            | Action::CloseTab { .. }
            | Action::Back
            | Action::Forward
            | Action::Wait { .. }
            | Action::Done { .. } => None,
            _ => off_limits.map(|why| format!("Not carried out: this page is off limits ({why})")),
        }
    }
}

/// The texts to mask in a step: those it types into secret fields (of any length) and
/// those typed into one earlier, longest first so masking one never leaves part of another.
fn step_secrets(typed: &[(u32, String)], known: &[String]) -> Vec<String> {
    let mut all: Vec<String> = typed.iter().map(|(_, text)| text.clone()).collect();
    all.extend(known.iter().filter(|k| !all.contains(k)).cloned().collect::<Vec<_>>());
    lean::sort_by_key(&mut all, |s| std::cmp::Reverse(s.len()));
    all
}

/// The Navigator's answer as kept: the text of each `type` into a secret field masked, and
/// `secrets` wherever else they appear (its thoughts, its memory); should masking there
/// break the answer's shape, the typed fields alone are masked.
fn mask_output(
    mut output: NavigatorOutput,
    typed: &[(u32, String)],
    secrets: &[String],
) -> NavigatorOutput {
    if secrets.is_empty() {
        return output;
    }
    for action in &mut output.actions {
        if let Action::Type { id, text, .. } = action
            && (typed.iter().any(|(secret, _)| secret == id) || secrets.contains(text))
        {
            *text = SECRET_MASK.into();
        }
    }
    masked(&output, secrets).unwrap_or(output)
}

/// What the Navigator sees of a page it may not read: where it is and why, nothing of it.
fn withheld(url: &str, refusal: &str) -> PageView {
    PageView {
        url: url.to_owned(),
        title: String::new(),
        // The address is the page's to choose: one line, like any page text.
        text: format!(
            "This tab shows {}, which the agent may not read or act on: {}\nGo to an allowed page with go_to_url, web_search or open_tab, or switch to another tab.",
            crate::untrusted::inline(url),
            crate::untrusted::inline(refusal)
        ),
        comparison: String::new(),
        hash: format!("withheld {url}"),
    }
}

/// `click "Add to cart"`, `type "kettle" into "Search"`, `go_to_url https://…`.
/// What a person would call what `action` works on: the element's name, the URL, the text.
pub fn target_of(browser: &impl Browser, tab: TabId, action: &Action) -> String {
    match action {
        Action::Drag { id, to: Some(to), .. } => {
            format!("{} onto {}", browser.describe(tab, *id), browser.describe(tab, *to))
        }
        Action::Drag { id, to_text: Some(text), .. } => {
            format!("{} onto {text:?}", browser.describe(tab, *id))
        }
        Action::GoToUrl { url } | Action::OpenTab { url } => url.clone(),
        Action::WebSearch { query } => query.clone(),
        Action::ScrollToText { text } => text.clone(),
        Action::SelectText { text, id: None } => format!("{text:?}"),
        Action::ClickAt { x, y } => format!("({x}, {y})"),
        Action::SwitchTab { tab_id } | Action::CloseTab { tab_id } => format!("tab {tab_id}"),
        Action::Copy { id: None } => "the selection".into(),
        _ => action.element().map(|id| browser.describe(tab, id)).unwrap_or_default(),
    }
}

pub fn describe_action(action: &Action, target: &str) -> String {
    let name = serde_json::to_value(action)
        .ok()
        .and_then(|v| v.get("action").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    match action {
        Action::Type { text, .. } => format!("type {text:?} into {target}"),
        Action::SelectOption { option, .. } => format!("select {option:?} in {target}"),
        Action::SendKeys { keys } => format!("press {keys}"),
        Action::SetSlider { value, .. } => format!("set {target} to {value}"),
        Action::Paste { .. } => format!("paste into {target}"),
        Action::Done { success, .. } => {
            format!("done ({})", if *success { "success" } else { "gave up" })
        }
        _ if target.is_empty() => name,
        _ => format!("{name} {target}"),
    }
}

/// Seed `000_…` §1's three thoughts from the Navigator's reflection. A model that left one
/// empty still gives the step something to annotate: its evaluation, what it saw, its goal.
fn thoughts(state: &agents::CurrentState) -> Thoughts {
    let or = |thought: &str, fallback: &str| {
        if thought.trim().is_empty() { fallback.to_owned() } else { thought.to_owned() }
    };
    Thoughts {
        thought1: or(&state.thought_changed, &state.evaluation_previous_goal),
        thought2: state.thought_state.clone(),
        thought3: or(&state.thought_next, &state.next_goal),
    }
}
