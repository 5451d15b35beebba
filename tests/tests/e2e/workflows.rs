//! Workflows end to end: a stopped recording of the fixture shop is reflected into a
//! workflow with a `{query}` parameter (scripted model), and replayed in a real tab with
//! another value; the replay is captured as a run, and survives the worker being stopped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::pipeline_request;
use agent_engine::jobs::TAB_CLOSED;
use e2e::agent::settings;
use e2e::annotation::open_annotation;
use e2e::browser::{Browser, Page, Tab};
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use e2e::workflows::{self, Prompt, prompt_kind};
use serde_json::{Value, json};

/// Every prompt the model was sent, with its kind.
type Seen = Arc<Mutex<Vec<(Prompt, String)>>>;

/// The indexes of run `run_id`'s steps in what the agent stored.
fn step_indexes(stored: &Value, run_id: &str) -> Vec<u64> {
    let steps = stored["steps"].as_array().unwrap().iter();
    steps.filter(|s| s["runId"] == run_id).map(|s| s["index"].as_u64().unwrap()).collect()
}

/// A model for the whole story: pass A and B scripted, replay read from the prompt. Every
/// prompt is kept, with its kind.
fn model() -> (ScriptedLlm, Seen) {
    model_with(|_, _| None)
}

/// [`model`], with `answer` deciding first: its reply where it has one, else the story's.
fn model_with(
    mut answer: impl FnMut(Prompt, &str) -> Option<Reply> + Send + 'static,
) -> (ScriptedLlm, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut steps = workflows::reflect_step_replies().into_iter();
    let llm = ScriptedLlm::responding(move |prompt| {
        let kind = prompt_kind(prompt);
        log.lock().unwrap().push((kind, prompt.to_owned()));
        if let Some(reply) = answer(kind, prompt) {
            return reply;
        }
        match kind {
            Prompt::ReflectStep => steps.next().expect("one pass-A reply per step"),
            Prompt::ReflectTask => workflows::reflect_task_reply(),
            Prompt::Replay => workflows::replay_reply(prompt),
            Prompt::Other => Reply::error(400, "not a workflow prompt"),
        }
    });
    (llm, seen)
}

/// Whether the model was sent a prompt of `kind`.
fn was_asked(seen: &Seen, kind: Prompt) -> bool {
    seen.lock().unwrap().iter().any(|(k, _)| *k == kind)
}

/// The scripted model configured, the fixture shop's recording seeded and reflected: the
/// new workflow's id.
fn reflected(browser: &mut Browser, sites: &FixtureSites, llm: &ScriptedLlm) -> String {
    browser.configure_agent(settings(llm.base_url()));
    workflows::seed_recording(browser, sites);
    workflows::reflect(browser)
}

/// [`reflected`], then saved again with the dependency the replays need (version 2).
fn saved_for_replay(browser: &mut Browser, sites: &FixtureSites, llm: &ScriptedLlm) -> String {
    let workflow_id = reflected(browser, sites, llm);
    workflows::save_with_dependency(browser, &workflow_id);
    workflow_id
}

/// Starts a replay of version 2 of `workflow_id` in `tab` for `tea`: the worker's answer,
/// which must be the replay.
fn start_replay(browser: &mut Browser, workflow_id: &str, tab: &Tab) -> Value {
    let started = browser.agent_request(json!({"type": "start_replay", "workflow_id": workflow_id,
        "version": 2, "tab_id": tab.id, "params": {"query": "tea"}}));
    assert_eq!(started["type"], "replay", "{started}");
    started
}

