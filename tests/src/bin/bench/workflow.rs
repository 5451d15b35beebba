//! `bench workflow`: the recorded fixture-shop workflow (`e2e::workflows`) replayed in a
//! real tab with another query, with the fast path on and off. Per mode: the model calls
//! the replay made (counted at the scripted model server, and as the worker reports them),
//! the calls the fast path saved, and the wall time from the start request to the replay's
//! end as the worker reports it. The scripted model answers at once, or after a fixed delay
//! that stands in for a real model's latency (`BENCH_MODEL_MS`, default 800), so both the
//! browser's own cost and a model-bound replay are shown. Per step, from the captured steps:
//! a fast-path step's whole time (look, act, settle, check, record), and a model step's
//! time without its model call (the traces' durations), which is what the fast path saves
//! besides the call itself. Everything printed is measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::agent::settings;
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use e2e::workflows::{self, Prompt, prompt_kind};
use serde_json::{Value, json};

use crate::{launch, stats};

const REPS: usize = 3;

struct Sample {
    wall_ms: f64,
    calls_at_server: usize,
    calls_reported: u64,
    saved: u64,
    /// Each fast-path step's `durationMs`.
    fast_steps: Vec<f64>,
    /// Each model step's `durationMs` less its traces' `durationMs`.
    model_steps_less_model: Vec<f64>,
}

