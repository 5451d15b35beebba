//! Loading a pipeline file, parsed from YAML or JSON, checked against the published schema
//! and then against the rules a schema cannot say (unique ids, references to earlier steps only,
//! prompts and variants that exist, tools within the allowlist, conditions and templates
//! that parse). Every problem is reported with its JSON Pointer path, not just the first.

use lean::{SortedMap, SortedSet};
use std::sync::LazyLock;

use protocol::settings::ProviderKind;
pub use run_contract::Problem;
use run_contract::digest::hex;
use run_contract::problem::pointer;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{PIPELINE_SCHEMA, ToolName};
use crate::prompts::{DEFAULT_VARIANT, PromptSet};
use crate::structured::Schema;
use crate::template::{Library, Template};

use super::when::Condition;

/// A pipeline that loaded, with what deserves a look but does not stop it.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub pipeline: Pipeline,
    /// Variables that may not resolve (they render empty, or fail a strict step).
    pub warnings: Vec<Problem>,
}

/// A checked pipeline.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub id: String,
    pub label: String,
    pub version: String,
    pub description: String,
    pub inputs: Option<Schema>,
    pub outputs: Option<Schema>,
    /// `None`: every tool may be called. [`ToolName::Mcp`] here allows every MCP tool.
    pub allow_tools: Option<Vec<ToolName>>,
    /// The `mcp:<server>/<tool>` and `mcp:<server>/*` entries of `allow_tools`.
    pub allow_mcp: Vec<McpAllow>,
    /// Origins as a browser reads them (`https://api.example`).
    pub http_origins: Vec<String>,
    pub steps: Vec<Step>,
    /// `sha256:` and the hex SHA-256 of the file's canonical JSON (keys sorted, no
    /// whitespace): the same for the YAML and the JSON of one pipeline, changed by any edit
    /// that changes meaning.
    pub hash: String,
}

/// An `allow_tools` entry for MCP tools: one server's tool, or all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpAllow {
    pub server: String,
    /// `None`: every tool of the server (`mcp:<server>/*`).
    pub tool: Option<String>,
}

impl McpAllow {
    /// Reads `mcp:<server>/<tool>` or `mcp:<server>/*`.
    pub fn parse(entry: &str) -> Option<McpAllow> {
        let (server, tool) = entry.strip_prefix("mcp:")?.split_once('/')?;
        if !protocol::settings::McpServer::valid_name(server) || tool.is_empty() {
            return None;
        }
        Some(McpAllow { server: server.to_owned(), tool: (tool != "*").then(|| tool.to_owned()) })
    }
}

impl Pipeline {
    /// Whether the allowlist lets a step call `tool` of MCP server `server`.
    pub fn allows_mcp(&self, server: &str, tool: &str) -> bool {
        match &self.allow_tools {
            None => true,
            Some(list) if list.contains(&ToolName::Mcp) => true,
            Some(_) => self
                .allow_mcp
                .iter()
                .any(|a| a.server == server && a.tool.as_deref().is_none_or(|t| t == tool)),
        }
    }

    /// Whether the allowlist lets a step call some tool of `server`.
    pub fn allows_mcp_server(&self, server: &str) -> bool {
        match &self.allow_tools {
            None => true,
            Some(list) if list.contains(&ToolName::Mcp) => true,
            Some(_) => self.allow_mcp.iter().any(|a| a.server == server),
        }
    }

    /// The built-in tools the allowlist lets steps call.
    pub fn allowed_builtins(&self) -> Vec<ToolName> {
        ToolName::ALL
            .into_iter()
            .filter(|t| *t != ToolName::Mcp)
            .filter(|t| self.allow_tools.as_ref().is_none_or(|list| list.contains(t)))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    pub label: String,
    pub when: Option<Condition>,
    /// A missing variable fails the step instead of rendering empty.
    pub strict: bool,
    pub kind: StepKind,
}

#[derive(Debug, Clone)]
pub enum StepKind {
    Llm(LlmStep),
    Tool {
        tool: ToolName,
        input: Value,
    },
    /// `tool: mcp`: `name` of the configured MCP server `server`, with `input` as arguments.
    McpTool {
        server: String,
        name: String,
        input: Value,
    },
    Transform {
        output: Value,
    },
    Validate {
        input: Value,
        schema: Schema,
    },
}

impl StepKind {
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Llm(_) => "llm",
            StepKind::Tool { .. } | StepKind::McpTool { .. } => "tool",
            StepKind::Transform { .. } => "transform",
            StepKind::Validate { .. } => "validate",
        }
    }
}

