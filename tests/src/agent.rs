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
        "api_key": "***", "model": "scripted-model", "timeout_ms": 20000, "max_retries": 0});
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
  // A message sent while the worker restarts waits for the new port.
  agent.send = (message) => {
    try { agent.port.postMessage(message); } catch (_) { setTimeout(() => agent.send(message), 100); }
  };
  connect();
  return true;
})()
"#;

impl Browser {
    /// Connects the test's port (once) and stores `settings`.
    pub fn configure_agent(&mut self, settings: Value) {
        self.eval_in_extension(PORT_JS);
        let keys = json!({"planner": TEST_KEY, "navigator": TEST_KEY, "thinking": TEST_KEY});
        let request = json!({"type": "save_settings", "settings": settings, "keys": keys});
        let reply = self.agent_request(request);
        assert_eq!(reply["type"], "settings", "settings refused: {reply}");
        assert_eq!(reply["problems"], json!([]), "settings refused: {reply}");
    }

    /// Sends a request over the port and waits for the answer with its id.
    pub fn agent_request(&mut self, request: Value) -> Value {
        let id = self.agent_send(request.clone());
        self.wait_for_message(&format!("answer to {request}"), |m| m["id"] == json!(id))
    }

    /// Sends a request over the port without waiting for its answer, for a request that is
    /// answered when its work ends (a pipeline run); returns the id the answer will carry.
    pub fn agent_send(&mut self, mut request: Value) -> u64 {
        self.eval_in_extension(PORT_JS);
        let id = self.eval_in_extension("window.agent.nextId++").as_u64().expect("an id");
        request["id"] = json!(id);
        self.eval_in_extension(&format!("window.agent.send({request}), true"));
        id
    }

