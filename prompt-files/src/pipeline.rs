//! The pipeline file format (seed `002_…`, "Pipeline YAML Schema"): [`load`] parses a file
//! and checks it against the published schema and the rules a schema cannot say; [`when`]
//! is the condition grammar. Running a pipeline is the agent engine's (`agent_engine::pipeline`).

pub mod load;
pub mod when;

use serde::{Deserialize, Serialize};

pub use load::{Loaded, Pipeline, Problem, Step, StepKind, load};
pub use when::{Condition, WhenError};

/// The example pipelines under `pipelines/`, as (file name, contents).
pub const BUNDLED_PIPELINES: &[(&str, &str)] =
    &[("product_facts.yaml", include_str!("../../pipelines/product_facts.yaml"))];

/// The published JSON Schema of pipeline files.
pub const PIPELINE_SCHEMA: &str = include_str!("../../prompts/pipeline.schema.json");

/// The tools a pipeline may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
}

impl ToolName {
    pub const ALL: [ToolName; 5] = [
        ToolName::PageState,
        ToolName::Extract,
        ToolName::AgentTask,
        ToolName::WorkflowReplay,
        ToolName::Http,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::PageState => "page_state",
            ToolName::Extract => "extract",
            ToolName::AgentTask => "agent_task",
            ToolName::WorkflowReplay => "workflow_replay",
            ToolName::Http => "http",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}
