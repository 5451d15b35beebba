//! The side panel with the agent, through the real UI: typing, Enter, the buttons a person
//! clicks, and what they see — status, messages by actor, questions, the final answer.

use std::time::Duration;

use e2e::agent::replies::{navigate, plan, verdict};
use e2e::agent::settings;
use e2e::browser::{Browser, Page, Tab};
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::json;

struct Setup {
    _sites: FixtureSites,
    browser: Browser,
    shop: Tab,
    panel: Page,
    llm: ScriptedLlm,
}

/// A shop tab, the agent configured for the scripted model, and the panel for the tab.
fn setup(replies: Vec<Reply>) -> Setup {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let llm = ScriptedLlm::start(replies);
    browser.configure_agent(settings(llm.base_url()));
    let panel = browser.open_side_panel(&shop);
    panel.wait_for_text("[data-testid=worker-link]", "Agent ready");
    Setup { _sites: sites, browser, shop, panel, llm }
}

/// The texts of the messages with this actor and kind.
fn messages(panel: &Page, actor: &str, kind: &str) -> Vec<String> {
    let found = panel.eval(&format!(
        "[...document.querySelectorAll('[data-testid=message][data-actor={actor}][data-kind={kind}]')].map(m => m.innerText)"
    ));
    serde_json::from_value(found).unwrap_or_default()
}

/// The system prompt of the `index`th model request.
fn prompt(llm: &ScriptedLlm, index: usize) -> String {
    llm.requests()[index].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_task_runs_and_its_final_answer_is_shown_as_one() {
    let s = setup(vec![
        plan(true, "1. Look at the products", "€39.00"),
        verdict(true, "", "The kettle costs **€39.00**."),
    ]);
    s.panel.wait_for_status("idle");
    s.panel.send_message("What does the steel kettle cost?");
    s.panel.wait_for_status("done");
    let answer = s.panel.wait_for_text("[data-testid=final-answer]", "€39.00");
    assert!(answer.contains("The kettle costs €39.00"), "markdown rendered: {answer}");
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=final-answer] strong')?.innerText"),
        "€39.00"
    );
    assert_eq!(messages(&s.panel, "user", "message"), ["What does the steel kettle cost?"]);
    assert!(!messages(&s.panel, "planner", "progress").is_empty());
    assert!(s.panel.text("[data-testid=spend]").contains("tokens"), "cost is shown");
}

#[test]
fn pause_and_steer_then_the_steering_reaches_the_planner() {
    let s = setup(vec![
        plan(false, "1. Look at the products", ""),
        // Slow enough to press Pause while the Navigator thinks.
        navigate("Start", "Open the kettle", json!([{"action": "scroll", "screens": 1}]))
            .after(Duration::from_secs(3)),
    ]);
    s.panel.send_message("Find a kettle");
    s.panel.wait_for(
        "document.querySelector('[data-testid=pause]:not([disabled])')",
        "the pause button",
    );
    while s.llm.requests().len() < 2 {
        std::thread::sleep(Duration::from_millis(20));
    }
    s.panel.click("[data-testid=pause]");
    s.panel.wait_for_status("paused");
    let banner = s.panel.wait_for_text("[data-testid=paused-banner]", "adjust instructions");
    assert!(banner.contains("Agent paused – you can adjust instructions now"), "{banner}");
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=paused-banner]').dataset.reason"),
        "user"
    );

    s.llm.push(plan(false, "1. Look at the products", ""));
    s.llm.push(navigate("Start", "Report", json!([{"action": "done", "text": "The steel one"}])));
    s.llm.push(plan(true, "1. Look at the products", "The steel kettle"));
    s.llm.push(verdict(true, "", "The steel kettle, €39.00."));
    s.panel.send_message("Only steel kettles, please");
    s.panel.wait_for_status("done");
    let steered = prompt(&s.llm, 2);
    assert!(
        steered.contains("] Only steel kettles, please"),
        "the Planner sees the steering: {steered}"
    );
    assert!(s.panel.text("[data-testid=final-answer]").contains("The steel kettle, €39.00."));
}

#[test]
fn the_agent_asks_and_the_answer_in_the_panel_resumes_it() {
    let s = setup(vec![
        plan(true, "1. Look at the products", "?"),
        verdict(false, "Which product: kettle, grinder or scale?", ""),
    ]);
    s.panel.send_message("How much is it?");
    s.panel.wait_for_status("paused");
    let questions = messages(&s.panel, "system", "question");
    assert_eq!(questions.len(), 1);
    assert!(questions[0].ends_with("Which product: kettle, grinder or scale?"), "{questions:?}");
    assert!(s.panel.text("[data-testid=paused-banner]").contains("waiting for your answer"));
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=paused-banner]').dataset.reason"),
        "question"
    );
    assert_eq!(s.panel.eval("document.querySelector('[data-testid=chat-input]').disabled"), false);
    assert!(
        s.panel.eval("!!document.querySelector('[data-testid=resume-anyway]')").as_bool().unwrap()
    );
    assert!(s.panel.eval("!!document.querySelector('[data-testid=stop]')").as_bool().unwrap());

    s.llm.push(plan(true, "1. Look at the products", "€89.00"));
    s.llm.push(verdict(true, "", "The grinder costs €89.00."));
    s.panel.send_message("The grinder");
    s.panel.wait_for_status("done");
    assert!(
        prompt(&s.llm, 2)
            .contains("answering \"Which product: kettle, grinder or scale?\"] The grinder")
    );
}

