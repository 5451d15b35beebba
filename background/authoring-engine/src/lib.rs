//! The engine's authoring side, as a wasm module the service worker instantiates the first
//! time it needs it (`extension/background.js` imports its glue; a service worker cannot
//! `import()` later): pipelines (loading a file, running it, the publish gate), reflecting a
//! recording into a workflow, the Prompt Studio's prompt runs, the annotation page's AI
//! drafts of thoughts, and Settings' test of an MCP server. They are seldom run, and were over 50 KiB of the worker's gzipped
//! bundle.
//!
//! Every value crosses as JSON text. What a run touches in the worker (tabs, agent tasks,
//! replays, the cancel flag, progress, storing traces) stays there, behind the object of
//! functions it lends each run ([`Host`], [`ReflectHost`]). Requests are made here, over
//! `fetch`: the model calls, a pipeline's `http` tool and its MCP servers' tools.
//!
//! It must not know `chrome.*` or the worker's stores: the worker reads and writes them.

use std::collections::BTreeMap;

use agent_engine::draft_thoughts::draft;
use agent_engine::executor::Control;
use agent_engine::mcp::{McpClients, McpError, McpTool};
use agent_engine::pipeline::{
    Cancel, PipelineRun, PipelineTools, Problem, Runner, StepTrace, ToolCall, ToolFailure,
    check_publish,
};
use agent_engine::prompts::PromptSet;
use agent_engine::providers::Usage;
use agent_engine::repair::RepairLedger;
use agent_engine::run::{Actor, LlmTrace, PromptChars, SentPrompt, iso8601};
use agent_engine::studio_run::{StudioShell, run_prompt};
use agent_engine::workflow::recording::Recording;
use agent_engine::workflow::reflect::{Reflector, StepReflection, build_workflow};
use engine_web::http::{FetchHttp, NoRedirectHttp};
use engine_web::{PerformanceClock, call_context, error_message, random_uuid};
use protocol::drafting::DraftInput;
use protocol::settings::{McpServer, Secret, Settings};
use protocol::studio::StudioRun;
use protocol::workflow::ReflectStage;
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// What the worker lends a run: an object of functions over its tabs and its state.
    pub type Host;
    /// Carries out a [`ToolCall`] (JSON) on the worker's tabs: page state, extract, an agent
    /// task, a replay. Resolves with the result's JSON, rejects with a [`ToolFailure`]'s.
    #[wasm_bindgen(method)]
    fn tool(this: &Host, call: String) -> js_sys::Promise;
    /// Whether the user stopped the run.
    #[wasm_bindgen(method)]
    fn cancelled(this: &Host) -> bool;
    /// A step's trace (JSON), as the step ends.
    #[wasm_bindgen(method)]
    fn step(this: &Host, trace: String);
}

#[wasm_bindgen]
extern "C" {
    /// What the worker lends a reflection: where its progress and its traces go.
    pub type ReflectHost;
    /// A `ReflectStage` (JSON) to show.
    #[wasm_bindgen(method)]
    fn tell(this: &ReflectHost, stage: String);
    /// Model calls' traces (a JSON array) to store; resolves once they are.
    #[wasm_bindgen(method)]
    fn traces(this: &ReflectHost, traces: String) -> js_sys::Promise;
}

/// The pipeline file `file` (JSON) checked with the prompt files `overrides` (JSON, as in
/// Settings) edits: `{id, hash, description, inputs}`, or a sentence saying what is wrong.
#[wasm_bindgen]
pub fn load(file: &str, overrides: &str) -> Result<String, String> {
    let loaded = agent_engine::pipeline::load(&json_of(file)?, &prompts(overrides)?)
        .map_err(|problems| does_not_load(&problems))?;
    let pipeline = loaded.pipeline;
    let inputs = pipeline.inputs.map(|schema| schema.as_value().clone());
    let answer = json!({"id": pipeline.id, "hash": pipeline.hash,
        "description": pipeline.description, "inputs": inputs});
    Ok(answer.to_string())
}

