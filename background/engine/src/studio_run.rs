//! The Studio run: one prompt, through the agents' own path (`traced_call`: render,
//! schema-bound call, repair loop, trace), with every HTTP exchange recorded, keys masked,
//! so the page can show the raw request and response. The worker runs it; it lives in the
//! engine (not the Studio's core) so the worker links no page's code.

use std::cell::RefCell;

use crate::Clock;
use crate::executor::{CallContext, CallError, CallSpec, Control, actor_of, traced_call};
use crate::prompts::PromptSet;
use crate::providers::{Http, HttpFailure, HttpRequest, HttpResponse};
use crate::repair::RepairLedger;
use crate::run::LlmTrace;
use protocol::settings::Settings;
use protocol::studio::{HttpExchange, StudioAttempt, StudioRun, StudioRunResult};
use serde_json::Value;

use crate::structured::check_answer;

/// An `Http` that keeps a masked copy of every exchange.
pub struct RecordingHttp<'a, H> {
    inner: &'a H,
    secrets: Vec<String>,
    pub exchanges: RefCell<Vec<HttpExchange>>,
}

impl<'a, H: Http> RecordingHttp<'a, H> {
    pub fn new(inner: &'a H, secrets: Vec<String>) -> Self {
        let secrets = secrets.into_iter().filter(|s| !s.trim().is_empty()).collect();
        RecordingHttp { inner, secrets, exchanges: RefCell::new(Vec::new()) }
    }

    fn mask(&self, text: &str) -> String {
        self.secrets.iter().fold(text.to_owned(), |text, secret| text.replace(secret, "***"))
    }

    fn mask_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.mask(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.mask_value(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), self.mask_value(v))).collect())
            }
            other => other.clone(),
        }
    }
}

impl<H: Http> Http for RecordingHttp<'_, H> {
    async fn post(
        &self,
        request: &HttpRequest,
        timeout_ms: u32,
    ) -> Result<HttpResponse, HttpFailure> {
        let result = self.inner.post(request, timeout_ms).await;
        let (status, response) = match &result {
            Ok(response) => (Some(response.status), self.mask(&response.body)),
            Err(HttpFailure::Timeout) => (None, "no answer before the timeout".to_owned()),
            Err(HttpFailure::Network(detail)) => (None, self.mask(detail)),
        };
        self.exchanges.borrow_mut().push(HttpExchange {
            url: self.mask(&request.url),
            headers: request.headers.iter().map(|(n, v)| (n.clone(), self.mask(v))).collect(),
            body: self.mask_value(&request.body),
            status,
            response,
        });
        result
    }
}

/// What a Studio run (or an AI draft, [`crate::draft_thoughts::DraftShell`]) needs from the
/// shell.
pub struct StudioShell<'a, H, K> {
    pub http: &'a H,
    pub clock: &'a K,
    pub epoch_ms: &'a dyn Fn() -> f64,
    /// A fresh id (the worker's uuid).
    pub new_id: &'a dyn Fn() -> String,
}

