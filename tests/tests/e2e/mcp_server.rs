//! Other agents driving AlphaScout through its MCP server, in real Chromium over the real
//! worker: Settings' "Allow MCP clients", the worker's native messaging to the host
//! `alphascout-mcp`, and what the side panel shows of it.

use e2e::agent::{TEST_KEY, settings};
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::json;

fn keys() -> serde_json::Value {
    json!({"planner": TEST_KEY, "navigator": TEST_KEY, "thinking": TEST_KEY})
}

/// Without the host installed, switching MCP clients on says what to do in Settings; off,
/// it says no client can reach AlphaScout.
#[test]
fn settings_says_when_the_mcp_host_is_not_installed() {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let llm = ScriptedLlm::responding(|_| Reply::json(json!({})));
    let saved = browser.agent_request(
        json!({"type": "save_settings", "settings": settings(llm.base_url()), "keys": keys()}),
    );
    assert_eq!(saved["problems"], json!([]), "{saved}");
    let tab = browser.open_tab(&sites.url("/shop/product.html?sku=kettle"));
    let panel = browser.open_side_panel(&tab);
    panel.click("[data-testid=settings-toggle]");
    panel
        .wait_for_text("[data-testid=mcp-host-status]", "Off: no MCP client can reach AlphaScout.");
    panel.wait_for(
        "document.querySelector('[data-testid=settings-allow-mcp-clients]')?.checked === false",
        "off by default",
    );

    // Switched on and saved: Chrome finds no host, and Settings says what to do.
    panel.click("[data-testid=settings-allow-mcp-clients]");
    panel.click("[data-testid=settings-save]");
    panel.wait_for_text(
        "[data-testid=mcp-host-status]",
        "The MCP host is not installed: run `cargo xtask mcp install`.",
    );
    panel.eval(
        "document.querySelector('[data-testid=settings-mcp-clients]').scrollIntoView(), true",
    );
    panel.screenshot(
        &e2e::workspace_root().join("target/tmp/screenshots/mcp-clients-not-installed.png"),
    );

    // Off again.
    panel.click("[data-testid=settings-allow-mcp-clients]");
    panel.click("[data-testid=settings-save]");
    panel
        .wait_for_text("[data-testid=mcp-host-status]", "Off: no MCP client can reach AlphaScout.");
    let stored = browser.agent_request(json!({"type": "get_settings"}));
    assert_eq!(stored["settings"]["allow_mcp_clients"], json!(false), "{stored}");
}