/// The publish gate over `file`, with the runs `runs` (a JSON array of stored runs; what
/// is not a run is left out): `{errors, warnings, hash, id}`, the last two `null` when the
/// file does not load.
#[wasm_bindgen]
pub fn check(file: &str, overrides: &str, runs: &str) -> Result<String, String> {
    let (file, prompts) = (json_of(file)?, prompts(overrides)?);
    let runs: Vec<PipelineRun> = match json_of(runs)? {
        Value::Array(runs) => {
            runs.into_iter().filter_map(|r| serde_json::from_value(r).ok()).collect()
        }
        _ => Vec::new(),
    };
    let report = check_publish(&file, &prompts, &runs);
    let id = agent_engine::pipeline::load(&file, &prompts).ok().map(|l| l.pipeline.id);
    let answer = json!({"errors": report.errors, "warnings": report.warnings,
        "hash": report.pipeline_hash, "id": id});
    Ok(answer.to_string())
}

/// Runs a pipeline. `request` is `{file, settings, keys, input, context, run_id}`: the
/// settings as stored (keys masked) with the keys beside them. Answers with `{run, traces,
/// why}`: the run, each llm step's model call as a trace of run `run_id`, and the run's
/// error as a sentence.
#[wasm_bindgen]
pub async fn run(request: String, host: Host) -> Result<String, String> {
    let mut request = json_of(&request)?;
    let settings = settings_of(&mut request)?;
    let prompts = PromptSet::with_overrides(&settings.prompt_overrides).map_err(bad_prompts)?;
    let loaded = agent_engine::pipeline::load(&request["file"], &prompts)
        .map_err(|problems| does_not_load(&problems))?;
    let mut models = vec![settings.models.navigator.clone()];
    models.extend([settings.models.planner.clone(), settings.models.thinking.clone()]);
    let runner = Runner {
        prompts: &prompts,
        http: &FetchHttp,
        clock: &PerformanceClock,
        tools: &HostTools {
            host: &host,
            // Tokens included: they were restored above, and stay in this module's memory.
            mcp: McpClients::new(&NoRedirectHttp, settings.mcp_servers.clone()),
        },
        cancel: &HostCancel(&host),
        models: &models,
        repair_model: settings.models.repair.as_ref(),
        repair_budget: settings.agent.repair_retries.max(1) * 4,
        redactions: &settings.agent.trace_redactions,
    };
    let started = js_sys::Date::now();
    let (input, context) = (request["input"].take(), request["context"].take());
    let run = runner.run(&loaded.pipeline, input, context, true).await;
    let run_id = request["run_id"].as_str().unwrap_or_default();
    let traces: Vec<LlmTrace> = (run.steps.iter().enumerate())
        .filter_map(|(n, step)| trace(step, n, run_id, started, &run))
        .collect();
    let why = run.error.as_ref().map(ToString::to_string);
    Ok(json!({"run": run, "traces": traces, "why": why}).to_string())
}

