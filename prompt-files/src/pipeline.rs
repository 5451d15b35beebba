//! The pipeline file format (seed `002_…`, "Pipeline YAML Schema"): [`load`] checks a parsed
//! file against the published schema and the rules a schema cannot say; [`when`]
//! is the condition grammar. Running a pipeline is the agent engine's (`agent_engine::pipeline`).

pub mod load;
pub mod when;

use serde::Serialize;

pub use load::{Loaded, McpAllow, Pipeline, Problem, Step, StepKind, load};
pub use when::{Condition, WhenError};

/// The example pipelines under `pipelines/`, as (file name, contents).
pub const BUNDLED_PIPELINES: &[(&str, &str)] =
    &[("product_facts.yaml", include_str!("../../pipelines/product_facts.yaml"))];

/// The published JSON Schema of pipeline files.
pub const PIPELINE_SCHEMA: &str = include_str!("../../prompts/pipeline.schema.json");

/// The tools a pipeline may call.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// The page state of the pipeline's tab, as the agents see it.
    PageState,
    /// The readable text of the pipeline's tab.
    Extract,
    /// An agent task; returns its answer.
    AgentTask,
    /// A recorded workflow replayed; returns its extracts.
    WorkflowReplay,
    /// One request to an origin in the pipeline's `http_origins`.
    Http,
    /// A tool of a configured MCP server (`server:` and `name:` beside `tool: mcp`). In
    /// `allow_tools`, `mcp` allows every server's tools; `mcp:<server>/<tool>` and
    /// `mcp:<server>/*` allow one tool or one server's.
    Mcp,
}

impl ToolName {
    pub const ALL: [ToolName; 6] = [
        ToolName::PageState,
        ToolName::Extract,
        ToolName::AgentTask,
        ToolName::WorkflowReplay,
        ToolName::Http,
        ToolName::Mcp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::PageState => "page_state",
            ToolName::Extract => "extract",
            ToolName::AgentTask => "agent_task",
            ToolName::WorkflowReplay => "workflow_replay",
            ToolName::Http => "http",
            ToolName::Mcp => "mcp",
        }
    }

    /// What the tool does and its input's JSON Schema, for `{{tools.list}}`.
    pub fn description(self) -> (&'static str, serde_json::Value) {
        use serde_json::json;
        let tab =
            json!({"type": "integer", "description": "A tab id; the pipeline's tab when absent."});
        match self {
            ToolName::PageState => (
                "The page state of the pipeline's tab as the agents see it: {url, title, state}.",
                json!({"type": "object", "properties": {"tab": tab}}),
            ),
            ToolName::Extract => (
                "The readable text of the pipeline's tab: {url, title, text}.",
                json!({"type": "object", "properties": {"tab": tab, "max_chars": {"type": "integer"}}}),
            ),
            ToolName::AgentTask => (
                "Runs a browser agent task and returns {answer}.",
                json!({"type": "object", "required": ["task"], "properties": {"task": {"type": "string"}, "tab": tab}}),
            ),
            ToolName::WorkflowReplay => (
                "Replays a recorded workflow with parameters and returns {extracts}.",
                json!({"type": "object", "required": ["workflow"], "properties": {"workflow": {"type": "string"}, "params": {"type": "object"}}}),
            ),
            ToolName::Http => (
                "One HTTP request to an origin in the pipeline's http_origins; returns {status, body}.",
                json!({"type": "object", "required": ["url"], "properties": {"method": {"type": "string"}, "url": {"type": "string"}, "headers": {"type": "object"}, "body": {}}}),
            ),
            ToolName::Mcp => (
                "A tool of a configured MCP server.",
                json!({"type": "object", "required": ["server", "name"], "properties": {"server": {"type": "string"}, "name": {"type": "string"}, "input": {"type": "object"}}}),
            ),
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}
