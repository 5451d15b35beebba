//! `bench mcp`: `run_task` through the MCP server against the same task started from the
//! side panel's path. The fixture task (`table.html`, solved by the model that reads its
//! prompt, `e2e::jobs::model`) runs in a fresh tab each time, three ways:
//!
//! - **panel**: `start_task` over a port from an extension page, as the panel sends it,
//!   timed in that page from the request until the Jobs list the worker broadcasts shows
//!   the task ended;
//! - **MCP stdio**: a desktop client of the official Python SDK (`tests/py/mcp_client.py`)
//!   through `alphascout-mcp stdio`, the host's socket and Chrome's native messaging;
//! - **MCP HTTP**: the same client over streamable HTTP with the bearer token;
//!
//! both MCP ways timed from the moment the client is told to call `run_task` until it has
//! read the result (the final answer). The ways take turns, run after run, so drift on the
//! machine falls on all three alike. Twice: with an instant model and with one that answers
//! each call after `BENCH_MODEL_MS` (default 800). Everything printed is measured.

use std::time::{Duration, Instant};

use e2e::browser::Tab;
use e2e::jobs;
use e2e::mcp_client::{self, Client, Setup, structured};
use serde_json::{Value, json};

use crate::stats;

/// Runs per way; the first of each is dropped.
const RUNS: usize = 7;
const PAGE: &str = "table.html";

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Panel,
    Stdio,
    Http,
}

impl Way {
    const ALL: [Way; 3] = [Way::Panel, Way::Stdio, Way::Http];

    fn name(self) -> &'static str {
        match self {
            Way::Panel => "panel (start_task)",
            Way::Stdio => "MCP stdio (run_task)",
            Way::Http => "MCP HTTP (run_task)",
        }
    }
}

/// One run: its wall time, and the model calls and agent steps it took.
struct Sample {
    wall_ms: f64,
    calls: usize,
    steps: u64,
}

pub fn run() {
    let model_ms: u64 =
        std::env::var("BENCH_MODEL_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(800);
    let mut s = mcp_client::setup(Duration::ZERO);
    let mut clients = [Client::stdio("bench-desk", &s.dir), Client::http("bench-agent", &s.http)];
    for delay in [0, model_ms] {
        if delay > 0 {
            s.use_model(Duration::from_millis(delay));
        }
        let mut samples: Vec<Vec<Sample>> = Way::ALL.iter().map(|_| Vec::new()).collect();
        for run in 0..RUNS {
            for (i, way) in Way::ALL.into_iter().enumerate() {
                let sample = match way {
                    Way::Panel => from_panel(&mut s),
                    Way::Stdio => through_mcp(&mut s, &mut clients[0]),
                    Way::Http => through_mcp(&mut s, &mut clients[1]),
                };
                // The first run of each way pays for what Chrome and the client cache.
                if run > 0 {
                    samples[i].push(sample);
                }
            }
        }
        report(delay, &samples);
    }
}

fn report(delay: u64, samples: &[Vec<Sample>]) {
    println!(
        "\nMCP run_task against the panel's start_task: the {PAGE} task in a fresh tab, \
         model {delay} ms per call"
    );
    println!(
        "{} runs per way (first dropped), taking turns; wall time from the request until the \
         final answer",
        RUNS - 1
    );
    println!(
        "{:<22} {:>26} {:>12} {:>8} {:>16} {:>9}",
        "way", "wall ms median (min–max)", "model calls", "steps", "overhead/step ms", "÷ panel"
    );
    let panel = median_of(&samples[0], |s| s.wall_ms);
    for (way, runs) in Way::ALL.into_iter().zip(samples) {
        let walls: Vec<f64> = runs.iter().map(|s| s.wall_ms).collect();
        let (min, median, max) = stats(&walls);
        let calls = distinct(runs.iter().map(|s| s.calls.to_string()));
        let steps = distinct(runs.iter().map(|s| s.steps.to_string()));
        let (overhead, ratio) = match way {
            Way::Panel => ("".to_owned(), "".to_owned()),
            _ => {
                let per_step = median_of(runs, |s| s.steps as f64);
                (format!("{:.1}", (median - panel) / per_step), format!("{:.2}×", median / panel))
            }
        };
        println!(
            "{:<22} {:>26} {:>12} {:>8} {:>16} {:>9}",
            way.name(),
            format!("{median:.0} ({min:.0}–{max:.0})"),
            calls,
            steps,
            overhead,
            ratio
        );
    }
    println!(
        "overhead/step: (the way's median wall − the panel's) ÷ the way's median steps; \
         ÷ panel: the medians' ratio"
    );
}

fn median_of(samples: &[Sample], value: impl Fn(&Sample) -> f64) -> f64 {
    let values: Vec<f64> = samples.iter().map(value).collect();
    stats(&values).1
}

/// The values seen, each once, in order: "5" when every run made 5 calls.
fn distinct(values: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for value in values {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen.join("/")
}

/// The task started as the panel sends it, timed in the extension page that sends it.
fn from_panel(s: &mut Setup) -> Sample {
    let tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{PAGE}")));
    let calls = s.model.llm.requests().len();
    s.browser.forget_agent_messages();
    let request = json!({"type": "start_task", "tab_id": tab.id, "task": jobs::task(PAGE)});
    // Listening before the request goes, so the end cannot slip past.
    let timed = s.browser.eval_in_extension(&format!(
        "(async () => {{
            const tab = {tab};
            const ended = (m) => m.type === 'jobs' && m.jobs.some(j => j.kind === 'task'
                && j.tab_id === tab && j.status !== 'running' && j.status !== 'paused');
            let listener;
            const end = new Promise(ok => {{
                listener = (m) => {{ if (ended(m)) ok(m); }};
                agent.port.onMessage.addListener(listener);
            }});
            const request = {request};
            request.id = agent.nextId++;
            const started = performance.now();
            agent.send(request);
            const last = await end;
            const ms = performance.now() - started;
            agent.port.onMessage.removeListener(listener);
            return {{ms, jobs: last.jobs}};
        }})()",
        tab = tab.id,
    ));
    let wall_ms = timed["ms"].as_f64().unwrap_or_else(|| panic!("not timed: {timed}"));
    let jobs: Vec<Value> = timed["jobs"].as_array().cloned().unwrap_or_default();
    let job = jobs::in_tab(&jobs, "task", &tab).cloned().expect("the task is listed");
    finish(s, tab, &job, calls, wall_ms)
}

/// The task through `run_task` of `client`, timed from the call until its result is read.
fn through_mcp(s: &mut Setup, client: &mut Client) -> Sample {
    let tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{PAGE}")));
    let calls = s.model.llm.requests().len();
    let started = Instant::now();
    let (done, _) = client.run("run_task", json!({"task": jobs::task(PAGE), "tab_id": tab.id}));
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(structured(&done)["status"], "done", "{done:#}");
    let listed = s.browser.jobs();
    let job = jobs::in_tab(&listed, "task", &tab).cloned().expect("the task is listed");
    finish(s, tab, &job, calls, wall_ms)
}

/// Checks the run solved the task, closes its tab and makes its sample.
fn finish(s: &mut Setup, tab: Tab, job: &Value, calls: usize, wall_ms: f64) -> Sample {
    assert_eq!(job["status"], "done", "{job:#}");
    let result = tab.page.eval("document.getElementById('result').textContent");
    assert_eq!(result, "Correct", "the page did not take the answer");
    tab.page.close();
    let steps = job["step"].as_u64().unwrap_or_default();
    Sample { wall_ms, calls: s.model.llm.requests().len() - calls, steps }
}