/// Reflects a stopped recording into a workflow: pass A on each step not done yet, then
/// pass B over them all. `request` is `{recording, settings, keys, screenshots, done,
/// workflow_id, at}`: `screenshots` base64 by key (when the model takes images), `done` the
/// pass-A results of an earlier try. Answers `{done, workflow, task_name}`; when it stops,
/// `workflow` is `null` and the host was told why.
#[wasm_bindgen]
pub async fn reflect(request: String, host: ReflectHost) -> Result<String, String> {
    let mut request = json_of(&request)?;
    let settings = settings_of(&mut request)?;
    let prompts = PromptSet::with_overrides(&settings.prompt_overrides).map_err(bad_prompts)?;
    let recording: Recording = field(&mut request, "recording", "The recording")?;
    let screenshots: BTreeMap<String, String> =
        serde_json::from_value(request["screenshots"].take()).unwrap_or_default();
    let mut done: Vec<Option<StepReflection>> =
        serde_json::from_value(request["done"].take()).unwrap_or_default();
    let (control, ledger) =
        (Control::default(), RepairLedger::with_budget(settings.agent.repair_budget));
    let reflector = Reflector {
        cx: call_context(&control, &prompts, &settings),
        model: &settings.models.planner,
        vision: settings.agent.vision,
        screenshots: &screenshots,
        new_id: &random_uuid,
        ledger: &ledger,
    };
    let tell = |stage: ReflectStage| host.tell(json!(stage).to_string());
    let save = async |traces: &mut Vec<LlmTrace>| {
        let list = json!(traces).to_string();
        traces.clear();
        let _ = JsFuture::from(host.traces(list)).await;
    };
    let stopped = |done: &[Option<StepReflection>],
                   error: agent_engine::workflow::reflect::ReflectError| {
        tell(ReflectStage::Failed {
            why: error.to_string(),
            details: error.details().map(str::to_owned),
        });
        json!({"done": done, "workflow": null, "task_name": null}).to_string()
    };
    done.resize(recording.steps.len(), None);
    let mut traces = Vec::new();
    let count = recording.steps.len() as u32;
    for index in 0..recording.steps.len() {
        if done[index].is_some() {
            continue;
        }
        tell(ReflectStage::Step { step: index as u32, of: count });
        let result = reflector.reflect_step(&recording, index, &mut traces).await;
        save(&mut traces).await;
        match result {
            Ok(reflection) => done[index] = Some(reflection),
            Err(error) => return Ok(stopped(&done, error)),
        }
    }
    let steps: Vec<StepReflection> = done.iter().flatten().cloned().collect();
    tell(ReflectStage::Task);
    let task = reflector.reflect_task(&recording, &steps, &mut traces).await;
    save(&mut traces).await;
    let task = match task {
        Ok(task) => task,
        Err(error) => return Ok(stopped(&done, error)),
    };
    let (workflow_id, at) = (request["workflow_id"].as_str(), request["at"].as_str());
    let workflow = build_workflow(
        &recording,
        &steps,
        &task,
        workflow_id.unwrap_or_default(),
        at.unwrap_or_default(),
    );
    Ok(json!({"done": done, "workflow": workflow, "task_name": task.task_name}).to_string())
}

/// One Prompt Studio run: `request` is `{settings, keys, run}` (a `StudioRun`). Answers
/// `{result, trace}`, the trace `null` when no model was called.
#[wasm_bindgen]
pub async fn studio_run(request: String) -> Result<String, String> {
    let mut request = json_of(&request)?;
    let settings = settings_of(&mut request)?;
    let run: StudioRun = field(&mut request, "run", "The Studio run")?;
    let (result, trace) = run_prompt(&call_shell(), &settings, &run).await;
    Ok(json!({"result": result, "trace": trace}).to_string())
}

/// An AI draft of one step's thoughts: `request` is `{settings, keys, input}` (a
/// `DraftInput`). Answers `{result, trace}`: `result` is `{"Ok": thoughts}` or `{"Err": why}`.
#[wasm_bindgen]
pub async fn draft_thoughts(request: String) -> Result<String, String> {
    let mut request = json_of(&request)?;
    let settings = settings_of(&mut request)?;
    let input: DraftInput = field(&mut request, "input", "The step to draft for")?;
    let (result, trace) = draft(&call_shell(), &settings, &input).await;
    Ok(json!({"result": result, "trace": trace}).to_string())
}

/// Settings' test of an MCP server: `request` is `{server, token}` (the server as the form
/// has it, its token beside it). Answers `{names, ms}`: its tools' names and how long listing
/// them took; or why it failed.
#[wasm_bindgen]
pub async fn list_mcp_tools(request: String) -> Result<String, String> {
    let mut request = json_of(&request)?;
    let mut server: McpServer = field(&mut request, "server", "The server")?;
    server.token = Secret::new(request["token"].as_str().unwrap_or_default());
    let started = engine_web::now_ms();
    let tools =
        agent_engine::mcp::list_tools(&NoRedirectHttp, &server).await.map_err(|e| e.message)?;
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    Ok(json!({"names": names, "ms": engine_web::now_ms() - started}).to_string())
}

/// One traced model call's shell: `fetch`, the performance clock, the time and uuids.
fn call_shell() -> StudioShell<'static, FetchHttp, PerformanceClock> {
    StudioShell {
        http: &FetchHttp,
        clock: &PerformanceClock,
        epoch_ms: &js_sys::Date::now,
        new_id: &random_uuid,
    }
}

