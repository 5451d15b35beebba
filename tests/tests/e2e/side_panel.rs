//! The side panel with the agent, through the real UI: typing, Enter, the buttons a person
//! clicks, and what they see — status, messages by actor, questions, the final answer.

use std::time::Duration;

use e2e::agent::replies::{decide, navigate, navigator_asks, plan, verdict};
use e2e::agent::{TEST_KEY, settings};
use e2e::annotation::{self, allow_downloads, choose, open_annotation, wait_for_download};
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
    let (sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
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

    s.llm.push(decide(true, "", "Only steel kettles count now"));
    s.llm.push(plan(false, "1. Look at the products", ""));
    s.llm.push(navigate("Start", "Report", json!([{"action": "done", "text": "The steel one"}])));
    s.llm.push(verdict(true, "", "The steel kettle, €39.00."));
    s.panel.send_message("Only steel kettles, please");
    s.panel.wait_for_status("done");
    assert!(prompt(&s.llm, 2).contains("The user has just written to steer the task"));
    let steered = prompt(&s.llm, 3);
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

    s.llm.push(decide(true, "", "The user means the grinder"));
    s.llm.push(plan(true, "1. Look at the products", "€89.00"));
    s.llm.push(verdict(true, "", "The grinder costs €89.00."));
    s.panel.send_message("The grinder");
    s.panel.wait_for_status("done");
    assert!(
        prompt(&s.llm, 3)
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
    s.panel.wait_for(
        "document.querySelector('[data-testid=settings-navigator-model]')?.value === 'scripted-model'",
        "the stored settings in the form",
    );
    let key = s.panel.eval("document.querySelector('[data-testid=settings-navigator-key]').value");
    assert_eq!(key, "***", "keys are masked");
    let prices = s.panel.eval("document.querySelector('[data-testid=settings-prices]').value");
    assert_eq!(prices, "scripted-model = 1, 2", "the price table is editable");
    // A prompt variant is chosen among those the prompt has, not typed.
    let variants = s.panel.eval(
        "[...document.querySelectorAll('select[data-testid=settings-navigator-variant] option')].map(o => o.value)",
    );
    assert_eq!(variants, json!(["A", "B"]), "the navigator prompt's variants");
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        s.panel.eval(
            "document.querySelector('[data-testid=settings-navigator-variant]').scrollIntoView()",
        );
        s.panel.screenshot(&std::path::Path::new(&dir).join("settings-variants.png"));
    }
    s.panel.type_over("[data-testid=settings-navigator-base-url]", "ftp://nowhere");
    s.panel.click("[data-testid=settings-save]");
    let error = s.panel.wait_for_text(
        "[data-testid=settings-error][data-field='/models/navigator/base_url']",
        "http",
    );
    assert!(error.contains("http:// or https://"), "{error}");

    // A key never goes over plain http to another computer.
    s.panel.type_over("[data-testid=settings-navigator-base-url]", "http://192.168.1.20:8000/v1");
    s.panel.type_over("[data-testid=settings-navigator-key]", "sk-typed-for-the-lan");
    s.panel.click("[data-testid=settings-save]");
    let error = s.panel.wait_for_text(
        "[data-testid=settings-error][data-field='/models/navigator/base_url']",
        "unencrypted",
    );
    assert!(error.contains("192.168.1.20"), "{error}");

    // Fix it, and deny the fixture site's host.
    let base = format!("{}/v1", s.llm.base_url());
    s.panel.type_over("[data-testid=settings-navigator-base-url]", &base);
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
    s.llm.push(verdict(true, "", "I could not visit it: it is on your deny list."));
    s.panel.send_message("Open localhost");
    s.panel.wait_for_status("done");
    let chat = s.panel.visible_text();
    assert!(chat.contains("is on your deny list (localhost)"), "a clear message: {chat}");
    assert_eq!(s.shop.page.eval("location.hostname"), "127.0.0.1", "the agent never went there");
}

/// The `data-session-id` of each History row, top to bottom, once there are `count`.
fn listed_sessions(panel: &Page, count: usize) -> Vec<String> {
    panel.wait_for(
        &format!(
            "document.querySelectorAll('[data-testid=history] ul[aria-busy=false] [data-testid=session]').length === {count}"
        ),
        &format!("{count} conversations in the History"),
    );
    let ids = panel.eval(
        "[...document.querySelectorAll('[data-testid=session]')].map(s => s.dataset.sessionId)",
    );
    serde_json::from_value(ids).unwrap_or_default()
}

