//! The annotation page's AI draft (seed `000_…` §7.G): one captured step's three thoughts
//! written by the Navigator's model from the step's screenshot, action, page state and the
//! run's task (`prompts/draft_thoughts/`), through the agents' own path (`traced_call`:
//! render, schema-bound call, repair loop, trace). The worker runs it and stores the trace
//! under the step's run, so the Studio's traces list shows it with the run's other calls.
//!
//! What the page sends is page-derived: every line of it reaches the prompt through
//! `untrusted`, as the agents' page text does.

use crate::Clock;
use crate::executor::{CallContext, CallError, CallSpec, Control, decode_answer, traced_call};
use crate::prompts::PromptSet;
use crate::providers::Http;
use crate::repair::RepairLedger;
use crate::run::{Actor, LlmTrace};
use crate::untrusted;
use protocol::drafting::{DraftInput, DraftedThoughts};
use protocol::settings::{ModelRole, Settings};
use serde_json::json;

/// The prompt file's id.
pub const PROMPT: &str = "draft_thoughts";

/// What a draft needs from the shell: the same as a Studio run, one traced call.
pub type DraftShell<'a, H, K> = crate::studio_run::StudioShell<'a, H, K>;

#[derive(tagged_de::FieldsDeserialize)]
struct Answer {
    thought1: String,
    thought2: String,
    thought3: String,
}

/// The prompt's variables for `input`.
pub fn variables(input: &DraftInput) -> serde_json::Value {
    let last = input.step_count > 0 && input.step_index + 1 >= input.step_count;
    let screens = if input.screenshot.is_some() {
        "One screenshot is attached: the screen when the action was taken."
    } else {
        "No screenshot is attached: read the page state."
    };
    let page_state = if input.page_state.trim().is_empty() {
        "(not recorded)".to_owned()
    } else {
        untrusted::block("page_state", "", &input.page_state)
    };
    json!({
        "task": untrusted::inline(&input.task),
        "step_number": input.step_index + 1,
        "step_count": input.step_count.max(input.step_index + 1),
        "last_step": if last { " (the last step)" } else { "" },
        "url": untrusted::inline(&input.url),
        "title": untrusted::inline(&input.title),
        "previous_action": untrusted::inline(&input.previous_action),
        "action": untrusted::line(&input.action),
        "outcome": untrusted::inline(&input.outcome),
        "page_state": page_state,
        "screens": screens,
    })
}

/// Drafts the three thoughts of `input`'s step with the Navigator's model. The result is a
/// draft or a line for a person saying why there is none; the trace (none when nothing was
/// sent) is for the shell to store.
pub async fn draft<H: Http, K: Clock>(
    shell: &DraftShell<'_, H, K>,
    settings: &Settings,
    input: &DraftInput,
) -> (Result<DraftedThoughts, String>, Option<LlmTrace>) {
    let prompts = match PromptSet::with_overrides(&settings.prompt_overrides) {
        Ok(prompts) => prompts,
        Err(error) => return (Err(format!("The prompt files do not load: {error}")), None),
    };
    let Some(model) = settings.models.get(ModelRole::Navigator).cloned() else {
        return (Err("No Navigator model is configured in Settings.".into()), None);
    };
    if model.model.trim().is_empty() || model.base_url.trim().is_empty() {
        return (Err("Choose the Navigator's model in Settings first.".into()), None);
    }
    let control = Control::default();
    let cx = CallContext {
        http: shell.http,
        clock: shell.clock,
        control: &control,
        prompts: &prompts,
        settings,
        epoch_ms: shell.epoch_ms,
    };
    let spec = CallSpec {
        prompt_id: PROMPT,
        model: &model,
        actor: Actor::Navigator,
        run_id: &input.run_id,
        step: input.step_index,
        trace_id: (shell.new_id)(),
        vars: variables(input),
        images: input.screenshot.iter().cloned().collect(),
    };
    let ledger = RepairLedger::with_budget(settings.agent.repair_retries.max(1));
    let answer = traced_call(&cx, spec, &ledger).await;
    let drafted = answer
        .answer
        .and_then(|value| decode_answer::<Answer>(value, &model.model))
        .map(|a| DraftedThoughts {
            thought1: a.thought1,
            thought2: a.thought2,
            thought3: a.thought3,
        })
        .map_err(|error| match error {
            CallError::Interrupted => "The draft was interrupted.".to_owned(),
            CallError::Failed(error) => format!("No draft: {}", one_line(&error.headline())),
        });
    (drafted, answer.trace)
}

/// The first line of `text`, for a one-line message.
fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

#[cfg(test)]
mod tests;
