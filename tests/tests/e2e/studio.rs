//! The Prompt Studio in real Chromium over the real worker, with the scripted model: a real
//! task on the fixture shop captures Navigator steps; the Studio edits the Navigator's
//! variant, previews it with a captured step's variables, saves it as an override, runs
//! it (a schema violation highlighted, then its repair), compares variants A and B on
//! three captured steps, and opens a step's traces from the annotation page and back.

use crate::support::pipeline_request;
use crate::support::sync_server::SyncServer;
use e2e::agent::replies::{navigate, plan, report, verdict};
use e2e::agent::{TEST_KEY, settings};
use e2e::annotation::{choose, replace_text, stored};
use e2e::browser::{Browser, Page, Tab};
use e2e::fixtures::FixtureSites;
use e2e::listed;
use e2e::llm::{Reply, ScriptedLlm};
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

/// A real task on the fixture shop that captures three Navigator steps (scroll, open the
/// steel kettle, done), run to its end: the shop's tab, the model (to script more) and the
/// run's id.
fn kettle_price_run(browser: &mut Browser, sites: &FixtureSites) -> (Tab, ScriptedLlm, String) {
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let state = browser.page_state(&shop);
    let kettle = listed(&state, "Steel kettle").and_then(|e| e["id"].as_u64()).unwrap();
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
        report("Success: the kettle's page is open", "The kettle costs €39.00"),
        verdict(true, "", "The steel kettle costs €39.00."),
    ]);
    let mut agent = settings(llm.base_url());
    agent["agent"]["planning_interval"] = json!(50);
    browser.configure_agent(agent);
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": shop.id,
        "task": "What does the steel kettle cost?"}));
    assert_eq!(started["type"], "done", "{started}");
    let run_id = browser.wait_for_task("done")["run_id"].as_str().unwrap_or_default().to_owned();
    (shop, llm, run_id)
}

#[test]
fn the_studio_edits_previews_runs_repairs_compares_and_opens_a_steps_traces() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (_shop, llm, run_id) = kettle_price_run(&mut browser, &sites);

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
    llm.push(report("Success", "€39.00"));
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
    page.eval("document.querySelector('[data-testid=run-result]').scrollIntoView()");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-run.png"));
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
        llm.push(report("Success", "€39.00"));
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
    // Rows name the run's task, the run and the step as the annotation page counts it.
    let rows = page.eval(
        "[...document.querySelectorAll('[data-testid=compare-sample]')].map(r => r.textContent)",
    );
    let short_run = &run_id[..8];
    for row in rows.as_array().unwrap() {
        let row = row.as_str().unwrap();
        assert!(
            row.starts_with("“What does the steel kettle cost?” · run ")
                && row.contains(short_run)
                && !row.contains("step 0"),
            "{row}"
        );
    }
    assert!(rows.to_string().contains("step 3"), "{rows}");
    // Each of B's cells says how it differs from A's, the baseline; choosing B turns that round.
    assert_eq!(count(&page, "[data-testid=compare-delta]"), 3);
    let delta = page.text("[data-testid=compare-delta]");
    assert!(delta.starts_with("vs baseline: same action"), "{delta}");
    page.click("[data-testid=make-baseline]");
    page.wait_for(
        "document.querySelector('[data-testid=compare-variant][data-variant=B] [data-testid=baseline]')",
        "B as the baseline",
    );
    assert_eq!(count(&page, "[data-testid=compare-delta]"), 3);
    assert_eq!(count(&page, "td.baseline[data-testid=compare-cell]"), 3, "B's column is marked");
    page.eval("document.querySelector('[data-testid=compare-table]').scrollIntoView()");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-compare.png"));

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

/// The product_facts model: answers from the page text in its prompt alone.
fn facts_model() -> ScriptedLlm {
    ScriptedLlm::responding(|prompt| {
        let on_page = prompt.contains("Steel kettle") && prompt.contains("39.00");
        Reply::json(json!({
            "is_product": on_page, "name": if on_page { "Steel kettle" } else { "" },
            "price": if on_page { json!(39.0) } else { Value::Null }, "currency": "EUR",
            "availability": "unknown", "brand": "", "rating": null, "highlights": []
        }))
    })
}

