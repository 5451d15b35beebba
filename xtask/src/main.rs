//! `cargo xtask <command>`: the project's only entry points. Each command installs what it
//! is missing first, so a fresh machine needs nothing but this checkout and rustup.

mod agreement_bench;
mod dist;
mod gate;
mod mcp;
mod postgres;
mod setup;
mod shell;
mod sizes;
mod stamp;
mod sync_bench;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

  run [--headless] [--dev]   set up, build dist/, start Chromium with the extension loaded
  test                       set up, then the whole gate: fmt, clippy, unit tests, dist, e2e
  dist [--dev] [--sizes]     build the unpacked extension into dist/ (release unless --dev),
                             each bundle against its budget; --sizes: what weighs most in each
  bench <startup|state|action|prompt|calls|studio|workflow|jobs|mcp>
                             build dist/ and print measured figures (mcp: also
                             alphascout-mcp, which it drives)
  bench sync [--no-baseline] the sync server (SQLite) under batch load and idle sockets, against
                             the commit before issue 13's fixes
  bench agreement            the sync server's agreement and per-annotator figures and My queue
                             for 1,000 runs × 20 steps × 2 annotators (time, peak memory)
  bench read                 a 5,000-step run read from JSON by the derived readers, against
                             parsing the same text into a serde_json::Value (native, release)
  setup                      install what is missing: wasm32 target, wasm-bindgen-cli, Chromium
  mcp install [--port N]     build alphascout-mcp, register it with Chromium and Chrome for this
                             user, create its mcp.json (HTTP on 127.0.0.1:N, a fresh token) and
                             print the configuration MCP clients need
  mcp uninstall              remove what `mcp install` wrote
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let profile = if flag("--dev") { dist::Profile::Dev } else { dist::Profile::Release };
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::all().map(drop),
        Some("dist") => setup::all().and_then(|tools| {
            dist::build(&tools, profile)?;
            if flag("--sizes") { dist::report_sizes(profile) } else { Ok(()) }
        }),
        Some("run") => setup::all().and_then(|tools| {
            dist::build(&tools, profile)?;
            run(&tools, flag("--headless"))
        }),
        Some("test") => gate::run(),
        Some("mcp") => mcp::run(&args[1..]),
        Some("bench") => match args.get(1).map(String::as_str) {
            Some(
                what @ ("startup" | "state" | "action" | "prompt" | "calls" | "studio" | "workflow"
                | "jobs" | "mcp"),
            ) => setup::all().and_then(|tools| {
                dist::build(&tools, dist::Profile::Release)?;
                if what == "mcp" {
                    // The harness runs the host from target/debug, as the e2e tests do.
                    shell::cargo(&["build", "--quiet", "-p", "alphascout-mcp"])?;
                }
                shell::cargo(&["run", "--quiet", "-p", "e2e", "--bin", "bench", "--", what])
            }),
            // The server alone: no extension, so no dist/.
            Some("sync") => sync_bench::run(!flag("--no-baseline")),
            Some("agreement") => agreement_bench::run(),
            Some("read") => shell::cargo(&[
                "run",
                "--quiet",
                "--release",
                "-p",
                "annotation-core",
                "--example",
                "read_bench",
            ]),
            _ => Err(format!("bench what?\n\n{USAGE}")),
        },
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Starts Chromium with dist/ loaded and waits for it to exit (Ctrl-C ends both).
fn run(tools: &setup::Tools, headless: bool) -> Result<(), String> {
    let options = chromium_launch::LaunchOptions {
        chromium: tools.chromium.clone(),
        dist: shell::root().join("dist"),
        headless,
        mcp_host: None,
        env: Vec::new(),
    };
    let mut chromium = chromium_launch::Chromium::start(&options)?;
    let devtools = chromium.devtools_url()?;
    let id = chromium.extension_id()?;
    println!("extension id: {id}");
    println!("side panel:   chrome-extension://{id}/side-panel.html?tabId=N");
    println!("devtools:     {devtools}");
    println!("Chromium is running; press Ctrl-C to stop it.");
    chromium.wait();
    Ok(())
}
