//! Benchmarks that need the real extension in Chromium. Run through `cargo xtask bench …`,
//! which builds a release `dist/` first. Each prints measured figures; none asserts a time.

use std::path::PathBuf;

use e2e::browser::{Browser, Tab};
use e2e::fixtures::FixtureSites;
use serde_json::Value;

#[path = "bench/coverage.rs"]
mod coverage;
#[path = "bench/jobs.rs"]
mod jobs;
#[path = "bench/mcp.rs"]
mod mcp;
#[path = "bench/studio.rs"]
mod studio;
#[path = "bench/sync.rs"]
mod sync;
#[path = "bench/workflow.rs"]
mod workflow;

const USAGE: &str =
    "usage: bench <startup|state|action|prompt|calls|studio|sync|workflow|jobs|mcp>";

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("startup") => startup(),
        Some("state") => state(),
        Some("action") => action(),
        Some("prompt") => prompt(),
        // Only the model calls per fixture task, e.g. on an earlier build through BENCH_DIST.
        Some("calls") => model_calls(&FixtureSites::serve(), &mut launch()),
        Some("studio") => studio::run(),
        Some("sync") => sync::run(),
        Some("workflow") => workflow::run(),
        Some("jobs") => jobs::run(),
        Some("mcp") => mcp::run(),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
}

/// Chromium with `dist/`, or with the unpacked build `BENCH_DIST` names (an earlier build
/// for before-and-after figures, or a copy kept while dist/ is rebuilt).
fn launch() -> Browser {
    let mut options = e2e::browser::options_from_env();
    if let Some(dist) = std::env::var_os("BENCH_DIST") {
        options.dist = dist.into();
    }
    Browser::launch_with(options).unwrap_or_else(|e| panic!("{e}"))
}

/// Cold worker start: stop the worker, wake it with a debug request from an extension page,
/// and read the bootstrap's own timings. The floor is the same request to a running worker.
/// Then the worker's authoring module (`dist/authoring/`), which instantiates on its first
/// call: that call after a cold start against the same call once it is loaded.
fn startup() {
    const RUNS: usize = 21;
    let mut browser = launch();
    let ask = "(async () => { const t = performance.now();
        const r = await chrome.runtime.sendMessage({type: 'debug.worker_timings'});
        r.round_trip_ms = performance.now() - t; return r; })()";
    browser.eval_in_extension(ask); // let the freshly installed worker settle first
    let mut cold: Vec<Value> = Vec::new();
    let mut warm: Vec<f64> = Vec::new();
    for _ in 0..RUNS {
        browser.stop_extension_worker();
        cold.push(browser.eval_in_extension(ask));
        warm.push(browser.eval_in_extension(ask)["round_trip_ms"].as_f64().unwrap_or(f64::NAN));
    }
    // The first run pays for compiling the module; Chrome caches the compiled code after it.
    let cold = &cold[1..];
    let warm = &warm[1..];
    let column = |name: &str| -> Vec<f64> {
        cold.iter().map(|r| r[name].as_f64().unwrap_or(f64::NAN)).collect()
    };
    println!(
        "worker start-up, {} cold starts (first dropped), ms since the worker's timeOrigin",
        cold.len()
    );
    println!("{:<42} {:>8} {:>8} {:>8}", "figure", "min", "median", "max");
    let rows = [
        ("listeners registered", column("listeners_registered_ms")),
        ("wasm instantiate (duration)", column("wasm_instantiate_ms")),
        ("Rust ready", column("ready_ms")),
        ("first request answered (in worker)", column("answered_ms")),
        ("cold round trip, seen from a page", column("round_trip_ms")),
        ("warm round trip, seen from a page (floor)", warm.to_vec()),
    ];
    for (name, values) in &rows {
        let (min, median, max) = stats(values);
        println!("{name:<42} {min:>8.1} {median:>8.1} {max:>8.1}");
    }
    let (_, cold_median, _) = stats(&rows[4].1);
    let (_, warm_median, _) = stats(&rows[5].1);
    println!("cold / warm round trip: {:.1}x", cold_median / warm_median);
    authoring_first_call(&mut browser, RUNS);
}

