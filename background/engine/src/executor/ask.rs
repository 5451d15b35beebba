//! Model calls: a prompt rendered, asked for a schema-valid answer, traced either way.

use protocol::settings::{ModelConfig, ModelRole, Settings};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Capture;
use super::{Browser, Checkpoint, Control, Executor};
use crate::Clock;
use crate::agents::{MEMORY_VARS, STATE_VARS};
use crate::prompts::PromptSet;
use crate::providers::{ChatMessage, ChatRequest, Http, LlmError, PriceTable, Usage};
use crate::repair::{RepairLedger, RepairPolicy, StructuredError, ask_structured};
use crate::run::{
    Actor, EventKind, ExecutionState, LlmTrace, PromptChars, SentPrompt, iso8601, redact,
};
use run_contract::telemetry::LogKind;

/// Why a model call gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    Interrupted,
    Failed(StructuredError),
}

/// What a traced model call needs besides the call itself. The executor and the workflow
/// reflection and replay share it, so every model call renders, repairs and traces alike.
pub struct CallContext<'a, H, K> {
    pub http: &'a H,
    pub clock: &'a K,
    pub control: &'a Control,
    pub prompts: &'a PromptSet,
    pub settings: &'a Settings,
    /// Milliseconds since the epoch, for the trace's start time.
    pub epoch_ms: &'a dyn Fn() -> f64,
}

/// Who a trace says asked, for a call with `role`'s prompt (the repair model's calls are
/// the Navigator's).
pub fn actor_of(role: ModelRole) -> Actor {
    match role {
        ModelRole::Planner => Actor::Planner,
        ModelRole::Thinking => Actor::Thinking,
        ModelRole::Navigator | ModelRole::Repair => Actor::Navigator,
    }
}

/// One model call: which prompt, with which model, for which run and step.
pub struct CallSpec<'a> {
    pub prompt_id: &'a str,
    pub model: &'a ModelConfig,
    /// Who the trace says asked.
    pub actor: Actor,
    pub run_id: &'a str,
    pub step: u32,
    pub trace_id: String,
    pub vars: Value,
    /// Base64 JPEGs sent with the user turn.
    pub images: Vec<String>,
}

/// A model call's answer (schema-valid JSON), its trace, and what it cost.
pub struct TracedAnswer {
    pub answer: Result<Value, CallError>,
    /// `None` only when the prompt could not be rendered (nothing was sent).
    pub trace: Option<LlmTrace>,
    pub usage: Usage,
    pub cost: f64,
    /// The edited prompt file could not be rendered (why): the bundled one was sent.
    pub fallback: Option<String>,
}

