//! Captures the side panel as PNGs under `target/screenshots/`, 360 px wide in light and dark
//! mode, in each state a person meets — idle, running, paused by them, paused with the agent's
//! question, done, failed — plus the settings view and the `/state` tool, for a person to look
//! at. `cargo run -p e2e --bin screenshots` (after `cargo xtask dist`).

use std::path::Path;
use std::time::Duration;

use e2e::agent::replies::{decide, navigate, plan, verdict};
use e2e::agent::settings;
use e2e::browser::{Browser, Page};
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::json;

fn main() {
    let out = e2e::workspace_root().join("target/screenshots");
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let kettle = e2e::listed(&browser.page_state(&shop), "Steel kettle").unwrap()["id"].clone();
    let llm = ScriptedLlm::start([]);
    browser.configure_agent(settings(llm.base_url()));
    let favourites = json!([
        {"id": "f1", "title": "Kettle price", "prompt": "What does the steel kettle cost?"},
        {"id": "f2", "title": "Compare grinders", "prompt": "Compare the burr grinders by price and rating."},
    ]);
    browser.agent_request(json!({"type": "save_favourites", "favourites": favourites}));
    let panel = browser.open_side_panel(&shop);
    panel.wait_for_text("[data-testid=worker-link]", "Agent ready");
    let shoot = |name: &str| capture(&panel, &out, name);
    panel.wait_for("document.querySelector('[data-testid=favourite]')", "the quick-start prompts");
    shoot("idle");

    // Running: the Navigator's answer is slow, so the step is under way when captured.
    llm.push(plan(false, "1. Open the Steel kettle page\n2. Read its price", ""));
    llm.push(
        navigate(
            "Start: the shop's home page",
            "Open the kettle's page; I expect its price",
            json!([{"action": "click", "id": kettle}]),
        )
        .after(Duration::from_secs(2)),
    );
    panel.send_message("What does the steel kettle cost, and is it in stock?");
    panel.wait_for_status("running");
    std::thread::sleep(Duration::from_millis(600));
    shoot("running");

    // Paused by the user, mid-step.
    panel.click("[data-testid=pause]");
    panel.wait_for_status("paused");
    shoot("paused-by-user");

    // Steering, then the agent asks a question.
    llm.push(plan(false, "1. Read the kettle's price\n2. Find stock information", ""));
    llm.push(navigate(
        "Success: the kettle's page is open",
        "Report what the page shows",
        json!([{"action": "done", "text": "€39.00; no stock shown"}]),
    ));
    llm.push(verdict(false, "The page shows no stock information. Should I check the help page, or is the price enough?", ""));
    panel.send_message("Prices in euros, please");
    panel.wait_for(
        "document.querySelector('[data-testid=paused-banner]')?.dataset.reason === 'question'",
        "the question",
    );
    shoot("paused-question");

    // Answered: the answer reaches the ThinkingAgent first, then done, with the final answer.
    llm.push(decide(true, "", "The user wants the price only"));
    llm.push(plan(true, "", "€39.00"));
    llm.push(verdict(true, "", "The **Steel kettle** costs **€39.00**.\n\n- Stock: not shown on the product page\n- Source: Fixture Shop product page"));
    panel.send_message("The price is enough");
    panel.wait_for_status("done");
    shoot("done");

    // A follow-up whose provider refuses the key: the task pauses with what to fix.
    llm.push(Reply::error(401, "Incorrect API key provided"));
    panel.send_message("And the grinder?");
    panel.wait_for_status("paused");
    shoot("paused-error");
    panel.click("[data-testid=stop]");
    panel.wait_for_status("cancelled");

    // Failed: the tab closes under the agent.
    panel.click("[data-testid=new-chat]");
    llm.push(plan(false, "1. Look around", "").after(Duration::from_secs(1)));
    panel.send_message("Find the cheapest product");
    panel.wait_for_status("running");
    shop.page.call("Page.close", json!({})).expect("closing the tab");
    panel.wait_for_status("failed");
    shoot("failed");

    panel.click("[data-testid=history-toggle]");
    panel.wait_for("document.querySelector('[data-testid=session]')", "the history");
    shoot("history");
    panel.click("[data-testid=history-close]");

    panel.click("[data-testid=settings-toggle]");
    panel.wait_for("document.querySelector('[data-testid=settings]')", "settings");
    panel.eval("document.querySelector('[data-testid=settings-save]').click(); true");
    shoot("settings");

    panel.click("[data-testid=settings-close]");
    panel.type_into("[data-testid=chat-input]", "/state");
    panel.press_enter();
    let _ = panel.eval("true");
}

fn capture(panel: &Page, out: &Path, name: &str) {
    for scheme in ["light", "dark"] {
        narrow(panel, 360, scheme);
        std::thread::sleep(Duration::from_millis(150));
        let path = out.join(format!("side-panel-{name}-{scheme}.png"));
        panel.screenshot(&path);
        println!("{}", path.display());
    }
}

/// Emulates a side panel: `width` CSS pixels wide, in the given colour scheme.
fn narrow(page: &Page, width: u32, scheme: &str) {
    let metrics = json!({"width": width, "height": 720, "deviceScaleFactor": 1, "mobile": false});
    page.call("Emulation.setDeviceMetricsOverride", metrics).expect("viewport");
    let media = json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]});
    page.call("Emulation.setEmulatedMedia", media).expect("colour scheme");
}
