//! Recording in the e2e tests: the side panel's Record button and a person acting in the
//! fixture shop with real input events, shared by the recording and record-to-replay tests.

use serde_json::json;

use crate::browser::{Browser, Page, Tab};
use crate::fixtures::FixtureSites;

/// The shop's home page and a side panel driving it, recording.
pub fn start_recording(browser: &mut Browser, sites: &FixtureSites) -> (Tab, Page) {
    start_recording_at(browser, &sites.url("/shop/index.html"))
}

/// A new tab at `url` and a side panel driving it, recording.
pub fn start_recording_at(browser: &mut Browser, url: &str) -> (Tab, Page) {
    let shop = browser.open_tab(url);
    let panel = browser.open_side_panel(&shop);
    // The real side panel sits beside the tab it records, which stays visible; opened as a
    // tab here, the panel goes behind it (Chrome renders no frames for a hidden tab).
    shop.page.call("Page.bringToFront", json!({})).unwrap();
    panel.wait_for(
        "document.querySelector('[data-testid=record-toggle]')?.disabled === false",
        "the Record button to be enabled",
    );
    assert_eq!(panel.text("[data-testid=record-toggle]").trim(), "Record");
    panel.click("[data-testid=record-toggle]");
    panel.wait_for_text("[data-testid=record-status]", "Recording tab");
    assert_eq!(panel.text("[data-testid=record-toggle]").trim(), "Stop");
    (shop, panel)
}

/// Waits until the panel says at least `n` events were captured and the screen after them
/// too: a person looks at what their action did before the next one.
pub fn wait_for_events(panel: &Page, n: u32) {
    panel.wait_for(
        &format!(
            "(s => s && Number(s.dataset.events) >= {n} && s.dataset.settled === 'true')
             (document.querySelector('[data-testid=record-status]'))"
        ),
        &format!("{n} recorded events"),
    );
}

/// A person clicks into the shop's search box and types `query`, each recorded and settled.
pub fn type_search(shop: &Page, panel: &Page, query: &str) {
    shop.click("input[name=q]");
    wait_for_events(panel, 1);
    shop.call("Input.insertText", json!({"text": query})).unwrap();
    wait_for_events(panel, 2);
}

pub fn key(page: &Page, key: &str, code: &str, vk: u32, modifiers: u32) {
    for kind in ["rawKeyDown", "keyUp"] {
        page.call(
            "Input.dispatchKeyEvent",
            json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk,
                   "modifiers": modifiers}),
        )
        .unwrap_or_else(|e| panic!("{key}: {e}"));
    }
}

/// Chooses the next option of the sort `<select>` from the keyboard, as a person can.
pub fn sort_low_to_high(shop: &Page) {
    shop.wait_for("document.getElementById('sort')", "the Sort by select");
    shop.eval("document.getElementById('sort').focus()");
    key(shop, "ArrowDown", "ArrowDown", 40, 0);
    shop.wait_for_text("#count", "sorted by Price: low to high");
}

pub fn stop(panel: &Page) {
    panel.click("[data-testid=record-toggle]");
    panel.wait_for_text("[data-testid=record-status]", "Recording saved");
    assert_eq!(panel.text("[data-testid=record-toggle]").trim(), "Record");
}