fn row(session: &str, testid: &str) -> String {
    format!("[data-testid=session][data-session-id='{session}'] [data-testid={testid}]")
}

#[test]
fn history_reopens_and_deletes_sessions() {
    let mut s = setup(vec![
        plan(true, "1. Look at the products", "€39.00"),
        verdict(true, "", "The kettle costs €39.00."),
    ]);
    s.panel.send_message("Kettle price?");
    s.panel.wait_for_status("done");
    s.panel.click("[data-testid=new-chat]");
    s.panel.wait_for_status("idle");
    s.llm.push(plan(true, "1. Look at the products", "€89.00"));
    s.llm.push(verdict(true, "", "The grinder costs €89.00."));
    s.panel.send_message("Grinder price?");
    s.panel.wait_for_text("[data-testid=final-answer]", "€89.00");
    s.panel.wait_for_status("done");

    s.panel.click("[data-testid=history-toggle]");
    let listed = listed_sessions(&s.panel, 2);
    let (grinder, kettle) = (listed[0].clone(), listed[1].clone());
    assert!(
        s.panel.text(&row(&grinder, "session-open")).contains("Grinder price?"),
        "newest first"
    );
    assert!(s.panel.text(&row(&kettle, "session-open")).contains("Kettle price?"));
    let running = s
        .panel
        .eval(&format!("document.querySelector(\"{}\").disabled", row(&grinder, "session-delete")));
    assert_eq!(running, false, "a finished conversation can be deleted");

    // Reopen the first: its messages and answer come back, and a message continues it.
    s.panel.click(&row(&kettle, "session-open"));
    s.panel.wait_for("!document.querySelector('[data-testid=history]')", "the chat again");
    s.panel.wait_for_text("[data-testid=final-answer]", "The kettle costs €39.00.");
    assert_eq!(messages(&s.panel, "user", "message"), ["Kettle price?"]);
    assert!(!s.panel.visible_text().contains("Grinder"), "only that conversation");
    s.llm.push(plan(true, "1. Look at the products", "€5"));
    s.llm.push(verdict(true, "", "Shipping is €5."));
    s.panel.send_message("And shipping?");
    s.panel.wait_for(
        "[...document.querySelectorAll('[data-testid=final-answer]')].some(a => a.innerText.includes('Shipping is €5.'))",
        "the follow-up's answer",
    );
    s.panel.wait_for_status("done");
    let planner = prompt(&s.llm, 4);
    assert!(planner.contains("Earlier task \"Kettle price?\""), "that session: {planner}");

    // Delete the second, after a confirm.
    s.panel.click("[data-testid=history-toggle]");
    let listed = listed_sessions(&s.panel, 2);
    assert_eq!(listed, [kettle.clone(), grinder.clone()], "the continued one is newest");
    assert!(s.panel.text(&row(&kettle, "session-open")).contains("2 tasks"));
    s.panel.click(&row(&grinder, "session-delete"));
    s.panel.click(&row(&grinder, "session-delete-confirm"));
    assert_eq!(listed_sessions(&s.panel, 1), [kettle.as_str()]);
    assert!(s.panel.visible_text().contains("Captured runs stay available for annotation."));
    s.panel.click("[data-testid=history-close]");
    s.panel.click("[data-testid=history-toggle]");
    assert_eq!(listed_sessions(&s.panel, 1), [kettle.as_str()], "gone after a reload of the list");

    let stored = s.browser.stored_runs();
    let runs_of = |session: &str| {
        stored["runs"].as_array().unwrap().iter().filter(|r| r["taskId"] == session).count()
    };
    assert_eq!(runs_of(&grinder), 1, "its run stays for annotation");
    assert_eq!(runs_of(&kettle), 2);
    let checkpoints = stored["checkpoints"].as_array().unwrap();
    assert!(checkpoints.iter().all(|c| c["session_id"] != grinder.as_str()), "its chat is gone");
}