    /// Kills the extension's worker once, as when Chrome stops it mid-work, and returns once
    /// the test's port has lost it. Unlike [`Browser::stop_extension_worker`] it does not keep
    /// it stopped: open panels reconnect at once and so start a fresh worker, as in Chrome.
    pub fn kill_extension_worker(&mut self) {
        self.eval_in_extension(PORT_JS);
        const LOST: &str = "window.agent.messages.filter(m => m.type === 'disconnected').length";
        let before = self.eval_in_extension(LOST);
        let worker = self.worker_target().expect("the extension's worker runs");
        self.call("Target.closeTarget", json!({"targetId": worker}))
            .unwrap_or_else(|e| panic!("closing the worker: {e}"));
        let started = Instant::now();
        while self.eval_in_extension(LOST) == before {
            assert!(started.elapsed() < Duration::from_secs(10), "the worker did not stop");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every message the port has received so far.
    pub fn agent_messages(&mut self) -> Vec<Value> {
        match self.eval_in_extension("window.agent.messages") {
            Value::Array(messages) => messages,
            other => panic!("no messages: {other}"),
        }
    }

    /// Forgets the messages the port received so far, so that waits look only at what
    /// comes next (a benchmark's runs, each of which adds hundreds).
    pub fn forget_agent_messages(&mut self) {
        self.eval_in_extension(PORT_JS);
        self.eval_in_extension("window.agent.messages.length = 0, true");
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

    /// Waits (up to 60 s) until the current task is no longer running, and says how it
    /// stands: done, paused, failed or cancelled.
    pub fn wait_for_task_to_stop(&mut self) -> String {
        let started = Instant::now();
        loop {
            let reply = self.agent_request(json!({"type": "current_task"}));
            let state = reply["snapshot"]["status"]["state"].as_str().unwrap_or("").to_owned();
            if !state.is_empty() && state != "running" {
                return state;
            }
            if started.elapsed() > Duration::from_secs(60) {
                panic!("the task never stopped: {reply:#}");
            }
            std::thread::sleep(Duration::from_millis(100));
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

/// Scripted answers in the shapes of the three agents' schemas.
pub mod replies {
    use serde_json::{Value, json};

    use crate::llm::Reply;

    /// The Planner: done or not, with its next steps and (when done) its answer.
    pub fn plan(done: bool, steps: &str, answer: &str) -> Reply {
        Reply::json(json!({
            "observation": if done { "The kettle's page shows its price" } else { "The shop lists three products" },
            "challenges": "", "done": done, "next_steps": steps, "final_answer": answer,
            "reasoning": "The price is on the product page.", "web_task": true, "ask_user": ""
        }))
    }

    /// The Navigator: its reflection and `actions`.
    pub fn navigate(evaluation: &str, goal: &str, actions: Value) -> Reply {
        Reply::json(navigator(evaluation, "Kettle listed at €39.00", goal, actions))
    }

    /// The Navigator done: "Report the price" with the `answer` it found.
    pub fn report(evaluation: &str, answer: &str) -> Reply {
        navigate(evaluation, "Report the price", json!([{"action": "done", "text": answer}]))
    }

    /// The Navigator asking for the user (`need`) instead of acting.
    pub fn navigator_asks(need: &str) -> Reply {
        let mut answer =
            navigator("Success: the products are listed", "", "Ask the user", json!([]));
        answer["ask_user"] = json!(need);
        Reply::json(answer)
    }

    /// A Navigator answer: the three thoughts in the first person, then the fields the
    /// engine acts on.
    fn navigator(evaluation: &str, memory: &str, goal: &str, actions: Value) -> Value {
        json!({
            "current_state": {
                "evaluation_previous_goal": evaluation,
                "thought_changed": format!("I checked my last step: {evaluation}"),
                "thought_state": "I see the shop's products, I need the one the task names, but I have not opened it yet",
                "thought_next": format!("I will {}", goal.to_lowercase()),
                "extended_thoughts": [],
                "decision": "proceed",
                "memory": memory,
                "next_goal": goal
            },
            "ask_user": "",
            "actions": actions
        })
    }

    /// The ThinkingAgent at the entry gate or a review: re-plan or let the Navigator go on
    /// (with `instructions`), or ask `question` (when not empty).
    pub fn decide(replan: bool, question: &str, instructions: &str) -> Reply {
        Reply::json(json!({
            "approved": false, "replan": replan, "missing_pieces": "",
            "instructions_for_planner": instructions, "instructions_for_navigator": instructions,
            "should_pause_for_user": !question.is_empty(), "question_for_user": question,
            "final_answer": ""
        }))
    }

    /// The ThinkingAgent: approve with `answer`, or ask `question` (when not empty).
    pub fn verdict(approved: bool, question: &str, answer: &str) -> Reply {
        Reply::json(json!({
            "approved": approved, "replan": true,
            "missing_pieces": if approved { "" } else { "stock information" },
            "instructions_for_planner": "", "instructions_for_navigator": "",
            "should_pause_for_user": !question.is_empty(), "question_for_user": question,
            "final_answer": answer
        }))
    }
}

impl crate::browser::Page {
    /// Types `text` into the panel's chat box and presses Enter.
    pub fn send_message(&self, text: &str) {
        self.type_into("[data-testid=chat-input]", text);
        self.press_enter();
    }

    /// Waits until the panel's status shows `state`.
    pub fn wait_for_status(&self, state: &str) {
        self.wait_for(
            &format!("document.querySelector('[data-testid=status]')?.dataset.state === '{state}'"),
            &format!("status {state}"),
        );
    }
}

/// A model that reasons from what it is sent, for tasks whose answer the page holds: it
/// finds the page state in the prompt and decides from that alone, as a model would.
pub mod reader {
    use serde_json::{Value, json};

    use crate::llm::Reply;

    /// Which agent a prompt is for.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum Asker {
        Planner,
        Navigator,
        Thinking,
    }

    pub fn asker(prompt: &str) -> Asker {
        let kinds =
            [("You are the Navigator", Asker::Navigator), ("You are the Planner", Asker::Planner)];
        crate::llm::kind_by_opening(prompt, &kinds, Asker::Thinking)
    }

    /// The page state inside a Navigator prompt.
    pub fn page_state(prompt: &str) -> &str {
        let start = prompt.find("The page now:\n").map_or(0, |i| i + "The page now:\n".len());
        let rest = &prompt[start..];
        // The state sits in the untrusted-page wrapper or runs to the reflection rules (page
        // text that starts a line so is escaped).
        let end = rest.find("\nReflect, then act").unwrap_or(rest.len());
        &rest[..end]
    }

    /// The id of the first element line whose name or attributes contain `text`.
    pub fn id_of(state: &str, text: &str) -> Option<u64> {
        state.lines().find_map(|line| {
            let line = line.strip_prefix('+').unwrap_or(line);
            let rest = line.strip_prefix('[')?;
            let (id, element) = rest.split_once(']')?;
            element.contains(text).then(|| id.parse().ok()).flatten()
        })
    }

    /// The lines of page text (not elements).
    pub fn text_lines(state: &str) -> Vec<&str> {
        state.lines().filter(|l| !l.starts_with('[') && !l.starts_with("+[")).collect()
    }

    pub fn plan(steps: &str) -> Reply {
        Reply::json(json!({"observation": "The page is open", "challenges": "", "done": false,
            "next_steps": steps, "final_answer": "", "reasoning": "Read the page, then act.",
            "web_task": true, "ask_user": ""}))
    }

    pub fn plan_done(answer: &str) -> Reply {
        Reply::json(json!({"observation": "The Navigator reported the task finished",
            "challenges": "", "done": true, "next_steps": "", "final_answer": answer,
            "reasoning": "Nothing is left to do.", "web_task": true, "ask_user": ""}))
    }

    pub fn act(goal: &str, actions: Value) -> Reply {
        Reply::json(json!({"current_state": {"evaluation_previous_goal": "Success",
            "thought_changed": "I see my last action worked",
            "thought_state": "I see the page I need, but the task is not finished",
            "thought_next": format!("I will {}", goal.to_lowercase()),
            "extended_thoughts": [], "decision": "proceed",
            "memory": "", "next_goal": goal}, "ask_user": "", "actions": actions}))
    }

    pub fn approve(answer: &str) -> Reply {
        Reply::json(json!({"approved": true, "replan": true, "missing_pieces": "",
            "instructions_for_planner": "", "instructions_for_navigator": "",
            "should_pause_for_user": false, "question_for_user": "", "final_answer": answer}))
    }
}