/// Waits up to 30 s for `done`, failing with `never` after that.
fn wait_until(done: impl Fn() -> bool, never: &str) {
    let waiting = Instant::now();
    while !done() {
        assert!(waiting.elapsed() < Duration::from_secs(30), "{never}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opens the Workflows page, reflects the seeded recording from its row, and waits for the
/// reflection to end in `state` (`done` or `failed`).
fn reflect_on_the_page(browser: &mut Browser, state: &str) -> Page {
    let page = browser.open_tab(&browser.extension_url("workflows.html")).page;
    let row = format!("[data-testid=recording-row][data-id={}]", workflows::RECORDING_ID);
    page.wait_for(&format!("document.querySelector('{row}')"), "the recording's row");
    page.click(&format!("{row} [data-testid=reflect]"));
    page.wait_for(
        &format!(
            "document.querySelector('[data-testid=reflect-progress]')?.dataset.state === '{state}'"
        ),
        &format!("the reflection to end {state}"),
    );
    page
}

/// Sets a field's value as typing would, and leaves it (`input`, then `change`).
fn set_field(page: &Page, selector: &str, value: &str) {
    page.wait_for(&format!("document.querySelector({})", json!(selector)), selector);
    page.eval(&format!(
        "(() => {{ const f = document.querySelector({}); f.value = {}; \
         f.dispatchEvent(new Event('input', {{bubbles: true}})); \
         f.dispatchEvent(new Event('change', {{bubbles: true}})); }})()",
        json!(selector),
        json!(value)
    ));
}

#[test]
fn a_reflected_workflow_is_edited_on_the_workflows_page_and_replays_with_another_value() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, seen) = model();
    browser.configure_agent(settings(llm.base_url()));
    workflows::seed_recording(&mut browser, &sites);

    // Reflect from the Workflows page.
    let page = reflect_on_the_page(&mut browser, "done");
    let kinds: Vec<Prompt> = seen.lock().unwrap().iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds.iter().filter(|k| **k == Prompt::ReflectStep).count(), 5, "pass A per step");
    assert_eq!(kinds.iter().filter(|k| **k == Prompt::ReflectTask).count(), 1, "pass B once");
    let traces = workflows::all(&mut browser, "traces");
    let reflect_run = format!("reflect:{}", workflows::RECORDING_ID);
    assert_eq!(traces.iter().filter(|t| t["runId"] == reflect_run.as_str()).count(), 6);

    // The new workflow is open: a {query} parameter, its steps with their screenshots.
    page.wait_for("document.querySelector('[data-testid=workflow-editor]')", "the editor");
    assert_eq!(page.text("[data-testid=workflow-current]"), "v1");
    assert_eq!(page.eval("document.querySelector('[data-testid=param-name]').value"), "query");
    assert_eq!(page.eval("document.querySelector('[data-testid=step-value]').value"), "{query}");
    page.wait_for(
        "[...document.querySelectorAll('[data-testid=step-shot]')].filter(i => i.naturalWidth > 0).length === 5",
        "every step's recorded screenshot",
    );

    // Rename the parameter and change its example: every use follows.
    set_field(&page, "[data-testid=param-name]", "product");
    page.wait_for(
        "document.querySelector('[data-testid=step-value]').value === '{product}'",
        "the step to use the renamed parameter",
    );
    set_field(&page, "[data-testid=param-example]", "grinder");
    // A dependency that does not point upstream is refused live, and blocks saving.
    let search = "[data-testid=subtask-row][data-id=search]";
    set_field(&page, &format!("{search} [data-testid=subtask-depends]"), "cheapest");
    page.wait_for(
        &format!("document.querySelector('{search} [data-testid=field-problem]')?.textContent.includes('not upstream')"),
        "the bad dependency's problem beside it",
    );
    assert_eq!(page.eval("document.querySelector('[data-testid=workflow-save]').disabled"), true);
    set_field(&page, &format!("{search} [data-testid=subtask-depends]"), "");
    // The open subtask needs the cheapest product read upstream.
    let open = "[data-testid=subtask-row][data-id=open]";
    assert!(page.text(&format!("{open} [data-testid=upstream-vars]")).contains("cheapest"));
    set_field(&page, &format!("{open} [data-testid=subtask-depends]"), "cheapest");
    page.wait_for(
        "document.querySelector('[data-testid=workflow-problems]').dataset.count === '0'",
        "no problems left",
    );
    page.click("[data-testid=workflow-save]");
    page.wait_for_text("[data-testid=workflow-current]", "v2");
    let saved = workflows::all(&mut browser, "workflows");
    assert_eq!(saved.len(), 2, "every save is a version");
    let v2 = saved.iter().find(|w| w["version"] == 2).unwrap();
    assert_eq!(v2["params"][0]["name"], "product");
    assert_eq!(v2["params"][0]["example"], "grinder");
    assert_eq!(v2["steps"][0]["action"]["value"], "{product}");
    assert_eq!(v2["subtasks"][2]["dependsOn"], json!(["cheapest"]));
    assert_eq!(v2["subtasks"][0]["dependsOn"], json!([]));
    page.screenshot(&std::env::temp_dir().join("workflows-editor.png"));
    // A step's screen enlarges on a click, and a click puts it back.
    page.click("[data-testid=step-shot]");
    page.wait_for(
        "document.querySelector('[data-testid=step-shot-zoom]')",
        "the screenshot enlarged",
    );
    page.screenshot(&std::env::temp_dir().join("workflows-step-zoom.png"));
    page.click("[data-testid=step-shot-zoom]");
    page.wait_for("!document.querySelector('[data-testid=step-shot-zoom]')", "the screenshot back");

    // Replay with another value in another tab, from the form.
    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    page.click("[data-testid=replay-open]");
    page.wait_for("document.querySelector('[data-testid=replay-form]')", "the replay form");
    let field = "[data-testid=replay-param][data-name=product]";
    assert_eq!(page.eval(&format!("document.querySelector('{field}').value")), "grinder");
    set_field(&page, field, "tea");
    page.wait_for(
        &format!("[...document.querySelectorAll('[data-testid=replay-tab] option')].some(o => o.value === '{}')", tab.id),
        "the shop tab among the choices",
    );
    // A person tells the tabs apart by title and address, not by Chrome's numbers.
    let offered = page.eval(&format!(
        "document.querySelector('[data-testid=replay-tab] option[value=\"{}\"]').textContent",
        tab.id
    ));
    let offered = offered.as_str().unwrap_or_default();
    assert!(offered.contains("/shop/index.html") && !offered.contains("in window"), "{offered}");
    set_field(&page, "[data-testid=replay-tab]", &tab.id.to_string());
    page.click("[data-testid=replay-start]");
    page.wait_for(
        "['done', 'failed', 'cancelled'].includes(document.querySelector('[data-testid=replay-status]')?.dataset.state)",
        "the replay to end",
    );
    let status = browser.agent_request(json!({"type": "current_replay"}))["replay"].clone();
    assert_eq!(status["status"], "done", "{status:#}");
    assert_eq!(status["version"], 2);
    // The page reached the expected state, and the extract holds the right value.
    workflows::wait_for_url(&tab, "product.html?sku=press");
    assert_eq!(page.text("[data-testid=replay-extract][data-name=cheapest]"), "French press");
    let progress = page.text("[data-testid=replay-progress]");
    let saved_calls = status["calls_saved"].as_u64().unwrap();
    assert!(saved_calls >= 3, "{status:#}");
    assert!(
        progress.contains(&format!("{saved_calls} calls saved by the fast path")),
        "{progress}"
    );
    let replay_prompts: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k == Prompt::Replay)
        .map(|(_, p)| p.clone())
        .collect();
    assert_eq!(replay_prompts.len() as u64, status["model_calls"].as_u64().unwrap());
    assert!(replay_prompts.iter().all(|p| p.contains("product = tea")), "the new value is given");
    page.screenshot(&std::env::temp_dir().join("workflows-replayed.png"));

    // Captured as a run like a task's, listed on the annotation page.
    let run_id = status["run_id"].as_str().unwrap().to_owned();
    let stored = browser.stored_runs();
    let run =
        stored["runs"].as_array().unwrap().iter().find(|r| r["id"] == run_id.as_str()).unwrap();
    assert_eq!(run["agentStatus"], "done");
    let steps: Vec<&Value> = stored["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["runId"] == run_id.as_str())
        .collect();
    assert_eq!(steps.len() as u64, status["step"].as_u64().unwrap());
    assert!(steps.iter().all(|s| s["screenshot"].is_object()), "a screenshot per step");
    assert!(steps.iter().all(|s| !s["thoughts"]["thought3"].as_str().unwrap().is_empty()));
    let annotation = open_annotation(&mut browser, "");
    annotation.wait_for(
        &format!("document.querySelector('[data-testid=run-row][data-run=\"{run_id}\"]')"),
        "the replay's run on the annotation page",
    );
}