#[test]
fn the_example_pipeline_runs_from_the_studio_and_the_side_panel_and_a_missing_prompt_blocks_publishing()
 {
    let (_sites, mut browser, product) = e2e::open_fixture("/shop/product.html?sku=kettle");
    let llm = facts_model();
    browser.configure_agent(settings(llm.base_url()));

    let page = browser.open_tab(&browser.extension_url("studio.html")).page;
    page.wait_for("document.querySelector('[data-testid=tab-pipelines]')", "the Studio");
    page.click("[data-testid=tab-pipelines]");
    page.wait_for("document.querySelector('[data-testid=pipeline-text]')", "the pipeline editor");
    assert!(value(&page, "[data-testid=pipeline-text]").contains("id: product_facts"));
    // The diagram: five steps, the llm step after the page read, when edges labelled.
    assert_eq!(count(&page, "[data-testid=diagram-node]"), 5);
    assert_eq!(count(&page, "[data-testid=diagram-edge][data-from=page][data-to=read]"), 1);
    assert!(page.text("[data-testid=pipeline-diagram]").contains("when steps.facts.status"));
    assert_eq!(count(&page, "[data-testid=pipeline-errors]"), 0);
    assert_eq!(labels_overlapping(&page), json!([]));

    // Run it from the Studio on the fixture's product page.
    pick_tab(&page, &product);
    page.click("[data-testid=pipeline-run]");
    page.wait_for("document.querySelector('[data-testid=pipeline-result]')", "the run");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=pipeline-result]').dataset.status"),
        json!("ok")
    );
    let output: Value = serde_json::from_str(&page.text("[data-testid=pipeline-output]")).unwrap();
    assert_eq!(
        (output["found"].clone(), output["name"].clone()),
        (json!(true), json!("Steel kettle"))
    );
    assert_eq!(output["price"].as_f64(), Some(39.0));
    let step_status = |id: &str| {
        page.eval(&format!(
            "document.querySelector('[data-testid=pipeline-step][data-step={id}]').dataset.status"
        ))
    };
    assert_eq!(
        (step_status("page"), step_status("read"), step_status("not_a_product")),
        (json!("ok"), json!("ok"), json!("skipped"))
    );
    // Each step's summary names its kind.
    let summary =
        |id: &str| page.text(&format!("[data-testid=pipeline-step][data-step={id}] summary"));
    assert!(summary("page").starts_with("page · tool · ok"), "{}", summary("page"));
    assert!(summary("read").starts_with("read · llm · ok"), "{}", summary("read"));
    assert!(
        page.text("[data-testid=pipeline-step-llm]")
            .contains("prompt product_facts/A · prompt hash ")
    );
    let sent = llm.requests();
    assert!(sent[0].body.to_string().contains("Steel kettle"), "the page's text went to the model");

    // A missing prompt: shown as typed, and publishing is refused.
    let good = value(&page, "[data-testid=pipeline-text]");
    replace_text(
        &page,
        "[data-testid=pipeline-text]",
        &good.replace("prompt_id: product_facts", "prompt_id: no_such_prompt"),
    );
    page.wait_for_text("[data-testid=pipeline-errors]", "no_such_prompt");
    // The example does not replace unsaved YAML without asking, in the page.
    page.click("[data-testid=pipeline-example]");
    page.wait_for_text("[data-testid=pipeline-confirm-open]", "unsaved YAML");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-pipeline-confirm.png"));
    assert!(value(&page, "[data-testid=pipeline-text]").contains("no_such_prompt"));
    page.click("[data-testid=pipeline-confirm-no]");
    page.wait_for("!document.querySelector('[data-testid=pipeline-confirm-open]')", "no question");
    assert!(value(&page, "[data-testid=pipeline-text]").contains("no_such_prompt"), "kept");
    page.click("[data-testid=pipeline-publish]");
    page.wait_for_text("[data-testid=pipeline-report-headline]", "Refused");
    assert!(page.text("[data-testid=pipeline-report-errors]").contains("no_such_prompt"));
    let panel = browser.open_side_panel(&product);

    // The example as it was: it ran for real, so it publishes.
    replace_text(&page, "[data-testid=pipeline-text]", &good);
    page.wait_for(
        "!document.querySelector('[data-testid=pipeline-errors]')",
        "the problems to clear",
    );
    page.click("[data-testid=pipeline-publish]");
    page.wait_for_text("[data-testid=pipeline-report-headline]", "Published as version 1");
    assert!(!page.text("[data-testid=pipeline-report]").contains("no successful real run"));
    page.wait_for(
        "document.querySelector('[data-testid=pipeline-published]')",
        "the stored version",
    );

    // From the side panel, on its own tab.
    panel.wait_for("document.querySelector('[data-testid=chat-input]')", "the panel");
    panel.send_message("/run product_facts {}");
    panel.wait_for(
        "[...document.querySelectorAll('[data-testid=message]')].some(m => m.textContent.includes('Steel kettle') && m.dataset.kind === 'answer')",
        "the pipeline's output in the chat",
    );
    panel.send_message("/run no_such_pipeline {}");
    panel.wait_for(
        "[...document.querySelectorAll('[data-testid=message]')].some(m => m.textContent.includes('No published pipeline'))",
        "the error in the chat",
    );
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-pipeline.png"));
}

