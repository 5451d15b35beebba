//! Seed `004_…`'s workflow format, shared by the engine (which records, reflects and
//! replays) and the Workflows page (which edits): [`recording`] (the shell's raw events
//! folded into steps, typing coalesced, secrets masked, JSONL), [`schema`] (the `Workflow`,
//! `validate()` with paths, parameter substitution; published as `workflow.schema.json`
//! beside this crate), [`edit`] (the editor's changes as data, applied purely).
//!
//! A leaf: it knows no browser and no model.

pub mod edit;
pub mod recording;
pub mod schema;