#[derive(Debug, Clone)]
pub struct LlmStep {
    pub prompt_id: String,
    pub variant: String,
    pub model: ModelChoice,
    /// The prompt's variables, templates over the context.
    pub params: Value,
    /// Params that carry page-derived text, wrapped by [`crate::untrusted::block`].
    pub untrusted: Vec<String>,
    /// Replaces the prompt's own schema.
    pub expects: Option<Schema>,
    pub repair_enabled: bool,
    /// Repairs after the first answer; `None`: the engine's default.
    pub max_repairs: Option<u32>,
    pub repair_model: ModelChoice,
}

/// A step's choice of model; what it leaves out comes from the configured models.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelChoice {
    pub provider: Option<ProviderKind>,
    pub name: Option<String>,
    pub temperature: Option<f64>,
}

/// The published schema, compiled once.
static PUBLISHED: LazyLock<Schema> = LazyLock::new(|| {
    let value = serde_json::from_str(PIPELINE_SCHEMA).expect("the pipeline schema is JSON");
    Schema::compile(value).expect("the pipeline schema uses supported keywords")
});

/// The roots of the context a template or condition may read.
const ROOTS: [&str; 5] = ["input", "context", "steps", "pipeline", "tools"];

/// The parsed form of a pipeline file as the worker gets it: `parsed` when the sender read
/// the file itself (the Prompt Studio parses YAML), else `source` read as JSON. Nothing that
/// ships in the worker reads YAML: its parser was a twentieth of the worker's bundle.
pub fn parsed(source: &str, parsed: Option<&Value>) -> Result<Value, Problem> {
    if let Some(value) = parsed {
        return Ok(value.clone());
    }
    if source.trim_start().starts_with('{') {
        return serde_json::from_str(source)
            .map_err(|e| Problem::whole(format!("not valid JSON: {e}")));
    }
    Err(Problem::whole(
        "this YAML file came without its parsed form: open it in the Prompt Studio and save it again",
    ))
}

/// `sha256:` and the hex SHA-256 of `value`'s canonical JSON.
pub fn pipeline_hash(value: &Value) -> String {
    // serde_json's maps are sorted by key, so its compact form is canonical.
    let canonical = serde_json::to_string(value).expect("a JSON value serializes");
    format!("sha256:{}", hex(&Sha256::digest(canonical.as_bytes())))
}

/// Checks a parsed pipeline file (see [`parsed`]) against the prompts of `prompts`.
pub fn load(value: &Value, prompts: &PromptSet) -> Result<Loaded, Vec<Problem>> {
    let mut check = Checker { prompts, errors: Vec::new(), warnings: Vec::new() };
    check.errors.extend(PUBLISHED.validate(value));
    let pipeline = check.pipeline(value);
    if let (Some(pipeline), true) = (pipeline, check.errors.is_empty()) {
        Ok(Loaded { pipeline, warnings: check.warnings })
    } else {
        if check.errors.is_empty() {
            // Every part that cannot be built reports why; this guards against one that forgot.
            check.error("", "the pipeline could not be built");
        }
        lean::sort_by(&mut check.errors, |a, b| a.path.cmp(&b.path));
        check.errors.dedup();
        Err(check.errors)
    }
}

struct Checker<'a> {
    prompts: &'a PromptSet,
    errors: Vec<Problem>,
    warnings: Vec<Problem>,
}