#[test]
fn a_worker_stopped_mid_replay_comes_back_paused_and_the_replay_finishes() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    // Set when the delayed call is made: the replay waits for it in its last subtask.
    let delayed = Arc::new(AtomicBool::new(false));
    let delaying = delayed.clone();
    let (llm, _seen) = model_with(move |kind, prompt| {
        // The worker is stopped while it waits for the first answer in "open".
        let first_in_open = kind == Prompt::Replay && prompt.contains("Subtask 3 of 3");
        (first_in_open && !delaying.swap(true, Ordering::SeqCst))
            .then(|| workflows::replay_reply(prompt).after(Duration::from_secs(4)))
    });
    let workflow_id = saved_for_replay(&mut browser, &sites, &llm);

    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    start_replay(&mut browser, &workflow_id, &tab);
    wait_until(|| delayed.load(Ordering::SeqCst), "the last subtask never asked");
    let before = browser.agent_request(json!({"type": "current_replay"}))["replay"].clone();
    assert_eq!((before["subtask"].as_u64(), before["status"].as_str()), (Some(2), Some("running")));
    let run_id = before["run_id"].as_str().unwrap().to_owned();
    let steps_before = step_indexes(&browser.stored_runs(), &run_id);
    browser.kill_extension_worker();

    // The test's port reconnects, which starts a fresh worker; it restores the replay.
    let paused = workflows::wait_for_replay(&mut browser, "paused", |r| r["status"] == "paused");
    assert_eq!(paused["run_id"], run_id.as_str());
    assert!(paused["why"].as_str().unwrap().contains("Chrome stopped"), "{paused:#}");
    assert_eq!(paused["extracts"]["cheapest"], "French press", "the extract is kept");
    assert!(paused["step"].as_u64().unwrap() >= steps_before.len() as u64);

    let resumed = browser
        .agent_request(json!({"type": "replay_control", "run_id": run_id, "action": "resume"}));
    assert_eq!(resumed["type"], "done", "{resumed}");
    let done = workflows::wait_for_replay(&mut browser, "end", |r| {
        r["status"] != "running" && r["status"] != "paused"
    });
    assert_eq!(done["status"], "done", "{done:#}");
    workflows::wait_for_url(&tab, "product.html?sku=press");

    // Nothing captured before the stop is lost, and numbering went on.
    let stored = browser.stored_runs();
    let steps = step_indexes(&stored, &run_id);
    assert_eq!(steps, (0..done["step"].as_u64().unwrap()).collect::<Vec<_>>());
    assert!(steps_before.iter().all(|i| steps.contains(i)));
    let runs: Vec<&Value> =
        stored["runs"].as_array().unwrap().iter().filter(|r| r["id"] == run_id.as_str()).collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["agentStatus"], "done");
}

