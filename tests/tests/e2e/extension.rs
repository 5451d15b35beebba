//! The built extension as Chrome sees it: id, worker start-up, side-panel behaviour.

use std::time::{Duration, Instant};

use e2e::browser::Browser;
use serde_json::Value;

/// Pinned by the `key` in manifest.json; documented in the README.
const EXTENSION_ID: &str = "cibocdioghpkimbibadndbacnjpdchki";

#[test]
fn the_extension_id_is_pinned_by_the_manifest_key() {
    let browser = Browser::launch();
    assert_eq!(browser.extension_id(), EXTENSION_ID);
}

#[test]
fn clicking_the_toolbar_icon_opens_the_side_panel() {
    let mut browser = Browser::launch();
    // The worker sets the behaviour as it starts; give it until the deadline to do so.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let behavior = browser.eval_in_extension("chrome.sidePanel.getPanelBehavior()");
        if behavior["openPanelOnActionClick"] == Value::Bool(true) {
            break;
        }
        assert!(Instant::now() < deadline, "panel behaviour stayed {behavior}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_worker_reports_its_start_up_timings() {
    let mut browser = Browser::launch();
    let timings =
        browser.eval_in_extension("chrome.runtime.sendMessage({type: 'debug.worker_timings'})");
    let ms = |name: &str| timings[name].as_f64().unwrap_or_else(|| panic!("{name} in {timings}"));
    assert!(ms("listeners_registered_ms") > 0.0);
    assert!(ms("wasm_instantiate_ms") > 0.0);
    assert!(ms("ready_ms") >= ms("listeners_registered_ms") + ms("wasm_instantiate_ms") - 1.0);
    assert!(ms("answered_ms") >= ms("ready_ms"));
}

#[test]
fn an_unknown_debug_request_is_answered_with_an_error() {
    let mut browser = Browser::launch();
    let answer = browser.eval_in_extension("chrome.runtime.sendMessage({type: 'debug.nope'})");
    assert!(answer["error"].as_str().unwrap_or_default().contains("unknown request"), "{answer}");
}
