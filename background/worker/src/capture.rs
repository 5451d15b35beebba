//! The executor's [`Capture`] in the worker. A task and a replay store their runs, steps and
//! traces in IndexedDB the same way; they differ only in where their events go and what a
//! checkpoint means, which each says as a [`Reporter`].

use agent_engine::executor::{Capture, CaptureError, Checkpoint};
use agent_engine::run::{AgentEvent, AgentRun, LlmTrace, StepRecord};

use crate::chrome;
use crate::store::Store;

/// Where a run's events and checkpoints go.
pub(crate) trait Reporter {
    fn emit(&self, event: &AgentEvent);
    async fn save_checkpoint(
        &self,
        store: &Store,
        checkpoint: &Checkpoint,
    ) -> Result<(), CaptureError>;
}

/// Records to `store`, events and checkpoints to `reporter`.
pub(crate) struct StoreCapture<'a, R> {
    pub store: &'a Store,
    pub reporter: R,
}

impl<R: Reporter> Capture for StoreCapture<'_, R> {
    fn new_id(&self) -> String {
        chrome::random_uuid()
    }

    fn emit(&self, event: &AgentEvent) {
        self.reporter.emit(event);
    }

    async fn save_run(&self, run: &AgentRun) -> Result<(), CaptureError> {
        self.store.put_run(run).await
    }

    async fn save_step(
        &self,
        step: &StepRecord,
        screenshot: Option<&[u8]>,
    ) -> Result<(), CaptureError> {
        self.store.put_step(step, screenshot).await
    }

    async fn save_trace(&self, trace: &LlmTrace) -> Result<(), CaptureError> {
        self.store.put_trace(trace).await
    }

    async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError> {
        self.reporter.save_checkpoint(self.store, checkpoint).await
    }
}