#[test]
fn a_workflow_is_replayed_from_the_side_panel_in_its_tab() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, _seen) = model();
    let (tab, panel) = replay_from_the_panel(&mut browser, &sites, &llm, "tea", true);
    panel_replay_done(&panel);
    assert!(panel.text("[data-testid=panel-replay-progress]").contains("4 saved by the fast path"));
    workflows::wait_for_url(&tab, "product.html?sku=press");
}

/// Turned off in the panel's form, the fast path saves nothing: every recorded step is
/// decided by the model, and the replay still reaches the same product.
#[test]
fn with_the_fast_path_off_every_step_asks_the_model() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, seen) = model();
    let (tab, panel) = replay_from_the_panel(&mut browser, &sites, &llm, "tea", false);
    panel_replay_done(&panel);
    workflows::wait_for_url(&tab, "product.html?sku=press");
    let status = browser.agent_request(json!({"type": "current_replay"}))["replay"].clone();
    assert_eq!(status["calls_saved"], 0, "{status:#}");
    let asked = seen.lock().unwrap().iter().filter(|(k, _)| *k == Prompt::Replay).count();
    assert_eq!(asked as u64, status["model_calls"].as_u64().unwrap());
    assert!(asked >= 5, "each recorded step asked the model: {status:#}");
    assert!(panel.text("[data-testid=panel-replay-progress]").contains("fast path off"));
}

