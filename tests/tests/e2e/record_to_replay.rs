//! Seed 004 in one story, in real Chromium with the scripted model: a person records a task
//! on the fixture shop with the side panel's Record button (a search, Enter, a select, Ctrl+I
//! Extract and Details), the recording is reflected into a workflow with a `{query}`
//! parameter, and the workflow is replayed with another value: the tab reaches the product
//! the new search makes cheapest, and the extract holds its name.

use e2e::agent::settings;
use e2e::llm::{Reply, ScriptedLlm};
use e2e::recording::{key, sort_low_to_high, start_recording, stop, type_search, wait_for_events};
use e2e::workflows::{self, Prompt, prompt_kind};
use serde_json::json;

/// The kinds of the stored recording's steps, in order.
fn step_kinds(stored: &serde_json::Value) -> Vec<&str> {
    let steps = stored["recording"]["steps"].as_array().expect("a recording's steps");
    steps.iter().map(|s| s["action"]["type"].as_str().unwrap()).collect()
}

/// Pass A for any recorded step: what a model says of a step it sees.
fn pass_a(prompt: &str) -> Reply {
    let action = prompt.lines().find(|l| l.starts_with("The action:")).unwrap_or("the action");
    Reply::json(json!({"expected_current_state": "The shop", "intent": action,
        "target": "", "post_action": "The page after it", "action_value": ""}))
}

/// Pass B for the six recorded steps: the query is the parameter, the cheapest product's
/// name an extract the last subtask depends on.
fn pass_b() -> Reply {
    let click_into_search =
        json!({"index": 0, "subtask": "search", "action_value": "", "variable": ""});
    let steps = std::iter::once(click_into_search).chain(workflows::shop_steps(1)).collect();
    workflows::shop_reflection("coffee", &["cheapest"], steps)
}