#[test]
fn favourites_fill_the_chat_input() {
    let mut s = setup(vec![]);
    s.panel.wait_for_status("idle");
    s.panel.click("[data-testid=favourite-add]");
    s.panel.type_into("[data-testid=favourite-title]", "Kettle");
    s.panel.type_into("[data-testid=favourite-prompt]", "What does the steel kettle cost?");
    s.panel.click("[data-testid=favourite-save]");
    s.panel.wait_for_text("[data-testid=favourite]", "Kettle");

    s.panel.click("[data-testid=favourite]");
    s.panel.wait_for(
        "document.querySelector('[data-testid=chat-input]').value === 'What does the steel kettle cost?'",
        "the prompt in the chat box",
    );
    assert_eq!(
        s.panel.eval("document.activeElement?.dataset.testid"),
        "chat-input",
        "ready to send"
    );
    assert!(s.llm.requests().is_empty(), "not sent");
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=status]').dataset.state"),
        "idle"
    );

    // Stored: a reopened panel shows it. Edit it there.
    let panel = s.browser.open_side_panel(&s.shop);
    panel.wait_for_text("[data-testid=favourite]", "Kettle");
    panel.click("[data-testid=favourites-manage]");
    panel.click("[data-testid=favourite-edit]");
    assert_eq!(
        panel.eval("document.querySelector('[data-testid=favourite-title]').value"),
        "Kettle"
    );
    panel.type_over("[data-testid=favourite-title]", "Steel kettle");
    panel.click("[data-testid=favourite-save]");
    panel.wait_for_text("[data-testid=favourite]", "Steel kettle");
    assert_eq!(panel.eval("document.querySelectorAll('[data-testid=favourite]').length"), 1);

    panel.click("[data-testid=favourite-remove]");
    panel.wait_for("!document.querySelector('[data-testid=favourite]')", "no favourite left");
}

#[test]
fn test_connection_reports_success_and_a_bad_key() {
    let s = setup(vec![Reply::text("OK")]);
    s.panel.click("[data-testid=settings-toggle]");
    s.panel.wait_for(
        "document.querySelector('[data-testid=settings-navigator-model]')?.value === 'scripted-model'",
        "the stored settings",
    );
    s.panel.click("[data-testid=settings-navigator-test]");
    s.panel.wait_for(
        "document.querySelector('[data-testid=settings-navigator-test-result]')",
        "the test's result",
    );
    let result = s.panel.text("[data-testid=settings-navigator-test-result]");
    assert!(result.contains("Connected: scripted-model answered in"), "{result}");
    assert_eq!(
        s.panel.eval(
            "document.querySelector('[data-testid=settings-navigator-test-result]').dataset.ok"
        ),
        "true"
    );
    let sent = &s.llm.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str()),
        "the stored key"
    );

    // A key typed anew, which the provider refuses (quoting it).
    s.llm.push(Reply::error(401, "Incorrect API key provided: sk-wrong-key-0000000000"));
    s.panel.type_over("[data-testid=settings-navigator-key]", "sk-wrong-key-0000000000");
    s.panel.wait_for(
        "!document.querySelector('[data-testid=settings-navigator-test-result]')",
        "the old result to go with the edit",
    );
    s.panel.click("[data-testid=settings-navigator-test]");
    s.panel.wait_for(
        "document.querySelector('[data-testid=settings-navigator-test-result][data-ok=false]')",
        "the failed test",
    );
    let result = s.panel.text("[data-testid=settings-navigator-test-result]");
    assert!(result.contains("API key"), "{result}");
    assert!(!result.contains("sk-wrong"), "the key is never shown: {result}");
    assert_eq!(
        s.llm.requests()[1].header("authorization"),
        Some("Bearer sk-wrong-key-0000000000"),
        "the typed key was tried"
    );
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=settings-navigator-key]').value"),
        "sk-wrong-key-0000000000",
        "not saved, still in the form"
    );
}