/// The recording reflected and saved with its dependency, then replayed from the side
/// panel's Workflows menu in the shop's tab with `query`.
fn replay_from_the_panel(
    browser: &mut Browser,
    sites: &FixtureSites,
    llm: &ScriptedLlm,
    query: &str,
    fast_path: bool,
) -> (Tab, Page) {
    let workflow_id = saved_for_replay(browser, sites, llm);

    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    let panel = browser.open_side_panel(&tab);
    panel.wait_for(
        "!document.querySelector('[data-testid=workflows-menu]').disabled",
        "the panel to connect",
    );
    // Read once the panel knows its tab: the link names it.
    panel.wait_for(
        "document.querySelector('[data-testid=open-workflows]')?.getAttribute('href').includes('tabId=')",
        "the panel's tab",
    );
    let link =
        panel.eval("document.querySelector('[data-testid=open-workflows]').getAttribute('href')");
    assert_eq!(link, json!(format!("workflows.html?tabId={}", tab.id)));
    panel.click("[data-testid=workflows-menu]");
    let row = format!("[data-testid=panel-workflow][data-id=\"{workflow_id}\"]");
    panel.wait_for(&format!("document.querySelector('{row}')"), "the workflow in the menu");
    assert!(panel.text(&row).contains("(v2)"), "the latest version");
    panel.click(&row);
    let field = "[data-testid=panel-replay-param][data-name=query]";
    panel.wait_for(&format!("document.querySelector('{field}')"), "the parameter form");
    assert_eq!(panel.eval(&format!("document.querySelector('{field}').value")), "coffee");
    set_field(&panel, field, query);
    // In Chrome the side panel sits beside its tab, which is the active one; here the panel
    // is a tab of its own, so the shop tab is brought to the front as it would be.
    let shown = format!("chrome.tabs.update({}, {{active: true}}).then(() => true)", tab.id);
    browser.eval_in_extension(&shown);
    if !fast_path {
        panel.click("[data-testid=panel-replay-fast-path]");
        panel.wait_for(
            "!document.querySelector('[data-testid=panel-replay-fast-path]').checked",
            "the fast path off",
        );
    }
    panel.click("[data-testid=panel-replay-start]");
    (tab, panel)
}

/// Waits for the panel's replay to end, and checks it reached the cheapest tea product.
fn panel_replay_done(panel: &Page) {
    panel.wait_for(
        "['done', 'failed', 'cancelled'].includes(document.querySelector('[data-testid=panel-replay-status]')?.dataset.state)",
        "the replay to end",
    );
    assert_eq!(
        panel.eval("document.querySelector('[data-testid=panel-replay-status]').dataset.state"),
        "done",
        "{}",
        panel.visible_text()
    );
    assert_eq!(
        panel.text("[data-testid=panel-replay-extract][data-name=cheapest]"),
        "cheapest: French press"
    );
}

/// A failed pass says why and is retried without recording again: pass A's results are kept.
/// With vision on, pass A sees the recorded screenshots.
#[test]
fn a_failed_reflection_says_why_and_a_retry_keeps_pass_a() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let mut pass_b = 0;
    let (llm, seen) = model_with(move |kind, _| match kind {
        Prompt::ReflectTask => {
            pass_b += 1;
            (pass_b == 1).then(|| Reply::error(400, "the model is overloaded"))
        }
        Prompt::Replay | Prompt::Other => Some(Reply::error(400, "not expected")),
        Prompt::ReflectStep => None,
    });
    let mut config = settings(llm.base_url());
    config["agent"]["vision"] = json!(true);
    browser.configure_agent(config);
    workflows::seed_recording(&mut browser, &sites);

    let page = reflect_on_the_page(&mut browser, "failed");
    let why = page.text("[data-testid=reflect-progress]");
    assert!(
        why.contains("could not be put together into a workflow") && why.contains("overloaded"),
        "{why}"
    );
    assert!(workflows::all(&mut browser, "workflows").is_empty(), "nothing half-made is saved");
    // Pass A saw the screenshots before and after each step.
    let first = &llm.requests()[0].body;
    let images = first.to_string().matches("data:image/jpeg;base64,").count();
    assert_eq!(images, 2, "pass A's first call: {first:#}");

    let row = format!("[data-testid=recording-row][data-id={}]", workflows::RECORDING_ID);
    assert_eq!(page.text(&format!("{row} [data-testid=reflect]")), "Retry reflect");
    page.click(&format!("{row} [data-testid=reflect]"));
    page.wait_for(
        "document.querySelector('[data-testid=reflect-progress]')?.dataset.state === 'done'",
        "the retry to finish",
    );
    let kinds: Vec<Prompt> = seen.lock().unwrap().iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds.iter().filter(|k| **k == Prompt::ReflectStep).count(), 5, "pass A not redone");
    assert_eq!(kinds.iter().filter(|k| **k == Prompt::ReflectTask).count(), 2);
    page.wait_for("document.querySelector('[data-testid=workflow-editor]')", "the new workflow");
    assert_eq!(workflows::all(&mut browser, "workflows").len(), 1);
}