#[test]
fn a_recorded_task_is_reflected_and_replayed_with_another_value() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let llm = ScriptedLlm::responding(|prompt| match prompt_kind(prompt) {
        Prompt::ReflectStep => pass_a(prompt),
        Prompt::ReflectTask => pass_b(),
        Prompt::Replay => workflows::replay_reply(prompt),
        Prompt::Other => Reply::error(400, "not a workflow prompt"),
    });
    browser.configure_agent(settings(llm.base_url()));

    // Record, as a person does it.
    let (shop, panel) = start_recording(&mut browser, &sites);
    let first_title = shop.page.eval("document.title");
    type_search(&shop.page, &panel, "coffee");
    shop.page.press_enter();
    shop.page.wait_for_text("#count", "3 products");
    wait_for_events(&panel, 4);
    sort_low_to_high(&shop.page);
    wait_for_events(&panel, 5);
    key(&shop.page, "i", "KeyI", 73, 2);
    panel.wait_for("document.querySelector('[data-testid=record-offer]')", "the Ctrl+I offer");
    panel.type_into("[data-testid=record-extract-query]", "the cheapest product's name");
    panel.click("[data-testid=record-extract-save]");
    wait_for_events(&panel, 6);
    key(&panel, "i", "KeyI", 73, 2);
    panel.wait_for("document.querySelector('[data-testid=record-offer]')", "the Ctrl+I offer");
    panel.type_into("[data-testid=record-details-text]", "Open the cheapest one");
    panel.click("[data-testid=record-details-save]");
    wait_for_events(&panel, 7);
    shop.page.click("#results li:first-child a");
    shop.page.wait_for("location.pathname.endsWith('/product.html')", "the product page");
    wait_for_events(&panel, 9);
    stop(&panel);
    // Stop asks what the recording does, starting from its first page's title.
    let name_box = "document.querySelector('[data-testid=record-name-input]')";
    panel.wait_for(name_box, "the name asked at Stop");
    assert_eq!(panel.eval(&format!("{name_box}.value")), first_title);
    panel.click("[data-testid=record-name-input]");
    panel.eval(&format!("{name_box}.select()"));
    panel.call("Input.insertText", json!({"text": "Open the cheapest coffee"})).unwrap();
    panel.press_enter();
    panel.wait_for("!document.querySelector('[data-testid=record-name]')", "the name saved");
    let stored = browser.debug(json!({"type": "debug.recording"}));
    assert_eq!(stored["recording"]["name"], "Open the cheapest coffee", "{stored:#}");
    let recording_id = stored["recording"]["id"].as_str().expect("a recording").to_owned();
    let kinds = step_kinds(&stored);
    assert_eq!(kinds, ["click", "type", "key", "select", "extract", "click"], "{stored:#}");

    // Reflect the recording as it was stored.
    let workflow_id = workflows::reflect_recording(&mut browser, &recording_id);
    // The reflection's own name for the task does not replace the person's.
    let stored = browser.debug(json!({"type": "debug.recording"}));
    assert_eq!(stored["recording"]["name"], "Open the cheapest coffee");

    // Replay with another query from the shop's home page.
    shop.page.eval(&format!("location.href = {}", json!(sites.url("/shop/index.html"))));
    shop.page.wait_for("location.pathname.endsWith('/index.html')", "the home page");
    shop.page.call("Page.bringToFront", json!({})).unwrap();
    let started = browser.agent_request(json!({"type": "start_replay",
        "workflow_id": workflow_id, "version": 1, "tab_id": shop.id, "params": {"query": "tea"}}));
    assert_eq!(started["type"], "replay", "{started}");
    let ended = workflows::wait_for_replay(&mut browser, "to end", |r| {
        ["done", "failed", "cancelled"].contains(&r["status"].as_str().unwrap_or(""))
    });
    assert_eq!(ended["status"], "done", "{ended:#}");
    assert_eq!(ended["extracts"]["cheapest"], "French press", "{ended:#}");
    workflows::wait_for_url(&shop, "product.html?sku=press");
    // The recorded click, typing, Enter and select were found again without the model.
    let saved = ended["calls_saved"].as_u64().unwrap();
    assert!(saved >= 3, "{ended:#}");

    // On the annotation page the replay says what it ran with and what the fast path did.
    let run_id = ended["run_id"].as_str().expect("the replay's run");
    let annotation = browser
        .open_tab(&browser.extension_url(&format!("annotation.html?agentRunId={run_id}")))
        .page;
    annotation.wait_for("document.querySelector('[data-testid=run-replay]')", "the replay line");
    let line = annotation.text("[data-testid=run-replay]");
    let steps = ended["step"].as_u64().unwrap();
    assert_eq!(line, format!("Replay · query = tea · fast path {saved} of {steps} steps"));
    annotation.click("[data-testid=back-to-list]");
    annotation.wait_for("document.querySelector('[data-testid=run-replay]')", "the list's line");
    assert!(annotation.text("[data-testid=run-replay]").starts_with("query = tea · fast path"));
}

/// Pass B for a recording of gestures: one subtask, every step in it, the recorded values.
fn pass_b_for(steps: usize) -> Reply {
    let steps: Vec<_> = (0..steps)
        .map(|i| json!({"index": i, "subtask": "gestures", "action_value": "", "variable": ""}))
        .collect();
    Reply::json(json!({
        "task_name": "Tidy the page",
        "detailed_task_description": "Reorder, edit, delete and confirm on the gestures page.",
        "task_params": [],
        "subtasks": [{"id": "gestures", "text": "Do each gesture",
                      "expected_outcome": "The page shows the new order, age, files and confirmation",
                      "depends_on": []}],
        "steps": steps
    }))
}