fn text(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

impl Checker<'_> {
    fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(Problem::new(path, message));
    }

    fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Problem::new(path, message));
    }

    /// Walks the file tolerantly, so the rules are checked even where the schema found
    /// problems; returns the pipeline when every part could be built.
    fn pipeline(&mut self, value: &Value) -> Option<Pipeline> {
        let inputs = self.schema_at(value, "/inputs/schema", "");
        let outputs = self.schema_at(value, "/outputs/schema", "");
        let mut allow_mcp = Vec::new();
        let allow_tools: Option<Vec<ToolName>> =
            value.get("allow_tools").and_then(Value::as_array).map(|names| {
                let mut tools = Vec::new();
                for (i, name) in names.iter().enumerate() {
                    let Some(name) = name.as_str() else { continue };
                    if let Some(tool) = ToolName::parse(name) {
                        tools.push(tool);
                    } else if let Some(allow) = McpAllow::parse(name) {
                        allow_mcp.push(allow);
                    } else {
                        let known: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
                        self.error(
                            format!("/allow_tools/{i}"),
                            format!(
                                "{name:?} is not a tool: use {}, or mcp:<server>/<tool> or mcp:<server>/* for an MCP server's tools",
                                known.join(", ")
                            ),
                        );
                    }
                }
                tools
            });
        let mut http_origins = Vec::new();
        for (i, raw) in
            value.get("http_origins").and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let Some(raw) = raw.as_str() else { continue };
            match run_contract::url::WebUrl::parse(raw.trim()) {
                Some(url)
                    if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() =>
                {
                    http_origins.push(run_contract::url::origin(raw));
                }
                _ => self.error(
                    format!("/http_origins/{i}"),
                    format!("{raw:?} is not an http(s) origin like https://api.example.com"),
                ),
            }
        }
        let input_fields: Option<SortedSet<String>> = inputs
            .as_ref()
            .and_then(|s| s.as_value().get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect());
        let mut earlier: SortedMap<String, usize> = SortedMap::new();
        let all_ids: SortedSet<String> = SortedSet::from_iter(
            value
                .get("steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("id").and_then(Value::as_str).map(str::to_owned)),
        );
        let mut steps = Vec::new();
        let mut complete = true;
        for (i, raw) in
            value.get("steps").and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let scope =
                Scope { earlier: &earlier, all: &all_ids, input_fields: input_fields.as_ref() };
            let allowed = Allowed { tools: allow_tools.as_deref(), mcp: &allow_mcp };
            let step = self.step(raw, &format!("/steps/{i}"), &scope, &allowed, &http_origins);
            if let Some(id) = raw.get("id").and_then(Value::as_str) {
                let identifier = id.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !identifier {
                    self.error(
                        format!("/steps/{i}/id"),
                        format!("{id:?}: a step id is letters, digits and _, so paths can name it"),
                    );
                }
                if let Some(first) = earlier.get(id) {
                    self.error(
                        format!("/steps/{i}/id"),
                        format!("duplicate step id {id:?} (first used by step {first})"),
                    );
                } else {
                    earlier.insert(id.to_owned(), i);
                }
            }
            match step {
                Some(step) => steps.push(step),
                None => complete = false,
            }
        }
        if !complete || !self.errors.is_empty() {
            return None;
        }
        Some(Pipeline {
            id: text(value, "id"),
            label: text(value, "label"),
            version: text(value, "version"),
            description: text(value, "description"),
            inputs,
            outputs,
            allow_tools,
            allow_mcp,
            http_origins,
            steps,
            hash: pipeline_hash(value),
        })
    }

    /// Compiles the JSON Schema at `pointer` in `value` (itself at `base` in the file), if
    /// any, reporting an unsupported keyword at its own path.
    fn schema_at(&mut self, value: &Value, pointer: &str, base: &str) -> Option<Schema> {
        let raw = value.pointer(pointer)?;
        if !raw.is_object() {
            return None; // the published schema reports it
        }
        match Schema::compile(raw.clone()) {
            Ok(schema) => Some(schema),
            Err(error) => {
                match error.split_once(": ") {
                    Some((inner, message)) => {
                        self.error(format!("{base}{pointer}{inner}"), message)
                    }
                    None => self.error(format!("{base}{pointer}"), error),
                }
                None
            }
        }
    }

    fn step(
        &mut self,
        raw: &Value,
        at: &str,
        scope: &Scope,
        allowed: &Allowed,
        http_origins: &[String],
    ) -> Option<Step> {
        let when =
            raw.get("when").and_then(Value::as_str).and_then(|source| {
                match Condition::parse(source) {
                    Ok(condition) => {
                        for path in condition.paths() {
                            if let Err(message) = scope.check(&path, true) {
                                self.error(format!("{at}/when"), message);
                            }
                        }
                        Some(condition)
                    }
                    Err(error) => {
                        self.error(
                            format!("{at}/when"),
                            format!("{source:?} does not parse {error}"),
                        );
                        None
                    }
                }
            });
        let strict = raw.get("strict").and_then(Value::as_bool).unwrap_or(false);
        let templated = |key: &str| raw.get(key).cloned().unwrap_or(Value::Null);
        let kind = match raw.get("type").and_then(Value::as_str)? {
            "llm" => StepKind::Llm(self.llm_step(raw, at, scope)?),
            "tool" => {
                let name = raw.get("tool").and_then(Value::as_str)?;
                let tool = ToolName::parse(name)?;
                if tool == ToolName::Mcp {
                    return self.mcp_step(raw, at, scope, allowed, when, strict);
                }
                for key in ["server", "name"] {
                    if raw.get(key).is_some() {
                        self.error(
                            format!("{at}/{key}"),
                            format!("only a tool: mcp step has {key}"),
                        );
                    }
                }
                if let Some(allowed) = allowed.tools
                    && !allowed.contains(&tool)
                {
                    self.error(
                        format!("{at}/tool"),
                        format!("tool {name:?} is not in the pipeline's allow_tools"),
                    );
                }
                let input = if raw.get("input").is_some() {
                    templated("input")
                } else {
                    Value::Object(Map::new())
                };
                if tool == ToolName::Http {
                    self.http_literal(&input, &format!("{at}/input"), http_origins);
                }
                self.templates(&input, &format!("{at}/input"), scope);
                StepKind::Tool { tool, input }
            }
            "transform" => {
                let output = templated("output");
                self.templates(&output, &format!("{at}/output"), scope);
                StepKind::Transform { output }
            }
            "validate" => {
                let input = templated("input");
                self.templates(&input, &format!("{at}/input"), scope);
                let schema = self.schema_at(raw, "/schema", at)?;
                StepKind::Validate { input, schema }
            }
            _ => return None,
        };
        if raw.get("when").is_some() && when.is_none() {
            return None;
        }
        Some(Step { id: text(raw, "id"), label: text(raw, "label"), when, strict, kind })
    }

    /// A `tool: mcp` step: the server and tool named, the allowlist checked (which servers
    /// exist is the user's Settings, checked when the step runs).
    fn mcp_step(
        &mut self,
        raw: &Value,
        at: &str,
        scope: &Scope,
        allowed: &Allowed,
        when: Option<Condition>,
        strict: bool,
    ) -> Option<Step> {
        let server = raw.get("server").and_then(Value::as_str);
        let name = raw.get("name").and_then(Value::as_str);
        if server.is_none() {
            self.error(
                format!("{at}/server"),
                "a tool: mcp step names its server: (from Settings)",
            );
        }
        if name.is_none() {
            self.error(format!("{at}/name"), "a tool: mcp step names the server's tool in name:");
        }
        let (server, name) = (server?, name?);
        if !protocol::settings::McpServer::valid_name(server) {
            self.error(
                format!("{at}/server"),
                format!("{server:?} is not a server name (letters, digits, _ and -)"),
            );
        }
        let listed = match allowed.tools {
            None => true,
            Some(tools) if tools.contains(&ToolName::Mcp) => true,
            Some(_) => allowed
                .mcp
                .iter()
                .any(|a| a.server == server && a.tool.as_deref().is_none_or(|t| t == name)),
        };
        if !listed {
            self.error(
                format!("{at}/name"),
                format!(
                    "mcp:{server}/{name} is not in the pipeline's allow_tools (add mcp:{server}/{name} or mcp:{server}/*)"
                ),
            );
        }
        let input = raw.get("input").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        self.templates(&input, &format!("{at}/input"), scope);
        if raw.get("when").is_some() && when.is_none() {
            return None;
        }
        Some(Step {
            id: text(raw, "id"),
            label: text(raw, "label"),
            when,
            strict,
            kind: StepKind::McpTool { server: server.to_owned(), name: name.to_owned(), input },
        })
    }

    fn llm_step(&mut self, raw: &Value, at: &str, scope: &Scope) -> Option<LlmStep> {
        let prompt_id = raw.get("prompt_id").and_then(Value::as_str)?;
        let variant = raw.get("prompt_variant").and_then(Value::as_str).unwrap_or(DEFAULT_VARIANT);
        let params = raw.get("params").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        self.templates(&params, &format!("{at}/params"), scope);
        // Checked before the prompt, so its problems are reported even when the prompt is missing.
        let expects =
            raw.pointer("/expects/schema").map(|_| self.schema_at(raw, "/expects/schema", at));
        let given: SortedSet<&str> =
            params.as_object().map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
        let mut untrusted = Vec::new();
        for (j, name) in
            raw.get("untrusted").and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let Some(name) = name.as_str() else { continue };
            if !given.contains(name) {
                self.error(
                    format!("{at}/untrusted/{j}"),
                    format!("{name:?} is not one of the step's params"),
                );
            }
            untrusted.push(name.to_owned());
        }
        let Some(prompt) = self.prompts.prompt(prompt_id) else {
            self.error(format!("{at}/prompt_id"), format!("no prompt {prompt_id:?} in prompts/"));
            return None;
        };
        let Some(template) = prompt.variants.get(variant) else {
            let known: Vec<&str> = prompt.variants.keys().map(String::as_str).collect();
            self.error(
                format!("{at}/prompt_variant"),
                format!(
                    "prompt {prompt_id:?} has no variant {variant:?} (it has {})",
                    known.join(", ")
                ),
            );
            return None;
        };
        // The prompt's variables come from params first, then the context's roots.
        for (path, has_default) in template.variables() {
            let root = path.split('.').next().unwrap_or_default();
            if has_default || given.contains(root) {
                continue;
            }
            if ROOTS.contains(&root) {
                let where_ = format!("{at}/prompt_id");
                self.reference(&where_, path, false, scope);
                continue;
            }
            let message = format!(
                "prompt {prompt_id:?}/{variant} reads {{{{{path}}}}}, which params do not give"
            );
            if prompt.strict {
                self.error(
                    format!("{at}/params"),
                    format!("{message} (the prompt is strict, so the step would fail)"),
                );
            } else {
                self.warn(format!("{at}/params"), format!("{message}: it renders empty"));
            }
        }
        let expects = match expects {
            Some(None) => return None,
            Some(schema) => schema,
            None => None,
        };
        let repair_enabled =
            raw.pointer("/repair/enabled").and_then(Value::as_bool).unwrap_or(true);
        let max_repairs =
            raw.pointer("/repair/max_attempts").and_then(Value::as_u64).map(|n| n as u32);
        Some(LlmStep {
            prompt_id: prompt_id.to_owned(),
            variant: variant.to_owned(),
            model: model_choice(raw.get("model")),
            params,
            untrusted,
            expects,
            repair_enabled,
            max_repairs,
            repair_model: model_choice(raw.pointer("/repair/model")),
        })
    }

    /// Parses every string inside `value` as a template and checks what it reads.
    fn templates(&mut self, value: &Value, at: &str, scope: &Scope) {
        match value {
            Value::String(source) => match Template::parse(source) {
                Ok(template) => {
                    if Library::default().check(&template, at).is_err() {
                        self.error(at, "shared rules ({{> …}}) belong in prompts, not pipelines");
                    }
                    for (path, has_default) in template.variables() {
                        self.reference(at, path, has_default, scope);
                    }
                }
                Err(error) => self.error(at, error.to_string()),
            },
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.templates(item, &format!("{at}/{i}"), scope);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.templates(item, &pointer(at, key), scope);
                }
            }
            _ => {}
        }
    }

    /// Checks a variable a template reads: a step that does not run before is an error (the
    /// order is wrong); anything else that may not resolve is a warning (it renders empty).
    fn reference(&mut self, at: &str, path: &str, has_default: bool, scope: &Scope) {
        let Err(message) = scope.check(path, false) else { return };
        if path.split('.').next() == Some("steps") {
            self.error(at, message);
        } else if !has_default {
            self.warn(at, format!("unresolved variable: {message}, so it renders empty"));
        }
    }

    /// An http step's literal URL is checked against `http_origins` now, not at run time.
    fn http_literal(&mut self, input: &Value, at: &str, http_origins: &[String]) {
        if http_origins.is_empty() {
            self.error(at, "the http tool needs the pipeline's http_origins");
            return;
        }
        let Some(url) = input.get("url").and_then(Value::as_str) else { return };
        if url.contains("{{") {
            return;
        }
        let origin = run_contract::url::origin(url);
        if !http_origins.contains(&origin) {
            self.error(format!("{at}/url"), format!("{origin} is not in http_origins"));
        }
    }
}

