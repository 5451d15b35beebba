//! The ThinkingAgent: the exit gate for a claim of "done", and the arbiter of failure
//! streaks, loops and periodic reviews.

use protocol::settings::ModelRole;

use super::Capture;
use super::ask::CallError;
use super::{Browser, Checkpoint, Executor};
use crate::Clock;
use crate::agents::{self, Claim, PlannerOutput, ThinkingOutput};
use crate::providers::Http;
use crate::repair::RepairLedger;
use crate::run::{Actor, EventKind, ExecutionState, TaskStatus};
use crate::truncate;

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
        self.apply_verdict(cp, &verdict, &format!("Review ({reason})"))
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

    pub(super) fn apply_verdict(
        &self,
        cp: &mut Checkpoint,
        verdict: &ThinkingOutput,
        title: &str,
    ) -> bool {
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
}