/// Versions, rollback, export and import of one JSON file (read back by the engine against the
/// published schema), a corrupt file refused with why, and the recording's JSONL export.
#[test]
fn versions_roll_back_and_workflows_export_and_import_as_one_json_file() {
    use agent_engine::workflow::recording::Recording;
    use agent_engine::workflow::schema::Workflow;
    use e2e::annotation::{allow_downloads, choose_file, wait_for_download};

    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, _seen) = model();
    let workflow_id = reflected(&mut browser, &sites, &llm);
    let downloads = allow_downloads(&browser, "workflows");

    let page = browser.open_tab(&browser.extension_url("workflows.html")).page;
    let row = format!("[data-testid=workflow-row][data-id=\"{workflow_id}\"]");
    page.wait_for(&format!("document.querySelector('{row}')"), "the workflow's row");
    page.click(&row);
    page.wait_for("document.querySelector('[data-testid=workflow-editor]')", "the editor");
    set_field(&page, "[data-testid=workflow-name]", "Renamed");
    page.click("[data-testid=workflow-save]");
    page.wait_for_text("[data-testid=workflow-current]", "v2");
    set_field(&page, "[data-testid=workflow-version]", "1");
    page.click("[data-testid=workflow-rollback]");
    page.wait_for_text("[data-testid=workflow-current]", "v3");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=workflow-name]').value"),
        "Open the cheapest product"
    );
    let names: Vec<(u64, String)> = workflows::all(&mut browser, "workflows")
        .iter()
        .map(|w| (w["version"].as_u64().unwrap(), w["name"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(names.len(), 3);
    assert!(
        names.contains(&(2, "Renamed".into()))
            && names.contains(&(3, "Open the cheapest product".into()))
    );

    page.click("[data-testid=workflow-export]");
    let file = wait_for_download(&downloads, ".workflow.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let (exported, problems) = Workflow::import(&text).expect("the export follows the schema");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((exported.version, exported.id.as_str()), (3, workflow_id.as_str()));
    assert!(!text.contains(e2e::agent::TEST_KEY));

    let mut edited: Value = serde_json::from_str(&text).unwrap();
    edited["name"] = json!("Imported");
    let import = downloads.join("edited.json");
    std::fs::write(&import, edited.to_string()).unwrap();
    choose_file(&page, "[data-testid=workflow-import]", &import);
    page.wait_for_text("[data-testid=workflow-current]", "v4");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=workflow-name]').value"),
        "Imported"
    );

    let corrupt = downloads.join("corrupt.json");
    std::fs::write(&corrupt, r#"{"formatVersion": 1, "id": 7}"#).unwrap();
    choose_file(&page, "[data-testid=workflow-import]", &corrupt);
    page.wait_for(
        "document.querySelector('[data-testid=notice]')?.textContent.includes('was not imported')",
        "the refusal",
    );
    assert_eq!(workflows::all(&mut browser, "workflows").len(), 4, "nothing stored from it");

    let recording = format!("[data-testid=recording-row][data-id={}]", workflows::RECORDING_ID);
    page.click(&format!("{recording} [data-testid=recording-export]"));
    let jsonl = wait_for_download(&downloads, ".recording.jsonl");
    let read = Recording::from_jsonl(&std::fs::read_to_string(jsonl).unwrap()).unwrap();
    assert_eq!((read.id.as_str(), read.steps.len()), (workflows::RECORDING_ID, 5));
}

/// Pause interrupts a replay's model call and Resume goes on; Stop cancels one. A task is
/// refused while a replay runs, saying why.
#[test]
fn a_replay_pauses_resumes_and_stops_from_the_workflows_page() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, seen) = model_with(|kind, prompt| {
        // Slow enough to act while the replay waits for its model.
        (kind == Prompt::Replay)
            .then(|| workflows::replay_reply(prompt).after(Duration::from_secs(2)))
    });
    let workflow_id = saved_for_replay(&mut browser, &sites, &llm);

    let page = browser.open_tab(&browser.extension_url("workflows.html")).page;
    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    let start = |browser: &mut Browser| {
        let reply = start_replay(browser, &workflow_id, &tab);
        reply["replay"]["run_id"].as_str().unwrap().to_owned()
    };
    let run_id = start(&mut browser);
    let status = "document.querySelector('[data-testid=replay-status]')";
    page.wait_for(&format!("{status}?.dataset.run === '{run_id}'"), "the replay on the page");
    wait_until(|| was_asked(&seen, Prompt::Replay), "the replay never asked its model");
    let task = browser.agent_request(json!({"type": "start_task", "tab_id": tab.id, "task": "Hi"}));
    assert_eq!(task["type"], "failed");
    assert!(task["message"].as_str().unwrap().contains("replay is running"), "{task}");

    // The shop tab is in front (the replay runs there); CDP's mouse events do not reach a
    // page in a background tab, so the buttons get a DOM click, which Yew handles alike.
    let press = |testid: &str| {
        page.wait_for(&format!("document.querySelector('[data-testid={testid}]')"), testid);
        page.eval(&format!("document.querySelector('[data-testid={testid}]').click()"));
    };
    press("replay-pause");
    page.wait_for(&format!("{status}.dataset.state === 'paused'"), "the pause");
    let paused = browser.agent_request(json!({"type": "current_replay"}))["replay"].clone();
    assert!(paused["model_calls"].as_u64().unwrap() <= 1, "{paused:#}");
    press("replay-resume");
    page.wait_for(&format!("{status}.dataset.state === 'done'"), "the resumed replay to finish");
    workflows::wait_for_url(&tab, "product.html?sku=press");

    tab.page.eval("location.href = '/shop/index.html'");
    workflows::wait_for_url(&tab, "index.html");
    let second = start(&mut browser);
    page.wait_for(&format!("{status}?.dataset.run === '{second}'"), "the second replay");
    press("replay-stop");
    page.wait_for(&format!("{status}.dataset.state === 'cancelled'"), "the stop");
    let runs = browser.stored_runs();
    let stopped =
        runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == second.as_str()).unwrap();
    assert_eq!(stopped["agentStatus"], "cancelled");
}

