//! The gate before a pipeline is published (seed `002_…`, "Publishing rules"): errors block
//! it (schema errors, missing prompts or variants, anything the loader refuses); warnings
//! are listed for the person publishing (repairs seen in runs, variables that may not
//! resolve, no real run of this exact version yet).

use serde::Serialize;

use serde_json::Value;

use super::load::{Problem, load};
use super::run::{PipelineRun, RunStatus};
use crate::prompts::PromptSet;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishReport {
    /// The hash of the version checked, when it loaded.
    pub pipeline_hash: Option<String>,
    pub errors: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl PublishReport {
    /// Publishing is blocked while there is any error.
    pub fn blocked(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Checks the parsed file for publishing, given the runs recorded so far (of any version:
/// only those with this version's hash count).
pub fn check_publish(file: &Value, prompts: &PromptSet, runs: &[PipelineRun]) -> PublishReport {
    let loaded = match load(file, prompts) {
        Ok(loaded) => loaded,
        Err(errors) => return PublishReport { pipeline_hash: None, errors, warnings: Vec::new() },
    };
    let pipeline = &loaded.pipeline;
    let mut warnings = loaded.warnings;
    let ours: Vec<&PipelineRun> =
        runs.iter().filter(|r| r.pipeline_hash == pipeline.hash).collect();
    if !ours.iter().any(|r| r.real && r.status == RunStatus::Ok) {
        warnings.push(Problem {
            path: String::new(),
            message: "this version has no successful real run yet: run it on a real page first"
                .into(),
        });
    }
    for (i, step) in pipeline.steps.iter().enumerate() {
        let traces = ours.iter().flat_map(|r| r.steps.iter()).filter(|t| t.step_id == step.id);
        let mut repairs = 0;
        let mut calls = 0;
        let mut missing = Vec::new();
        for trace in traces {
            if let Some(call) = &trace.llm {
                calls += 1;
                repairs += call.repairs;
            }
            for warning in &trace.warnings {
                if !missing.contains(warning) {
                    missing.push(warning.clone());
                }
            }
        }
        if repairs > 0 {
            warnings.push(Problem {
                path: format!("/steps/{i}"),
                message: format!(
                    "the model's answers needed {repairs} repair(s) over {calls} call(s): the prompt or schema may need work"
                ),
            });
        }
        for warning in missing {
            warnings.push(Problem {
                path: format!("/steps/{i}"),
                message: format!("unresolved variable in a run: {warning}"),
            });
        }
    }
    PublishReport { pipeline_hash: Some(pipeline.hash.clone()), errors: Vec::new(), warnings }
}
