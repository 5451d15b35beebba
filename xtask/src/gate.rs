//! `cargo xtask test`: the whole gate, in the order that fails fastest.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::dist::{self, Profile};
use crate::postgres::Cluster;
use crate::setup;
use crate::shell::{self, root};

const WASM_CRATES: [&str; 20] = [
    "-p",
    "background-worker",
    "-p",
    "authoring-engine",
    "-p",
    "engine-web",
    "-p",
    "side-panel",
    "-p",
    "annotation-page",
    "-p",
    "annotation-spelling",
    "-p",
    "annotation-transfer",
    "-p",
    "prompt-studio",
    "-p",
    "workflows-page",
    "-p",
    "page-port",
];

pub fn run() -> Result<(), String> {
    let started = Instant::now();
    let mut steps = Steps::default();
    let tools = steps.time("setup", setup::all)?;
    steps.time("fmt", || shell::cargo(&["fmt", "--all", "--check"]))?;
    steps.time("clippy (native)", || {
        shell::cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])
    })?;
    let mut wasm_clippy = vec!["clippy", "--target", "wasm32-unknown-unknown"];
    wasm_clippy.extend(WASM_CRATES);
    wasm_clippy.extend(["--", "-D", "warnings"]);
    steps.time("clippy (wasm)", || shell::cargo(&wasm_clippy))?;

    // The extension is built before the tests so that one `cargo test --workspace` builds
    // and runs them all, e2e included: a second selection of packages would unify
    // features differently and compile shared dependencies again.
    steps.time("dist (release)", || dist::build(&tools, Profile::Release))?;
    // Compiles exactly what the next step runs (so nothing twice), before any test runs:
    // the e2e tests start the MCP native host from target/debug, which cargo builds with
    // alphascout-mcp's own integration tests.
    steps.time("build (tests, mcp host)", || {
        shell::cargo(&["test", "--workspace", "--no-run"])?;
        let host = root().join("target/debug/alphascout-mcp");
        if host.exists() {
            Ok(())
        } else {
            Err(format!("{} was not built with the tests", host.display()))
        }
    })?;
    let mut tally = Tally::default();
    let chromium = tools.chromium.to_string_lossy().into_owned();
    // The sync server's scenarios run on SQLite here; their PostgreSQL twins are left to
    // the run below, which has a real PostgreSQL (skipped here rather than counted as
    // passed without having run).
    println!("sync-server integration tests: SQLite (a temporary file per scenario)");
    steps.time("tests (unit, integration, e2e)", || {
        tally.cargo_test_with_env(
            &["test", "--workspace", "--no-fail-fast", "--", "--skip", PG_TESTS],
            &[("CHROMIUM", &chromium)],
        )
    })?;
    steps.time("sync-server on PostgreSQL", || sync_server_on_postgres(&mut tally))?;

    println!(
        "\ngate passed in {:.0} s: {} test binaries",
        started.elapsed().as_secs_f64(),
        tally.binaries
    );
    steps.print();
    println!("{} passed, {} failed, {} skipped", tally.passed, tally.failed, tally.ignored);
    Ok(())
}

