//! The Planner's calls, and when a periodic planning point calls it.

use protocol::settings::ModelRole;

use super::Capture;
use super::ask::CallError;
use super::{Browser, Checkpoint, Executor};
use crate::Clock;
use crate::agents::{self, PlannerOutput};
use crate::providers::Http;
use crate::repair::RepairLedger;
use crate::run::{Actor, EventDetail, EventKind, ExecutionState, Subtask, SubtaskStatus};
use crate::{truncate, untrusted};

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    pub(super) async fn plan(
        &self,
        cp: &mut Checkpoint,
        ledger: &RepairLedger,
    ) -> Result<PlannerOutput, CallError> {
        let page = match self.browser.observe(cp.tab_id).await {
            Ok(view) => format!("{} — {}", untrusted::line(&view.title), view.url),
            Err(error) => format!("(unavailable: {})", error.message),
        };
        let vars = agents::planner_vars(&cp.memory, self.budget(), &cp.notes.planner, &page);
        let planner: PlannerOutput = self.ask(cp, ModelRole::Planner, vars, ledger).await?;
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
            status: SubtaskStatus::Pending,
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
}

/// Whether a periodic planning point should call the Planner. A plan that is being followed
/// step after step would only be repeated, so it is reviewed only when something went other
/// than expected since it was made ([`Checkpoint::off_plan`]), or when the Navigator has
/// taken more steps than the plan lists (it is past the plan).
pub(super) fn plan_needs_review(cp: &Checkpoint) -> bool {
    let Some(planned_at) = cp.planned_at else { return true };
    cp.off_plan || cp.step.saturating_sub(planned_at) > plan_items(&cp.memory.plan)
}

/// How many steps a plan lists: its non-empty lines, or its numbered items when it is
/// written on one line ("1. Open it. 2. Read the price.").
pub(super) fn plan_items(plan: &str) -> u32 {
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