#[test]
fn a_runs_traces_go_into_the_json_export_and_to_the_sync_server_redacted_by_the_configured_paths() {
    use e2e::annotation::{
        allow_downloads, configure_sync, open_annotation, wait_for_download, wait_sync,
    };
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    let task = "What does the steel kettle cost? My card is 4111-1111-1111-1111";
    let llm = ScriptedLlm::start([
        plan(false, "1. Read the price", ""),
        report("Start", "€39.00"),
        verdict(true, "", "The steel kettle costs €39.00."),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    let started =
        browser.agent_request(json!({"type": "start_task", "tab_id": shop.id, "task": task}));
    assert_eq!(started["type"], "done", "{started}");
    let run_id = browser.wait_for_task("done")["run_id"].as_str().unwrap().to_owned();
    // Redaction configured after the capture: what leaves the browser follows it anyway.
    let mut agent = settings(llm.base_url());
    agent["agent"]["trace_redactions"] = json!(["task"]);
    browser.configure_agent(agent);

    let page = open_annotation(&mut browser, "");
    page.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");
    let stored_traces = stored(&page, "traces");
    assert_eq!(stored_traces.len(), 3, "one per model call");
    assert!(
        stored_traces.iter().any(|t| t.to_string().contains("4111-1111")),
        "captured as it was"
    );

    let dir = allow_downloads(&browser, "studio-traces");
    page.click("[data-testid=export-open]");
    choose(&page, "[data-testid=export-format]", "json");
    page.click("[data-testid=export-go]");
    let file = wait_for_download(&dir, ".json");
    let text = std::fs::read_to_string(file).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let traces = document["runs"][0]["traces"].as_array().expect("the run's traces").clone();
    assert_eq!(traces.len(), 3);
    assert!(traces.iter().all(|t| t["params"]["task"] == "[redacted]"), "{traces:?}");
    // The run's own header keeps its task (trace redaction is about traces); no key anywhere.
    let traces_text = Value::Array(traces.clone()).to_string();
    assert!(
        !traces_text.contains("4111-1111"),
        "nothing redacted leaves in a trace: {traces_text}"
    );
    assert!(!text.contains(TEST_KEY), "no key anywhere in the export");
    assert!(traces.iter().any(|t| t["promptId"] == "navigator"
        && t["prompt"]["system"].as_str().unwrap().contains("[redacted]")));

    let server = SyncServer::start("studio-sync");
    configure_sync(&page, &server.url(), &server.tokens["ann"]);
    wait_sync(&page, "synced");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let on_server = loop {
        let answer = server.get("quinn", &format!("/runs/{run_id}/traces"));
        if answer.status == 200 && answer.json()["items"].as_array().is_some_and(|i| i.len() == 3) {
            break answer;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the traces never reached the server: {} {}",
            answer.status,
            answer.body
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(
        !on_server.body.contains("4111-1111") && !on_server.body.contains(TEST_KEY),
        "{}",
        on_server.body
    );
    let items = on_server.json()["items"].as_array().unwrap().clone();
    assert!(items.iter().all(|t| t["params"]["task"] == "[redacted]"));
}

#[test]
fn a_pipeline_calls_an_allowed_origin_is_refused_another_and_a_slow_run_is_cancelled_from_the_studio()
 {
    let (sites, mut browser, product) = e2e::open_fixture("/shop/product.html?sku=kettle");
    // A model that thinks for three seconds, so there is time to cancel.
    let llm = ScriptedLlm::responding(|_| {
        Reply::json(json!({"is_product": false, "name": "", "price": null, "currency": "",
            "availability": "unknown", "brand": "", "rating": null, "highlights": []}))
        .after(std::time::Duration::from_secs(3))
    });
    browser.configure_agent(settings(llm.base_url()));

    // HTTP only to the origins the file allows, checked when the URL is known. The API is a
    // loopback server that allows the extension's requests (CORS).
    let api = ScriptedLlm::start([Reply::json(json!({"price": 39}))]);
    let pipeline = format!(
        "id: ask_api\nallow_tools: [http]\nhttp_origins: [\"{}\"]\nsteps:\n  - id: get\n    type: tool\n    tool: http\n    input:\n      method: POST\n      url: \"{{{{input.url}}}}\"\n      headers: {{content-type: application/json}}\n      body: {{q: price}}\n",
        api.base_url()
    );
    let run = |browser: &mut Browser, url: &str| {
        browser.agent_request(pipeline_request(
            "run_pipeline",
            &pipeline,
            json!({"input": {"url": url}}),
        ))
    };
    let fetched = run(&mut browser, &format!("{}/v1/chat/completions", api.base_url()));
    assert_eq!(fetched["type"], "pipeline_result", "{fetched}");
    assert_eq!(fetched["run"]["status"], "ok", "{fetched}");
    assert_eq!(fetched["run"]["output"]["status"], 200);
    let content = fetched["run"]["output"]["body"]["choices"][0]["message"]["content"].as_str();
    assert!(content.unwrap_or_default().contains("39"), "{fetched}");
    let asked = api.requests();
    assert_eq!((asked[0].method.as_str(), &asked[0].body), ("POST", &json!({"q": "price"})));
    // A server that does not allow the extension says so.
    let no_cors = format!(
        "id: no_cors\nallow_tools: [http]\nhttp_origins: [\"{}\"]\nsteps:\n  - {{id: get, type: tool, tool: http, input: {{url: \"{}\"}}}}\n",
        sites.url("/").trim_end_matches('/'),
        sites.url("/shop/help.html")
    );
    let refused =
        browser.agent_request(pipeline_request("run_pipeline", &no_cors, json!({"input": {}})));
    assert_eq!(refused["run"]["error"]["code"], "tool_failed", "{refused}");
    assert!(refused["run"]["error"]["message"].as_str().unwrap().contains("CORS"));
    // The worker reads no YAML: a YAML file sent without its parsed form is refused, saying
    // what to do.
    let unparsed = browser
        .agent_request(json!({"type": "run_pipeline", "text": no_cors.clone(), "input": {}}));
    assert_eq!(unparsed["type"], "failed", "{unparsed}");
    let said = unparsed["message"].as_str().unwrap_or_default();
    assert!(said.contains("open it in the Prompt Studio and save it again"), "{unparsed}");
    let elsewhere = run(&mut browser, "http://localhost:9/secret");
    assert_eq!(elsewhere["run"]["status"], "failed", "{elsewhere}");
    assert_eq!(elsewhere["run"]["error"]["code"], "origin_not_allowed");
    assert_eq!(elsewhere["run"]["error"]["step_id"], "get");

    // Cancel from the Studio while the model thinks: the step in flight ends, no later one runs.
    let page = browser.open_tab(&browser.extension_url("studio.html")).page;
    page.wait_for("document.querySelector('[data-testid=tab-pipelines]')", "the Studio");
    page.click("[data-testid=tab-pipelines]");
    page.wait_for("document.querySelector('[data-testid=pipeline-text]')", "the pipeline editor");
    pick_tab(&page, &product);
    page.click("[data-testid=pipeline-run]");
    // Each step shows as it ends: the page is read while the model still thinks.
    page.wait_for(
        "document.querySelector('[data-testid=pipeline-live] [data-testid=pipeline-step][data-step=page][data-status=ok]')",
        "the page step, live",
    );
    assert!(page.text("[data-testid=pipeline-running]").contains("1 step(s) done"));
    page.click("[data-testid=pipeline-cancel]");
    page.wait_for("document.querySelector('[data-testid=pipeline-result]')", "the run to stop");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=pipeline-result]').dataset.status"),
        json!("cancelled")
    );
    assert!(page.text("[data-testid=pipeline-run-error]").contains("cancelled"));
    assert_eq!(
        count(&page, "[data-testid=pipeline-step][data-step=facts]"),
        0,
        "no step after the cancel ran"
    );
}

#[test]
fn a_pipeline_step_runs_an_agent_task_and_gets_its_answer() {
    let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
    let state = browser.page_state(&shop);
    let kettle = listed(&state, "Steel kettle").and_then(|e| e["id"].as_u64()).unwrap();
    let llm = ScriptedLlm::start([
        plan(false, "1. Open the Steel kettle page\n2. Read its price", ""),
        navigate("Start", "Open the kettle", json!([{"action": "click", "id": kettle}])),
        report("Success: it is open", "€39.00"),
        verdict(true, "", "The steel kettle costs €39.00."),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    let pipeline = "id: ask_agent\nallow_tools: [agent_task]\nsteps:\n  - id: ask\n    type: tool\n    tool: agent_task\n    input:\n      task: \"{{input.question}}\"\n  - id: answer\n    type: transform\n    output: {answer: \"{{steps.ask.output.answer}}\"}\n";
    let done = browser.agent_request(pipeline_request(
        "run_pipeline",
        pipeline,
        json!({"input": {"question": "What does the steel kettle cost?"}, "tab_id": shop.id}),
    ));
    assert_eq!(done["run"]["status"], "ok", "{done}");
    assert_eq!(done["run"]["output"]["answer"], "The steel kettle costs €39.00.");
    assert!(
        shop.page.eval("location.href").as_str().unwrap().contains("sku=kettle"),
        "it really clicked"
    );
    // The task is a conversation of its own, captured like any other.
    let run_id = done["run"]["steps"][0]["output"]["run_id"].as_str().unwrap().to_owned();
    let task = browser.agent_request(json!({"type": "current_task"}));
    assert_eq!(task["snapshot"]["run_id"], run_id.as_str());
    assert_eq!(task["snapshot"]["task"], "What does the steel kettle cost?");
}

/// The pairs of `when` labels whose drawn text boxes overlap, as the browser laid them out.
fn labels_overlapping(page: &Page) -> Value {
    page.eval(
        "(() => { const boxes = [...document.querySelectorAll('[data-testid=diagram-label] text')]
            .map(t => [t.parentNode.dataset.to, t.getBBox()]);
          const out = [];
          boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
            if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height) out.push([a, b]);
          }));
          return out; })()",
    )
}

