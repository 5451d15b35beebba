//! What AlphaScout offers MCP clients, shared by the native binary (`alphascout-mcp`) and
//! the extension's worker.
//!
//! - [`bridge`]: the messages that cross Chrome native messaging between the native host
//!   and the worker, and their framing.
//! - [`catalogue`]: the tools listed to clients, with their descriptions and input schemas
//!   (the fixed ones, and one per published pipeline and workflow).
//! - [`calls`]: a call's arguments read into a typed [`calls::Call`], or refused with a
//!   sentence naming the field.
//! - [`outcome`]: what a job's call returns, structured and in a sentence.
//!
//! This crate knows no MCP transport and no `chrome.*`: the binary speaks MCP to clients,
//! the worker runs the tools; both only agree here on what travels between them.

pub mod bridge;
pub mod calls;
pub mod catalogue;
pub mod outcome;