#[test]
fn resume_anyway_continues_without_an_answer() {
    let s =
        setup(vec![plan(true, "1. Look at the products", "?"), verdict(false, "Which size?", "")]);
    s.panel.send_message("Buy a kettle");
    s.panel.wait_for_status("paused");
    s.llm.push(plan(true, "1. Look at the products", "Any size"));
    s.llm.push(verdict(true, "", "I picked the standard size."));
    s.panel.click("[data-testid=resume-anyway]");
    s.panel.wait_for_status("done");
    assert!(prompt(&s.llm, 2).contains("resumed without answering"));
}

#[test]
fn stop_cancels_a_running_task() {
    let s = setup(vec![plan(false, "1. Look at the products", "").after(Duration::from_secs(5))]);
    s.panel.send_message("Find a kettle");
    s.panel.wait_for_status("running");
    s.panel.wait_for(
        "document.querySelector('[data-testid=stop]:not([disabled])')",
        "the stop button",
    );
    s.panel.click("[data-testid=stop]");
    s.panel.wait_for_status("cancelled");
}

#[test]
fn a_follow_up_after_done_continues_the_session_and_new_chat_starts_fresh() {
    let s =
        setup(vec![plan(true, "1. Look at the products", "€39.00"), verdict(true, "", "€39.00")]);
    s.panel.send_message("Kettle price?");
    s.panel.wait_for_status("done");
    s.llm.push(plan(true, "1. Look at the products", "€5"));
    s.llm.push(verdict(true, "", "Shipping is €5."));
    s.panel.send_message("And shipping?");
    s.panel.wait_for(
        "[...document.querySelectorAll('[data-testid=final-answer]')].some(a => a.innerText.includes('Shipping is €5.'))",
        "the second answer",
    );
    s.panel.wait_for_status("done");
    assert!(prompt(&s.llm, 2).contains("Earlier task \"Kettle price?\""), "same session");
    assert_eq!(messages(&s.panel, "user", "message").len(), 2, "one conversation");

    s.panel.click("[data-testid=new-chat]");
    s.panel.wait_for_status("idle");
    assert_eq!(messages(&s.panel, "user", "message").len(), 0);
    s.llm.push(plan(true, "1. Look at the products", "x"));
    s.llm.push(verdict(true, "", "Fresh."));
    s.panel.send_message("Something else");
    s.panel.wait_for_status("done");
    assert!(!prompt(&s.llm, 4).contains("Earlier task"), "a new session remembers nothing");
}

#[test]
fn a_reopened_panel_shows_the_running_task_and_closing_it_does_not_stop_the_agent() {
    let mut s =
        setup(vec![plan(false, "1. Look at the products", "").after(Duration::from_secs(3))]);
    s.panel.send_message("Find a kettle");
    s.panel.wait_for_status("running");
    s.panel.close();
    s.llm.push(navigate("Start", "Report", json!([{"action": "done", "text": "found"}])));
    s.llm.push(plan(true, "1. Look at the products", "found"));
    s.llm.push(verdict(true, "", "Found it."));

    let panel = s.browser.open_side_panel(&s.shop);
    panel.wait_for(
        "document.querySelector('[data-testid=message][data-actor=user]')",
        "the conversation",
    );
    assert_eq!(messages(&panel, "user", "message"), ["Find a kettle"], "the conversation is back");
    panel.wait_for_status("done");
    assert!(panel.text("[data-testid=final-answer]").contains("Found it."));
}

#[test]
fn settings_show_inline_errors_and_the_deny_list_stops_the_agent() {
    let s = setup(vec![]);
    s.panel.click("[data-testid=settings-toggle]");
    s.panel.wait_for("document.querySelector('[data-testid=settings]')", "the settings view");
    let key = s.panel.eval("document.querySelector('[data-testid=settings-navigator-key]').value");
    assert_eq!(key, "***", "keys are masked");
    s.panel.eval(
        "{ const f = document.querySelector('[data-testid=settings-navigator-base-url]'); f.focus(); f.select(); true }",
    );
    s.panel.call("Input.insertText", json!({"text": "ftp://nowhere"})).unwrap();
    s.panel.click("[data-testid=settings-save]");
    let error = s.panel.wait_for_text(
        "[data-testid=settings-error][data-field='models.navigator.base_url']",
        "http",
    );
    assert!(error.contains("http:// or https://"), "{error}");

    // Fix it, and deny the fixture site's host.
    s.panel.eval(
        "{ const f = document.querySelector('[data-testid=settings-navigator-base-url]'); f.focus(); f.select(); true }",
    );
    let base = format!("{}/v1", s.llm.base_url());
    s.panel.call("Input.insertText", json!({"text": base})).unwrap();
    s.panel.type_into("[data-testid=settings-deny]", "localhost");
    s.panel.click("[data-testid=settings-save]");
    s.panel.wait_for_text("[data-testid=settings-status]", "Saved");
    assert_eq!(s.panel.eval("document.querySelectorAll('[data-testid=settings-error]').length"), 0);
    s.panel.click("[data-testid=settings-close]");

    s.llm.push(plan(false, "1. Look at the products", ""));
    s.llm.push(navigate(
        "Start",
        "Open the other site",
        json!([{"action": "go_to_url", "url": "http://localhost:1/"}]),
    ));
    s.llm.push(navigate(
        "Start",
        "Give up",
        json!([{"action": "done", "text": "blocked", "success": false}]),
    ));
    s.llm.push(plan(true, "1. Look at the products", "The site is blocked."));
    s.llm.push(verdict(true, "", "I could not visit it: it is on your deny list."));
    s.panel.send_message("Open localhost");
    s.panel.wait_for_status("done");
    let chat = s.panel.visible_text();
    assert!(chat.contains("is on your deny list (localhost)"), "a clear message: {chat}");
    assert_eq!(s.shop.page.eval("location.hostname"), "127.0.0.1", "the agent never went there");
}