/// Renders `spec`'s prompt (the variant Settings chose), asks its model for an answer that
/// follows the prompt's schema (repairing within `ledger`'s budget), racing pause and cancel,
/// and builds a trace either way.
pub async fn traced_call<H: Http, K: Clock>(
    cx: &CallContext<'_, H, K>,
    spec: CallSpec<'_>,
    ledger: &RepairLedger,
) -> TracedAnswer {
    let CallSpec { prompt_id, model, actor, run_id, step, trace_id, vars, images } = spec;
    let settings = cx.settings;
    let variant = settings.variants.get(prompt_id).map(|v| v.trim()).filter(|v| !v.is_empty());
    // A broken edit in the Studio never stops a task: the bundled prompt answers instead,
    // and the trace and the caller say so.
    let mut fallback = None;
    let bundled;
    let mut prompts = cx.prompts;
    let rendered = match prompts.render(prompt_id, variant, &vars) {
        Ok(rendered) => rendered,
        Err(error) => {
            bundled = PromptSet::bundled();
            match bundled.render(prompt_id, variant, &vars) {
                Ok(rendered) if !settings.prompt_overrides.is_empty() => {
                    fallback = Some(error);
                    prompts = &bundled;
                    rendered
                }
                _ => {
                    let detail = format!(
                        "the prompt file {prompt_id} could not be rendered ({error}); fix it in \
                         the Prompt Studio"
                    );
                    let error = StructuredError::Provider(LlmError::BadRequest { detail });
                    let answer = Err(CallError::Failed(error));
                    let usage = Usage::default();
                    return TracedAnswer { answer, trace: None, usage, cost: 0.0, fallback: None };
                }
            }
        }
    };
    let prompt = prompts.prompt(prompt_id).expect("rendered prompts exist");
    let chat = ChatRequest {
        system: rendered.text.clone(),
        messages: vec![ChatMessage { images, ..ChatMessage::user(USER_TURN) }],
        schema: Some((prompt_id.to_owned(), prompt.schema.as_value().clone())),
        temperature: Some(0.0),
        max_tokens: None,
    };
    let started = cx.clock.now_ms();
    let started_at = iso8601((cx.epoch_ms)());
    let spent_before = ledger.spent();
    let policy = RepairPolicy { max_repairs: settings.agent.repair_retries };
    let call = ask_structured(
        cx.http,
        cx.clock,
        model,
        settings.models.repair.as_ref(),
        prompt_id,
        &chat,
        &prompt.schema,
        policy,
        ledger,
    );
    let result = cx.control.race(call).await;
    let duration_ms = cx.clock.now_ms() - started;
    let (attempts, error) = match &result {
        None => (Vec::new(), Some("interrupted by the user".to_owned())),
        Some(Ok(answer)) => (answer.attempts.clone(), None),
        Some(Err(error @ StructuredError::Invalid { attempts, .. })) => {
            (attempts.clone(), Some(error.to_string()))
        }
        Some(Err(error)) => (Vec::new(), Some(error.to_string())),
    };
    // Every answer received counts, the invalid ones and those before a failure too.
    let spent = ledger.spent();
    let usage = Usage {
        input_tokens: spent.input_tokens - spent_before.input_tokens,
        output_tokens: spent.output_tokens - spent_before.output_tokens,
    };
    let prices = PriceTable { per_million: settings.prices.clone() };
    let cost = prices.cost(&model.model, usage).unwrap_or(0.0);
    let mut params = vars;
    let redacted = redact(&mut params, &settings.agent.trace_redactions);
    scrub_keys(&mut params, settings);
    // The prompt as sent, but rendered from the redacted variables: what the redaction
    // paths hide stays hidden here too.
    let system = if redacted.is_empty() {
        rendered.text.clone()
    } else {
        match prompts.render(prompt_id, variant, &params) {
            Ok(again) => again.text,
            Err(_) => "(not kept: it could not be rendered with the redactions)".to_owned(),
        }
    };
    let mut system = Value::String(system);
    scrub_keys(&mut system, settings);
    let sent = SentPrompt {
        system: system.as_str().unwrap_or_default().to_owned(),
        user: USER_TURN.to_owned(),
        temperature: chat.temperature,
        max_tokens: chat.max_tokens,
        schema_name: chat.schema.as_ref().map(|(name, _)| name.clone()),
        images: chat.messages.iter().map(|m| m.images.len()).sum(),
    };
    let trace = LlmTrace {
        id: trace_id,
        run_id: run_id.to_owned(),
        step,
        role: actor,
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
        prompt: sent,
        fallback: fallback.clone(),
    };
    let answer = match result {
        None => Err(CallError::Interrupted),
        Some(Err(error)) => Err(CallError::Failed(error)),
        Some(Ok(answer)) => Ok(answer.value),
    };
    TracedAnswer { answer, trace: Some(trace), usage, cost, fallback }
}

/// Reads a schema-valid answer as `T`. The schema and the types agree (tests hold them
/// together), so this only fails if an overridden schema allows what the engine cannot read.
pub fn decode_answer<T: DeserializeOwned>(value: Value, model: &str) -> Result<T, CallError> {
    serde_json::from_value(value).map_err(|e| {
        CallError::Failed(StructuredError::Invalid {
            attempts: vec![crate::repair::Attempt {
                model: model.to_owned(),
                raw: String::new(),
                problems: vec![e.to_string()],
                usage: Usage::default(),
            }],
            budget_exhausted: false,
        })
    })
}

