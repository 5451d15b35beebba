//! The fixture shop's recorded workflow, shared by the Workflows e2e tests and `bench
//! workflow`: a stopped recording made in the real browser (page states, screenshots and
//! element descriptions taken as the recorder takes them, the actions carried out through
//! the worker), the scripted reflection, and a model that replays by reading its prompt.
//!
//! The recording: on the shop's home page type "coffee" into the search box and press Enter;
//! on the results sort by "Price: low to high" and read the cheapest product; open it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::{Browser, Tab};
use crate::fixtures::FixtureSites;
use crate::llm::Reply;

pub const RECORDING_ID: &str = "rec-shop";
/// What the recording searched for.
pub const RECORDED_QUERY: &str = "coffee";

/// Stores a screenshot of `tab` (taken by the worker) in `screenshots` under its SHA-256,
/// as the recorder does, and returns the key.
const SHOT_JS: &str = r#"
(async (tabId) => {
  const shot = await chrome.runtime.sendMessage({ type: "debug.screenshot", tabId });
  if (shot.error) throw new Error(shot.error);
  const bytes = Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const key = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const db = await new Promise((ok, fail) => {
    const open = indexedDB.open("alphascout");
    open.onsuccess = () => ok(open.result);
    open.onerror = () => fail(open.error);
  });
  await new Promise((ok, fail) => {
    const tx = db.transaction("screenshots", "readwrite");
    tx.objectStore("screenshots").put(new Blob([bytes], { type: "image/jpeg" }), key);
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
  });
  db.close();
  return key;
})"#;

/// Puts `record` in `store` (in-line keys) from an extension page.
pub fn put(browser: &mut Browser, store: &str, record: &Value) {
    let stored = browser.eval_in_extension(&format!(
        r#"(async () => {{
          {open_db}
          await new Promise((ok, fail) => {{
            const tx = db.transaction({store:?}, "readwrite");
            tx.objectStore({store:?}).put({record});
            tx.oncomplete = ok;
            tx.onerror = () => fail(tx.error);
          }});
          db.close();
          return true;
        }})()"#,
        open_db = crate::OPEN_DB,
    ));
    assert_eq!(stored, json!(true), "storing in {store}");
}

/// Every record of `store`.
pub fn all(browser: &mut Browser, store: &str) -> Vec<Value> {
    let found = browser.eval_in_extension(&crate::all_records_js(store));
    found.as_array().cloned().unwrap_or_default()
}

/// The recorder's description of a page-state element.
fn descriptor(element: &Value) -> Value {
    json!({"tag": element["tag"], "role": element["role"], "name": element["text"],
        "inputType": element["type"], "nameAttr": element["name"],
        "placeholder": element["placeholder"], "href": element["href"], "selector": "",
        "stateId": element["id"], "box": [0, 0, 0, 0], "secret": false})
}

fn element<'a>(state: &'a Value, test: impl Fn(&Value) -> bool, what: &str) -> &'a Value {
    state["elements"]
        .as_array()
        .and_then(|elements| elements.iter().find(|e| test(e)))
        .unwrap_or_else(|| panic!("no {what} in {}", state["text"]))
}

