//! `alphascout-mcp`: the MCP server other agents drive AlphaScout through.
//!
//! One binary, two modes (see `main.rs`):
//! - **native host** (Chrome starts it with the extension's origin as its first argument,
//!   when the worker calls `chrome.runtime.connectNative`): speaks the bridge
//!   (`mcp_tools::bridge`) to the worker on stdin/stdout and serves MCP to each connection
//!   of `<dir>/bridge.sock` and, when `<dir>/mcp.json` enables it, to each streamable-HTTP
//!   session on 127.0.0.1 ([`host`], [`handler`], [`hub`], [`http`]);
//! - **`stdio`** (a desktop MCP client starts it): relays MCP between its stdio and the
//!   socket, and answers on its own while no host runs ([`relay`]).
//!
//! Stdout belongs to the protocol in both modes; logs go to stderr and never hold a token.

pub mod config;
pub mod errors;
pub mod handler;
pub mod host;
pub mod http;
pub mod hub;
pub mod relay;

/// One line on stderr, which Chrome keeps in its log for a native host.
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => { eprintln!("alphascout-mcp: {}", format_args!($($arg)*)) };
}