#[test]
fn the_navigator_asks_the_answer_resumes_and_what_happened_shows_the_decisions() {
    let s = setup(vec![
        plan(false, "1. Find the product the user means", ""),
        navigator_asks("The shop sells a kettle, a grinder and a scale; which one is meant?"),
        decide(false, "Which product do you mean: the kettle, the grinder or the scale?", ""),
    ]);
    s.panel.send_message("How much is it?");
    s.panel.wait_for_status("paused");
    let questions = messages(&s.panel, "system", "question");
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(questions[0].ends_with("the kettle, the grinder or the scale?"), "{questions:?}");
    // The asking step is a question, not "done", and the question shows once.
    assert_eq!(
        s.panel
            .eval("document.querySelector('[data-testid=message][data-outcome]').dataset.outcome"),
        "asked"
    );
    let text = s.panel.visible_text();
    assert!(!text.contains("I need your input"), "the need is not a second question: {text}");
    assert!(text.contains("Asked for your input instead of acting"), "{text}");
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        s.panel.screenshot(&std::path::Path::new(&dir).join("asking-step.png"));
    }

    // The answer goes to the ThinkingAgent, which lets the Navigator go on with it.
    s.llm.push(decide(false, "", "The user means the grinder: report its price"));
    s.llm.push(navigate(
        "Success",
        "Report the price",
        json!([{"action": "done", "text": "The grinder costs €89.00.", "success": true}]),
    ));
    s.llm.push(verdict(true, "", "The grinder costs €89.00."));
    s.panel.send_message("The grinder");
    s.panel.wait_for_status("done");
    assert!(prompt(&s.llm, 3).contains("The user has just answered the question"));
    assert!(prompt(&s.llm, 4).contains("The user means the grinder: report its price"));
    // The verdict after the answer says what it decided, why, and what the Navigator is told.
    let verdicts = s
        .panel
        .eval("[...document.querySelectorAll('[data-testid=verdict]')].map(v => v.innerText)");
    let verdicts: Vec<String> = serde_json::from_value(verdicts).unwrap();
    let after = verdicts.iter().find(|v| v.contains("user answered")).expect("{verdicts:?}");
    assert!(after.contains("continue the plan"), "{after}");
    assert!(after.contains("The user means the grinder: report its price"), "{after}");
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        s.panel.screenshot(&std::path::Path::new(&dir).join("verdict.png"));
    }

    s.panel.click("[data-testid=telemetry-toggle]");
    s.panel.wait_for(
        "document.querySelectorAll('[data-testid=telemetry-entry]').length >= 6",
        "the telemetry",
    );
    let kinds = s.panel.eval(
        "[...document.querySelectorAll('[data-testid=telemetry-entry]')].map(e => e.dataset.kind)",
    );
    let kinds: Vec<String> = serde_json::from_value(kinds).unwrap();
    for kind in ["asks", "thinking", "userinput", "pause", "followup", "resume"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
    let counts = s.panel.text("[data-testid=telemetry-counts]");
    assert!(counts.contains("3 decisions · 1 pause · 1 resume"), "{counts}");
    assert!(s.panel.text("[data-testid=telemetry-log-head]").contains("newest first"));
    let whens = s.panel.eval(
        "[...document.querySelectorAll('[data-testid=telemetry-entry] .when')].map(w => w.innerText)",
    );
    let whens: Vec<String> = serde_json::from_value(whens).unwrap();
    // Two steps were taken: the closing decision came after the last one, not before a third.
    assert_eq!(whens.first().map(String::as_str), Some("after the last step"), "{whens:?}");
    assert!(!whens.iter().any(|w| w.contains("step 3")), "{whens:?}");
    let roles = s.panel.eval(
        "[...document.querySelectorAll('[data-testid=telemetry-spend]')].map(r => r.dataset.role)",
    );
    assert_eq!(roles, json!(["navigator", "planner", "thinking", "total"]));
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        s.panel.screenshot(&std::path::Path::new(&dir).join("what-happened.png"));
    }

    // The captured run carries the telemetry to the annotation page, beside each step.
    let mut s = s;
    let page = open_annotation(&mut s.browser, "");
    page.wait_for("document.querySelector('[data-testid=run-row]')", "the captured run");
    let run_id = page.eval("document.querySelector('[data-testid=run-row]').dataset.run");
    let run_id = run_id.as_str().unwrap().to_owned();
    annotation::navigate(&s.browser, &page, &format!("?agentRunId={run_id}&qa=false"));
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of");
    let on_page = |page: &e2e::browser::Page| -> Vec<String> {
        serde_json::from_value(page.eval(
            "[...document.querySelectorAll('[data-testid=step-telemetry-entry]')].map(e => e.dataset.kind)",
        ))
        .unwrap()
    };
    // Step 1 is the Navigator's question; what followed it is shown with step 2.
    let mut seen = on_page(&page);
    assert_eq!(seen, Vec::<String>::new(), "nothing was logged before the first step");
    while page.eval("!document.querySelector('[data-testid=next-step]').disabled") == json!(true) {
        let heading = page.text("[data-testid=step-heading]");
        page.click("[data-testid=next-step]");
        page.wait_for(
            &format!(
                "document.querySelector('[data-testid=step-heading]').innerText !== {}",
                json!(heading)
            ),
            "the next step",
        );
        seen.extend(on_page(&page));
    }
    for kind in ["needs the user", "question", "pause", "steering", "resume", "decision"] {
        assert!(seen.iter().any(|k| k == kind), "{kind} beside some step: {seen:?}");
    }
    let after = page.text("[data-testid=telemetry-after]");
    assert!(after.contains("After the last step"), "the closing decision: {after}");
    page.click("[data-testid=run-telemetry] summary");
    let summary = page.text("[data-testid=run-telemetry]");
    assert!(summary.contains("1 pause · 1 resume · 3 ThinkingAgent calls"), "{summary}");
    let roles = page.eval(
        "[...document.querySelectorAll('[data-testid=run-telemetry-spend]')].map(r => r.dataset.role)",
    );
    assert_eq!(roles, json!(["navigator", "planner", "thinking"]));
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        page.screenshot(&std::path::Path::new(&dir).join("annotation-telemetry.png"));
    }

    // And into the exports: every JSONL line, and the Markdown beside each step.
    let dir = allow_downloads(&s.browser, "telemetry-exports");
    page.click("[data-testid=back-to-list]");
    page.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");
    for format in ["jsonl", "md"] {
        page.click("[data-testid=export-open]");
        choose(&page, "[data-testid=export-format]", format);
        page.click("[data-testid=export-go]");
        let file = wait_for_download(&dir, &format!(".{format}"));
        page.wait_for_text("[data-testid=notice]", "Exported 1 run");
        page.click("[data-testid=notice] button");
        let text = std::fs::read_to_string(file).unwrap();
        if format == "jsonl" {
            let lines: Vec<serde_json::Value> =
                text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            let logged: usize =
                lines.iter().map(|l| l["telemetry"].as_array().unwrap().len()).sum();
            assert!(logged >= 6, "the log, split over the lines: {text}");
            assert_eq!(lines[0]["runTelemetry"]["pauses"], 1);
        } else {
            assert!(text.contains("**What happened before this step:**"), "{text}");
            assert!(text.contains("- _question_: "), "{text}");
            assert!(text.contains("| thinking | 3 |"), "{text}");
        }
    }
}

