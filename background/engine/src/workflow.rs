//! Seed `004_…`: a user's own task recorded, reflected into a parametrised workflow, edited,
//! and replayed. Plain Rust like the rest of the engine: the worker records through CDP and
//! stores recordings and workflows in IndexedDB; everything it decides is here.
//!
//! The format (`recording`, `schema`, `edit`) is the `workflow-format` crate's, which the
//! Workflows page links instead of the engine; the paths here stay as they were.
//!
//! * [`recording`]: the events the shell sees folded into steps (pre-action screenshot and
//!   one action), secrets masked, JSONL export.
//! * [`schema`]: the [`Workflow`](schema::Workflow), its validation with paths, parameter
//!   substitution, and the published export format.
//! * [`edit`]: the editor's changes as data ([`edit::Edit`]), applied purely.
//! * [`reflect`]: passes A (per step) and B (the whole task) through the agents' model-call
//!   path, producing a workflow.
//! * [`replay`]: a workflow run subtask by subtask, with the fast path that acts without a
//!   model when a recorded target is found unambiguously, captured as an `AgentRun`.

pub mod reflect;
pub mod replay;

pub use workflow_format::{edit, recording, schema};
