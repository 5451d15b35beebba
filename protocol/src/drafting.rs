//! The annotation page's AI draft of a step's three thoughts (seed `000_…` §7.G), asked of the
//! worker, which holds the settings and keys and makes the model call. The page sends what
//! the step shows; the worker answers with a draft or with why there is none.

use serde::{Deserialize, Serialize};

/// One captured step as the draft prompt reads it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DraftInput {
    /// The run the trace is filed under, and the step's index in it.
    pub run_id: String,
    pub step_index: u32,
    pub task: String,
    pub step_count: u32,
    pub url: String,
    pub title: String,
    /// The step's action in words ("click on 'Search'").
    pub action: String,
    /// `ok`, `failed` or `cancelled`, and what the action reported.
    pub outcome: String,
    /// The previous step's action in words; empty on the first step.
    #[serde(default)]
    pub previous_action: String,
    /// The page state the model saw at the step, when a trace kept it; else empty.
    #[serde(default)]
    pub page_state: String,
    /// The step's screenshot, base64 JPEG, when it has one.
    #[serde(default)]
    pub screenshot: Option<String>,
}

/// The three drafted thoughts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DraftedThoughts {
    pub thought1: String,
    pub thought2: String,
    pub thought3: String,
}
