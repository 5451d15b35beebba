//! `alphascout-mcp <chrome-extension://id/>`: the native host, as Chrome starts it.
//! `alphascout-mcp stdio`: MCP over stdio for a desktop client, through the host.

use std::process::ExitCode;

use alphascout_mcp::{config, host, log, relay};

const USAGE: &str = "usage: alphascout-mcp stdio    (MCP over stdio, for a desktop MCP client)
       alphascout-mcp chrome-extension://<id>/    (Chrome starts the native host so)";

fn main() -> ExitCode {
    let first = std::env::args().nth(1).unwrap_or_default();
    let result = if first.starts_with("chrome-extension://") {
        host::run(&first)
    } else if first == "stdio" {
        config::dir().and_then(|dir| relay::run(&dir))
    } else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            log!("{problem}");
            ExitCode::FAILURE
        }
    }
}
