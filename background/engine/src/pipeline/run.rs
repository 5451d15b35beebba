//! Running a loaded pipeline: its steps in order over one context, each traced, stopping at
//! the first error (in the seed's shape) or when the user cancels.
//!
//! Model calls take the engine's own path: [`PromptSet::render`] and
//! [`ask_structured`] (schema validation and repair) over the providers' [`Http`], so a
//! pipeline's llm step is rendered, repaired, metered and traced exactly as an agent's.
//! Everything else a step touches is behind [`PipelineTools`].

use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;

use protocol::TabId;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::load::{LlmStep, ModelChoice, Pipeline, Step, StepKind};
use super::{ErrorCode, PipelineError};
use crate::Clock;
use crate::executor::USER_TURN;
use crate::mcp::McpTool;
use crate::prompts::PromptSet;
use crate::providers::{ChatMessage, ChatRequest, Http, LlmError, ModelConfig, Usage};
use crate::repair::{Attempt, RepairLedger, RepairPolicy, StructuredError, ask_structured};
use crate::template::{Library, Template, TemplateError, render_value};

/// A tool call, with its input read from the step's rendered `input`.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "tool", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolCall {
    /// Returns `{url, title, state}`: the page state the agents see, as text.
    PageState {
        #[serde(default)]
        tab: Option<TabId>,
    },
    /// Returns `{url, title, text}`: the page's readable text, cut at `max_chars`.
    Extract {
        #[serde(default)]
        tab: Option<TabId>,
        #[serde(default)]
        max_chars: Option<u32>,
    },
    /// Runs an agent task; returns `{answer}`.
    AgentTask {
        task: String,
        #[serde(default)]
        tab: Option<TabId>,
    },
    /// Replays a recorded workflow with `params`; returns `{extracts}`.
    WorkflowReplay {
        workflow: String,
        #[serde(default)]
        params: Value,
    },
    /// One request to an allowed origin; returns `{status, body}` (the body parsed as JSON
    /// when it is JSON).
    Http {
        #[serde(default = "get")]
        method: String,
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        body: Option<Value>,
    },
    /// Tool `name` of the configured MCP server `server`; returns the tool's
    /// `structuredContent`, else its text.
    Mcp { server: String, name: String, arguments: Value },
}

fn get() -> String {
    "GET".into()
}

/// Why a tool failed.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ToolFailure {
    pub message: String,
    /// Whether trying again may work (a page still loading, a network error).
    pub recoverable: bool,
}

/// What a pipeline's tool steps call; the worker implements it over its tabs, agents,
/// workflows and `fetch`. The engine has already checked the allowlist and, for http, the
/// origin.
#[allow(async_fn_in_trait)]
pub trait PipelineTools {
    async fn call(&self, call: &ToolCall) -> Result<Value, ToolFailure>;

    /// The names of the MCP servers configured in Settings.
    fn mcp_servers(&self) -> Vec<String> {
        Vec::new()
    }

    /// `tools/list` of the configured MCP server `server`.
    async fn list_mcp_tools(&self, server: &str) -> Result<Vec<McpTool>, ToolFailure> {
        Err(ToolFailure {
            message: format!("No MCP server named {server:?} in Settings."),
            recoverable: false,
        })
    }
}

/// Whether the user has cancelled the run, asked before and after every step.
#[allow(async_fn_in_trait)]
pub trait Cancel {
    fn cancelled(&self) -> bool;

    /// Runs one step's `work` unless the run is cancelled first, then drops it (an HTTP
    /// request or agent task in it is abandoned) and returns `None`. The worker can answer
    /// with `executor::Control::race`; by default a step runs to its end and the run stops
    /// after it.
    async fn race<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        Some(work.await)
    }

    /// Told of each step's trace (redacted) as the step ends or is skipped, for a live view
    /// of the run; by default nobody watches.
    fn step_finished(&self, _trace: &StepTrace) {}
}

impl Cancel for Cell<bool> {
    fn cancelled(&self) -> bool {
        self.get()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Ok,
    /// Its `when` did not hold.
    Skipped,
    Failed,
}

/// One step as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StepTrace {
    pub pipeline_id: String,
    pub pipeline_hash: String,
    pub step_id: String,
    /// llm | tool | transform | validate
    #[serde(rename = "type")]
    pub step_type: String,
    pub status: StepStatus,
    /// The step's condition, as written.
    pub when: Option<String>,
    /// What the step rendered: an llm step's params, a tool's or validate's input, a
    /// transform's output.
    pub input: Value,
    pub output: Option<Value>,
    pub error: Option<PipelineError>,
    /// Variables that rendered empty.
    pub warnings: Vec<String>,
    pub timing_ms: f64,
    pub llm: Option<LlmCall>,
}