/// Runs `request` with `settings` (stored overrides included) and returns what the page
/// shows and the trace to store (none when nothing was sent).
pub async fn run_prompt<H: Http, K: Clock>(
    shell: &StudioShell<'_, H, K>,
    settings: &Settings,
    request: &StudioRun,
) -> (StudioRunResult, Option<LlmTrace>) {
    let run_id = format!("studio:{}", (shell.new_id)());
    let mut settings = settings.clone();
    settings.prompt_overrides.extend(request.overrides.clone());
    settings.variants.insert(request.prompt_id.clone(), request.variant.clone());
    let mut result = StudioRunResult {
        run_id: run_id.clone(),
        trace_id: String::new(),
        prompt_id: request.prompt_id.clone(),
        variant: request.variant.clone(),
        prompt_hash: String::new(),
        revision_hash: String::new(),
        model: String::new(),
        exchanges: vec![],
        attempts: vec![],
        output: None,
        error: None,
        input_tokens: 0,
        output_tokens: 0,
        cost: 0.0,
        latency_ms: 0.0,
    };
    let prompts = match PromptSet::with_overrides(&settings.prompt_overrides) {
        Ok(prompts) => prompts,
        Err(error) => {
            result.error = Some(format!("The prompt files do not load: {error}"));
            return (result, None);
        }
    };
    let Some(model) = settings.models.get(request.role).cloned() else {
        result.error = Some(format!("No {} model is configured in Settings.", request.role.id()));
        return (result, None);
    };
    result.model = model.model.clone();
    let secrets: Vec<String> = settings.keys().into_values().collect();
    let http = RecordingHttp::new(shell.http, secrets);
    let control = Control::default();
    let cx = CallContext {
        http: &http,
        clock: shell.clock,
        control: &control,
        prompts: &prompts,
        settings: &settings,
        epoch_ms: shell.epoch_ms,
    };
    let spec = CallSpec {
        prompt_id: &request.prompt_id,
        model: &model,
        actor: actor_of(request.role),
        run_id: &run_id,
        step: 0,
        trace_id: (shell.new_id)(),
        vars: request.vars.clone(),
        images: vec![],
    };
    let ledger = RepairLedger::with_budget(settings.agent.repair_retries.max(1) * 4);
    let answer = traced_call(&cx, spec, &ledger).await;
    result.exchanges = http.exchanges.take();
    result.input_tokens = answer.usage.input_tokens;
    result.output_tokens = answer.usage.output_tokens;
    result.cost = answer.cost;
    match answer.answer {
        Ok(value) => result.output = Some(value),
        Err(CallError::Interrupted) => result.error = Some("Interrupted.".into()),
        Err(CallError::Failed(error)) => result.error = Some(error.to_string()),
    }
    if let Some(trace) = &answer.trace {
        let schema = &prompts.prompt(&request.prompt_id).expect("it rendered").schema;
        result.trace_id = trace.id.clone();
        result.prompt_hash = trace.prompt_hash.clone();
        result.revision_hash = trace.revision_hash.clone();
        result.latency_ms = trace.duration_ms;
        result.attempts = trace
            .attempts
            .iter()
            .map(|attempt| {
                let (output, violations) = check_answer(&attempt.raw, schema);
                StudioAttempt {
                    model: attempt.model.clone(),
                    raw: attempt.raw.clone(),
                    problems: attempt.problems.clone(),
                    output,
                    violations,
                    input_tokens: attempt.usage.input_tokens,
                    output_tokens: attempt.usage.output_tokens,
                }
            })
            .collect();
    }
    (result, answer.trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::BTreeMap;

    use crate::testing::{Scripted, settings};
    use protocol::settings::ModelRole;
    use serde_json::json;

    struct Ticks(Cell<f64>);

    impl Clock for Ticks {
        fn now_ms(&self) -> f64 {
            self.0.set(self.0.get() + 5.0);
            self.0.get()
        }
        async fn sleep(&self, ms: f64) {
            self.0.set(self.0.get() + ms);
        }
    }

    #[test]
    fn a_studio_run_shows_the_masked_request_the_violation_and_the_repair() {
        let http = Scripted::new([r#"{"answer": 42}"#, r#"{"answer": "forty-two"}"#]);
        // A prompt as the Studio's "New prompt" makes it.
        let manifest = json!({"id": "ask", "variants": {"A": "A.md"}, "schema": "schema.json"});
        let schema = json!({"type": "object", "required": ["answer"],
            "additionalProperties": false, "properties": {"answer": {"type": "string"}}});
        let edits = BTreeMap::from([
            ("ask/prompt.json".to_owned(), manifest.to_string()),
            ("ask/schema.json".to_owned(), schema.to_string()),
            ("ask/A.md".to_owned(), "Q: {{question}} {{> json_only}}".to_owned()),
        ]);
        let request = StudioRun {
            prompt_id: "ask".into(),
            variant: "A".into(),
            overrides: edits,
            vars: json!({"question": "six times seven?"}),
            role: ModelRole::Navigator,
        };
        let ids = Cell::new(0);
        let new_id = || {
            ids.set(ids.get() + 1);
            format!("id{}", ids.get())
        };
        let shell = StudioShell {
            http: &http,
            clock: &Ticks(Cell::new(0.0)),
            epoch_ms: &|| 0.0,
            new_id: &new_id,
        };
        let (result, trace) =
            futures::executor::block_on(run_prompt(&shell, &settings(), &request));
        assert_eq!(result.error, None);
        assert_eq!(result.output, Some(json!({"answer": "forty-two"})));
        assert_eq!(result.attempts.len(), 2);
        assert_eq!(result.attempts[0].violations[0].path, "/answer");
        assert!(result.attempts[1].violations.is_empty());
        assert_eq!(result.exchanges.len(), 2);
        let sent = serde_json::to_string(&result.exchanges).unwrap();
        assert!(!sent.contains("sk-test-secret-key") && sent.contains("Bearer ***"), "{sent}");
        assert!(sent.contains("six times seven?"));
        assert_eq!((result.input_tokens, result.output_tokens), (200, 20));
        assert!(result.cost > 0.0 && result.latency_ms > 0.0);
        let trace = trace.unwrap();
        assert!(trace.run_id.starts_with("studio:"));
        assert_eq!(trace.id, result.trace_id);
        assert_eq!(trace.attempts.len(), 2);
    }

    #[test]
    fn a_broken_draft_is_reported_without_a_call() {
        let http = Scripted::default();
        let mut overrides = BTreeMap::new();
        overrides.insert("navigator/A.md".to_owned(), "{{> nope}}".to_owned());
        let request = StudioRun {
            prompt_id: "navigator".into(),
            variant: "A".into(),
            overrides,
            vars: json!({}),
            role: ModelRole::Navigator,
        };
        let shell = StudioShell {
            http: &http,
            clock: &Ticks(Cell::new(0.0)),
            epoch_ms: &|| 0.0,
            new_id: &|| "x".into(),
        };
        let (result, trace) =
            futures::executor::block_on(run_prompt(&shell, &settings(), &request));
        assert!(result.error.unwrap().contains("nope"));
        assert!(trace.is_none() && result.exchanges.is_empty());
    }
}
