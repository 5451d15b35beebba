//! Prompt files and what reads them, for every crate that shows, edits or sends a prompt:
//! the template engine ([`template`]), the bundled `prompts/` with their overrides
//! ([`prompts`], embedded by `build.rs`), structured-output checks ([`structured`]: lenient
//! JSON extraction and JSON Schema validation), page text made safe for a prompt
//! ([`untrusted`]), and the pipeline file format ([`pipeline`]: parse, check, hash).
//!
//! A leaf: it knows no browser, no provider, no executor. The Prompt Studio and the
//! annotation page link this, not the agent engine.

pub mod pipeline;
pub mod prompts;
pub mod structured;
pub mod template;
pub mod untrusted;

/// `text` cut to `max` characters, with an ellipsis when cut: for messages and labels.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