/// A save of a pipeline file that does not load (`{}`): the publish gate runs in the
/// authoring module and refuses it, and nothing is stored. Timed in the page, after a cheap
/// request has woken the worker: the first save after each cold start, then a second.
fn authoring_first_call(browser: &mut Browser, runs: usize) {
    if std::env::var_os("BENCH_DIST").is_some() {
        return; // an earlier build may have no authoring module
    }
    browser.configure_agent(e2e::agent::settings("http://127.0.0.1:9"));
    const SAVES: &str = r#"(async () => {
        const port = chrome.runtime.connect({ name: "alphascout.panel" });
        const ask = (request) => new Promise((resolve) => {
            const started = performance.now();
            const answered = (m) => {
                if (m.id !== request.id) return;
                port.onMessage.removeListener(answered);
                resolve({ ms: performance.now() - started, answer: m });
            };
            port.onMessage.addListener(answered);
            port.postMessage(request);
        });
        const save = (id) => ask({ type: "save_pipeline", id, text: "{}", pipeline: {}, publish: false });
        await ask({ type: "list_pipelines", id: 900000 });
        const first = await save(900001);
        const second = await save(900002);
        port.disconnect();
        return { first: first.ms, second: second.ms, errors: (first.answer.errors || []).length };
    })()"#;
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        browser.stop_extension_worker();
        let timed = browser.eval_in_extension(SAVES);
        assert!(timed["errors"].as_u64().unwrap_or(0) > 0, "the gate should refuse {{}}: {timed}");
        first.push(timed["first"].as_f64().unwrap_or(f64::NAN));
        second.push(timed["second"].as_f64().unwrap_or(f64::NAN));
    }
    println!();
    println!(
        "authoring module (publish gate on `{{}}`), {} cold starts (first dropped), ms",
        runs - 1
    );
    println!("{:<42} {:>8} {:>8} {:>8}", "figure", "min", "median", "max");
    let rows = [("first call, instantiation included", &first[1..]), ("second call", &second[1..])];
    for (name, values) in rows {
        let (min, median, max) = stats(values);
        println!("{name:<42} {min:>8.1} {median:>8.1} {max:>8.1}");
    }
    let (_, first_median, _) = stats(&first[1..]);
    let (_, second_median, _) = stats(&second[1..]);
    println!("first / second call: {:.1}x", first_median / second_median);
}

