//! Captures the extension's pages as PNGs under `target/screenshots/`, at side-panel width
//! in light and dark mode, for a person to look at. `cargo run -p e2e --bin screenshots`
//! (after `cargo xtask dist`).

use e2e::browser::{Browser, Page};
use e2e::fixtures::FixtureSites;
use serde_json::json;

fn main() {
    let out = e2e::workspace_root().join("target/screenshots");
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let panel = browser.open_side_panel(&shop);
    panel.wait_for_text("[data-testid=worker-link]", "Agent ready");
    panel.click("[data-testid=read-title]");
    panel.wait_for_text("[data-testid=page-title]", "Fixture");
    panel.type_into("[data-testid=command-input]", "/state");
    panel.press_enter();
    panel.wait_for_text("[data-testid=page-state]", "Steel kettle");
    for scheme in ["light", "dark"] {
        narrow(&panel, 360, scheme);
        let path = out.join(format!("side-panel-state-{scheme}.png"));
        panel.screenshot(&path);
        println!("{}", path.display());
    }
}

/// Emulates a side panel: `width` CSS pixels wide, in the given colour scheme.
fn narrow(page: &Page, width: u32, scheme: &str) {
    let metrics = json!({"width": width, "height": 640, "deviceScaleFactor": 1, "mobile": false});
    page.call("Emulation.setDeviceMetricsOverride", metrics).expect("viewport");
    let media = json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]});
    page.call("Emulation.setEmulatedMedia", media).expect("colour scheme");
}
