//! Pipelines (seed `002_…`, "Pipeline YAML Schema", "Minimal Expression Grammar"): a YAML
//! (or JSON) file of steps that run in order over a shared context.
//!
//! | step | does | output |
//! |---|---|---|
//! | `llm` | renders a prompt from `prompts/` with `params`, asks a model for JSON that follows the prompt's schema (or `expects.schema`), repairing unless `repair.enabled: false`; params named in `untrusted` (page text) arrive as delimited blocks | the answer |
//! | `tool` | calls one of [`ToolName`] with `input` rendered from the context; `tool: mcp` with `server:` and `name:` calls that tool of a configured MCP server ([`crate::mcp`]) with `input` as its arguments, when `allow_tools` lets it (`mcp`, `mcp:<server>/*`, `mcp:<server>/<tool>`) | what the tool returns (an MCP tool's `structuredContent`, else its text) |
//! | `transform` | renders `output` with the template engine in JSON mode: no new language | the JSON built |
//! | `validate` | renders `input`, checks it against `schema` | the value, when it conforms |
//!
//! The context every template and `when` reads:
//! `{"input": …, "context": …, "steps": {"<id>": {"status": "ok" | "skipped", "output": …}}}`,
//! and `tools.list` when a step or prompt reads it: the allowed tools (built-in, and the MCP
//! servers' from `tools/list` at the start of the run), each with its description and input
//! schema.
//! The result of a run is the output of the last step that ran, checked against
//! `outputs.schema` when there is one.
//!
//! - [`load`] (in `prompt-files`): check a parsed file against the published schema
//!   (`prompts/pipeline.schema.json`) and the rules a schema cannot say, with every
//!   problem's path; the pipeline hash. [`parsed`]: the file as the worker gets it (the
//!   Studio parses YAML; the worker reads only JSON).
//! - [`when`] (in `prompt-files`): the condition grammar.
//! - [`run`]: sequential, cancellable execution behind [`PipelineTools`] and the providers'
//!   [`Http`](crate::providers::Http), with a trace per step.
//! - [`publish`]: the gate before a pipeline is published.

pub mod publish;
pub mod run;

#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

// The file format is `prompt-files`' (the Studio reads it too); running is the engine's.
pub use prompt_files::pipeline::load::parsed;
pub use prompt_files::pipeline::{
    BUNDLED_PIPELINES, Condition, Loaded, PIPELINE_SCHEMA, Pipeline, Problem, Step, StepKind,
    ToolName, WhenError, load, when,
};
pub use publish::{PublishReport, check_publish};
pub use run::{
    Cancel, PipelineRun, PipelineTools, RunStatus, Runner, StepTrace, ToolCall, ToolFailure,
};

/// A failed run, in the seed's error shape (`{code, message, step_id, details,
/// recoverable}`): `recoverable` says whether running again, unchanged, may succeed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineError {
    pub code: ErrorCode,
    pub message: String,
    pub step_id: Option<String>,
    pub details: Value,
    pub recoverable: bool,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.step_id {
            Some(step) => write!(f, "step {step:?}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// What went wrong, for code and UIs to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The run's input does not follow `inputs.schema`.
    InvalidInput,
    /// The user stopped the run.
    Cancelled,
    /// A strict step read a variable that does not exist.
    MissingVariable,
    /// The prompt could not be rendered.
    PromptRender,
    /// No configured model fits the step's `model`.
    ModelUnavailable,
    /// The provider failed (network, key, rate limit…).
    Provider,
    /// The model's answer did not follow the schema after the allowed repairs.
    SchemaMismatch,
    /// The step's tool is not in the pipeline's `allow_tools`.
    ToolNotAllowed,
    /// The http tool's URL is not on an origin in `http_origins`.
    OriginNotAllowed,
    /// The tool's input does not have the shape the tool takes.
    ToolInput,
    /// The tool failed.
    ToolFailed,
    /// A validate step's value does not follow its schema.
    ValidationFailed,
    /// The run's result does not follow `outputs.schema`.
    OutputInvalid,
}