/// Page-state extraction, end to end: an extension page asks the worker for a tab's state
/// (`debug.page_state`) and waits for the answer. The floor, timed in the same run on the
/// same warm page, is one in-page pass that reads every element's box. Calls alternate
/// between the two; the first of each is dropped.
fn state() {
    const RUNS: usize = 11;
    let sites = FixtureSites::serve();
    let rustdoc = rustdoc_html().map(FixtureSites::serve_dir);
    let mut pages: Vec<(String, String)> = Vec::new();
    if let Some(docs) = &rustdoc {
        pages.push(("rustdoc std/index.html".into(), docs.url("/std/index.html")));
        pages
            .push(("rustdoc std/vec/struct.Vec.html".into(), docs.url("/std/vec/struct.Vec.html")));
    } else {
        eprintln!("no rustdoc found (rustup component add rust-docs); skipping real pages");
    }
    pages.push(("fixture shop".into(), sites.url("/shop/index.html")));
    // Form and table pages, where text beside the controls carries the task.
    for page in ["table", "form-table", "form-grid", "checkboxes", "number-game", "paragraph"] {
        pages.push((format!("fixture {page}"), sites.url(&format!("/tasks/{page}.html"))));
    }
    for n in [1_000, 10_000, 50_000] {
        pages.push((format!("generated {n}"), sites.url(&format!("/generated.html?n={n}"))));
    }

    let mut browser = Browser::launch();
    let mut covered = Vec::new();
    println!(
        "{:<32} {:>8} {:>9} {:>9} {:>7} {:>8} {:>7} {:>9} {:>7}",
        "page", "elements", "ours ms", "floor ms", "ratio", "target", "listed", "chars", "in-page"
    );
    for (name, url) in pages {
        let tab = browser.open_tab(&url);
        let dom_elements = tab.page.eval("document.querySelectorAll('*').length");
        let mut ours = Vec::new();
        let mut floor = Vec::new();
        let mut in_page = Vec::new();
        let mut last = Value::Null;
        for _ in 0..RUNS {
            let (ms, reply) = timed_page_state(&mut browser, &tab);
            ours.push(ms);
            in_page.push(reply["timings_ms"]["in_page"].as_f64().unwrap_or(f64::NAN));
            last = reply;
            floor.push(tab.page.eval(FLOOR).as_f64().unwrap_or(f64::NAN));
        }
        let (_, ours_ms, _) = stats(&ours[1..]);
        let (_, floor_ms, _) = stats(&floor[1..]);
        let (_, in_page_ms, _) = stats(&in_page[1..]);
        let target = if name.contains("Vec") { 2.0 * floor_ms } else { 1.6 * floor_ms + 30.0 };
        println!(
            "{name:<32} {:>8} {ours_ms:>9.1} {floor_ms:>9.1} {:>6.2}x {:>8} {:>7} {:>9} {in_page_ms:>7.1}",
            dom_elements,
            ours_ms / floor_ms,
            format!("≤{target:.0}"),
            last["elements"].as_array().map_or(0, Vec::len),
            last["chars"],
        );
        let ours_text = last["text"].as_str().unwrap_or_default();
        let (words, ours, reference, reference_chars) = coverage::measure(&tab.page, ours_text);
        let body = coverage::body(ours_text);
        covered.push((name, words, ours, body.chars().count(), reference, reference_chars));
        let _ = tab.page.call("Page.close", serde_json::json!({}));
    }
    println!(
        "ours: debug.page_state round trip seen from an extension page (median of {})",
        RUNS - 1
    );
    println!("floor: one in-page pass calling getBoundingClientRect on every element (median)");
    println!("target: ≤2.0x floor on the Vec page, ≤1.6x floor + 30 ms elsewhere");
    println!();
    println!(
        "{:<32} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "page", "words", "ours cov", "chars", "ref cov", "ref chars", "chars"
    );
    for (name, words, ours, chars, reference, reference_chars) in covered {
        println!(
            "{name:<32} {words:>6} {:>8.1}% {chars:>9} {:>8.1}% {reference_chars:>9} {:>6.0}%",
            100.0 * ours,
            100.0 * reference,
            100.0 * chars as f64 / reference_chars.max(1) as f64,
        );
    }
    println!(
        "words: words a person sees in the viewport (rendered, in view, not covered; field values)"
    );
    println!(
        "cov: share of those words (with repeats) found in the state; chars: ours as a share of the reference's"
    );
    println!(
        "chars: ours without the title, url, view and tabs lines, which the reference does not have"
    );
    println!(
        "reference: every interactive element with attributes cut to 15 characters, and every visible text node on its own line"
    );
    println!("target: ≥98% coverage at ≤50% of the reference's characters");
}