#[test]
fn a_recorded_drag_double_click_right_click_and_paste_are_replayed_without_the_model() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let replay_calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = replay_calls.clone();
    let steps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let recorded = steps.clone();
    let llm = ScriptedLlm::responding(move |prompt| match prompt_kind(prompt) {
        Prompt::ReflectStep => pass_a(prompt),
        Prompt::ReflectTask => pass_b_for(recorded.load(std::sync::atomic::Ordering::SeqCst)),
        Prompt::Replay => {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::error(400, "the replay should not need the model")
        }
        Prompt::Other => Reply::error(400, "not a workflow prompt"),
    });
    browser.configure_agent(settings(llm.base_url()));
    let url = sites.url("/controls/gestures.html");
    let (tab, panel) = e2e::recording::start_recording_at(&mut browser, &url);
    let page = &tab.page;
    let summary = |page: &e2e::browser::Page| page.text("#summary");

    // As a person: a drag, a double-click and a new value, a right-click and its menu, a
    // copy and a paste.
    page.drag("#step-c", "#step-a");
    page.wait_for_text("#summary", "order=Charlie,Alpha,Bravo");
    wait_for_events(&panel, 1);
    page.double_click("#bob-age");
    page.wait_for("document.activeElement?.id === 'bob-age-field'", "the cell's field");
    page.eval("document.execCommand('selectAll')");
    page.call("Input.insertText", json!({"text": "42"})).unwrap();
    page.press_enter();
    page.wait_for_text("#summary", "bob=42");
    page.right_click("#file-report");
    page.wait_for(
        "getComputedStyle(document.getElementById('menu')).display === 'block'",
        "the menu",
    );
    page.click("#delete");
    page.wait_for_text("#summary", "files=notes.txt;");
    page.click("#order");
    page.shortcut('a', "selectAll");
    page.shortcut('c', "copy");
    page.click("#confirm");
    page.shortcut('v', "paste");
    page.wait_for_text("#summary", "confirm=ORD-58213-KX");
    let after = summary(page);
    // Twelve events: the double-click's two clicks come before it.
    wait_for_events(&panel, 12);
    stop(&panel);

    let stored = browser.debug(json!({"type": "debug.recording"}));
    let recording_id = stored["recording"]["id"].as_str().expect("a recording").to_owned();
    let kinds = step_kinds(&stored);
    assert_eq!(
        kinds,
        [
            "drag",
            "double_click",
            "type",
            "key",
            "right_click",
            "click",
            "click",
            "copy",
            "click",
            "paste"
        ],
        "{stored:#}"
    );
    steps.store(kinds.len(), std::sync::atomic::Ordering::SeqCst);
    let workflow_id = workflows::reflect_recording(&mut browser, &recording_id);
    // Not named at Stop: the reflection names it for its task.
    let stored = browser.debug(json!({"type": "debug.recording"}));
    assert_eq!(stored["recording"]["name"], "Tidy the page", "{stored:#}");
    // And a person can rename it on the Workflows page.
    let flows = browser.open_tab(&browser.extension_url("workflows.html")).page;
    flows.wait_for_text("[data-testid=recording-name]", "Tidy the page");
    flows.click("[data-testid=recording-rename]");
    let name_box = "document.querySelector('[data-testid=recording-name-input]')";
    flows.wait_for(name_box, "the name field");
    flows.click("[data-testid=recording-name-input]");
    flows.eval(&format!("{name_box}.select()"));
    flows.call("Input.insertText", json!({"text": "Gestures on the test page"})).unwrap();
    flows.click("[data-testid=recording-name-save]");
    flows.wait_for_text("[data-testid=recording-name]", "Gestures on the test page");
    let stored = browser.debug(json!({"type": "debug.recording"}));
    assert_eq!(stored["recording"]["name"], "Gestures on the test page");

    // Replay on the page as it was before.
    page.eval(&format!("location.href = {}", json!(format!("{url}?again"))));
    page.wait_for("location.search === '?again'", "the page again");
    page.wait_for_text("#summary", "order=Alpha,Bravo,Charlie");
    page.call("Page.bringToFront", json!({})).unwrap();
    let started = browser.agent_request(json!({"type": "start_replay",
        "workflow_id": workflow_id, "version": 1, "tab_id": tab.id, "params": {}}));
    assert_eq!(started["type"], "replay", "{started}");
    let ended = workflows::wait_for_replay(&mut browser, "to end", |r| {
        ["done", "failed", "cancelled"].contains(&r["status"].as_str().unwrap_or(""))
    });
    assert_eq!(ended["status"], "done", "{ended:#}");
    // The page ends as the person left it, and no step needed the model.
    assert_eq!(summary(page), after);
    assert_eq!(replay_calls.load(std::sync::atomic::Ordering::SeqCst), 0, "{ended:#}");
}
