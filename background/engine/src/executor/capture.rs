//! [`Capture`]: where the executor puts what it produces, and how storing it can fail.

use std::fmt;

use super::Checkpoint;
use crate::run::{AgentEvent, AgentRun, LlmTrace, StepRecord};

/// Why a record could not be stored. The kind decides what the executor does: a full
/// disk stops the task (every later step would be lost too), anything else is logged and
/// the task goes on (the work in the tab matters more than the record of it).
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureError {
    /// The browser's storage quota is used up.
    Full(String),
    /// Anything else: a closed database, a record the store refused.
    Failed(String),
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Full(message) => write!(f, "storage is full ({message})"),
            CaptureError::Failed(message) => f.write_str(message),
        }
    }
}

/// Where the executor puts what it produces. The worker writes to IndexedDB and forwards
/// events to the panel's port; tests keep everything in memory.
#[allow(async_fn_in_trait)]
pub trait Capture {
    /// A fresh unique id for a run, step screenshot or trace.
    fn new_id(&self) -> String;
    fn emit(&self, event: &AgentEvent);
    async fn save_run(&self, run: &AgentRun) -> Result<(), CaptureError>;
    async fn save_step(
        &self,
        step: &StepRecord,
        screenshot: Option<&[u8]>,
    ) -> Result<(), CaptureError>;
    async fn save_trace(&self, trace: &LlmTrace) -> Result<(), CaptureError>;
    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError>;
}