/// The request's `name`, read as a `T`; the error says `what` could not be read.
fn field<T: serde::de::DeserializeOwned>(
    request: &mut Value,
    name: &str,
    what: &str,
) -> Result<T, String> {
    serde_json::from_value(request[name].take())
        .map_err(|e| format!("{what} could not be read: {e}"))
}

/// The settings as stored (keys masked) with their keys put back from beside them.
fn settings_of(request: &mut Value) -> Result<Settings, String> {
    let mut settings: Settings = field(request, "settings", "The settings")?;
    let keys: BTreeMap<String, String> =
        serde_json::from_value(request["keys"].take()).unwrap_or_default();
    settings.restore_keys(&keys);
    Ok(settings)
}

/// An llm step's model call as the trace every model call leaves.
fn trace(
    step: &StepTrace,
    n: usize,
    run_id: &str,
    started: f64,
    run: &PipelineRun,
) -> Option<LlmTrace> {
    let call = step.llm.as_ref()?;
    Some(LlmTrace {
        id: random_uuid(),
        run_id: run_id.to_owned(),
        step: n as u32,
        role: Actor::System,
        prompt_id: call.prompt_id.clone(),
        variant: call.prompt_variant.clone(),
        prompt_hash: call.prompt_hash.clone(),
        revision_hash: call.revision_hash.clone(),
        params: json!({"pipeline": run.pipeline_id, "pipelineHash": run.pipeline_hash,
            "step": step.step_id, "input": step.input}),
        redacted: vec![],
        provider: call.provider.clone(),
        model: call.model.clone(),
        usage: Usage {
            input_tokens: call.usage.input_tokens,
            output_tokens: call.usage.output_tokens,
        },
        cost: 0.0,
        started_at: iso8601(started),
        duration_ms: step.timing_ms,
        attempts: call.attempts.clone(),
        error: step.error.as_ref().map(ToString::to_string),
        chars: PromptChars { total: call.prompt_text.chars().count(), ..Default::default() },
        prompt: SentPrompt {
            system: call.prompt_text.clone(),
            user: agent_engine::executor::USER_TURN.into(),
            temperature: call.temperature,
            ..Default::default()
        },
        fallback: None,
    })
}

/// A run's tools: requests made here, the rest by the worker.
struct HostTools<'a> {
    host: &'a Host,
    /// The MCP servers from Settings, with a session each for the run.
    mcp: McpClients<'static, NoRedirectHttp>,
}

impl PipelineTools for HostTools<'_> {
    async fn call(&self, call: &ToolCall) -> Result<Value, ToolFailure> {
        match call {
            ToolCall::Http { method, url, headers, body } => {
                fetch(method, url, headers, body).await
            }
            ToolCall::Mcp { server, name, arguments } => {
                self.mcp.call_tool(server, name, arguments).await.map_err(mcp_failure)
            }
            _ => {
                let call = serde_json::to_string(call).map_err(|e| failure(e.to_string()))?;
                settled(self.host.tool(call)).await
            }
        }
    }

    fn mcp_servers(&self) -> Vec<String> {
        self.mcp.names()
    }

    async fn list_mcp_tools(&self, server: &str) -> Result<Vec<McpTool>, ToolFailure> {
        self.mcp.list_tools(server).await.map_err(mcp_failure)
    }
}

fn mcp_failure(error: McpError) -> ToolFailure {
    ToolFailure { message: error.message, recoverable: error.recoverable }
}

/// One request of the `http` tool (the engine checked the origin against `http_origins`).
async fn fetch(
    method: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    body: &Option<Value>,
) -> Result<Value, ToolFailure> {
    let js = |e: JsValue| failure(error_message(&e));
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let sent = web_sys::Headers::new().map_err(js)?;
    for (name, value) in headers {
        sent.append(name, value).map_err(js)?;
    }
    init.set_headers(&sent);
    if let Some(body) = body {
        let text = match body {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        init.set_body(&JsValue::from_str(&text));
    }
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    // The extension asks for no host permissions: a server must allow it (CORS).
    let unreachable = |e: JsValue| {
        failure(format!(
            "The request to {url} got no answer ({}): the server could not be reached, or it does not allow requests from the extension (CORS).",
            error_message(&e)
        ))
    };
    let response: web_sys::Response = JsFuture::from(scope.fetch_with_str_and_init(url, &init))
        .await
        .map_err(unreachable)?
        .unchecked_into();
    let text = JsFuture::from(response.text().map_err(js)?).await.map_err(js)?;
    let text = text.as_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok(json!({"status": response.status(), "body": body}))
}

struct HostCancel<'a>(&'a Host);