#[test]
fn when_labels_into_one_step_are_drawn_apart() {
    let mut browser = Browser::launch();
    let page = browser.open_tab(&browser.extension_url("studio.html")).page;
    page.wait_for("document.querySelector('[data-testid=tab-pipelines]')", "the Studio");
    page.click("[data-testid=tab-pipelines]");
    page.wait_for("document.querySelector('[data-testid=pipeline-text]')", "the pipeline editor");
    let pipeline = "id: many_whens\nallow_tools: []\nsteps:\n  - {id: a, type: transform, output: 1}\n  - {id: b, type: transform, output: 2}\n  - {id: c, type: transform, output: 3}\n  - {id: joined, type: transform, when: \"steps.a.output == 1 && steps.b.output == 2 || exists(steps.c.output)\", output: \"{{steps.a.output}}\"}\n  - {id: left_out, type: transform, when: \"steps.a.status == 'skipped' && steps.b.status == 'skipped'\", output: 0}\n  - {id: third, type: transform, when: \"steps.c.output == 3\", output: \"{{steps.b.output}}\"}\n  - {id: last, type: transform, when: \"steps.joined.status == 'ok' && steps.third.status == 'ok'\", output: 4}\n";
    replace_text(&page, "[data-testid=pipeline-text]", pipeline);
    page.wait_for(
        "document.querySelectorAll('[data-testid=diagram-label]').length === 4",
        "a label per gated step",
    );
    assert_eq!(
        count(&page, "[data-testid=diagram-edge][data-to=joined][data-when]:not([data-when=''])"),
        3
    );
    assert_eq!(labels_overlapping(&page), json!([]));
    page.eval("document.querySelector('[data-testid=pipeline-diagram]').scrollIntoView()");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-diagram.png"));
}

