//! The Prompt Studio's functional core, plain Rust and tested natively: which prompt files
//! exist and how they differ from the bundled ones (`catalogue`), a preview with its
//! variables and unresolved placeholders marked (`preview`), an answer laid out with its
//! schema violations (`output`), the Studio run over any `Http` (`run`), and trace filters
//! and repair telemetry (`traces`). The page (`studio/page`) and the worker use it.

pub mod catalogue;
pub mod output;
pub mod pipelines;
pub mod preview;
pub mod run;
pub mod traces;
