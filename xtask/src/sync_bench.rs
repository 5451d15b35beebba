//! `cargo xtask bench sync`: the sync server's load and idle-connection figures, for this
//! tree and for the commit before issue 13's fixes, built the same way (the `server`
//! profile) so the ratio is the code's.
//!
//! The earlier commit is exported with `git archive` into `target/sync-bench/` and built
//! there with its own target directory: cargo names a workspace member's artifacts by its
//! path inside its workspace, so two checkouts sharing one target directory would take each
//! other's `sync-server` for fresh. Its binary is kept, so only the first run builds it
//! (several minutes). `--no-baseline` measures this tree alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::shell;

/// The last commit before the fixes (main's, where the hardening branch starts).
const BASELINE: &str = "17724fa";

/// The `server` profile, given on the command line for a tree that does not define it.
const SERVER_PROFILE: [&str; 10] = [
    "--config",
    "profile.server.inherits=\"release\"",
    "--config",
    "profile.server.opt-level=3",
    "--config",
    "profile.server.panic=\"unwind\"",
    "--config",
    "profile.server.lto=\"thin\"",
    "--config",
    "profile.server.codegen-units=16",
];

pub fn run(baseline: bool) -> Result<(), String> {
    shell::cargo(&["build", "--profile", "server", "-p", "sync-server"])?;
    shell::cargo(&["build", "--quiet", "-p", "e2e", "--bin", "bench"])?;
    let root = shell::root();
    let mut bench = Command::new(root.join("target/debug/bench"));
    bench.arg("sync").env("SYNC_SERVER_BIN", root.join("target/server/sync-server"));
    if baseline {
        let old = build_baseline(&root)?;
        bench.env("SYNC_BENCH_BASELINE", old);
        bench.env("SYNC_BENCH_BASELINE_LABEL", format!("{BASELINE} (before)"));
    }
    eprintln!("$ target/debug/bench sync");
    let status = bench.current_dir(&root).status().map_err(|e| format!("bench: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("bench sync failed: {status}")) }
}

/// The baseline commit's server, built once and kept.
fn build_baseline(root: &Path) -> Result<PathBuf, String> {
    let base = root.join("target/sync-bench").join(BASELINE);
    let binary = base.join("sync-server");
    if binary.is_file() {
        eprintln!("{BASELINE}'s sync-server: {} (kept from an earlier run)", binary.display());
        return Ok(binary);
    }
    let tree = base.join("src");
    if tree.exists() {
        std::fs::remove_dir_all(&tree).map_err(|e| format!("{}: {e}", tree.display()))?;
    }
    std::fs::create_dir_all(&tree).map_err(|e| format!("{}: {e}", tree.display()))?;
    // git archive … | tar -x, without a shell.
    let mut archive = Command::new("git")
        .args(["archive", "--format=tar", BASELINE])
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("git archive: {e}"))?;
    let stdout = archive.stdout.take().ok_or("git archive has no output")?;
    let untar = Command::new("tar")
        .args(["-x", "-C"])
        .arg(&tree)
        .stdin(stdout)
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    let archived = archive.wait().map_err(|e| format!("git archive: {e}"))?;
    if !archived.success() || !untar.success() {
        return Err(format!("could not export {BASELINE} into {}", tree.display()));
    }
    let manifest = tree.join("Cargo.toml");
    let target = base.join("target");
    let mut args = vec!["build", "--profile", "server", "-p", "sync-server"];
    args.extend(SERVER_PROFILE);
    let (manifest, target) = (manifest.to_string_lossy(), target.to_string_lossy());
    args.extend(["--manifest-path", &manifest, "--target-dir", &target]);
    shell::cargo(&args)?;
    std::fs::copy(base.join("target/server/sync-server"), &binary)
        .map_err(|e| format!("keeping {BASELINE}'s sync-server: {e}"))?;
    // Only the binary is kept.
    let _ = std::fs::remove_dir_all(&tree);
    let _ = std::fs::remove_dir_all(base.join("target"));
    Ok(binary)
}