#[test]
fn a_malformed_answer_the_task_retries_is_one_short_line_with_its_details_folded() {
    let s = setup(vec![
        plan(false, "1. Report the kettle's price", ""),
        // The Navigator's answer and both repairs are not JSON: the repair loop gives up.
        Reply::text("no json here"),
        Reply::text("still none"),
        Reply::text("nothing"),
        navigate(
            "Success",
            "Report the price",
            json!([{"action": "done", "text": "The kettle costs €39.00.", "success": true}]),
        ),
        verdict(true, "", "The kettle costs €39.00."),
    ]);
    s.panel.send_message("What does the kettle cost?");
    s.panel.wait_for_status("done");
    let line = s.panel.text("[data-testid=malformed-line]");
    assert_eq!(line, "The model's answer was malformed; retried.");
    assert_eq!(
        s.panel.eval("document.querySelector('[data-testid=malformed-details]').open"),
        false,
        "the problems are folded"
    );
    let details =
        s.panel.eval("document.querySelector('[data-testid=malformed-details]').textContent");
    assert!(details.as_str().unwrap().contains("did not follow the expected format"), "{details}");
    if let Ok(dir) = std::env::var("SCREENSHOT_DIR") {
        s.panel.screenshot(&std::path::Path::new(&dir).join("malformed.png"));
    }
}
