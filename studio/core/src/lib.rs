//! The Prompt Studio's functional core, plain Rust and tested natively: which prompt files
//! exist and how they differ from the bundled ones (`catalogue`), a preview with its
//! variables and unresolved placeholders marked (`preview`), an answer laid out with its
//! schema violations (`output`), and trace filters and repair telemetry (`traces`). The
//! page (`studio/page`) uses it; the Studio run itself is the engine's (`studio_run`), so
//! the worker links no page's core. It links the leaf crates (`prompt-files`,
//! `run-records`), never the agent engine.

pub mod catalogue;
pub mod output;
pub mod pipelines;
pub mod preview;
pub mod traces;