#[test]
fn saved_versions_are_listed_diffed_and_restored_as_a_new_version() {
    let mut browser = Browser::launch();
    let llm = ScriptedLlm::start([]);
    browser.configure_agent(settings(llm.base_url()));
    let page = browser.open_tab(&browser.extension_url("studio.html")).page;
    page.wait_for("document.querySelector('[data-testid=file-text]')", "the Studio's editor");
    page.wait_for_text("[data-testid=versions-panel]", "Not saved from the Studio yet");
    let bundled = value(&page, "[data-testid=bundled-text]");
    let save = |text: &str, versions: usize| {
        replace_text(&page, "[data-testid=file-text]", text);
        page.wait_for_text("[data-testid=file-state]", "unsaved edits");
        page.click("[data-testid=save-prompts]");
        page.wait_for_text("[data-testid=file-state]", "edited (override saved)");
        page.wait_for(
            &format!(
                "document.querySelectorAll('[data-testid=prompt-version]').length === {versions}"
            ),
            "the new version listed",
        );
    };
    save(&format!("FIRST EDIT: be brief.\n{bundled}"), 1);
    save(&format!("SECOND EDIT: be very brief.\n{bundled}"), 2);
    let numbers = page.eval(
        "[...document.querySelectorAll('[data-testid=prompt-version]')].map(v => v.dataset.number)",
    );
    assert_eq!(numbers, json!(["2", "1"]), "newest first");
    let row = page.text("[data-testid=prompt-version]");
    assert!(row.contains("v2") && row.contains("saved in the Studio"), "{row}");
    // The saved notice belongs to this file: another view does not show it, and it is gone
    // once the person comes back.
    page.wait_for_text("[data-testid=notice]", "Saved.");
    page.click("[data-testid=tab-traces]");
    page.wait_for("document.querySelector('[data-testid=traces-view]')", "the traces view");
    assert_eq!(count(&page, "[data-testid=notice]"), 0);
    page.click("[data-testid=tab-prompts]");
    page.wait_for("document.querySelector('[data-testid=versions-panel]')", "the prompts view");
    assert_eq!(count(&page, "[data-testid=notice]"), 0);

    // Version 1 against the text in force: its line out, the new one in, the words marked.
    page.click("[data-testid=prompt-version][data-number='1'] [data-testid=version-diff]");
    page.wait_for("document.querySelector('[data-testid=version-diff-view]')", "the diff");
    assert!(page.text("[data-testid=version-diff-summary]").contains("1 line(s) added, 1 removed"));
    assert_eq!(page.text("[data-testid=diff-line][data-kind=removed] del"), "FIRST");
    let added = page.text("[data-testid=diff-line][data-kind=added]");
    assert!(added.contains("SECOND EDIT: be very brief."), "{added}");
    assert_eq!(page.text("[data-testid=diff-line][data-kind=added] ins"), "SECOND");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-versions.png"));

    // Restoring over unsaved edits asks first, in the page; keeping them changes nothing.
    replace_text(&page, "[data-testid=file-text]", &format!("THIRD, UNSAVED\n{bundled}"));
    page.wait_for_text("[data-testid=file-state]", "unsaved edits");
    page.click("[data-testid=prompt-version][data-number='1'] [data-testid=version-restore]");
    page.wait_for_text("[data-testid=restore-confirm]", "unsaved edits");
    page.screenshot(&e2e::workspace_root().join("target/tmp/studio-restore-confirm.png"));
    page.click("[data-testid=restore-confirm-no]");
    page.wait_for("!document.querySelector('[data-testid=restore-confirm]')", "no question");
    assert!(value(&page, "[data-testid=file-text]").starts_with("THIRD, UNSAVED"));
    assert_eq!(stored(&page, "promptVersions").len(), 2);
    page.click("[data-testid=prompt-version][data-number='1'] [data-testid=version-restore]");
    page.click("[data-testid=restore-confirm-yes]");
    page.wait_for(
        "document.querySelectorAll('[data-testid=prompt-version]').length === 3",
        "the restore kept as version 3",
    );
    page.wait_for_text("[data-testid=notice]", "Restored version 1");
    assert!(value(&page, "[data-testid=file-text]").starts_with("FIRST EDIT"));
    assert_eq!(page.text("[data-testid=file-state]"), "edited (override saved)");
    assert_eq!(
        page.text("[data-testid=prompt-version][data-number='3'] [data-testid=version-note]"),
        "same text as v1 (restored)"
    );
    // History is kept as it was; the worker's next task reads the restored text.
    let mut versions = stored(&page, "promptVersions");
    versions.sort_by_key(|v| v["number"].as_u64());
    let texts: Vec<&str> =
        versions.iter().map(|v| v["text"].as_str().unwrap_or_default()).collect();
    assert!(
        texts[0].starts_with("FIRST") && texts[1].starts_with("SECOND") && texts[2] == texts[0]
    );
    let settings = browser.agent_request(json!({"type": "get_settings"}));
    let in_force = settings["settings"]["prompt_overrides"]["navigator/A.md"].as_str();
    assert!(in_force.unwrap_or_default().starts_with("FIRST EDIT"), "{settings}");
}