/// What the pipeline's `allow_tools` allows.
struct Allowed<'a> {
    tools: Option<&'a [ToolName]>,
    mcp: &'a [McpAllow],
}

/// What a step's templates and condition may read.
struct Scope<'a> {
    /// The steps before this one, by id.
    earlier: &'a SortedMap<String, usize>,
    all: &'a SortedSet<String>,
    input_fields: Option<&'a SortedSet<String>>,
}

impl Scope<'_> {
    /// Whether `path` can resolve; `condition` makes an unknown root an error too.
    fn check(&self, path: &str, condition: bool) -> Result<(), String> {
        let parts: Vec<&str> = path.split('.').collect();
        match parts[0] {
            "steps" => {
                let Some(id) = parts.get(1) else {
                    return Err("read steps.<id>.output, not all of steps".into());
                };
                if !self.earlier.contains_key(*id) {
                    return Err(if self.all.contains(*id) {
                        format!("{path} reads step {id:?}, which does not run before this one")
                    } else {
                        format!("{path} reads step {id:?}, which does not exist")
                    });
                }
                match parts.get(2) {
                    None | Some(&"output") | Some(&"status") => Ok(()),
                    Some(other) => {
                        Err(format!("{path}: a step has output and status, not {other:?}"))
                    }
                }
            }
            "input" => match (self.input_fields, parts.get(1)) {
                (Some(fields), Some(field)) if !fields.contains(*field) => {
                    Err(format!("{path}: inputs.schema declares no {field:?}"))
                }
                _ => Ok(()),
            },
            "context" | "pipeline" => Ok(()),
            "tools" if !condition => match parts.get(1) {
                Some(&"list") if parts.len() == 2 => Ok(()),
                _ => Err(format!("{path}: the tools give tools.list only")),
            },
            root if condition => {
                Err(format!("{path}: paths start with input, context or steps, not {root:?}"))
            }
            root => Err(format!(
                "{path}: the context has no {root:?} (it has input, context, steps, pipeline)"
            )),
        }
    }
}

fn model_choice(raw: Option<&Value>) -> ModelChoice {
    let Some(raw) = raw else { return ModelChoice::default() };
    ModelChoice {
        provider: raw.get("provider").and_then(Value::as_str).and_then(provider_kind),
        name: raw.get("name").and_then(Value::as_str).map(str::to_owned),
        temperature: raw.get("temperature").and_then(Value::as_f64),
    }
}

/// The seed's provider names (`openai`, not the settings' `open_ai`).
pub fn provider_kind(name: &str) -> Option<ProviderKind> {
    Some(match name {
        "openai" => ProviderKind::OpenAi,
        "anthropic" => ProviderKind::Anthropic,
        "openrouter" => ProviderKind::OpenRouter,
        "ollama" => ProviderKind::Ollama,
        "gemini" => ProviderKind::Gemini,
        "openai_compatible" => ProviderKind::OpenAiCompatible,
        _ => return None,
    })
}