pub fn run() {
    let sites = FixtureSites::serve();
    let mut browser = launch();
    let delay_ms = Arc::new(AtomicU64::new(0));
    let replay_calls = Arc::new(Mutex::new(0usize));
    let (delay, calls) = (delay_ms.clone(), replay_calls.clone());
    let mut steps = workflows::reflect_step_replies().into_iter();
    let llm = ScriptedLlm::responding(move |prompt| match prompt_kind(prompt) {
        Prompt::ReflectStep => steps.next().expect("one pass-A reply per step"),
        Prompt::ReflectTask => workflows::reflect_task_reply(),
        Prompt::Replay => {
            *calls.lock().unwrap() += 1;
            let wait = delay.load(Ordering::SeqCst);
            workflows::replay_reply(prompt).after(Duration::from_millis(wait))
        }
        Prompt::Other => Reply::error(400, "not a workflow prompt"),
    });
    browser.configure_agent(settings(llm.base_url()));
    workflows::seed_recording(&mut browser, &sites);
    let workflow_id = workflows::reflect(&mut browser);
    workflows::save_with_dependency(&mut browser, &workflow_id);

    let model_ms: u64 =
        std::env::var("BENCH_MODEL_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(800);
    println!(
        "\nWorkflow replay: the fixture shop workflow (3 subtasks, 5 recorded steps), query \"tea\""
    );
    println!(
        "{REPS} replays per row; wall time from the start request to the replay's end (median, min–max)\n"
    );
    println!(
        "{:<34} {:>12} {:>13} {:>11} {:>22}",
        "mode", "model calls", "(worker says)", "calls saved", "wall ms"
    );
    for wait in [0, model_ms] {
        delay_ms.store(wait, Ordering::SeqCst);
        let mut medians = Vec::new();
        let mut per_step = Vec::new();
        for fast_path in [true, false] {
            let samples: Vec<Sample> = (0..REPS)
                .map(|_| replay(&mut browser, &sites, &workflow_id, fast_path, &replay_calls))
                .collect();
            let walls: Vec<f64> = samples.iter().map(|s| s.wall_ms).collect();
            let (min, median, max) = stats(&walls);
            let calls: Vec<usize> = samples.iter().map(|s| s.calls_at_server).collect();
            let reported: Vec<u64> = samples.iter().map(|s| s.calls_reported).collect();
            let saved: Vec<u64> = samples.iter().map(|s| s.saved).collect();
            let label =
                format!("fast path {}, model {} ms", if fast_path { "on" } else { "off" }, wait);
            println!(
                "{label:<34} {:>12} {:>13} {:>11} {:>22}",
                same_or_list(&calls),
                same_or_list(&reported),
                same_or_list(&saved),
                format!("{median:.0} ({min:.0}–{max:.0})")
            );
            medians.push((median, calls[0]));
            let fast: Vec<f64> = samples.iter().flat_map(|s| s.fast_steps.clone()).collect();
            let model: Vec<f64> =
                samples.iter().flat_map(|s| s.model_steps_less_model.clone()).collect();
            per_step.push((label, fast, model));
        }
        let ((on_ms, on_calls), (off_ms, off_calls)) = (medians[0], medians[1]);
        println!(
            "{:<34} {:>12} {:>13} {:>11} {:>22}",
            format!("  off ÷ on (model {wait} ms)"),
            format!("{:.2}×", off_calls as f64 / on_calls.max(1) as f64),
            "",
            "",
            format!("{:.2}×", off_ms / on_ms)
        );
        for (label, fast, model) in per_step {
            for (what, values) in [("fast-path step", fast), ("model step less the call", model)] {
                if values.is_empty() {
                    continue;
                }
                let (min, median, max) = stats(&values);
                println!(
                    "  {label}: {what:<25} {:>3} steps, {median:.0} ms ({min:.0}–{max:.0})",
                    values.len()
                );
            }
        }
    }
}

fn same_or_list<T: PartialEq + std::fmt::Display>(values: &[T]) -> String {
    if values.windows(2).all(|w| w[0] == w[1]) {
        values[0].to_string()
    } else {
        values.iter().map(T::to_string).collect::<Vec<_>>().join("/")
    }
}

/// One replay in a fresh tab at the shop's home page; checks it reached the right page.
fn replay(
    browser: &mut Browser,
    sites: &FixtureSites,
    workflow_id: &str,
    fast_path: bool,
    calls: &Mutex<usize>,
) -> Sample {
    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    let before = *calls.lock().unwrap();
    let started = Instant::now();
    let reply = browser.agent_request(json!({"type": "start_replay", "workflow_id": workflow_id,
        "version": 2, "tab_id": tab.id, "params": {"query": "tea"}, "fast_path": fast_path}));
    assert_eq!(reply["type"], "replay", "{reply}");
    let run_id = reply["replay"]["run_id"].clone();
    let done = workflows::wait_for_replay(browser, "end", |r| {
        r["run_id"] == run_id && r["status"] != "running"
    });
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(done["status"], "done", "{done:#}");
    assert_eq!(done["extracts"]["cheapest"], "French press", "{done:#}");
    workflows::wait_for_url(&tab, "product.html?sku=press");
    tab.page.close();
    let stored = browser.stored_runs();
    let traces = stored["traces"].as_array().cloned().unwrap_or_default();
    let model_ms = |ids: &Value| -> f64 {
        let ids = ids.as_array().cloned().unwrap_or_default();
        traces
            .iter()
            .filter(|t| ids.contains(&t["id"]))
            .filter_map(|t| t["durationMs"].as_f64())
            .sum()
    };
    let (mut fast_steps, mut model_steps_less_model) = (Vec::new(), Vec::new());
    for step in stored["steps"].as_array().into_iter().flatten().filter(|s| s["runId"] == run_id) {
        let duration = step["durationMs"].as_f64().unwrap_or_default();
        let fast = step["extendedThoughts"].to_string().contains("fast path: no model call");
        if fast {
            fast_steps.push(duration);
        } else {
            model_steps_less_model.push(duration - model_ms(&step["traceIds"]));
        }
    }
    Sample {
        wall_ms,
        calls_at_server: *calls.lock().unwrap() - before,
        calls_reported: done["model_calls"].as_u64().unwrap_or_default(),
        saved: done["calls_saved"].as_u64().unwrap_or_default(),
        fast_steps,
        model_steps_less_model,
    }
}