#[test]
fn a_traces_annotation_link_opens_the_run_on_the_traces_step() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (_shop, _llm, run_id) = kettle_price_run(&mut browser, &sites);

    // The traces of stored step 2: the third step, as the annotation page counts.
    let page =
        browser.open_tab(&browser.extension_url(&format!("studio.html#run={run_id}&step=2"))).page;
    page.wait_for_text("[data-testid=step-filter]", "step 3");
    page.wait_for("document.querySelector('[data-testid=trace-row]')", "the step's traces");
    assert!(page.text("[data-testid=trace-row]").contains("· step 3"));
    page.click("[data-testid=trace-row]");
    page.wait_for("document.querySelector('[data-testid=trace-detail]')", "the trace");
    assert!(page.text("[data-testid=trace-detail]").contains("· step 3"));
    page.click("[data-testid=trace-annotation-link]");
    page.wait_for(
        "document.querySelector('[data-testid=run-view]')",
        "the run on the annotation page",
    );
    page.wait_for_text("[data-testid=step-heading]", "Step 3 of 3");
}

/// Chooses `tab` in the test run's tab list, where it shows by its title and address.
fn pick_tab(page: &Page, tab: &Tab) {
    let option = format!("[data-testid=pipeline-tab] option[value=\"{}\"]", tab.id);
    page.wait_for(
        &format!("document.querySelector({})", Value::from(option.as_str())),
        "the tab listed",
    );
    let shown =
        page.eval(&format!("document.querySelector({}).textContent", Value::from(option.as_str())));
    assert!(shown.as_str().is_some_and(|s| s.contains("http")), "{shown}");
    choose(page, "[data-testid=pipeline-tab]", &tab.id.to_string());
}