impl<H: Http, B: Browser, C: Capture, K: Clock> Executor<'_, H, B, C, K> {
    /// Renders prompt `prompt_id`, asks the role's model for an answer that follows its
    /// schema (repairing within the run's budget), and records a trace either way.
    pub(super) async fn ask<T: DeserializeOwned>(
        &self,
        cp: &mut Checkpoint,
        role: ModelRole,
        vars: Value,
        ledger: &RepairLedger,
    ) -> Result<T, CallError> {
        let (answer, trace) = self.call(cp, role, vars, Vec::new(), ledger).await;
        self.store_trace(cp, trace.as_ref()).await;
        answer
    }

    /// The edited prompt file `prompt_id` could not be rendered and the bundled one was
    /// sent: said once per task, in the chat and the run's log, naming where to fix it.
    fn prompt_fell_back(&self, cp: &mut Checkpoint, prompt_id: &str, why: &str) {
        let text = format!(
            "The edited prompt file {prompt_id} could not be rendered ({why}), so the bundled \
             one was used. Fix it in the Prompt Studio."
        );
        if cp.events.iter().any(|e| e.details == text) {
            return;
        }
        self.log(cp, LogKind::Failure, text.clone());
        self.emit(cp, Actor::System, ExecutionState::StepStart, EventKind::Message, text);
    }

    pub(super) async fn store_trace(&self, cp: &mut Checkpoint, trace: Option<&LlmTrace>) {
        if let Some(trace) = trace {
            let saved = self.capture.save_trace(trace).await;
            self.stored(cp, "a trace", saved);
        }
    }

    /// [`Executor::ask`] with images, leaving the trace to the caller to store (the
    /// Navigator's, once it knows which typed texts are secrets to mask in it).
    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        cp: &mut Checkpoint,
        role: ModelRole,
        vars: Value,
        images: Vec<String>,
        ledger: &RepairLedger,
    ) -> (Result<T, CallError>, Option<LlmTrace>) {
        let model = self.model(role);
        let spec = CallSpec {
            // Each agent's prompt has the id of its role.
            prompt_id: role.id(),
            model,
            actor: actor_of(role),
            run_id: &cp.run.id,
            step: cp.step,
            trace_id: self.capture.new_id(),
            vars,
            images,
        };
        let TracedAnswer { answer, trace, usage, cost, fallback } =
            traced_call(&self.cx, spec, ledger).await;
        if let Some(why) = fallback {
            self.prompt_fell_back(cp, role.id(), &why);
        }
        // Nothing was sent when the prompt could not be rendered.
        if trace.is_some() {
            cp.spend.input_tokens += usage.input_tokens;
            cp.spend.output_tokens += usage.output_tokens;
            cp.spend.cost += cost;
            let role_spend = cp.run.telemetry.spend.entry_or_default(role.id().to_owned());
            role_spend.calls += 1;
            role_spend.input_tokens += usage.input_tokens;
            role_spend.output_tokens += usage.output_tokens;
            role_spend.cost += cost;
        }
        if let Some(trace) = &trace {
            cp.step_traces.push(trace.id.clone());
        }
        (answer.and_then(|value| decode_answer(value, &model.model)), trace)
    }

    fn model(&self, role: ModelRole) -> &ModelConfig {
        // Every agent has a model; only the repair model is optional, and it is not asked here.
        self.cx.settings.models.get(role).unwrap_or(&self.cx.settings.models.navigator)
    }
}

pub use crate::prompts::USER_TURN;

/// Replaces any API key that appears in `params` (say, pasted into a task) with `***`.
fn scrub_keys(params: &mut Value, settings: &Settings) {
    let keys: Vec<String> = settings.keys().into_values().filter(|k| k.len() >= 8).collect();
    if keys.is_empty() {
        return;
    }
    replace_everywhere(params, &keys, "***");
}

/// What stands in for a secret wherever a task's record keeps it.
pub(super) const SECRET_MASK: &str = "[secret]";

/// `value` with every occurrence of `secrets` in its strings masked, or `None` if masking
/// a string that names a variant (a secret that happens to equal one) left it unreadable.
pub(super) fn masked<T: serde::Serialize + DeserializeOwned>(
    value: &T,
    secrets: &[String],
) -> Option<T> {
    let mut json = serde_json::to_value(value).ok()?;
    replace_everywhere(&mut json, secrets, SECRET_MASK);
    serde_json::from_value(json).ok()
}

/// [`masked`] in place; `value` stays as it was when the mask would leave it unreadable.
pub(super) fn mask_in<T: serde::Serialize + DeserializeOwned>(value: &mut T, secrets: &[String]) {
    if let Some(done) = masked(value, secrets) {
        *value = done;
    }
}

/// Replaces every occurrence of each of `secrets` in `text` with `mask`.
pub(super) fn mask_text(text: &mut String, secrets: &[String], mask: &str) {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if text.contains(secret.as_str()) {
            *text = text.replace(secret.as_str(), mask);
        }
    }
}

/// Replaces every occurrence of each of `secrets` in the strings of `value` with `mask`.
pub(super) fn replace_everywhere(value: &mut Value, secrets: &[String], mask: &str) {
    match value {
        Value::String(text) => mask_text(text, secrets, mask),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_everywhere(v, secrets, mask)),
        Value::Object(map) => {
            map.values_mut().for_each(|v| replace_everywhere(v, secrets, mask));
        }
        _ => {}
    }
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