impl Cancel for HostCancel<'_> {
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }

    fn step_finished(&self, trace: &StepTrace) {
        if let Ok(trace) = serde_json::to_string(trace) {
            self.0.step(trace);
        }
    }
}

/// What a host's promise settled to: its JSON, or the failure it rejected with.
async fn settled(promise: js_sys::Promise) -> Result<Value, ToolFailure> {
    match JsFuture::from(promise).await {
        Ok(text) => {
            Ok(text.as_string().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default())
        }
        Err(error) => Err(error
            .as_string()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| failure(error_message(&error)))),
    }
}

fn failure(message: String) -> ToolFailure {
    ToolFailure { message, recoverable: true }
}

fn json_of(text: &str) -> Result<Value, String> {
    serde_json::from_str(text)
        .map_err(|e| format!("The authoring engine was sent what is not JSON: {e}"))
}

fn prompts(overrides: &str) -> Result<PromptSet, String> {
    let overrides: BTreeMap<String, String> = serde_json::from_str(overrides).unwrap_or_default();
    PromptSet::with_overrides(&overrides).map_err(bad_prompts)
}

fn bad_prompts(error: String) -> String {
    format!("An edited prompt file has a problem: {error}")
}

fn does_not_load(problems: &[Problem]) -> String {
    let list: Vec<String> = problems.iter().map(Problem::to_string).collect();
    format!("The pipeline does not load: {}", list.join("; "))
}

#[cfg(test)]
mod tests {
    //! The JSON the worker reads of `load` and `check` (`background/worker/src/authoring.rs`).

    use serde_json::{Value, json};

    const ECHO: &str = r#"{"id": "echo", "description": "Says its input back.",
        "inputs": {"schema": {"type": "object", "required": ["said"]}},
        "steps": [{"id": "out", "type": "transform", "output": {"said": "{{input.said}}"}}]}"#;

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).expect("JSON")
    }

    #[test]
    fn load_answers_what_the_worker_lists_and_says_what_is_wrong() {
        let loaded = parsed(&super::load(ECHO, "{}").expect("it loads"));
        assert_eq!(loaded["id"], "echo");
        assert_eq!(loaded["description"], "Says its input back.");
        assert_eq!(loaded["inputs"]["required"], json!(["said"]));
        assert!(loaded["hash"].as_str().is_some_and(|h| h.starts_with("sha256:")), "{loaded}");

        let refused = super::load(r#"{"id": "x", "steps": []}"#, "{}").unwrap_err();
        assert!(refused.starts_with("The pipeline does not load: "), "{refused}");
        assert!(refused.contains("/steps"), "{refused}");
        let edited = super::load(ECHO, r#"{"navigator/prompt.json": "not json"}"#);
        assert!(edited.unwrap_err().starts_with("An edited prompt file has a problem"));
    }

    #[test]
    fn the_gate_reports_a_file_that_loads_with_its_hash_and_one_that_does_not_without() {
        let report = parsed(&super::check(ECHO, "{}", "[]").expect("a report"));
        assert_eq!((report["id"].as_str(), report["errors"].clone()), (Some("echo"), json!([])));
        assert!(report["hash"].is_string(), "{report}");
        // Publishing it would want a real run first: a warning the Studio shows.
        assert!(report["warnings"].to_string().contains("real run"), "{report}");

        // Runs that are not a list are none.
        let report = parsed(&super::check("{}", "{}", "{}").expect("a report"));
        assert_eq!((report["id"].clone(), report["hash"].clone()), (Value::Null, Value::Null));
        assert!(report["errors"].as_array().is_some_and(|e| !e.is_empty()), "{report}");
    }
}
