//! `cargo xtask bench agreement`: the sync server's team figures at project size (1,000
//! runs × 20 steps × 2 annotators): agreement and per-annotator figures computed by the
//! server (wall time, peak memory of the server process) and "My queue"'s first page
//! against a plain runs page. The server and the bench (`sync-server/examples/
//! bench_agreement.rs`, which seeds the database and talks HTTP to the real binary) are
//! built in the `server` profile; nothing of the extension is needed.

use std::process::Command;

use crate::shell;

pub fn run() -> Result<(), String> {
    shell::cargo(&[
        "build",
        "--profile",
        "server",
        "-p",
        "sync-server",
        "--bin",
        "sync-server",
        "--example",
        "bench_agreement",
    ])?;
    let root = shell::root();
    let mut bench = Command::new(root.join("target/server/examples/bench_agreement"));
    bench.env("SYNC_SERVER_BIN", root.join("target/server/sync-server"));
    eprintln!("$ target/server/examples/bench_agreement");
    let status = bench.current_dir(&root).status().map_err(|e| format!("bench: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("bench agreement failed: {status}")) }
}
