//! Chromium starts the MCP native host registered in the test's profile when an extension
//! page connects to it, and MCP travels both ways through Chrome's native messaging.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::browser::Browser;
use serde_json::{Value, json};

/// Waits (bounded) until `path` exists or not, as `present` says.
fn wait_for_file(path: &Path, present: bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while path.exists() != present {
        assert!(Instant::now() < deadline, "{} exists: {}", path.display(), !present);
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_browser_starts_the_mcp_host_from_its_profile_and_mcp_flows_through_it() {
    let dir = std::env::temp_dir().join(format!("alphascout-mcp-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut browser = Browser::launch_with(e2e::mcp_host::launch_options(&dir)).unwrap();

    // An extension page connects as the worker does; messages from the host are kept.
    browser.eval_in_extension(
        "globalThis.fromHost = []; \
         globalThis.host = chrome.runtime.connectNative('com.alphascout.mcp'); \
         host.onMessage.addListener(m => fromHost.push(m)); \
         host.onDisconnect.addListener(() => fromHost.push({type: 'disconnected', \
           error: chrome.runtime.lastError && chrome.runtime.lastError.message})); \
         host.postMessage({type: 'hello', version: 'e2e'}); true",
    );
    let socket = dir.join("bridge.sock");
    wait_for_file(&socket, true);

    // A desktop client through `alphascout-mcp stdio` and the host's socket.
    let mut client = Command::new(e2e::mcp_host::binary())
        .arg("stdio")
        .env("ALPHASCOUT_MCP_DIR", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_client = client.stdin.take().unwrap();
    let mut from_client = BufReader::new(client.stdout.take().unwrap()).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e-desk", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(to_client, "{message}").unwrap();
    }
    let initialized: Value = serde_json::from_str(&from_client.next().unwrap().unwrap()).unwrap();
    assert_eq!(initialized["result"]["serverInfo"]["name"], "alphascout");

    // The host told the extension who connected and what it asks, through Chrome.
    let asked = browser.eval_in_extension(
        "new Promise(resolve => { const end = Date.now() + 15000; const seen = () => { \
           if (fromHost.some(m => m.type === 'list_tools') || Date.now() > end) resolve(fromHost); \
           else setTimeout(seen, 20); }; seen(); })",
    );
    // Else say what the host sent and what it logged (its stderr is Chromium's).
    assert!(
        asked.as_array().unwrap().iter().any(|m| m["type"] == "list_tools"),
        "the host sent {asked}; Chromium's log ends:\n{}",
        browser.log_tail()
    );
    let connected = asked.as_array().unwrap().iter().find(|m| m["type"] == "client_connected");
    assert_eq!(connected.unwrap()["name"], "e2e-desk");
    let id =
        asked.as_array().unwrap().iter().find(|m| m["type"] == "list_tools").unwrap()["id"].clone();
    browser.eval_in_extension(&format!(
        "host.postMessage({{type: 'tools', id: {id}, tools: [{{name: 'list_tabs', \
         description: 'Lists the tabs.', inputSchema: {{type: 'object'}}}}]}}); true"
    ));
    let tools: Value = serde_json::from_str(&from_client.next().unwrap().unwrap()).unwrap();
    assert_eq!(tools["id"], 2);
    assert_eq!(tools["result"]["tools"][0]["name"], "list_tabs");

    // The extension lets go: the host exits and takes its socket along.
    browser.eval_in_extension("host.disconnect(); true");
    wait_for_file(&socket, false);
    drop(to_client);
    let _ = client.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
