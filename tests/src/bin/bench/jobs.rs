//! `bench jobs`: the same fixture task (`table.html`, solved by the model that reads its
//! prompt, `e2e::jobs::model`) in 1, 2 and 4 tabs at once, with Settings' `max_jobs` at 4.
//! The scripted model answers every call after a fixed delay that stands in for a real
//! model's latency (`BENCH_MODEL_MS`, default 800). Per count: the wall time from the first
//! start request until every task is done (median and min–max over a few runs), the model
//! calls a run made, and the median's ratio to one task's. Everything printed is measured.
//!
//! Twice: with the tabs in one window, as a person opens them (only the last is in front;
//! Chrome paints no frames for the others), and with a window each (every tab in front of
//! its window), which shows what running together costs apart from working in hidden tabs.

use std::time::{Duration, Instant};

use e2e::agent::settings;
use e2e::browser::{Browser, Tab};
use e2e::fixtures::FixtureSites;
use e2e::jobs::{self, Model};
use serde_json::json;

use crate::{launch, stats};

const RUNS: usize = 3;
const COUNTS: [usize; 3] = [1, 2, 4];
const PAGE: &str = "table.html";

struct Sample {
    wall_ms: f64,
    calls: usize,
}

pub fn run() {
    let sites = FixtureSites::serve();
    let mut browser = launch();
    let model_ms: u64 =
        std::env::var("BENCH_MODEL_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(800);
    let model = jobs::model(Duration::from_millis(model_ms));
    let mut config = settings(model.llm.base_url());
    config["agent"]["max_jobs"] = json!(4);
    browser.configure_agent(config);
    // The first run pays for what Chrome caches afterwards; it is not counted.
    run_at_once(&mut browser, &sites, &model, Layout::Tabs, 1);

    println!(
        "\nConcurrent jobs: the {PAGE} task in N tabs at once, model {model_ms} ms per call, \
         max_jobs 4"
    );
    println!(
        "{RUNS} runs per row; wall time from the first start request until every task is done"
    );
    for layout in [Layout::Tabs, Layout::Windows] {
        println!("\n{}", layout.describe());
        println!(
            "{:<6} {:>24} {:>12} {:>12}",
            "tasks", "wall ms median (min–max)", "model calls", "÷ one task"
        );
        let mut one = f64::NAN;
        for n in COUNTS {
            let samples: Vec<Sample> =
                (0..RUNS).map(|_| run_at_once(&mut browser, &sites, &model, layout, n)).collect();
            let walls: Vec<f64> = samples.iter().map(|s| s.wall_ms).collect();
            let (min, median, max) = stats(&walls);
            if n == 1 {
                one = median;
            }
            let calls: Vec<String> = samples.iter().map(|s| s.calls.to_string()).collect();
            println!(
                "{n:<6} {:>24} {:>12} {:>11.2}×",
                format!("{median:.0} ({min:.0}–{max:.0})"),
                calls.join("/"),
                median / one
            );
        }
    }
    println!("\n÷ one task: the median wall time over one task's (target: 4 tasks ≤ 1.5×)");
}

/// Where the tabs of a run are opened.
#[derive(Clone, Copy)]
enum Layout {
    /// One window: only the last tab opened is in front.
    Tabs,
    /// A window each: every tab is in front of its own.
    Windows,
}

impl Layout {
    fn describe(self) -> &'static str {
        match self {
            Layout::Tabs => "tabs in one window (all but the last hidden):",
            Layout::Windows => "a window each (every tab visible):",
        }
    }
}

/// `n` fresh tabs on the task's page, laid out as `layout` says, the task started in each
/// and timed until all are done; checks each page took the answer.
fn run_at_once(
    browser: &mut Browser,
    sites: &FixtureSites,
    model: &Model,
    layout: Layout,
    n: usize,
) -> Sample {
    let url = sites.url(&format!("/tasks/{PAGE}"));
    let tabs: Vec<Tab> = (0..n)
        .map(|_| match layout {
            Layout::Tabs => browser.open_tab(&url),
            Layout::Windows => browser.open_window(&url),
        })
        .collect();
    let calls = model.llm.requests().len();
    browser.forget_agent_messages();
    let started = Instant::now();
    for tab in &tabs {
        let reply = browser.agent_request(
            json!({"type": "start_task", "tab_id": tab.id, "task": jobs::task(PAGE)}),
        );
        assert_ne!(reply["type"], "failed", "{reply}");
    }
    // The worker broadcasts the jobs at every change; the last of ours ending ends the run.
    let listed = browser.wait_for_jobs("every task ended", |listed| {
        tabs.iter().all(|tab| {
            jobs::in_tab(listed, "task", tab)
                .is_some_and(|j| j["status"] != "running" && j["status"] != "paused")
        })
    });
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    for tab in tabs {
        let job = jobs::in_tab(&listed, "task", &tab).expect("listed");
        assert_eq!(job["status"], "done", "{job:#}");
        let result = tab.page.eval("document.getElementById('result').textContent");
        assert_eq!(result, "Correct", "the page did not take the answer");
        tab.page.close();
    }
    Sample { wall_ms, calls: model.llm.requests().len() - calls }
}
