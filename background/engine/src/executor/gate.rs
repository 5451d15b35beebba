//! The ThinkingAgent (seed `001_…` §2.2): the entry gate for the user's messages, the exit
//! gate for a claim of "done", the arbiter of failure streaks, loops and periodic reviews,
//! and the one who turns an agent's need for the user into a question.

use protocol::settings::ModelRole;

use super::Capture;
use super::ask::CallError;
use super::{Browser, Checkpoint, Executor};
use crate::Clock;
use crate::agents::{self, Claim, PlannerOutput, ThinkingOutput};
use crate::providers::Http;
use crate::repair::RepairLedger;
use crate::run::{Actor, EventDetail, EventKind, ExecutionState, TaskStatus};
use crate::truncate;
use run_contract::telemetry::LogKind;

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    /// The ThinkingAgent checks a claim of "done", the Planner's or the Navigator's (with
    /// the Planner's latest plan beside it). Returns true when the task ended or paused.
    pub(super) async fn exit_gate(
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
            // Reviews, messages and needs go through their own calls; a gate asked for one
            // has no answer to offer.
            Claim::Review | Claim::Message { .. } | Claim::Asks { .. } => {
                ("a review of the progress", cp.planner.clone(), "")
            }
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
        // A rejected claim ended the plan it came from: the Planner starts from the verdict.
        let paused = self.apply_verdict(cp, &verdict, "Not done yet", reason);
        cp.replan = true;
        paused
    }

    /// The entry gate: the user's messages since the last look (steering, an answer) go to
    /// the ThinkingAgent, which decides what they mean for the work: re-plan, let the
    /// Navigator continue with its instructions, or ask back. `Some(paused)` once decided;
    /// `None` when no verdict came and the task did not pause (the messages wait for the
    /// next try).
    pub(super) async fn entry_gate(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
    ) -> Option<bool> {
        let text: Vec<&str> = cp.unreviewed.iter().map(|m| m.text.as_str()).collect();
        let text = text.join("\n\n");
        let answers = cp.unreviewed.iter().rev().find_map(|m| m.answers.clone());
        let reason = if answers.is_some() {
            "the user answered the agent's question"
        } else {
            "the user sent a message during the task"
        };
        let claim = Claim::Message { text: &text, answers: answers.as_deref() };
        let planner = cp.planner.clone();
        let verdict = match self.consult(cp, ledger, reason, claim, planner.as_ref()).await {
            Ok(verdict) => verdict,
            Err(true) => return Some(true),
            Err(false) => return None,
        };
        cp.unreviewed.clear();
        // Without a plan there is nothing to continue.
        let paused = self.apply_verdict(cp, &verdict, "After your message", reason);
        cp.replan |= cp.planner.is_none();
        Some(paused)
    }

    /// The Planner or the Navigator (`agent`) says it needs the user (seed `001_…` §5.6):
    /// the ThinkingAgent turns that into a question, or into instructions when the task and
    /// the user's messages already settle it. Returns true when the task paused.
    pub(super) async fn agent_asks(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
        agent: Actor,
        need: &str,
    ) -> bool {
        let name = match agent {
            Actor::Planner => "Planner",
            _ => "Navigator",
        };
        self.log(cp, LogKind::Asks, format!("the {name}: {}", truncate(need, 300)));
        self.emit_detail(
            cp,
            agent,
            ExecutionState::StepOk,
            EventKind::Progress,
            format!("I need your input: {need}"),
            EventDetail::AgentAsks { need: need.to_owned() },
        );
        let reason = format!("the {name} says it needs the user");
        let planner = cp.planner.clone();
        let claim = Claim::Asks { agent: name, need };
        match self.consult(cp, ledger, &reason, claim, planner.as_ref()).await {
            Ok(verdict) => {
                let asks =
                    verdict.should_pause_for_user && !verdict.question_for_user.trim().is_empty();
                let guides = !verdict.instructions_for_planner.trim().is_empty()
                    || !verdict.instructions_for_navigator.trim().is_empty();
                if asks || guides {
                    return self.apply_verdict(
                        cp,
                        &verdict,
                        "Review (an agent needs you)",
                        &reason,
                    );
                }
                // No question and no guidance: the agent's own words go to the user.
                self.request_user_input(cp, need);
                true
            }
            Err(paused) if paused || self.cx.control.interrupted() => paused,
            Err(_) => {
                // The ThinkingAgent gave no answer: ask with the agent's own words.
                self.request_user_input(cp, need);
                true
            }
        }
    }

    /// The ThinkingAgent arbitrates a detector or failure streak. Returns true when the
    /// task paused.
    pub(super) async fn arbitrate(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
        reason: &str,
    ) -> bool {
        let planner = cp.planner.clone();
        let verdict = match self.consult(cp, ledger, reason, Claim::Review, planner.as_ref()).await
        {
            Ok(verdict) => verdict,
            Err(paused) => return paused,
        };
        self.apply_verdict(cp, &verdict, &format!("Review ({reason})"), reason)
    }

    /// Asks the ThinkingAgent, called for `reason`, and logs its decision (seed §7). `Err`
    /// when no verdict came, holding whether the task paused.
    pub(super) async fn consult(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
        reason: &str,
        claim: Claim<'_>,
        planner: Option<&PlannerOutput>,
    ) -> Result<ThinkingOutput, bool> {
        let vars = agents::thinking_vars(&cp.memory, self.budget(), reason, claim, planner);
        let verdict: ThinkingOutput = match self.ask(cp, ModelRole::Thinking, vars, ledger).await {
            Ok(verdict) => verdict,
            Err(CallError::Interrupted) => return Err(false),
            Err(CallError::Failed(error)) => {
                return Err(self.model_failed(cp, Actor::Thinking, &error));
            }
        };
        cp.counters.thinking_calls += 1;
        let decided = decision(&verdict);
        let mut message = format!("Called because {reason}. Decided: {decided}.");
        for (what, text) in [
            ("Missing", &verdict.missing_pieces),
            ("To the Planner", &verdict.instructions_for_planner),
            ("To the Navigator", &verdict.instructions_for_navigator),
        ] {
            if !text.trim().is_empty() {
                message.push_str(&format!(" {what}: {}", truncate(text.trim(), 200)));
            }
        }
        self.log(cp, LogKind::Thinking, message);
        Ok(verdict)
    }

    pub(super) fn apply_verdict(
        &self,
        cp: &mut Checkpoint,
        verdict: &ThinkingOutput,
        title: &str,
        reason: &str,
    ) -> bool {
        cp.notes.planner = verdict.instructions_for_planner.clone();
        cp.notes.navigator = verdict.instructions_for_navigator.clone();
        // Its decision: a new plan first, or the Navigator goes on with its instructions.
        cp.replan |= verdict.replan;
        let mut details = title.to_owned();
        if !verdict.missing_pieces.is_empty() {
            details.push_str(&format!(": missing {}", verdict.missing_pieces));
        }
        if !verdict.instructions_for_planner.is_empty() {
            details.push_str(&format!(". {}", verdict.instructions_for_planner));
        }
        if !verdict.instructions_for_navigator.is_empty() {
            details
                .push_str(&format!(". To the Navigator: {}", verdict.instructions_for_navigator));
        }
        // The same facts as data, so the panel shows what it decided and why.
        let detail = EventDetail::Verdict {
            title: title.to_owned(),
            reason: reason.to_owned(),
            decided: decision(verdict).to_owned(),
            missing: verdict.missing_pieces.trim().to_owned(),
            to_planner: verdict.instructions_for_planner.trim().to_owned(),
            to_navigator: verdict.instructions_for_navigator.trim().to_owned(),
        };
        self.emit_detail(
            cp,
            Actor::Thinking,
            ExecutionState::StepOk,
            EventKind::Progress,
            details,
            detail,
        );
        if verdict.should_pause_for_user && !verdict.question_for_user.trim().is_empty() {
            self.request_user_input(cp, &verdict.question_for_user);
            return true;
        }
        false
    }
}

/// The ThinkingAgent's decision in words, as the telemetry and the panel say it.
fn decision(verdict: &ThinkingOutput) -> &'static str {
    if verdict.approved {
        "approve"
    } else if verdict.should_pause_for_user && !verdict.question_for_user.trim().is_empty() {
        "ask the user"
    } else if verdict.replan {
        "re-plan"
    } else {
        "continue the plan"
    }
}
