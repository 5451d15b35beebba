//! The three agents' answers, as the schemas in `prompts/*/schema.json` define them, and
//! the variables each prompt is rendered with. The calls themselves (render → ask with
//! repair → trace) are the executor's; this module only says what goes in and comes out.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::actions::Action;
use crate::memory::{Budget, Memory};

/// Seed `001_…`: the Planner's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannerOutput {
    pub observation: String,
    pub challenges: String,
    pub done: bool,
    pub next_steps: String,
    pub final_answer: String,
    pub reasoning: String,
    pub web_task: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrentState {
    pub evaluation_previous_goal: String,
    pub memory: String,
    pub next_goal: String,
}

/// The Navigator's output: its reflection and up to N actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NavigatorOutput {
    pub current_state: CurrentState,
    pub actions: Vec<Action>,
}

/// The ThinkingAgent's control output (seed `001_…` §5.1, plus the refined answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingOutput {
    pub approved: bool,
    pub missing_pieces: String,
    pub instructions_for_planner: String,
    pub instructions_for_navigator: String,
    pub should_pause_for_user: bool,
    pub question_for_user: String,
    pub final_answer: String,
}

/// What the Navigator learned from its last step, for the next prompt's reflection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LastStep {
    /// The actions and the goal they served.
    pub action: String,
    pub outcome: String,
}

pub fn planner_vars(memory: &Memory, budget: Budget, notes: &str, page_summary: &str) -> Value {
    json!({
        "task": memory.task,
        "follow_ups": memory.follow_ups_text(),
        "progress": memory.progress_text(budget),
        "reviewer_notes": notes,
        "page_summary": page_summary,
    })
}

#[allow(clippy::too_many_arguments)]
pub fn navigator_vars(
    memory: &Memory,
    budget: Budget,
    last: &LastStep,
    dom_comparison: &str,
    successes: u32,
    failures: u32,
    notes: &str,
    page_state: &str,
    max_actions: u32,
) -> Value {
    json!({
        "task": memory.task,
        "follow_ups": memory.follow_ups_text(),
        "plan": memory.plan,
        "reviewer_notes": notes,
        "last_action": last.action,
        "last_outcome": last.outcome,
        "dom_comparison": dom_comparison,
        "successes": successes,
        "failures": failures,
        "history": memory.history_text(budget),
        "page_state": page_state,
        "max_actions": max_actions,
    })
}

pub fn thinking_vars(
    memory: &Memory,
    budget: Budget,
    reason: &str,
    planner: Option<&PlannerOutput>,
) -> Value {
    json!({
        "task": memory.task,
        "follow_ups": memory.follow_ups_text(),
        "reason": reason,
        "planner": planner.map_or(Value::Null, |p| json!(p)),
        "navigator_summary": memory.navigator_summary(budget),
    })
}

/// The template variables that carry working memory, for the prompt-size split.
pub const MEMORY_VARS: &[&str] = &[
    "follow_ups",
    "progress",
    "plan",
    "history",
    "last_action",
    "last_outcome",
    "dom_comparison",
    "navigator_summary",
    "reviewer_notes",
    "planner",
];
/// The variables that carry the page.
pub const STATE_VARS: &[&str] = &["page_state", "page_summary"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::PromptSet;

    #[test]
    fn every_prompt_renders_strictly_from_the_variables_built_here() {
        let set = PromptSet::bundled();
        let memory = Memory::new("Find the kettle's price");
        let budget = Budget { full_steps: 4, chars: 6000 };
        for (id, vars) in [
            ("planner", planner_vars(&memory, budget, "", "Shop — Home")),
            (
                "navigator",
                navigator_vars(&memory, budget, &LastStep::default(), "", 0, 0, "", "[1]<a>x", 5),
            ),
            ("thinking", thinking_vars(&memory, budget, "the Planner says done", None)),
        ] {
            let rendered = set.render(id, None, &vars).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert!(rendered.warnings.is_empty(), "{id}: {:?}", rendered.warnings);
            assert!(rendered.text.contains("Find the kettle's price"));
        }
    }

    #[test]
    fn the_schemas_accept_what_these_types_serialize() {
        let set = PromptSet::bundled();
        let navigator = NavigatorOutput {
            current_state: CurrentState {
                evaluation_previous_goal: "Success".into(),
                memory: "m".into(),
                next_goal: "g".into(),
            },
            actions: vec![
                Action::Click { id: 3 },
                Action::Done { text: "x".into(), success: true },
            ],
        };
        let violations = set.prompt("navigator").unwrap().schema.validate(&json!(navigator));
        assert!(violations.is_empty(), "{violations:?}");
    }
}
