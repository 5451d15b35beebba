//! Other agents driving AlphaScout through its MCP server, in real Chromium over the real
//! worker and the real `alphascout-mcp`, registered in the test profile: a client of the
//! official Python SDK (`tests/py/mcp_client.py`) over stdio, as a desktop app, and over
//! streamable HTTP, as a local agent, with the jobs' scripted model. What a user checks: the
//! tools, a task's progress and answer, a question answered, a workflow replayed with a
//! parameter, a published pipeline run, clear refusals (switched off, a denied URL, a busy
//! tab), Settings' "Allow MCP clients" with the host's state and the clients, the tab's
//! "Driven by" and the captured run naming its client.

use std::time::{Duration, Instant};

use crate::support::pipeline_request;
use e2e::agent::settings;
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use e2e::mcp_client::{Client, DENIED, error_message, keys, setup, structured};
use serde_json::json;

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

/// A desktop client over stdio: the tools, a task on a fixture page with progress and its
/// answer, a question answered, the refusals a client must understand, and what the person
/// sees of it in the tab's panel and the captured run.
#[test]
fn a_desktop_client_over_stdio_runs_tasks_answers_questions_and_is_refused_clearly() {
    let mut s = setup(Duration::from_millis(300));
    let mut client = Client::stdio("e2e-desk", &s.dir);

    // The tools, `act` with the Navigator's own action schema.
    let tools = client.list_tools();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let fixed = "run_task answer get_page_state act screenshot list_tabs list_workflows \
                 replay_workflow run_pipeline job_status stop_job";
    for name in fixed.split_whitespace() {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }
    let act = tools.iter().find(|t| t["name"] == "act").unwrap();
    let variants = act["inputSchema"]["properties"]["action"]["oneOf"].as_array().unwrap();
    assert!(variants.iter().any(|v| v["properties"]["action"]["const"] == "click"), "{act:#}");

    // A task at a URL: a new tab, progress per step, the answer, its run and session.
    let page = "table.html";
    let url = s.sites.url(&format!("/tasks/{page}"));
    let (done, progress) =
        client.run("run_task", json!({"task": e2e::jobs::task(page), "url": url}));
    let result = structured(&done);
    assert_eq!(result["status"], "done", "{done:#}");
    assert_eq!(result["answer"], e2e::tasks::APPROVED, "{done:#}");
    assert!(!progress.is_empty(), "no progress notification");
    assert!(
        progress.iter().all(|p| p["message"].as_str().is_some_and(|m| !m.is_empty())),
        "{progress:#?}"
    );
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains(e2e::tasks::APPROVED), "{text}");
    let run_id = result["run_id"].as_str().unwrap().to_owned();
    // The captured run names its client, for the annotators.
    let runs = s.browser.stored_runs();
    let run = runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == run_id.as_str()).cloned();
    assert_eq!(run.expect("the run is captured")["drivenBy"], "e2e-desk");
    let status = client.run("job_status", json!({"job_id": result["job_id"]})).0;
    assert_eq!(structured(&status)["status"], "done", "{status:#}");

    // A task that asks: the client gets the question, the tab's panel shows who drives it.
    let asking = "checkboxes.html";
    let tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{asking}")));
    let (asked, _) =
        client.run("run_task", json!({"task": e2e::jobs::asking_task(asking), "tab_id": tab.id}));
    let asked = structured(&asked).clone();
    assert_eq!(asked["status"], "asking", "{asked:#}");
    assert_eq!(asked["question"], e2e::jobs::question(asking), "{asked:#}");
    let panel = s.browser.open_side_panel(&tab);
    let driven = panel.wait_for_text("[data-testid=driven-by]", "Driven by e2e-desk");
    assert!(driven.contains("Stop"), "{driven}");
    panel.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-driven-by.png"));
    // The answer resumes it; the call returns when it is done.
    let (answered, _) =
        client.run("answer", json!({"job_id": asked["job_id"], "text": "Yes, go ahead."}));
    assert_eq!(structured(&answered)["status"], "done", "{answered:#}");
    assert_eq!(tab.page.eval("document.getElementById('result')?.textContent"), json!("Correct"));
    panel.wait_for("!document.querySelector('[data-testid=driven-by]')", "the banner to go");

    // The page as the agent reads it, a screenshot, and one action, in that tab.
    let state = client.run("get_page_state", json!({"tab_id": tab.id})).0;
    let text = structured(&state)["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains(&format!("/tasks/{asking}")), "{text}");
    let shot = client.run("screenshot", json!({"tab_id": tab.id})).0;
    assert_eq!(shot["result"]["content"][0]["type"], "image", "{shot:#}");
    assert_eq!(shot["result"]["content"][0]["mimeType"], "image/jpeg");
    let reloaded = client.run("act", json!({"tab_id": tab.id, "action": {"action": "reload"}})).0;
    assert_eq!(reloaded["result"]["is_error"], false, "{reloaded:#}");
    let unknown = client.run("act", json!({"tab_id": tab.id, "action": {"action": "fly"}})).0;
    assert!(error_message(&unknown).starts_with("act's action"), "{unknown:#}");

    // A URL the firewall denies: refused before any tab opens.
    let denied = client
        .run("run_task", json!({"task": "Look around.", "url": format!("https://{DENIED}/")}))
        .0;
    let said = error_message(&denied);
    assert_eq!(
        said,
        format!(
            "https://{DENIED}/ is on your deny list ({DENIED}). Edit the list in Settings to allow it."
        )
    );
    let scheme = client.run("run_task", json!({"task": "Read it.", "url": "file:///etc/passwd"})).0;
    assert!(error_message(&scheme).contains("http and https pages only"), "{scheme:#}");

    // A second job on a busy tab is refused with the panel's sentence.
    let busy_page = "paragraph.html";
    let busy_tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{busy_page}")));
    client.call(
        "first",
        "run_task",
        json!({"task": e2e::jobs::task(busy_page), "tab_id": busy_tab.id}),
    );
    s.browser.wait_for_jobs("the task running", |jobs| {
        jobs.iter().any(|j| j["tab_id"] == busy_tab.id && j["status"] == "running")
    });
    let second =
        client.run("run_task", json!({"task": "Something else.", "tab_id": busy_tab.id})).0;
    assert_eq!(
        error_message(&second),
        "A task is running in this tab: stop it, or use another tab."
    );
    assert_eq!(structured(&client.outcome("first").0)["status"], "done");

    // Arguments that do not fit, and what is not there, are named.
    let bad = client.run("run_task", json!({"task": "x", "tab": 3})).0;
    assert_eq!(error_message(&bad), "run_task takes no tab.");
    let missing = client.run("get_page_state", json!({"tab_id": 987654})).0;
    assert!(error_message(&missing).contains("There is no tab 987654"), "{missing:#}");

    // Switched off: the client is told to switch it on; switched on again, it works again.
    s.save(|settings| settings["allow_mcp_clients"] = json!(false));
    let socket = s.dir.join("bridge.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while socket.exists() {
        assert!(Instant::now() < deadline, "the host did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let off = client.run("list_tabs", json!({})).0;
    assert!(error_message(&off).contains("Allow MCP clients"), "{off:#}");
    s.save(|settings| settings["allow_mcp_clients"] = json!(true));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the host did not start again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let tabs = client.run("list_tabs", json!({})).0;
    assert!(structured(&tabs)["tabs"].as_array().is_some_and(|t| !t.is_empty()), "{tabs:#}");
    let _ = &s.model;
}

/// A pipeline the HTTP test publishes: it checks a SKU it is given.
const ECHO: &str = r#"
id: sku_check
description: Says which SKU it was given.
inputs:
  schema:
    type: object
    additionalProperties: false
    required: [sku]
    properties:
      sku: { type: string }
allow_tools: []
steps:
  - id: answer
    type: transform
    output: { sku: "{{input.sku}}", checked: true }
"#;

/// A local agent over HTTP: a workflow replayed with a parameter (by name and as its own
/// tool), a published pipeline run, and Settings listing the client.
#[test]
fn a_local_agent_over_http_replays_a_workflow_and_runs_a_published_pipeline() {
    let mut s = setup(Duration::from_millis(0));
    e2e::workflows::seed_recording(&mut s.browser, &s.sites);
    let workflow_id = e2e::workflows::reflect(&mut s.browser);
    e2e::workflows::save_with_dependency(&mut s.browser, &workflow_id);
    let mut client = Client::http("e2e-agent", &s.http);

    // Settings lists the client, with its transport.
    let tab = s.browser.open_tab(&s.sites.url("/shop/index.html"));
    let panel = s.browser.open_side_panel(&tab);
    panel.click("[data-testid=settings-toggle]");
    let listed = panel.wait_for_text("[data-testid=mcp-client-list]", "e2e-agent");
    assert!(listed.contains("http"), "{listed}");
    panel.wait_for_text("[data-testid=mcp-host-status]", "The MCP host is connected.");
    panel.eval(
        "document.querySelector('[data-testid=settings-mcp-clients]').scrollIntoView(), true",
    );
    panel.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-clients.png"));
    panel.click("[data-testid=settings-toggle]");

    // The workflow is a tool of its own, its parameter in the schema.
    let tools = client.list_tools();
    let own = tools.iter().find(|t| t["name"] == "workflow_open_the_cheapest_product");
    let own = own.unwrap_or_else(|| panic!("no workflow tool: {tools:#?}"));
    assert_eq!(own["inputSchema"]["properties"]["query"]["type"], "string", "{own:#}");

    // Replayed by name with a parameter: progress per step, the extract as the answer.
    let (replayed, progress) = client.run(
        "replay_workflow",
        json!({
        "workflow": "Open the cheapest product", "params": {"query": "tea"}, "tab_id": tab.id}),
    );
    let result = structured(&replayed).clone();
    assert_eq!(result["status"], "done", "{replayed:#}");
    assert_eq!(result["answer"]["cheapest"], "French press", "{replayed:#}");
    assert!(!progress.is_empty(), "no progress notification");
    e2e::workflows::wait_for_url(&tab, "product.html?sku=press");
    let runs = s.browser.stored_runs();
    let run =
        runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == result["run_id"]).cloned();
    assert_eq!(run.expect("the replay is captured")["drivenBy"], "e2e-agent");
    // A parameter it does not have is named.
    let wrong = client.run("workflow_open_the_cheapest_product", json!({"colour": "red"})).0;
    assert!(error_message(&wrong).contains("no parameter \"colour\""), "{wrong:#}");
    let none = client.run("replay_workflow", json!({"workflow": "Fly to the moon"})).0;
    assert!(error_message(&none).contains("There is no workflow \"Fly to the moon\""), "{none:#}");

    // A pipeline: unknown until published; published, the client hears the tools changed.
    let unpublished =
        client.run("run_pipeline", json!({"name": "sku_check", "input": {"sku": "K"}})).0;
    assert!(error_message(&unpublished).contains("No published pipeline is named \"sku_check\""));
    let saved =
        s.browser.agent_request(pipeline_request("save_pipeline", ECHO, json!({"publish": true})));
    assert_eq!(saved["published"], true, "{saved}");
    client.next_where("the tools' change", |l| l["event"] == "tools_changed");
    let tools = client.list_tools();
    let own = tools.iter().find(|t| t["name"] == "pipeline_sku_check").expect("its own tool");
    assert_eq!(own["inputSchema"]["properties"]["sku"]["type"], "string", "{own:#}");
    let (ran, steps) = client.run("pipeline_sku_check", json!({"sku": "KET-1", "tab_id": tab.id}));
    assert_eq!(structured(&ran)["status"], "done", "{ran:#}");
    assert_eq!(structured(&ran)["answer"], json!({"sku": "KET-1", "checked": true}));
    assert_eq!(steps.len(), 1, "one progress per step: {steps:#?}");
    let (by_name, _) = client
        .run("run_pipeline", json!({"name": "sku_check", "input": {"sku": "X"}, "tab_id": tab.id}));
    assert_eq!(structured(&by_name)["answer"]["sku"], "X", "{by_name:#}");

    // A workflow renamed on the Workflows page (which writes the store itself): the client
    // hears the tools changed, and the tool takes the new name.
    client.forget_events();
    let page = s.browser.open_tab(&s.browser.extension_url("workflows.html")).page;
    let row = format!("[data-testid=workflow-row][data-id=\"{workflow_id}\"]");
    page.wait_for(&format!("document.querySelector('{row}')"), "the workflow's row");
    page.click(&row);
    page.wait_for("document.querySelector('[data-testid=workflow-name]')", "the editor");
    page.eval(
        "(() => { const f = document.querySelector('[data-testid=workflow-name]'); \
         f.value = 'Open the cheapest item'; \
         f.dispatchEvent(new Event('input', {bubbles: true})); \
         f.dispatchEvent(new Event('change', {bubbles: true})); })()",
    );
    page.click("[data-testid=workflow-save]");
    page.wait_for_text("[data-testid=workflow-current]", "v3");
    client.next_where("the tools' change after a save", |l| l["event"] == "tools_changed");
    let names: Vec<String> =
        client.list_tools().iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
    assert!(names.iter().any(|n| n == "workflow_open_the_cheapest_item"), "{names:?}");
    assert!(!names.iter().any(|n| n == "workflow_open_the_cheapest_product"), "{names:?}");
    let _ = &s.model;
}

/// `act` holds the firewall's guard as a job's action does, until its page settles: a
/// click that leads to a denied site however it gets there (a link, a script, a redirect,
/// a new tab) is refused, and the denied site never hears of it.
#[test]
fn an_act_that_leads_to_a_denied_site_is_refused() {
    let mut s = setup(Duration::from_millis(0));
    s.save(|settings| settings["deny"] = json!(["localhost", DENIED]));
    let mut client = Client::http("e2e-actor", &s.http);
    let mut last = None;
    for way in
        ["Secret by a link", "Secret by a script", "Secret by a redirect", "Secret in a new tab"]
    {
        let tab = s.browser.open_tab(&s.sites.url("/firewall/index.html"));
        let state = client.run("get_page_state", json!({"tab_id": tab.id})).0;
        let text = structured(&state)["text"].as_str().unwrap_or_default().to_owned();
        let id = e2e::agent::reader::id_of(&text, way).unwrap_or_else(|| panic!("{way}: {text}"));
        let (acted, _) =
            client.run("act", json!({"tab_id": tab.id, "action": {"action": "click", "id": id}}));
        assert!(acted.get("result").is_some(), "{way}: {acted:#}");
        let secret: Vec<String> =
            s.sites.other_requests().into_iter().filter(|p| p.contains("secret")).collect();
        assert!(secret.is_empty(), "{way}: the denied site was asked for {secret:?}");
        last = Some(tab);
    }
    // The guard went with the last action: the person's own click in that tab goes anywhere.
    let tab = last.expect("a tab");
    let away = s.sites.other_url("/firewall/secret.html?via=person");
    tab.page.eval(&format!("location.href = {}", json!(away)));
    let deadline = Instant::now() + Duration::from_secs(20);
    let asked = loop {
        let asked = s.sites.other_requests();
        if asked.iter().any(|p| p.contains("via=person")) || Instant::now() > deadline {
            break asked;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(asked.iter().any(|p| p.contains("via=person")), "{asked:?}");
}