/// The Navigator's prompt, as sent, split into the template (system), the page state and
/// working memory (history), on real pages: a two-step task per page with the scripted
/// model, read back from the traces the worker stored. The anchor's figures are quoted from
/// the brief: a ~9,400-character system prompt, and ~11,000 characters of state for 50
/// elements.
fn prompt() {
    use e2e::agent::replies::{navigate, plan, verdict};
    use e2e::llm::ScriptedLlm;
    use serde_json::json;

    let sites = FixtureSites::serve();
    let rustdoc = rustdoc_html().map(FixtureSites::serve_dir);
    let mut pages = vec![("fixture shop".to_owned(), sites.url("/shop/index.html"))];
    if let Some(docs) = &rustdoc {
        pages.push(("rustdoc std/index.html".into(), docs.url("/std/index.html")));
        pages.push(("rustdoc struct.Vec.html".into(), docs.url("/std/vec/struct.Vec.html")));
    }
    pages.push(("generated 1000".into(), sites.url("/generated.html?n=1000")));
    let llm = ScriptedLlm::start([]);
    let mut browser = launch();
    browser.configure_agent(e2e::agent::settings(llm.base_url()));
    println!(
        "{:<26} {:>4} {:>8} {:>7} {:>8} {:>7} {:>8} {:>10}",
        "page", "step", "system", "state", "history", "total", "listed", "chars/elt"
    );
    for (name, url) in pages {
        let tab = browser.open_tab(&url);
        let listed = browser.page_state(&tab)["elements"].as_array().map_or(0, Vec::len);
        llm.push(plan(false, "1. Scroll through the page\n2. Report what it offers", ""));
        llm.push(navigate(
            "Start: the page is open",
            "Scroll down; I expect more of the page",
            json!([{"action": "scroll", "screens": 1}]),
        ));
        llm.push(navigate(
            "Success: scrolled one screen",
            "Report",
            json!([{"action": "done", "text": "seen"}]),
        ));
        llm.push(verdict(true, "", "seen"));
        browser.agent_request(json!({"type": "start_task", "tab_id": tab.id, "task": "What does this page offer? Scroll once, then answer."}));
        let done = browser.wait_for_task("done");
        let stored = browser.stored_runs();
        let mut traces: Vec<&Value> = stored["traces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["runId"] == done["run_id"] && t["role"] == "navigator")
            .collect();
        traces.sort_by_key(|t| t["step"].as_u64());
        for trace in traces {
            let part = |name: &str| trace["chars"][name].as_u64().unwrap_or(0);
            println!(
                "{name:<26} {:>4} {:>8} {:>7} {:>8} {:>7} {:>8} {:>10.0}",
                trace["step"].as_u64().unwrap_or(0) + 1,
                part("system"),
                part("state"),
                part("history"),
                part("total"),
                listed,
                part("state") as f64 / listed.max(1) as f64,
            );
        }
        let _ = tab.page.call("Page.close", json!({}));
    }
    println!(
        "system: the template and shared rules; state: the page state; history: working memory"
    );
    println!(
        "anchor: ~9,400 chars of system prompt alone, plus ~11,000 chars of state for 50 elements (~220 per element)"
    );
    println!();
    model_calls(&sites, &mut browser);
}

/// Model calls per task on the fixture tasks, solved by a model that decides from its prompt
/// alone (`e2e::tasks`). Run with `BENCH_DIST` on an earlier build for the before figures.
fn model_calls(sites: &FixtureSites, browser: &mut Browser) {
    use e2e::agent::reader::{Asker, asker};
    println!(
        "{:<20} {:>7} {:>6} {:>8} {:>9} {:>8} {:>9}",
        "fixture task", "solved", "calls", "planner", "navigator", "thinking", "overhead"
    );
    let (mut calls, mut navigator, mut solved) = (0, 0, 0);
    for page in e2e::tasks::PAGES {
        let task = e2e::tasks::solve(browser, sites, page, 12);
        let count = |who: Asker| task.prompts.iter().filter(|p| asker(p) == who).count();
        println!(
            "{:<20} {:>7} {:>6} {:>8} {:>9} {:>8} {:>+9}",
            page.trim_end_matches(".html"),
            if task.solved() { "yes" } else { "no" },
            task.model_calls(),
            count(Asker::Planner),
            task.navigator_calls,
            count(Asker::Thinking),
            task.model_calls() as i64 - task.navigator_calls as i64,
        );
        calls += task.model_calls();
        navigator += task.navigator_calls;
        solved += usize::from(task.solved());
        let _ = task.tab.page.call("Page.close", serde_json::json!({}));
    }
    let n = e2e::tasks::PAGES.len() as f64;
    println!(
        "solved {solved} of {}; {:.1} model calls and {:.1} Navigator calls per task",
        e2e::tasks::PAGES.len(),
        calls as f64 / n,
        navigator as f64 / n
    );
    println!(
        "overhead: model calls beyond the Navigator's (target: ≤ +2 on tasks that need no re-planning)"
    );
}

/// Click → next page state ready, timed from an extension page: `debug.act` with a click,
/// then `debug.page_state`. The floor, on the same page in the same run, is what the page
/// itself needs: `element.click()` plus one pass reading every element's box, timed in-page.
fn action() {
    const RUNS: usize = 21;
    let sites = FixtureSites::serve();
    // (page, text of the element to click, in-page selector of the same element)
    let cases = [
        ("/shop/product.html?sku=kettle", "Add to cart", "#add"),
        ("/controls/widgets.html", "Colour: choose", "#colour"),
        ("/controls/spa.html", "Open Beta", "#list li:nth-child(2) button"),
    ];
    let mut browser = Browser::launch();
    println!(
        "{:<34} {:>9} {:>9} {:>8} {:>9} {:>9} {:>12}",
        "click → state ready", "ours ms", "floor ms", "ratio", "act ms", "target", "anchor sleep"
    );
    for (path, text, selector) in cases {
        let tab = browser.open_tab(&sites.url(path));
        let mut ours = Vec::new();
        let mut acts = Vec::new();
        let mut floor = Vec::new();
        for _ in 0..RUNS {
            // Ids change when the page re-renders, so read the current one each time.
            let state = browser.page_state(&tab);
            let id = e2e::listed(&state, text)
                .map(|e| e["id"].clone())
                .unwrap_or_else(|| panic!("{text} not listed on {path}"));
            let timed = browser.eval_in_extension(&format!(
                "(async () => {{ const t0 = performance.now();
                    const outcome = await chrome.runtime.sendMessage({{type: 'debug.act',
                        tabId: {tab}, action: {{action: 'click', id: {id}}}}});
                    const t1 = performance.now();
                    await chrome.runtime.sendMessage({{type: 'debug.page_state', tabId: {tab}}});
                    return [performance.now() - t0, t1 - t0, outcome.ok]; }})()",
                tab = tab.id
            ));
            assert_eq!(timed[2], true, "the click failed on {path}");
            ours.push(timed[0].as_f64().unwrap_or(f64::NAN));
            acts.push(timed[1].as_f64().unwrap_or(f64::NAN));
            let in_page = format!(
                "(() => {{ const t = performance.now();
                    document.querySelector({}).click();
                    for (const e of document.querySelectorAll('*')) e.getBoundingClientRect();
                    return performance.now() - t; }})()",
                Value::from(selector)
            );
            floor.push(tab.page.eval(&in_page).as_f64().unwrap_or(f64::NAN));
        }
        let (_, ours_ms, _) = stats(&ours[1..]);
        let (_, act_ms, _) = stats(&acts[1..]);
        let (_, floor_ms, _) = stats(&floor[1..]);
        println!(
            "{path:<34} {ours_ms:>9.1} {floor_ms:>9.1} {:>7.0}x {act_ms:>9.1} {:>9} {:>11.1}x",
            ours_ms / floor_ms,
            "<150",
            ANCHOR_SLEEP_MS / ours_ms
        );
    }
    println!(
        "ours: debug.act click + debug.page_state, seen from an extension page (median of {})",
        RUNS - 1
    );
    println!("act: the click alone, including the event-driven wait for the page to settle");
    println!("floor: element.click() + one getBoundingClientRect pass, in-page (median)");
    println!("anchor sleep: the anchor's fixed 1000 ms sleep after every action, / ours");
}

