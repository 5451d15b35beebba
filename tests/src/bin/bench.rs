//! Benchmarks that need the real extension in Chromium. Run through `cargo xtask bench …`,
//! which builds a release `dist/` first. Each prints measured figures; none asserts a time.

use e2e::browser::Browser;
use serde_json::Value;

const USAGE: &str = "usage: bench <startup>";

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("startup") => startup(),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
}

/// Cold worker start: stop the worker, wake it with a debug request from an extension page,
/// and read the bootstrap's own timings. The floor is the same request to a running worker.
fn startup() {
    const RUNS: usize = 21;
    let mut browser = Browser::launch();
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
}

fn stats(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    (sorted[0], median, sorted[sorted.len() - 1])
}