/// Chrome may never paint a page that loads in a background tab, and a screenshot then waits
/// for a frame that does not come: the replay records that step without one and finishes.
#[test]
fn a_replay_in_a_background_tab_finishes() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, _seen) = model();
    let workflow_id = saved_for_replay(&mut browser, &sites, &llm);
    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    // Another tab in front: the shop tab is hidden for the whole replay.
    let _front = browser.open_tab(&browser.extension_url("workflows.html"));
    let started = start_replay(&mut browser, &workflow_id, &tab);
    let run_id = started["replay"]["run_id"].clone();
    let done = workflows::wait_for_replay(&mut browser, "end", |r| r["status"] != "running");
    assert_eq!((done["status"].as_str(), &done["run_id"]), (Some("done"), &run_id), "{done:#}");
    assert_eq!(done["extracts"]["cheapest"], "French press");
    assert_eq!(tab.page.eval("document.visibilityState"), "hidden");
    workflows::wait_for_url(&tab, "product.html?sku=press");
    let stored = browser.stored_runs();
    let steps = stored["steps"].as_array().unwrap().iter().filter(|s| s["runId"] == run_id).count();
    assert_eq!(steps as u64, done["step"].as_u64().unwrap(), "every step is recorded");
}

/// A replay whose tab is closed while it runs ends failed, saying so in the job table's
/// words as a task does, and its captured run keeps the steps it took.
#[test]
fn a_replay_whose_tab_closes_ends_saying_so_and_keeps_its_steps() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    // Every step asks the model (no fast path), which takes its time: the tab closes mid-run.
    let (llm, _seen) = model_with(|kind, _| {
        if kind == Prompt::Replay {
            std::thread::sleep(Duration::from_millis(400));
        }
        None
    });
    let workflow_id = saved_for_replay(&mut browser, &sites, &llm);
    let tab = browser.open_tab(&sites.url("/shop/index.html"));
    let started = browser.agent_request(json!({"type": "start_replay", "workflow_id": workflow_id,
        "version": 2, "tab_id": tab.id, "params": {"query": "tea"}, "fast_path": false}));
    assert_eq!(started["type"], "replay", "{started}");
    let run_id = started["replay"]["run_id"].clone();
    workflows::wait_for_replay(&mut browser, "a step taken", |r| r["step"].as_u64() >= Some(1));
    tab.page.call("Page.close", json!({})).unwrap();

    let ended = workflows::wait_for_replay(&mut browser, "end", |r| r["status"] != "running");
    assert_eq!(
        (ended["status"].as_str(), &ended["run_id"]),
        (Some("failed"), &run_id),
        "{ended:#}"
    );
    assert!(ended["why"].as_str().is_some_and(|why| why.ends_with(TAB_CLOSED)), "{ended:#}");
    let stored = browser.stored_runs();
    let run = stored["runs"].as_array().unwrap().iter().find(|r| r["id"] == run_id);
    assert_eq!(run.expect("its run is kept")["agentStatus"], "failed");
    let steps = stored["steps"].as_array().unwrap().iter().filter(|s| s["runId"] == run_id);
    assert!(steps.count() >= 1, "with its steps");
}

