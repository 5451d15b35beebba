//! The Prompt Studio in real Chromium over the real worker, with the scripted model: a real
//! task on the fixture shop captures Navigator steps; the Studio edits the Navigator's
//! variant, previews it with a captured step's variables, saves it as an override, runs
//! it (a schema violation highlighted, then its repair), compares variants A and B on
//! three captured steps, and opens a step's traces from the annotation page and back.

use e2e::agent::replies::{navigate, plan, verdict};
use e2e::agent::{TEST_KEY, settings};
use e2e::annotation::{choose, replace_text, stored};
use e2e::browser::{Browser, Page};
use e2e::fixtures::FixtureSites;
use e2e::listed;
use e2e::llm::ScriptedLlm;
use serde_json::{Value, json};

const EDIT: &str = "STUDIO EDIT: keep each thought to one sentence.";

fn count(page: &Page, selector: &str) -> u64 {
    page.eval(&format!("document.querySelectorAll({}).length", Value::from(selector)))
        .as_u64()
        .unwrap_or(0)
}

fn value(page: &Page, selector: &str) -> String {
    page.eval(&format!("document.querySelector({}).value", Value::from(selector)))
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_studio_edits_previews_runs_repairs_compares_and_opens_a_steps_traces() {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let state = browser.page_state(&shop);
    let kettle = listed(&state, "Steel kettle").and_then(|e| e["id"].as_u64()).unwrap();
    // A real task captures three Navigator steps.
    let llm = ScriptedLlm::start([
        plan(false, "1. Look over the shop\n2. Open the Steel kettle page\n3. Read its price", ""),
        navigate(
            "Start: the shop is open",
            "Scroll to see the products",
            json!([{"action": "scroll", "screens": 1}]),
        ),
        navigate(
            "Success: I see the products",
            "Open the kettle's page",
            json!([{"action": "click", "id": kettle}]),
        ),
        navigate(
            "Success: the kettle's page is open",
            "Report the price",
            json!([{"action": "done", "text": "The kettle costs €39.00"}]),
        ),
        verdict(true, "", "The steel kettle costs €39.00."),
    ]);
    let mut agent = settings(llm.base_url());
    agent["agent"]["planning_interval"] = json!(50);
    browser.configure_agent(agent);
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": shop.id,
        "task": "What does the steel kettle cost?"}));
    assert_eq!(started["type"], "done", "{started}");
    let done = browser.wait_for_task("done");
    let run_id = done["run_id"].as_str().unwrap_or_default().to_owned();

    let page = browser.open_tab(&browser.extension_url("studio.html")).page;
    page.wait_for("document.querySelector('[data-testid=file-text]')", "the Studio's editor");
    assert_eq!(page.text("[data-testid=file-path]"), "navigator/A.md");
    assert_eq!(page.text("[data-testid=file-state]"), "bundled");
    let bundled = value(&page, "[data-testid=bundled-text]");
    assert!(bundled.contains("{{task}}") || bundled.contains("{{ task }}"), "the bundled variant");

    // A broken edit is said in place, as typed, and cannot be saved.
    replace_text(&page, "[data-testid=file-text]", &format!("{{{{> no_such_rule}}}}\n{bundled}"));
    page.wait_for_text("[data-testid=file-error]", "no_such_rule");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=save-prompts]').disabled"),
        json!(true)
    );
    // The real edit.
    replace_text(&page, "[data-testid=file-text]", &format!("{EDIT}\n{bundled}"));
    page.wait_for("!document.querySelector('[data-testid=file-error]')", "the problem to clear");
    assert_eq!(page.text("[data-testid=file-state]"), "unsaved edits");
    assert_ne!(
        page.text("[data-testid=current-hash]"),
        page.text("[data-testid=bundled-hash]").replace("bundled", "in force")
    );

    // Preview with a captured step's variables: the edit, the step's task highlighted, the
    // shared rules expanded, nothing unresolved.
    page.wait_for(
        "document.querySelectorAll('[data-testid=sample-select] option').length >= 4",
        "three captured steps",
    );
    let sample = page
        .eval("document.querySelectorAll('[data-testid=sample-select] option')[1].value")
        .as_str()
        .unwrap()
        .to_owned();
    choose(&page, "[data-testid=sample-select]", &sample);
    page.wait_for_text("[data-testid=preview-text]", EDIT);
    let preview = page.text("[data-testid=preview-text]");
    assert!(preview.contains("<sharedRule name=\"untrusted_page\">"), "{preview}");
    assert!(
        page.eval("[...document.querySelectorAll('[data-testid=preview-var]')].some(m => m.textContent === 'What does the steel kettle cost?')")
            == json!(true),
        "the task is a highlighted variable"
    );
    assert_eq!(count(&page, "[data-testid=preview-unresolved]"), 0);
    // Typed variables that lack some: each is flagged where it goes.
    replace_text(&page, "[data-testid=vars-text]", "{\"task\": \"Find a toaster\"}");
    page.wait_for(
        "document.querySelectorAll('[data-testid=preview-unresolved]').length > 0",
        "unresolved flags",
    );
    assert!(page.text("[data-testid=unresolved-count]").contains("page_state"));
    choose(&page, "[data-testid=sample-select]", &sample);
    page.wait_for(
        "document.querySelectorAll('[data-testid=preview-unresolved]').length === 0",
        "the sample back",
    );

    // Save: an override, kept as version 1, and what the worker's next task reads.
    page.click("[data-testid=save-prompts]");
    page.wait_for_text("[data-testid=file-state]", "edited (override saved)");
    let settings = browser.agent_request(json!({"type": "get_settings"}));
    let saved =
        settings["settings"]["prompt_overrides"]["navigator/A.md"].as_str().unwrap_or_default();
    assert!(saved.starts_with(EDIT), "{settings}");
    let versions = stored(&page, "promptVersions");
    assert_eq!(versions.len(), 1, "{versions:?}");
    assert_eq!(
        (versions[0]["path"].as_str(), versions[0]["number"].as_u64()),
        (Some("navigator/A.md"), Some(1))
    );

    // Run: the first answer breaks the schema (an action that does not exist), the repair
    // fixes it.
    llm.push(navigate("Success", "Fly to the price", json!([{"action": "fly", "id": 3}])));
    llm.push(navigate(
        "Success",
        "Report the price",
        json!([{"action": "done", "text": "€39.00"}]),
    ));
    let before = llm.requests().len();
    page.click("[data-testid=run-prompt]");
    page.wait_for("document.querySelector('[data-testid=run-result]')", "the run's result");
    assert_eq!(count(&page, "[data-testid=attempt]"), 2);
    assert_eq!(
        page.eval("document.querySelector('[data-testid=attempt]').dataset.verdict"),
        json!("rejected")
    );
    let bad = page.eval("[...document.querySelectorAll('[data-testid=attempt]')[0].querySelectorAll('[data-testid=violation-line]')].map(l => l.dataset.pointer + ' ' + l.textContent)");
    assert!(bad.to_string().contains("/actions/0"), "the violation on the bad action: {bad}");
    assert_eq!(
        page.eval("document.querySelectorAll('[data-testid=attempt]')[1].dataset.verdict"),
        json!("accepted")
    );
    assert!(page.text("[data-testid=run-output]").contains("€39.00"));
    assert!(page.text("[data-testid=run-meta]").contains("1 repair(s)"));
    let raw = page.eval("[...document.querySelectorAll('[data-testid=raw-request]')].map(p => p.textContent).join('\\n')");
    let raw = raw.as_str().unwrap();
    assert!(raw.contains("Bearer ***") && !raw.contains(TEST_KEY), "keys masked: {raw}");
    let sent = llm.requests();
    assert_eq!(sent.len(), before + 2);
    let system = sent[before].body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains(EDIT) && system.contains("What does the steel kettle cost?"));
    assert!(
        sent[before + 1].body.to_string().contains("fly"),
        "the repair shows the failed answer"
    );
    // Its trace is stored and opens in the traces view.
    page.click("[data-testid=run-trace-link]");
    page.wait_for("document.querySelector('[data-testid=trace-detail]')", "the run's trace");
    assert_eq!(count(&page, "[data-testid=trace-attempt]"), 2);
    page.click("[data-testid=tab-prompts]");
    page.wait_for("document.querySelector('[data-testid=compare-run]')", "the prompts view");

    // Compare A (edited) and B (bundled) on the three captured steps.
    for _ in 0..6 {
        llm.push(navigate(
            "Success",
            "Report the price",
            json!([{"action": "done", "text": "€39.00"}]),
        ));
    }
    let before = llm.requests().len();
    replace_text(&page, "[data-testid=compare-variants]", "A, B");
    replace_text(&page, "[data-testid=compare-samples]", "3");
    page.click("[data-testid=compare-run]");
    page.wait_for(
        "document.querySelectorAll('[data-testid=compare-cell][data-state=valid]').length === 6",
        "six valid answers",
    );
    let compared = &llm.requests()[before..];
    let edited = compared.iter().filter(|r| r.body.to_string().contains(EDIT)).count();
    assert_eq!((compared.len(), edited), (6, 3), "three with A's edit, three with B");
    assert_eq!(page.text("[data-testid=baseline]"), "baseline");
    assert!(page.text("[data-testid=compare-total][data-variant=B]").starts_with("3/3 valid"));

    // From an annotated step to its traces, and back.
    let annotation = browser
        .open_tab(&browser.extension_url(&format!("annotation.html?agentRunId={run_id}")))
        .page;
    annotation
        .wait_for("document.querySelector('[data-testid=step-traces]')", "the step's traces link");
    let link = annotation.eval("document.querySelector('[data-testid=step-traces]').href");
    assert!(link.as_str().unwrap().contains(&format!("#run={run_id}")), "{link}");
    annotation.click("[data-testid=step-traces]");
    annotation
        .wait_for("document.querySelector('[data-testid=traces-view]')", "the Studio's traces");
    annotation.wait_for(
        "document.querySelectorAll('[data-testid=trace-row]').length > 0",
        "the step's traces",
    );
    annotation.click("[data-testid=trace-row]");
    annotation.wait_for("document.querySelector('[data-testid=trace-detail]')", "the trace");
    assert!(annotation.text("[data-testid=trace-prompt-hash]").len() >= 64);
    assert!(
        annotation.text("[data-testid=trace-prompt]").contains("What does the steel kettle cost?")
    );
    annotation.click("[data-testid=trace-annotation-link]");
    annotation.wait_for("document.querySelector('[data-testid=run-view]')", "the run again");

    // Revert to bundled in one click: the worker's next task uses the bundled file again.
    page.click("[data-testid=revert-bundled]");
    page.wait_for_text("[data-testid=file-state]", "bundled");
    let settings = browser.agent_request(json!({"type": "get_settings"}));
    assert_eq!(settings["settings"]["prompt_overrides"], json!({}), "{settings}");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio.png"));
}