/// Waits until `tab` shows a page whose URL contains `part`.
pub fn wait_for_url(tab: &Tab, part: &str) {
    let started = Instant::now();
    loop {
        let url = tab.page.eval("location.href");
        if url.as_str().is_some_and(|u| u.contains(part))
            && tab.page.eval("document.readyState") == json!("complete")
        {
            return;
        }
        if started.elapsed() > Duration::from_secs(15) {
            panic!("the tab never reached {part}: it shows {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Records the shop workflow in a new tab and stores it as a stopped recording, with its
/// screenshots. Returns the tab (left on the product page).
pub fn seed_recording(browser: &mut Browser, sites: &FixtureSites) -> Tab {
    let start = sites.url("/shop/index.html");
    let tab = browser.open_tab(&start);
    let shot = |browser: &mut Browser, tab: &Tab| -> String {
        let key = browser.eval_in_extension(&format!("{SHOT_JS}({})", tab.id));
        key.as_str().expect("a screenshot key").to_owned()
    };
    let mut steps = Vec::new();
    let mut step = |action: Value, state: &Value, shot: String| {
        let index = steps.len();
        let (url, title) = (tab.page.eval("location.href"), tab.page.eval("document.title"));
        steps.push(json!({"index": index, "atMs": 1000.0 * index as f64, "tabId": tab.id,
            "url": url, "title": title, "screenshot": shot, "pageState": state["text"],
            "action": action}));
    };

    // 0: type the query.
    let state = browser.page_state(&tab);
    let search = element(&state, |e| e["placeholder"] == "Search products", "search box").clone();
    let key = shot(browser, &tab);
    let action = json!({"type": "type", "target": descriptor(&search), "text": RECORDED_QUERY});
    step(action, &state, key);
    let done =
        browser.act(&tab, json!({"action": "type", "id": search["id"], "text": RECORDED_QUERY}));
    assert_eq!(done["ok"], true, "{done}");

    // 1: press Enter.
    let state = browser.page_state(&tab);
    let key = shot(browser, &tab);
    let action = json!({"type": "key", "key": "Enter", "target": descriptor(&search)});
    step(action, &state, key);
    browser.act(&tab, json!({"action": "send_keys", "keys": "Enter"}));
    wait_for_url(&tab, "search.html");

    // 2: sort by price.
    let state = browser.page_state(&tab);
    let sort = element(&state, |e| e["tag"] == "select", "sort select").clone();
    let key = shot(browser, &tab);
    let action =
        json!({"type": "select", "target": descriptor(&sort), "option": "Price: low to high"});
    step(action, &state, key);
    let done = browser.act(
        &tab,
        json!({"action": "select_option", "id": sort["id"], "option": "Price: low to high"}),
    );
    assert_eq!(done["ok"], true, "{done}");

    // 3: read the cheapest product (an extract the user marked).
    let state = browser.page_state(&tab);
    let key = shot(browser, &tab);
    let action =
        json!({"type": "extract", "query": "the cheapest product's name", "candidates": []});
    step(action, &state, key);

    // 4: open it.
    let link = element(&state, |e| e["text"] == "Coffee scale", "Coffee scale link").clone();
    let key = shot(browser, &tab);
    step(json!({"type": "click", "target": descriptor(&link)}), &state, key);
    browser.act(&tab, json!({"action": "click", "id": link["id"]}));
    wait_for_url(&tab, "product.html");

    let end_state = browser.page_state(&tab);
    let end = shot(browser, &tab);
    let recording = json!({"id": RECORDING_ID, "name": "Cheapest coffee product",
        "createdAt": "2026-11-24T20:00:00.000Z", "startUrl": start, "endScreenshot": end,
        "endPageState": end_state["text"], "steps": steps, "status": "stopped",
        "tabId": tab.id});
    put(browser, "recordings", &recording);
    tab
}

/// Pass A's scripted answers, one per recorded step.
pub fn reflect_step_replies() -> Vec<Reply> {
    let step = |state: &str, intent: &str, target: &str, after: &str, value: &str| {
        Reply::json(json!({"expected_current_state": state, "intent": intent, "target": target,
            "post_action": after, "action_value": value}))
    };
    vec![
        step(
            "The shop's home page",
            "Search for the product",
            "the search box at the top",
            "The box holds the query",
            RECORDED_QUERY,
        ),
        step("The query is typed", "Run the search", "", "The results are listed", "Enter"),
        step(
            "Results for the query",
            "Show the cheapest first",
            "the Sort by list",
            "Sorted by price, low to high",
            "Price: low to high",
        ),
        step(
            "Results sorted by price",
            "Read the cheapest product",
            "",
            "The cheapest product is known",
            "the cheapest product's name",
        ),
        step("Results sorted by price", "Open the cheapest product", "its link", "Its page", ""),
    ]
}

/// Pass B's three subtasks of the shop's story: search for `{query}`, read the cheapest,
/// open it (after `open_depends_on`).
pub fn shop_subtasks(open_depends_on: &[&str]) -> Value {
    json!([
        {"id": "search", "text": "Search for {query}",
         "expected_outcome": "Results for {query} are listed", "depends_on": []},
        {"id": "cheapest", "text": "Sort by price and read the cheapest product",
         "expected_outcome": "The cheapest product's name is known", "depends_on": []},
        {"id": "open", "text": "Open the cheapest product",
         "expected_outcome": "The cheapest product's page is open", "depends_on": open_depends_on}
    ])
}

/// Pass B's scripted answer: a `{query}` parameter, three subtasks, an extract `cheapest`.
/// No dependency: the test adds it on the Workflows page.
pub fn reflect_task_reply() -> Reply {
    shop_reflection(RECORDED_QUERY, &[], shop_steps(0))
}

/// Pass B's answer for a shop recording: search for `{query}` (`example` when recorded),
/// sort, open the cheapest (after `open_depends_on`), with `steps`.
pub fn shop_reflection(example: &str, open_depends_on: &[&str], steps: Vec<Value>) -> Reply {
    Reply::json(json!({
        "task_name": "Open the cheapest product",
        "detailed_task_description": "Search the shop for {query}, sort by price and open the cheapest.",
        "task_params": [{"name": "query", "description": "What to search for", "example": example}],
        "subtasks": shop_subtasks(open_depends_on),
        "steps": steps
    }))
}

/// Pass B's steps for the shop's search, sort and open, numbered from `first` (a recording
/// that clicked into the search box first has that step before them).
pub fn shop_steps(first: u64) -> Vec<Value> {
    let steps = [
        ("search", "{query}", ""),
        ("search", "Enter", ""),
        ("cheapest", "Price: low to high", ""),
        ("cheapest", "the cheapest product's name", "cheapest"),
        ("open", "", ""),
    ];
    let step = |((subtask, value, variable), index)| json!({"index": index, "subtask": subtask, "action_value": value, "variable": variable});
    steps.into_iter().zip(first..).map(step).collect()
}

/// Which prompt a request carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prompt {
    ReflectStep,
    ReflectTask,
    Replay,
    Other,
}

pub fn prompt_kind(prompt: &str) -> Prompt {
    let kinds = [
        ("You replay a workflow", Prompt::Replay),
        ("You explain one step", Prompt::ReflectStep),
        ("You turn a task a user recorded", Prompt::ReflectTask),
    ];
    crate::llm::kind_by_opening(prompt, &kinds, Prompt::Other)
}

/// The text between `start` and `end` in `prompt`.
fn section<'a>(prompt: &'a str, start: &str, end: &str) -> &'a str {
    let from = prompt.find(start).map_or(prompt.len(), |i| i + start.len());
    let rest = &prompt[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The page state's element lines `[id]<tag …>name` with their id, tag line and name.
fn elements(state: &str) -> Vec<(u64, &str)> {
    state
        .lines()
        .filter_map(|line| {
            let line = line.trim_start_matches('+');
            let (id, rest) = line.strip_prefix('[')?.split_once(']')?;
            Some((id.parse().ok()?, rest))
        })
        .collect()
}

fn answer(thought: &str, action: Value, extracted: Value) -> Reply {
    Reply::json(json!({"thought_changed": "I look at the page", "thought_state": thought,
        "thought_next": thought, "observation": thought, "memory": "", "extracted": extracted,
        "action": action}))
}

/// A replay model that decides from its prompt alone, as a model would: the subtask, its
/// parameters, the upstream values it depends on, its history and the page state.
pub fn replay_reply(prompt: &str) -> Reply {
    let subtask = section(prompt, "Subtask ", "Expected outcome");
    let params = section(prompt, "(the user's values for this run):\n", "\n\n");
    let query = params
        .lines()
        .find_map(|l| l.strip_prefix("query = ").or_else(|| l.strip_prefix("product = ")))
        .unwrap_or_default()
        .to_owned();
    let history = section(
        prompt,
        "Your recent steps in this subtask (action and its outcome):\n",
        "\n\nThis is step",
    );
    let first = history.starts_with("(none");
    let state = section(prompt, "The page now:\n", "\n\nAnswer with:");
    let url = state.lines().find(|l| l.contains("http")).unwrap_or_default();
    let done = |text: &str, extracted: Value| {
        answer(text, json!({"action": "done", "text": text, "success": true}), extracted)
    };
    // The subtask cannot go on: done, unsuccessfully, saying why.
    let give_up = |thought: &str, why: &str| {
        answer(thought, json!({"action": "done", "text": why, "success": false}), json!([]))
    };
    let found = elements(state);
    let id_of =
        |test: &dyn Fn(&str) -> bool| found.iter().find(|(_, e)| test(e)).map(|(id, _)| *id);
    if subtask.contains("Search for") {
        if url.contains("search.html") {
            return done("The results are listed", json!([]));
        }
        if first {
            let Some(id) = id_of(&|e| e.contains("Search products") && e.starts_with("<input"))
            else {
                return give_up("no box", "No search box");
            };
            return answer(
                "Type the query",
                json!({"action": "type", "id": id, "text": query}),
                json!([]),
            );
        }
        return answer(
            "Run the search",
            json!({"action": "send_keys", "keys": "Enter"}),
            json!([]),
        );
    }
    if subtask.contains("read the cheapest") {
        if !state.contains("sorted by Price: low to high") {
            let Some(id) = id_of(&|e| e.starts_with("<select")) else {
                return give_up("no sort", "No sort");
            };
            return answer(
                "Sort by price",
                json!({"action": "select_option", "id": id, "option": "Price: low to high"}),
                json!([]),
            );
        }
        // The first product link in the sorted list is the cheapest.
        let cheapest = found
            .iter()
            .find(|(_, e)| e.contains("product.html?sku="))
            .and_then(|(_, e)| e.rsplit_once('>').map(|(_, name)| name.to_owned()))
            .unwrap_or_default();
        return done("Read the cheapest", json!([{"variable": "cheapest", "value": cheapest}]));
    }
    if subtask.contains("Open the cheapest") {
        let upstream = section(prompt, "<extracted_values>", "</extracted_values>");
        let name = upstream
            .lines()
            .find_map(|l| l.trim().strip_prefix("cheapest = "))
            .unwrap_or_default()
            .trim()
            .to_owned();
        if url.contains("product.html") {
            return done("The product page is open", json!([]));
        }
        if name.is_empty() {
            return give_up("unknown", "I do not know which product is the cheapest");
        }
        let Some(id) = id_of(&|e| e.ends_with(&format!(">{name}")) && e.contains("href")) else {
            return give_up("missing", &format!("No link {name:?}"));
        };
        return answer("Open it", json!({"action": "click", "id": id}), json!([]));
    }
    give_up("lost", "Unknown subtask")
}

/// Saves version 2 of the reflected workflow with the dependency a person adds on the
/// Workflows page (the "open" subtask needs `cheapest`), for tests and benchmarks about
/// replay rather than editing. Returns version 2.
pub fn save_with_dependency(browser: &mut Browser, workflow_id: &str) -> Value {
    let stored = all(browser, "workflows");
    let mut v2 = stored.iter().find(|w| w["id"] == workflow_id).expect("reflected").clone();
    v2["version"] = json!(2);
    v2["subtasks"][2]["dependsOn"] = json!(["cheapest"]);
    put(browser, "workflows", &v2);
    v2
}

/// Reflects the seeded recording over the test's port; the new workflow's id.
pub fn reflect(browser: &mut Browser) -> String {
    reflect_recording(browser, RECORDING_ID)
}

/// Reflects the stopped recording `recording_id` and waits for the workflow's id.
pub fn reflect_recording(browser: &mut Browser, recording_id: &str) -> String {
    let asked =
        browser.agent_request(json!({"type": "reflect_recording", "recording_id": recording_id}));
    assert_eq!(asked["type"], "done", "{asked}");
    let done = browser.wait_for_message("the reflection's end", |m| {
        m["type"] == "reflection"
            && ["done", "failed"].contains(&m["progress"]["stage"].as_str().unwrap_or(""))
    });
    assert_eq!(done["progress"]["stage"], "done", "{done}");
    done["progress"]["workflow_id"].as_str().expect("a workflow id").to_owned()
}

/// Waits (up to 60 s) for the current replay to satisfy `test`.
pub fn wait_for_replay(browser: &mut Browser, what: &str, test: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let reply = browser.agent_request(json!({"type": "current_replay"}));
        if reply["replay"].is_object() && test(&reply["replay"]) {
            return reply["replay"].clone();
        }
        if started.elapsed() > Duration::from_secs(60) {
            panic!("no replay {what}: {reply:#}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
