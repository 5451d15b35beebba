//! The fine-tuning export of real runs: the agent runs a fixture task (with the scripted
//! model, typing a password into a secret field), an annotator corrects its thoughts, and
//! the export is checked as a trainer would take it: every line parsed and held to the
//! documented format, loaded by Hugging Face `datasets` (in the tests' own Python, installed
//! on first use), passed through an OpenAI-style chat fine-tuning check, and searched for
//! the API key, the password and the sync token, none of which may appear.

use std::process::Command;

use e2e::agent::replies::{navigate as answer, plan, verdict};
use e2e::agent::{TEST_KEY, settings};
use e2e::annotation::*;
use e2e::llm::ScriptedLlm;
use serde_json::{Value, json};

/// What the Navigator types into the password field; the engine keeps only `[secret]`.
const TYPED_PASSWORD: &str = "correct-horse-battery-staple-42";
/// The password field's own value in the fixture, which the page agent never reports.
const PAGE_PASSWORD: &str = "hunter2-secret";
const SYNC_TOKEN: &str = "sync-token-never-exported-0123";

#[test]
fn the_fine_tuning_export_loads_in_datasets_passes_a_chat_format_check_and_leaks_no_secret() {
    let (_sites, mut browser, tab) = e2e::open_fixture("/controls/widgets.html");
    let password = browser.id_of(&tab, "Password");
    let llm = ScriptedLlm::start([
        plan(false, "1. Fill in the password\n2. Report it is done", ""),
        answer(
            "Start: the widgets page is open",
            "Type the password; I expect the field to hold it",
            json!([{"action": "type", "id": password, "text": TYPED_PASSWORD, "clear": true}]),
        ),
        answer(
            "Success: the password field is filled",
            "Report that the password is in",
            json!([{"action": "done", "text": "The password is filled in.", "success": true}]),
        ),
        verdict(true, "", "The password is filled in."),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    let started = browser.agent_request(json!({"type": "start_task", "tab_id": tab.id,
        "task": "Fill in the password field of the widgets page."}));
    assert_eq!(started["type"], "done", "{started}");
    browser.wait_for_task("done");
    let captured = browser.stored_runs();
    let run_id = captured["runs"][0]["id"].as_str().expect("the run is captured").to_owned();
    assert_eq!(captured["steps"].as_array().map(Vec::len), Some(2));

    // A second run of the same task (a copy of the records, traces and all), so the
    // split has two runs to divide.
    let page = open_annotation(&mut browser, "");
    let copied = page.eval(&format!(
        r#"(async () => {{
            const db = await new Promise((ok, fail) => {{
                const r = indexedDB.open('alphascout'); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error);
            }});
            const all = (store) => new Promise((ok) => {{
                const r = db.transaction(store).objectStore(store).getAll(); r.onsuccess = () => ok(r.result);
            }});
            const [runs, steps, traces] = [await all('runs'), await all('steps'), await all('traces')];
            const tx = db.transaction(['runs', 'steps', 'traces'], 'readwrite');
            for (const run of runs.filter(r => r.id === {run:?})) tx.objectStore('runs').put({{...run, id: 'copy-run'}});
            for (const step of steps.filter(s => s.runId === {run:?})) tx.objectStore('steps').put({{...step, runId: 'copy-run'}});
            for (const trace of traces.filter(t => t.runId === {run:?})) tx.objectStore('traces').put({{...trace, id: 'copy-' + trace.id, runId: 'copy-run'}});
            await new Promise((ok) => {{ tx.oncomplete = ok; }});
            db.close();
            return traces.length;
        }})()"#,
        run = run_id
    ));
    assert!(copied.as_u64() > Some(0), "the run has traces");
    // A run imported from elsewhere has no traces: its steps are left out, and said so.
    seed(
        &page,
        &[run_record("imported", "An imported run", 1)],
        &[step_record("imported", 0, ["I start.", "I can see the list.", "I should scroll."])],
    );
    // A sync token is set (a server that is not there), so there is one to leak.
    configure_sync(&page, "http://127.0.0.1:9", SYNC_TOKEN);

    // The annotator corrects the first step's thoughts and marks both steps complete.
    navigate(&browser, &page, &format!("?agentRunId={run_id}&qa=false"));
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 2");
    replace_text(
        &page,
        "[data-testid=thought1]",
        "I am on the widgets page, and the 'Password' field is empty.",
    );
    page.click("[data-testid=mark-complete]");
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
    page.click("[data-testid=mark-complete]");
    page.wait_for_text("[data-testid=run-progress]", "100% complete");
    // Leaving with a save still in flight would ask first (the unload guard).
    page.wait_for("!document.querySelector('[data-testid=unsaved]')", "the save to be stored");

    // Export draft runs too (none is approved yet), with screenshots, half held out.
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "3 of 3 runs");
    let dir = allow_downloads(&browser, "finetune");
    page.click("[data-testid=finetune-open]");
    page.click("[data-testid=finetune-status-draft]");
    page.click("[data-testid=finetune-screenshots]");
    replace_text(&page, "[data-testid=finetune-validation]", "50");
    replace_text(&page, "[data-testid=finetune-seed]", "7");
    page.click("[data-testid=finetune-go]");
    let zip = wait_for_download(&dir, ".zip");
    let notice = page.wait_for_text("[data-testid=notice]", "Exported 4 examples");
    assert!(
        notice.contains("2 train, 2 validation") && notice.contains("1 steps were left out"),
        "{notice}"
    );

    let unpacked = e2e::python::unzip(&zip, &dir);

    // Every line, held to the documented format.
    let mut examples = Vec::new();
    for split in ["train", "validation"] {
        let text = std::fs::read_to_string(unpacked.join(format!("{split}.jsonl"))).unwrap();
        for line in text.lines() {
            let example: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:.200}"));
            examples.push(example);
        }
    }
    assert_eq!(examples.len(), 4);
    let prompts = agent_engine::prompts::PromptSet::bundled();
    let navigator_schema = &prompts.prompt("navigator").expect("the Navigator's prompt").schema;
    for example in &examples {
        let messages = example["messages"].as_array().expect("messages");
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant"]);
        let system = messages[0]["content"][0]["text"].as_str().unwrap();
        assert!(system.starts_with("You are the Navigator"), "the Navigator's own prompt");
        assert!(system.contains("Fill in the password field"), "with the task");
        assert!(system.contains("Password"), "and the page as it saw it");
        let image = messages[1]["content"][1]["image_url"]["url"].as_str().unwrap();
        assert!(image.starts_with("data:image/jpeg;base64,"), "the screenshot as an image part");
        let answer: Value =
            serde_json::from_str(messages[2]["content"][0]["text"].as_str().unwrap()).unwrap();
        let violations = navigator_schema.validate(&answer);
        assert!(violations.is_empty(), "{answer} breaks the Navigator's schema: {violations:?}");
        for action in answer["actions"].as_array().unwrap() {
            serde_json::from_value::<agent_engine::actions::Action>(action.clone())
                .unwrap_or_else(|e| panic!("{action} is not the Navigator's Action: {e}"));
        }
    }
    let corrected = "I am on the widgets page, and the 'Password' field is empty.";
    let first_steps: Vec<Value> = examples
        .iter()
        .map(|e| serde_json::from_str(e["messages"][2]["content"][0]["text"].as_str().unwrap()))
        .map(|answer: Result<Value, _>| answer.unwrap())
        .filter(|answer| answer["current_state"]["thought_changed"] == corrected)
        .collect();
    assert_eq!(first_steps.len(), 1, "the annotated run carries the corrected thought 1");
    let typed = examples
        .iter()
        .map(|e| e["messages"][2]["content"][0]["text"].as_str().unwrap())
        .find(|t| t.contains("\"type\""))
        .expect("a step that typed");
    assert!(
        typed.contains("[secret]"),
        "what was typed into the password field is masked: {typed}"
    );

    // The card: counts, selection, the prompt's revision and how many examples are exact.
    let card = std::fs::read_to_string(unpacked.join("README.md")).unwrap();
    assert!(
        card.contains("| train | 1 | 2 |") && card.contains("| validation | 1 | 2 |"),
        "{card}"
    );
    assert!(
        card.contains("Run statuses: approved, draft")
            || card.contains("Run statuses: draft, approved"),
        "{card}"
    );
    assert!(card.contains("seed 7") && card.contains("| navigator | A |"), "{card}");
    assert!(card.contains("| 4 | 4 |"), "all four prompts rendered exactly as sent: {card}");
    assert!(card.contains("no Navigator call recorded"), "{card}");

    // A trainer's view: datasets loads it, a chat-format check passes, no secret is there.
    let python = e2e::python::environment("finetune", &["datasets==5.2.0"], &["datasets"]);
    let check = e2e::workspace_root().join("tests/py/check_finetune.py");
    let checked = Command::new(&python)
        .arg(&check)
        .arg(&unpacked)
        .args([TEST_KEY, TYPED_PASSWORD, PAGE_PASSWORD, SYNC_TOKEN])
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", e2e::workspace_root().join("target/py/hf-home"))
        .output()
        .expect("the check runs");
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    let summary: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(summary["counts"], json!({"train": 2, "validation": 2}));
    assert_eq!(summary["splits_from_card"], json!(["train", "validation"]));

    let raw = std::fs::read(&zip).unwrap();
    let everything = String::from_utf8_lossy(&raw);
    for secret in [TEST_KEY, TYPED_PASSWORD, PAGE_PASSWORD, SYNC_TOKEN] {
        assert!(!everything.contains(secret), "{secret} is in the ZIP");
    }
}