/// How long each step of the gate took, printed at its end (and when a step fails).
#[derive(Default)]
struct Steps(Vec<(&'static str, f64)>);

impl Steps {
    fn time<T>(
        &mut self,
        name: &'static str,
        step: impl FnOnce() -> Result<T, String>,
    ) -> Result<T, String> {
        let started = Instant::now();
        let result = step();
        self.0.push((name, started.elapsed().as_secs_f64()));
        if result.is_err() {
            self.print();
        }
        result
    }

    fn print(&self) {
        println!("gate steps:");
        for (name, secs) in &self.0 {
            println!("  {name:<28} {secs:>7.1} s");
        }
    }
}

/// The sync server's PostgreSQL scenarios: `on_both_backends!` puts them in `postgres::`.
/// The workspace run skips every test whose path contains it, so no other test may live in
/// a module of that name (xtask's own `postgres` module has its tests here, for that).
const PG_TESTS: &str = "postgres::";

/// The sync server's scenario binaries again, on a throwaway PostgreSQL (stopped afterwards,
/// also when the tests fail), for the PostgreSQL scenarios only; fails unless some really
/// ran. The package selection matches the workspace run's, so features unify the same way
/// and nothing is compiled twice (`-p sync-server` alone rebuilt every dependency).
fn sync_server_on_postgres(tally: &mut Tally) -> Result<(), String> {
    let cluster = Cluster::start()?;
    println!("sync-server integration tests: PostgreSQL at {} ({})", cluster.url, cluster.version);
    let before = tally.postgres_ok;
    let binaries =
        ["--test", "api", "--test", "suggestions", "--test", "hardening", "--test", "teams"];
    let args: Vec<&str> =
        ["test", "--workspace"].into_iter().chain(binaries).chain(["--", PG_TESTS]).collect();
    tally.cargo_test_with_env(&args, &[("SYNC_TEST_POSTGRES_URL", &cluster.url)])?;
    let ran = tally.postgres_ok - before;
    if ran == 0 {
        return Err("the PostgreSQL run of sync-server ran no PostgreSQL scenario".into());
    }
    println!("sync-server on PostgreSQL: {ran} scenarios passed");
    Ok(())
}

/// Sums cargo test's `test result:` lines across invocations.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
    binaries: u64,
    /// `test postgres::… ... ok` lines: scenarios that ran on PostgreSQL.
    postgres_ok: u64,
    /// Each failed test's panic, from cargo test's `failures:` blocks: repeated at the end
    /// of the gate, because a CI log is often read from its tail only.
    why: Vec<String>,
    /// Lines of the `---- name stdout ----` block being read, if one is.
    block: Option<Vec<String>>,
}

impl Tally {
    fn cargo_test_with_env(&mut self, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
        eprintln!("$ cargo {}", args.join(" "));
        let mut child = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(args)
            .envs(env.iter().copied())
            .current_dir(root())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cargo test: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            println!("{line}");
            self.count(&line);
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        self.end_block();
        if status.success() {
            return Ok(());
        }
        let mut message = format!("cargo {} failed", args.join(" "));
        if !self.why.is_empty() {
            message.push_str("\nwhy each test failed:\n");
            message.push_str(&self.why.join("\n"));
        }
        Err(message)
    }

    /// A failure block's lines: its header, then up to a bounded number of output lines
    /// (the panic and what the test printed before it).
    fn read_failure(&mut self, line: &str) {
        const KEPT: usize = 40;
        if line.starts_with("---- ") && line.ends_with(" ----") {
            self.end_block();
            self.block = Some(vec![line.to_owned()]);
        } else if line == "failures:" || line.starts_with("test result: ") {
            self.end_block();
        } else if let Some(block) = &mut self.block
            && block.len() <= KEPT
        {
            block.push(format!("  {line}"));
        }
    }

    fn end_block(&mut self) {
        if let Some(block) = self.block.take() {
            self.why.push(block.join("\n"));
        }
    }

    /// `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; …`
    fn count(&mut self, line: &str) {
        self.read_failure(line);
        if line.strip_prefix("test ").is_some_and(|t| t.starts_with(PG_TESTS))
            && line.ends_with(" ... ok")
        {
            self.postgres_ok += 1;
        }
        let Some(rest) = line.strip_prefix("test result: ") else {
            return;
        };
        self.binaries += 1;
        for part in rest.split(['.', ';']) {
            let mut words = part.split_whitespace();
            if let (Some(n), Some(what)) = (words.next(), words.next()) {
                let n: u64 = n.parse().unwrap_or(0);
                match what {
                    "passed" => self.passed += n,
                    "failed" => self.failed += n,
                    "ignored" => self.ignored += n,
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let path = std::env::temp_dir().join(format!("xtask-tail-{}", std::process::id()));
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        assert_eq!(crate::postgres::tail(&path, 2), "b\nc");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn counts_cargo_test_summary_lines() {
        let mut tally = Tally::default();
        tally.count("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out");
        tally.count("test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured");
        tally.count("running 3 tests");
        assert_eq!((tally.passed, tally.failed, tally.ignored, tally.binaries), (5, 1, 1, 2));
        tally.count("test postgres::comment_threads ... ok");
        tally.count("test sqlite::comment_threads ... ok");
        tally.count("test postgres::batch_upsert_and_traces ... FAILED");
        assert_eq!(tally.postgres_ok, 1);
    }

    #[test]
    fn keeps_each_failed_tests_panic() {
        let mut tally = Tally::default();
        for line in [
            "test a::one ... FAILED",
            "",
            "failures:",
            "",
            "---- a::one stdout ----",
            "thread 'a::one' panicked at tests/a.rs:3:5:",
            "timed out waiting for the badge",
            "",
            "---- a::two stdout ----",
            "thread 'a::two' panicked at tests/a.rs:9:5:",
            "",
            "failures:",
            "    a::one",
            "    a::two",
            "",
            "test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured",
        ] {
            tally.count(line);
        }
        assert_eq!(tally.why.len(), 2);
        assert!(tally.why[0].starts_with("---- a::one stdout ----"));
        assert!(tally.why[0].contains("timed out waiting for the badge"));
        assert!(!tally.why[1].contains("a::one"), "the list of names is not a block's");
    }
}
