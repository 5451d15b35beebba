//! The MCP native host (`alphascout-mcp`) in e2e tests: the binary `cargo test --workspace`
//! builds beside the tests (`cargo xtask test` checks it is there before they run), and a
//! launch that registers it in the throw-away profile, so the extension's
//! `chrome.runtime.connectNative` starts it, confined to a folder of the test's own.

use std::path::{Path, PathBuf};

use crate::browser::{LaunchOptions, options_from_env};

/// `target/debug/alphascout-mcp`; panics with the next step if it was not built.
pub fn binary() -> PathBuf {
    let binary = crate::workspace_root().join("target/debug/alphascout-mcp");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build -p alphascout-mcp` (`cargo xtask test` builds it)",
        binary.display()
    );
    binary
}

/// [`options_from_env`] with the host registered and `ALPHASCOUT_MCP_DIR` set to `dir`,
/// where the host puts its socket and reads `mcp.json`.
pub fn launch_options(dir: &Path) -> LaunchOptions {
    LaunchOptions {
        mcp_host: Some(binary()),
        env: vec![("ALPHASCOUT_MCP_DIR".into(), dir.display().to_string())],
        ..options_from_env()
    }
}
