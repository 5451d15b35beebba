//! Driving the agent over the panel's real port protocol from an extension page, and reading
//! what it stored in IndexedDB — what the side panel and the annotation page do, without
//! their UI, for tests that are about the agent rather than the panel.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::Browser;

/// The API key the tests configure; it must never show up in anything stored.
pub const TEST_KEY: &str = "sk-e2e-secret-key-0123456789";

/// Settings for one OpenAI-compatible model at `base_url` (the scripted server) in every role.
pub fn settings(base_url: &str) -> Value {
    let model = json!({"provider": "open_ai", "base_url": format!("{base_url}/v1"),
        "api_key": TEST_KEY, "model": "scripted-model", "timeout_ms": 20000, "max_retries": 0});
    json!({"models": {"planner": model, "navigator": model, "thinking": model},
           "agent": {"thinking_interval": 0}, "prices": {"scripted-model": [1.0, 2.0]}})
}

/// A port to the worker kept in the extension's control page. It reconnects when Chrome
/// stops the worker (the port closes then), as a panel does.
const PORT_JS: &str = r#"
(() => {
  if (window.agent) return true;
  const agent = window.agent = { messages: [], nextId: 1000 };
  const connect = () => {
    agent.port = chrome.runtime.connect({ name: "alphascout.panel" });
    agent.port.onMessage.addListener((m) => agent.messages.push(m));
    agent.port.onDisconnect.addListener(() => {
      agent.messages.push({ type: "disconnected" });
      setTimeout(connect, 200);
    });
  };
  connect();
  return true;
})()
"#;

impl Browser {
    /// Connects the test's port (once) and stores `settings`.
    pub fn configure_agent(&mut self, settings: Value) {
        self.eval_in_extension(PORT_JS);
        let reply = self.agent_request(json!({"type": "save_settings", "settings": settings}));
        assert_eq!(reply["type"], "settings", "settings refused: {reply}");
        assert_eq!(reply["problems"], json!([]), "settings refused: {reply}");
    }

    /// Sends a request over the port and waits for the answer with its id.
    pub fn agent_request(&mut self, mut request: Value) -> Value {
        self.eval_in_extension(PORT_JS);
        let id = self.eval_in_extension("window.agent.nextId++").as_u64().expect("an id");
        request["id"] = json!(id);
        self.eval_in_extension(&format!("window.agent.port.postMessage({request}), true"));
        self.wait_for_message(&format!("answer to {request}"), |m| m["id"] == json!(id))
    }

    /// Every message the port has received so far.
    pub fn agent_messages(&mut self) -> Vec<Value> {
        match self.eval_in_extension("window.agent.messages") {
            Value::Array(messages) => messages,
            other => panic!("no messages: {other}"),
        }
    }

    /// Waits (up to 30 s) for a message that satisfies `test`.
    pub fn wait_for_message(&mut self, what: &str, test: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            if let Some(found) = self.agent_messages().into_iter().find(|m| test(m)) {
                return found;
            }
            if started.elapsed() > Duration::from_secs(30) {
                panic!("no {what}; the port received: {:#?}", self.agent_messages());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the current task's snapshot has `state` (running, paused, done …).
    pub fn wait_for_task(&mut self, state: &str) -> Value {
        let started = Instant::now();
        loop {
            let reply = self.agent_request(json!({"type": "current_task"}));
            if reply["snapshot"]["status"]["state"] == state {
                return reply["snapshot"].clone();
            }
            if started.elapsed() > Duration::from_secs(30) {
                panic!("the task never got {state}: {reply:#}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Everything in the agent's IndexedDB, screenshots as `{type, size, blob}`.
    pub fn stored_runs(&mut self) -> Value {
        self.eval_in_extension(
            r#"(async () => {
              const db = await new Promise((ok, fail) => {
                const open = indexedDB.open("alphascout");
                open.onsuccess = () => ok(open.result);
                open.onerror = () => fail(open.error);
              });
              const all = (name) => new Promise((ok, fail) => {
                const request = db.transaction(name).objectStore(name).getAll();
                request.onsuccess = () => ok(request.result);
                request.onerror = () => fail(request.error);
              });
              const keys = (name) => new Promise((ok) => {
                const request = db.transaction(name).objectStore(name).getAllKeys();
                request.onsuccess = () => ok(request.result);
              });
              const shots = await all("screenshots");
              const result = {
                runs: await all("runs"), steps: await all("steps"), traces: await all("traces"),
                checkpoints: await all("checkpoints"), screenshotKeys: await keys("screenshots"),
                screenshots: shots.map((b) => ({ type: b.type, size: b.size, blob: b instanceof Blob })),
              };
              db.close();
              return result;
            })()"#,
        )
    }
}