/// The anchor extension sleeps this long after every action, before reading the page.
const ANCHOR_SLEEP_MS: f64 = 1000.0;

const FLOOR: &str = "(() => { const t = performance.now();
    for (const e of document.querySelectorAll('*')) e.getBoundingClientRect();
    return performance.now() - t; })()";

fn timed_page_state(browser: &mut Browser, tab: &Tab) -> (f64, Value) {
    let reply = browser.eval_in_extension(&format!(
        "(async () => {{ const t = performance.now();
            const r = await chrome.runtime.sendMessage({{type: 'debug.page_state', tabId: {}}});
            return [performance.now() - t, r]; }})()",
        tab.id
    ));
    if let Some(error) = reply[1].get("error") {
        panic!("page state failed: {error}");
    }
    (reply[0].as_f64().unwrap_or(f64::NAN), reply[1].clone())
}

/// The rustdoc HTML that ships with the toolchain (`rust-docs` component).
fn rustdoc_html() -> Option<PathBuf> {
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")))?;
    let mut toolchains: Vec<PathBuf> =
        std::fs::read_dir(home.join("toolchains")).ok()?.flatten().map(|e| e.path()).collect();
    toolchains.sort();
    toolchains
        .into_iter()
        .map(|t| t.join("share/doc/rust/html"))
        .find(|html| html.join("std/vec/struct.Vec.html").exists())
}

fn stats(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    (sorted[0], median, sorted[sorted.len() - 1])
}