/// An llm step's model call, with what identifies the exact prompt.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct LlmCall {
    pub prompt_id: String,
    pub prompt_variant: String,
    /// sha256 of the rendered prompt text.
    pub prompt_hash: String,
    /// sha256 over the variant's template and the shared rules.
    pub revision_hash: String,
    pub prompt_text: String,
    pub provider: String,
    pub model: String,
    pub temperature: Option<f64>,
    /// Every answer, the repaired ones included.
    pub attempts: Vec<Attempt>,
    pub repairs: u32,
    pub usage: Usage,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct PipelineRun {
    pub pipeline_id: String,
    pub pipeline_version: String,
    pub pipeline_hash: String,
    /// Against real models and pages, not a Studio dry run: the publish gate asks for one.
    pub real: bool,
    pub status: RunStatus,
    pub output: Option<Value>,
    pub error: Option<PipelineError>,
    pub steps: Vec<StepTrace>,
    /// Repairs over every llm step.
    pub repairs: u32,
}

/// What a run needs from the outside.
pub struct Runner<'a, H, K, T, C> {
    pub prompts: &'a PromptSet,
    pub http: &'a H,
    pub clock: &'a K,
    pub tools: &'a T,
    pub cancel: &'a C,
    /// The configured models; a step without a provider gets the first.
    pub models: &'a [ModelConfig],
    pub repair_model: Option<&'a ModelConfig>,
    /// Repairs allowed over the whole run.
    pub repair_budget: u32,
    /// Dot-paths into the context (`input.api_key`) whose string values are masked as
    /// `[redacted]` wherever they appear in the traces and the run's error.
    pub redactions: &'a [String],
}

/// A step's error and the trace of what it did before failing.
type StepResult = Result<Value, PipelineError>;