/// Questions and steering during a replay, as during a task: the replay model asks whether
/// the lowest price comes first, the replay pauses with the question in the panel, the user's answer
/// resumes it, and the model reads the answer in its next prompt.
#[test]
fn a_replays_question_is_answered_from_the_side_panel_and_the_replay_goes_on() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, seen) = model_with(|kind, prompt| {
        // Before reading the cheapest, the model wants the user's word on the order.
        let unsure = kind == Prompt::Replay
            && prompt.contains("read the cheapest")
            && !prompt.contains("Yes, lowest price first");
        unsure.then(|| {
            Reply::json(json!({"thought_changed": "The results are listed",
                "thought_state": "unsorted", "thought_next": "ask", "observation": "unsorted",
                "memory": "", "extracted": [],
                "ask_user": "Should I sort by the lowest price first?",
                "action": {"action": "wait", "seconds": 1}}))
        })
    });
    let (tab, panel) = replay_from_the_panel(&mut browser, &sites, &llm, "tea", true);
    panel.wait_for(
        "document.querySelector('[data-testid=panel-replay-question]')",
        "the replay's question",
    );
    assert_eq!(
        panel.eval("document.querySelector('[data-testid=panel-replay-status]').dataset.state"),
        "paused"
    );
    assert_eq!(
        panel.text("[data-testid=panel-replay-question]"),
        "Should I sort by the lowest price first?"
    );
    assert!(panel.text("[data-testid=status]").contains("Replay needs you"), "the header says so");
    // A look at the question as a person sees it (the panel must be in front to be drawn).
    panel.call("Page.bringToFront", json!({})).unwrap();
    panel.screenshot(&e2e::workspace_root().join("target/tmp/replay-question.png"));
    tab.page.call("Page.bringToFront", json!({})).unwrap();
    // Asking is not acting: the tab is still on the results.
    assert!(tab.page.eval("location.pathname").as_str().unwrap().ends_with("/search.html"));
    set_field(&panel, "[data-testid=panel-replay-message]", "Yes, lowest price first");
    panel.click("[data-testid=panel-replay-send]");
    panel_replay_done(&panel);
    let seen = seen.lock().unwrap();
    let answered = seen
        .iter()
        .filter(|(kind, _)| *kind == Prompt::Replay)
        .find(|(_, p)| p.contains("Yes, lowest price first"))
        .map(|(_, p)| p.clone())
        .expect("a replay prompt with the user's answer");
    assert!(answered.contains("The user said: Yes, lowest price first"), "{answered}");
    workflows::wait_for_url(&tab, "product.html?sku=press");
}

/// A pipeline's `workflow_replay` tool replays the latest version of a workflow in the run's
/// tab with the pipeline's values, and returns its extracts to the next step.
#[test]
fn a_pipeline_step_replays_a_workflow_and_gets_its_extracts() {
    let (sites, mut browser) = e2e::launch_with_fixtures();
    let (llm, _seen) = model();
    let workflow_id = saved_for_replay(&mut browser, &sites, &llm);
    let shop = browser.open_tab(&sites.url("/shop/index.html"));
    let shown = format!("chrome.tabs.update({}, {{active: true}}).then(() => true)", shop.id);
    browser.eval_in_extension(&shown);

    let pipeline = format!(
        "id: cheapest\nallow_tools: [workflow_replay]\nsteps:\n  - id: replay\n    type: tool\n    \
         tool: workflow_replay\n    input:\n      workflow: \"{workflow_id}\"\n      params: \
         {{query: \"{{{{input.query}}}}\"}}\n  - id: answer\n    type: transform\n    output: \
         {{cheapest: \"{{{{steps.replay.output.extracts.cheapest}}}}\"}}\n"
    );
    let done = browser.agent_request(pipeline_request(
        "run_pipeline",
        &pipeline,
        json!({"input": {"query": "tea"}, "tab_id": shop.id}),
    ));
    assert_eq!(done["run"]["status"], "ok", "{done}");
    assert_eq!(done["run"]["output"]["cheapest"], "French press");
    workflows::wait_for_url(&shop, "product.html?sku=press");
    // The replay is a run of its own, as from the panel.
    let replay = browser.agent_request(json!({"type": "current_replay"}));
    assert_eq!(replay["replay"]["status"], "done", "{replay}");
    assert_eq!(
        replay["replay"]["run_id"], done["run"]["steps"][0]["output"]["run_id"],
        "the tool returns the replay's run"
    );
}
