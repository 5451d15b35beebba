//! What AlphaScout offers MCP clients, shared by the native binary (`alphascout-mcp`) and
//! the extension's worker.
//!
//! - [`bridge`]: the messages that cross Chrome native messaging between the native host
//!   and the worker, and their framing.
//!
//! This crate knows no MCP transport and no `chrome.*`: the binary speaks MCP to clients,
//! the worker runs the tools; both only agree here on what travels between them.

pub mod bridge;