impl<H: Http, K: Clock, T: PipelineTools, C: Cancel> Runner<'_, H, K, T, C> {
    /// Runs `pipeline` with `input` (checked against `inputs.schema`) and `context` (user
    /// metadata); `real` marks a run against real models and pages.
    pub async fn run(
        &self,
        pipeline: &Pipeline,
        input: Value,
        context: Value,
        real: bool,
    ) -> PipelineRun {
        let mut run = PipelineRun {
            pipeline_id: pipeline.id.clone(),
            pipeline_version: pipeline.version.clone(),
            pipeline_hash: pipeline.hash.clone(),
            real,
            status: RunStatus::Ok,
            output: None,
            error: None,
            steps: Vec::new(),
            repairs: 0,
        };
        let fail = |run: &mut PipelineRun, status, error| {
            run.status = status;
            run.error = Some(error);
            run.output = None;
        };
        if let Some(schema) = &pipeline.inputs {
            let violations = schema.validate(&input);
            if !violations.is_empty() {
                let error = error(
                    ErrorCode::InvalidInput,
                    "The input does not follow the pipeline's inputs.schema.".into(),
                    None,
                    json!({"violations": violations_json(&violations)}),
                    false,
                );
                fail(&mut run, RunStatus::Failed, error);
                return run;
            }
        }
        let mut root = json!({
            "input": input,
            "context": context,
            "steps": {},
            "pipeline": {"id": pipeline.id, "version": pipeline.version, "hash": pipeline.hash},
        });
        // The MCP servers are asked for their tools once, before the first step, and only
        // when something reads the list.
        if reads_tools_list(pipeline, self.prompts) {
            root["tools"] = json!({"list": self.tools_list(pipeline).await});
        }
        let secrets: Vec<String> = self
            .redactions
            .iter()
            .filter_map(|path| {
                path.split('.').try_fold(&root, |value, key| value.get(key))?.as_str()
            })
            .filter(|secret| !secret.is_empty())
            .map(str::to_owned)
            .collect();
        let mut run = self.steps(pipeline, root, run, &secrets).await;
        run.steps = run.steps.into_iter().map(|trace| masked(trace, &secrets)).collect();
        run.error = run.error.map(|error| masked(error, &secrets));
        run
    }

    async fn steps(
        &self,
        pipeline: &Pipeline,
        mut root: Value,
        mut run: PipelineRun,
        secrets: &[String],
    ) -> PipelineRun {
        let keep = |run: &mut PipelineRun, trace: StepTrace| {
            self.cancel.step_finished(&masked(trace.clone(), secrets));
            run.steps.push(trace);
        };
        let fail = |run: &mut PipelineRun, status, error| {
            run.status = status;
            run.error = Some(error);
            run.output = None;
        };
        let ledger = RepairLedger::with_budget(self.repair_budget);
        let mut last = Value::Null;
        for step in &pipeline.steps {
            if self.cancel.cancelled() {
                fail(&mut run, RunStatus::Cancelled, cancelled(&step.id, "before it started"));
                return run;
            }
            let mut trace = StepTrace {
                pipeline_id: pipeline.id.clone(),
                pipeline_hash: pipeline.hash.clone(),
                step_id: step.id.clone(),
                step_type: step.kind.name().into(),
                status: StepStatus::Ok,
                when: step.when.as_ref().map(|w| w.source().to_owned()),
                input: Value::Null,
                output: None,
                error: None,
                warnings: Vec::new(),
                timing_ms: 0.0,
                llm: None,
            };
            if let Some(condition) = &step.when
                && !condition.holds(&root)
            {
                trace.status = StepStatus::Skipped;
                root["steps"][&step.id] = json!({"status": "skipped", "output": null});
                keep(&mut run, trace);
                continue;
            }
            let started = self.clock.now_ms();
            let work = self.step(pipeline, step, &root, &ledger, &mut trace);
            let Some(result) = self.cancel.race(work).await else {
                trace.timing_ms = self.clock.now_ms() - started;
                let error = cancelled(&step.id, "while it ran");
                trace.status = StepStatus::Failed;
                trace.error = Some(error.clone());
                keep(&mut run, trace);
                fail(&mut run, RunStatus::Cancelled, error);
                return run;
            };
            trace.timing_ms = self.clock.now_ms() - started;
            if let Some(call) = &trace.llm {
                run.repairs += call.repairs;
            }
            match result {
                Ok(output) => {
                    trace.output = Some(output.clone());
                    root["steps"][&step.id] = json!({"status": "ok", "output": output});
                    last = output;
                    keep(&mut run, trace);
                }
                Err(error) => {
                    trace.status = StepStatus::Failed;
                    trace.error = Some(error.clone());
                    keep(&mut run, trace);
                    fail(&mut run, RunStatus::Failed, error);
                    return run;
                }
            }
            if self.cancel.cancelled() {
                fail(&mut run, RunStatus::Cancelled, cancelled(&step.id, "while it ran"));
                return run;
            }
        }
        if let Some(schema) = &pipeline.outputs {
            let violations = schema.validate(&last);
            if !violations.is_empty() {
                let error = error(
                    ErrorCode::OutputInvalid,
                    "The pipeline's result does not follow its outputs.schema.".into(),
                    run.steps
                        .iter()
                        .rev()
                        .find(|s| s.status == StepStatus::Ok)
                        .map(|s| s.step_id.clone()),
                    json!({"violations": violations_json(&violations), "output": last}),
                    false,
                );
                fail(&mut run, RunStatus::Failed, error);
                return run;
            }
        }
        run.output = Some(last);
        run
    }

    async fn step(
        &self,
        pipeline: &Pipeline,
        step: &Step,
        root: &Value,
        ledger: &RepairLedger,
        trace: &mut StepTrace,
    ) -> StepResult {
        let render = |value: &Value, trace: &mut StepTrace| {
            render_json(value, root, step.strict, &mut trace.warnings).map_err(|e| {
                error(
                    ErrorCode::MissingVariable,
                    format!("{e} (the step is strict)"),
                    Some(step.id.clone()),
                    Value::Null,
                    false,
                )
            })
        };
        match &step.kind {
            StepKind::Transform { output } => {
                let built = render(output, trace)?;
                trace.input = built.clone();
                Ok(built)
            }
            StepKind::Validate { input, schema } => {
                let value = render(input, trace)?;
                trace.input = value.clone();
                let violations = schema.validate(&value);
                if violations.is_empty() {
                    return Ok(value);
                }
                Err(error(
                    ErrorCode::ValidationFailed,
                    format!(
                        "The value does not follow the schema: {}",
                        violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                    ),
                    Some(step.id.clone()),
                    json!({"violations": violations_json(&violations), "value": value}),
                    false,
                ))
            }
            StepKind::Tool { tool, input } => {
                let step_error = |code, message: String, details, recoverable| {
                    error(code, message, Some(step.id.clone()), details, recoverable)
                };
                if let Some(allowed) = &pipeline.allow_tools
                    && !allowed.contains(tool)
                {
                    let message =
                        format!("The pipeline does not allow the tool {:?}.", tool.as_str());
                    let allowed: Vec<&str> = allowed.iter().map(|t| t.as_str()).collect();
                    return Err(step_error(
                        ErrorCode::ToolNotAllowed,
                        message,
                        json!({"tool": tool.as_str(), "allowed": allowed}),
                        false,
                    ));
                }
                let mut value = render(input, trace)?;
                trace.input = value.clone();
                if let Value::Object(map) = &mut value {
                    map.insert("tool".into(), Value::String(tool.as_str().into()));
                }
                let call: ToolCall = serde_json::from_value(value).map_err(|e| {
                    step_error(
                        ErrorCode::ToolInput,
                        format!("The input of {} does not fit: {e}", tool.as_str()),
                        Value::Null,
                        false,
                    )
                })?;
                if let ToolCall::Http { url, .. } = &call {
                    let origin = run_contract::url::origin(url);
                    if !pipeline.http_origins.contains(&origin) {
                        let message = format!("{origin} is not in the pipeline's http_origins.");
                        let details =
                            json!({"url": url, "origin": origin, "allowed": pipeline.http_origins});
                        return Err(step_error(
                            ErrorCode::OriginNotAllowed,
                            message,
                            details,
                            false,
                        ));
                    }
                }
                self.tools.call(&call).await.map_err(|failure| {
                    step_error(
                        ErrorCode::ToolFailed,
                        failure.message.clone(),
                        json!({"tool": tool.as_str()}),
                        failure.recoverable,
                    )
                })
            }
            StepKind::McpTool { server, name, input } => {
                let step_error = |code, message: String, details, recoverable| {
                    error(code, message, Some(step.id.clone()), details, recoverable)
                };
                let qualified = format!("mcp:{server}/{name}");
                if !pipeline.allows_mcp(server, name) {
                    let message = format!(
                        "The pipeline does not allow the tool {qualified}: add {qualified} or mcp:{server}/* to allow_tools."
                    );
                    return Err(step_error(
                        ErrorCode::ToolNotAllowed,
                        message,
                        json!({"tool": qualified}),
                        false,
                    ));
                }
                let arguments = render(input, trace)?;
                trace.input = arguments.clone();
                if !arguments.is_object() {
                    let message = format!("The input of {qualified} is its arguments: an object.");
                    return Err(step_error(ErrorCode::ToolInput, message, Value::Null, false));
                }
                let call = ToolCall::Mcp { server: server.clone(), name: name.clone(), arguments };
                self.tools.call(&call).await.map_err(|failure| {
                    step_error(
                        ErrorCode::ToolFailed,
                        failure.message.clone(),
                        json!({"tool": qualified}),
                        failure.recoverable,
                    )
                })
            }
            StepKind::Llm(llm) => self.llm(step, llm, root, ledger, trace, &render).await,
        }
    }

    /// `{{tools.list}}`: the tools the pipeline may call, each with its description and
    /// input schema; the MCP servers' descriptions are outside text, so made inline.
    async fn tools_list(&self, pipeline: &Pipeline) -> String {
        let mut lines = Vec::new();
        for tool in pipeline.allowed_builtins() {
            let (description, schema) = tool.description();
            lines.push(format!("- {}: {description}\n  input schema: {schema}", tool.as_str()));
        }
        for server in self.tools.mcp_servers() {
            if !pipeline.allows_mcp_server(&server) {
                continue;
            }
            match self.tools.list_mcp_tools(&server).await {
                Ok(tools) => {
                    for tool in tools.iter().filter(|t| pipeline.allows_mcp(&server, &t.name)) {
                        // A server's own words, bounded so one verbose server cannot fill
                        // the prompt.
                        let description = crate::truncate(&tool.description, MCP_DESCRIPTION_CHARS);
                        let schema =
                            crate::truncate(&tool.input_schema.to_string(), MCP_SCHEMA_CHARS);
                        lines.push(format!(
                            "- mcp:{server}/{}: {}\n  input schema: {}",
                            crate::untrusted::inline(&tool.name),
                            crate::untrusted::inline(&description),
                            crate::untrusted::inline(&schema),
                        ));
                    }
                }
                Err(failure) => lines.push(format!(
                    "- mcp:{server}: its tools could not be listed ({})",
                    crate::untrusted::inline(&failure.message)
                )),
            }
        }
        lines.join("\n")
    }

    async fn llm(
        &self,
        step: &Step,
        llm: &LlmStep,
        root: &Value,
        ledger: &RepairLedger,
        trace: &mut StepTrace,
        render: &impl Fn(&Value, &mut StepTrace) -> StepResult,
    ) -> StepResult {
        let step_error = |code, message: String, details, recoverable| {
            error(code, message, Some(step.id.clone()), details, recoverable)
        };
        let mut params = render(&llm.params, trace)?;
        trace.input = params.clone();
        // A page writes what it likes: its text reaches the prompt as a delimited block.
        for name in &llm.untrusted {
            if let Some(value) = params.get_mut(name) {
                let text = match &*value {
                    Value::String(text) => text.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                *value = Value::String(crate::untrusted::block(name, "", &text));
            }
        }
        // The prompt reads params first, then the context's roots (seed: params, input,
        // context, reserved values).
        let mut vars = root.clone();
        if let (Value::Object(vars), Value::Object(params)) = (&mut vars, &params) {
            vars.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let rendered = self
            .prompts
            .render(&llm.prompt_id, Some(&llm.variant), &vars)
            .map_err(|e| step_error(ErrorCode::PromptRender, e, Value::Null, false))?;
        trace.warnings.extend(rendered.warnings.iter().cloned());
        if step.strict && !rendered.warnings.is_empty() {
            let message =
                format!("The prompt has missing variables: {}", rendered.warnings.join("; "));
            return Err(step_error(ErrorCode::MissingVariable, message, Value::Null, false));
        }
        let prompt = self.prompts.prompt(&llm.prompt_id).expect("a rendered prompt exists");
        let schema = llm.expects.as_ref().unwrap_or(&prompt.schema);
        let Some(model) = self.pick(&llm.model) else {
            let message = "No configured model fits the step's model.".to_owned();
            return Err(step_error(
                ErrorCode::ModelUnavailable,
                message,
                json!({"provider": llm.model.provider}),
                false,
            ));
        };
        let repair_model = if llm.repair_model == ModelChoice::default() {
            self.repair_model.cloned()
        } else {
            self.pick(&llm.repair_model)
        };
        let chat = ChatRequest {
            system: rendered.text.clone(),
            messages: vec![ChatMessage::user(USER_TURN)],
            schema: Some((llm.prompt_id.clone(), schema.as_value().clone())),
            temperature: Some(llm.model.temperature.unwrap_or(0.0)),
            max_tokens: None,
        };
        let max_repairs = if llm.repair_enabled {
            llm.max_repairs.unwrap_or(RepairPolicy::default().max_repairs)
        } else {
            0
        };
        let answer = ask_structured(
            self.http,
            self.clock,
            &model,
            repair_model.as_ref(),
            &llm.prompt_id,
            &chat,
            schema,
            RepairPolicy { max_repairs },
            ledger,
        )
        .await;
        let attempts = match &answer {
            Ok(answer) => answer.attempts.clone(),
            Err(StructuredError::Invalid { attempts, .. }) => attempts.clone(),
            Err(StructuredError::Provider(_)) => Vec::new(),
        };
        let usage = attempts.iter().fold(Usage::default(), |sum, a| Usage {
            input_tokens: sum.input_tokens + a.usage.input_tokens,
            output_tokens: sum.output_tokens + a.usage.output_tokens,
        });
        trace.llm = Some(LlmCall {
            prompt_id: rendered.prompt_id.clone(),
            prompt_variant: rendered.variant.clone(),
            prompt_hash: rendered.prompt_hash.clone(),
            revision_hash: rendered.revision_hash.clone(),
            prompt_text: rendered.text.clone(),
            provider: format!("{:?}", model.provider),
            model: model.model.clone(),
            temperature: chat.temperature,
            repairs: attempts.len().saturating_sub(1) as u32,
            attempts,
            usage,
        });
        match answer {
            Ok(answer) => Ok(answer.value),
            Err(StructuredError::Provider(failure)) => {
                let recoverable = matches!(
                    failure,
                    LlmError::RateLimited { .. }
                        | LlmError::Server { .. }
                        | LlmError::Timeout { .. }
                        | LlmError::Network { .. }
                );
                let details = serde_json::to_value(&failure).unwrap_or(Value::Null);
                Err(step_error(ErrorCode::Provider, failure.to_string(), details, recoverable))
            }
            Err(invalid @ StructuredError::Invalid { .. }) => {
                let StructuredError::Invalid { attempts, budget_exhausted } = &invalid else {
                    unreachable!("matched above")
                };
                let problems: Vec<&Vec<String>> = attempts.iter().map(|a| &a.problems).collect();
                let details = json!({"problems": problems, "budget_exhausted": budget_exhausted});
                // Another run asks again, and models answer differently.
                Err(step_error(ErrorCode::SchemaMismatch, invalid.to_string(), details, true))
            }
        }
    }

    /// The configured model for a step's choice: the first of its provider (or the first of
    /// all), under the step's model name when it gives one.
    fn pick(&self, choice: &ModelChoice) -> Option<ModelConfig> {
        let base = match choice.provider {
            Some(kind) => self.models.iter().find(|m| m.provider == kind)?,
            None => self.models.first()?,
        };
        let mut model = base.clone();
        if let Some(name) = &choice.name {
            model.model = name.clone();
        }
        Some(model)
    }
}

/// Characters of an MCP tool's description and of its input schema in `{{tools.list}}`.
const MCP_DESCRIPTION_CHARS: usize = 600;
const MCP_SCHEMA_CHARS: usize = 3000;

/// Whether a step's templates or an llm step's prompt read `tools.list`.
fn reads_tools_list(pipeline: &Pipeline, prompts: &PromptSet) -> bool {
    fn mentions(value: &Value) -> bool {
        match value {
            Value::String(text) => text.contains("tools.list"),
            Value::Array(items) => items.iter().any(mentions),
            Value::Object(map) => map.values().any(mentions),
            _ => false,
        }
    }
    pipeline.steps.iter().any(|step| match &step.kind {
        StepKind::Llm(llm) => {
            mentions(&llm.params)
                || prompts
                    .prompt(&llm.prompt_id)
                    .and_then(|p| p.variants.get(&llm.variant))
                    .is_some_and(|t| {
                        t.variables().into_iter().any(|(path, _)| path == "tools.list")
                    })
        }
        StepKind::Tool { input, .. }
        | StepKind::McpTool { input, .. }
        | StepKind::Validate { input, .. } => mentions(input),
        StepKind::Transform { output } => mentions(output),
    })
}

/// Renders every string in `value` as a template in JSON mode, keeping the rest as it is.
pub fn render_json(
    value: &Value,
    root: &Value,
    strict: bool,
    warnings: &mut Vec<String>,
) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(source) => {
            // The loader parsed every template, so this only fails for a hand-built step.
            let template = Template::parse(source)?;
            let (value, found) = render_value(&template, root, &Library::default(), strict)?;
            warnings.extend(found);
            value
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| render_json(i, root, strict, warnings))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                out.insert(key.clone(), render_json(item, root, strict, warnings)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// `value` with every occurrence of each of `secrets` in its strings replaced.
fn masked<T: Serialize + serde::de::DeserializeOwned>(value: T, secrets: &[String]) -> T {
    fn mask(value: &mut Value, secrets: &[String]) {
        match value {
            Value::String(text) => {
                for secret in secrets {
                    if text.contains(secret.as_str()) {
                        *text = text.replace(secret.as_str(), "[redacted]");
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| mask(v, secrets)),
            Value::Object(map) => map.values_mut().for_each(|v| mask(v, secrets)),
            _ => {}
        }
    }
    if secrets.is_empty() {
        return value;
    }
    let Ok(mut json) = serde_json::to_value(&value) else { return value };
    mask(&mut json, secrets);
    serde_json::from_value(json).unwrap_or(value)
}

fn error(
    code: ErrorCode,
    message: String,
    step_id: Option<String>,
    details: Value,
    recoverable: bool,
) -> PipelineError {
    PipelineError { code, message, step_id, details, recoverable }
}

fn cancelled(step: &str, when: &str) -> PipelineError {
    error(
        ErrorCode::Cancelled,
        format!("Cancelled by the user {when}."),
        Some(step.to_owned()),
        Value::Null,
        true,
    )
}

fn violations_json(violations: &[crate::structured::Problem]) -> Value {
    violations.iter().map(|v| json!({"path": v.path, "message": v.message})).collect()
}
