//! The Prompt Studio's functional core, plain Rust and tested natively: which prompt files
//! exist and how they differ from the bundled ones (`catalogue`), a preview with its
//! variables and unresolved placeholders marked (`preview`), an answer laid out with its
//! schema violations (`output`), trace filters, step labels and repair telemetry
//! (`traces`), a comparison cell against its baseline (`compare`), saved prompt versions
//! (`versions`) and their line and word diff (`diff`), and a pipeline's diagram laid out
//! (`pipelines`). The
//! page (`studio/page`) uses it; the Studio run itself is the engine's (`studio_run`), so
//! the worker links no page's core. It links the leaf crates (`prompt-files`,
//! `run-records`), never the agent engine.

pub mod catalogue;
pub mod compare;
pub mod diff;
pub mod output;
pub mod pipelines;
pub mod preview;
pub mod traces;
pub mod versions;
