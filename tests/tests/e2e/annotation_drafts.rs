//! Issue 27 in real Chromium: the Navigator's notes (evaluation, memory, next goal) are
//! edited on the annotation page and the fine-tuning export carries the edits; and AI drafts
//! of a step's thoughts, asked of the worker with the scripted model (its real wire format),
//! are shown as tracked changes, accepted with an edit or rejected, marked in the exports,
//! and drafted for a run in a batch that can be stopped partway.

use std::time::Duration;

use e2e::agent::settings;
use e2e::annotation::*;
use e2e::browser::{Browser, Page};
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::{Value, json};

/// A Navigator trace of step `index` as the engine keeps it: the prompt as sent and the
/// model's accepted answer, with its `memory`.
fn navigator_trace(run_id: &str, index: u32, memory: &str) -> Value {
    let answer = json!({"current_state": {"evaluation_previous_goal": "Success: the shop is open",
        "thought_changed": "", "thought_state": "", "thought_next": "", "extended_thoughts": [],
        "decision": "proceed", "memory": memory, "next_goal": "Open the kettles"},
        "ask_user": "", "actions": []});
    json!({"id": format!("{run_id}-t{index}"), "runId": run_id, "step": index, "role": "navigator",
        "promptId": "navigator", "variant": "A", "promptHash": "0", "revisionHash": "rev-1",
        "params": {"page_state": "[3]<a>Kettles</a>"}, "redacted": [], "provider": "OpenAi",
        "model": "scripted-model", "usage": {"input_tokens": 1, "output_tokens": 1}, "cost": 0.0,
        "startedAt": format!("2026-11-20T09:0{index}:00.000Z"), "durationMs": 5.0,
        "attempts": [{"model": "scripted-model", "raw": answer.to_string(), "problems": []}],
        "error": null, "chars": {"system": 1, "state": 1, "history": 0, "total": 2},
        "prompt": {"system": "You are the Navigator of a test.", "user": "Answer with the JSON object.",
            "temperature": 0.0, "maxTokens": null, "schemaName": "navigator", "images": 0}})
}

fn seed_traces(page: &Page, traces: &[Value]) {
    let script = format!(
        r#"(async () => {{
            const db = await new Promise((ok, fail) => {{
                const r = indexedDB.open('alphascout'); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error);
            }});
            const tx = db.transaction(['traces'], 'readwrite');
            for (const trace of {traces}) tx.objectStore('traces').put(trace);
            await new Promise((ok, fail) => {{ tx.oncomplete = ok; tx.onerror = () => fail(tx.error); }});
            db.close();
            return true;
        }})()"#,
        traces = Value::from(traces.to_vec())
    );
    assert_eq!(page.eval(&script), Value::Bool(true), "seeding traces");
}

/// Exports the draft runs as fine-tuning data and returns the unpacked folder.
fn finetune_export(
    browser: &Browser,
    page: &Page,
    name: &str,
    examples: usize,
) -> std::path::PathBuf {
    navigate(browser, page, "?");
    let dir = allow_downloads(browser, name);
    page.click("[data-testid=finetune-open]");
    page.click("[data-testid=finetune-status-draft]");
    page.click("[data-testid=finetune-go]");
    let zip = wait_for_download(&dir, ".zip");
    page.wait_for_text("[data-testid=notice]", &format!("Exported {examples} example"));
    e2e::python::unzip(&zip, &dir)
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn target(example: &Value) -> Value {
    serde_json::from_str(example["messages"][2]["content"].as_str().unwrap()).unwrap()
}

#[test]
fn the_navigators_memory_edited_on_a_step_is_what_the_fine_tuning_target_says() {
    let (browser, page) = launch_annotation();
    let misspelled = "The kettle costs 24.99 on the lsit page";
    let mut step = step_record(
        "n1",
        0,
        ["I opened the shop.", "I can see the Kettles link.", "I should click it."],
    );
    step["navigator"] = json!({"evaluationPreviousGoal": "Success: the shop is open",
        "memory": misspelled, "nextGoal": "Open the kettles"});
    step["traceIds"] = json!(["n1-t0"]);
    seed(&page, &[run_record("n1", "Find the kettle's price", 1)], &[step]);
    seed_traces(&page, &[navigator_trace("n1", 0, misspelled)]);

    navigate(&browser, &page, "?agentRunId=n1&qa=false");
    page.wait_for("document.querySelector('[data-testid=note-memory]')", "the Navigator's notes");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=note-memory]').value"),
        json!(misspelled)
    );
    // Checked like the thoughts: the misspelling is marked, with a fix.
    page.wait_for_text("[data-testid=note-memory-issues]", "lsit");
    page.eval("document.querySelector('[data-testid=navigator-notes]').scrollIntoView()");
    page.screenshot(
        &e2e::workspace_root().join("target/tmp/screenshots/annotation-notes-misspelled.png"),
    );
    page.click("[data-testid=note-memory-issues] [data-testid=apply-fix][data-value=list]");
    let corrected = "The kettle costs 24.99 on the list page";
    page.wait_for(
        &format!(
            "document.querySelector('[data-testid=note-memory]').value === {}",
            json!(corrected)
        ),
        "the fix applied",
    );
    page.eval("document.querySelector('[data-testid=navigator-notes]').scrollIntoView()");
    page.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/annotation-notes.png"));
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    let steps = stored(&page, "steps");
    assert_eq!(step_of(&steps, "n1", 0)["navigator"]["memory"], corrected);
    let versions = stored(&page, "versions");
    assert!(
        versions.iter().any(|v| v["steps"][0]["navigator"]["memory"] == corrected),
        "the edit is a version"
    );

    let unpacked = finetune_export(&browser, &page, "notes", 1);
    let examples = lines(&unpacked.join("train.jsonl"));
    let state = &target(&examples[0])["current_state"];
    assert_eq!(state["memory"], corrected, "the edited memory, not the model's");
    assert_eq!(state["evaluation_previous_goal"], "Success: the shop is open");
}

const DRAFT: &str = "I clicked 'Kitchen' and the kettles are listed.";

fn drafted(second: &str) -> Reply {
    Reply::json(json!({"thought1": DRAFT, "thought2": second,
        "thought3": "I should click 'Steel kettle'; I expect its page with the price."}))
}

#[test]
fn a_drafted_step_is_accepted_with_an_edit_and_marked_and_a_rejected_draft_changes_nothing() {
    let mut browser = Browser::launch();
    let llm = ScriptedLlm::start([
        drafted("I can see the 'Steel kettle' link, but not its prise."),
        drafted("Whatever the model says here is rejected."),
    ]);
    browser.configure_agent(settings(llm.base_url()));
    let page = open_annotation(&mut browser, "");
    let mut steps: Vec<Value> = (0..2).map(|i| step_record("d1", i, ["", "", ""])).collect();
    steps[0]["traceIds"] = json!(["d1-t0"]);
    seed(&page, &[run_record("d1", "Find the price of the steel kettle", 2)], &steps);
    seed_traces(&page, &[navigator_trace("d1", 0, "Nothing yet")]);

    navigate(&browser, &page, "?agentRunId=d1&qa=false");
    page.wait_for_text("[data-testid=draft-batch]", "Draft thoughts for 2 steps without thoughts");
    page.click("[data-testid=draft-step]");
    page.wait_for("document.querySelector('[data-testid=draft]')", "the draft");
    // What the model was sent: the task, the action, the page state its trace kept and the
    // screenshot; no key in the page, and the trace is stored with the run.
    let sent = llm.requests()[0].body.to_string();
    assert!(
        sent.contains("Find the price of the steel kettle") && sent.contains("Kettles link 0"),
        "{sent}"
    );
    assert!(sent.contains("[3]<a>Kettles"), "the page state from the step's trace");
    assert!(sent.contains("data:image/jpeg;base64,"), "the screenshot goes as an image");
    assert!(
        !stored(&page, "steps").iter().any(|s| s.get("draftedThoughts").is_some()),
        "a draft is not saved"
    );
    assert_eq!(
        page.eval("document.querySelector('[data-testid=save]').disabled"),
        json!(true),
        "nor an edit"
    );
    page.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/annotation-draft.png"));

    let edited = "I can see the 'Steel kettle' link, but not its price.";
    replace_text(&page, "[data-testid=draft-text2]", edited);
    page.click("[data-testid=draft-accept-all]");
    page.wait_for_text("[data-testid=drafted-mark]", "thought 1, thought 2, thought 3");
    assert_eq!(thought(&page, 2), edited);
    assert_eq!(thought(&page, 1), DRAFT);
    page.screenshot(
        &e2e::workspace_root().join("target/tmp/screenshots/annotation-draft-accepted.png"),
    );
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    let saved = stored(&page, "steps");
    let first = step_of(&saved, "d1", 0);
    assert_eq!(first["thoughts"]["thought2"], edited);
    assert_eq!(first["draftedThoughts"], json!(["thought1", "thought2", "thought3"]));
    let traces = stored(&page, "traces");
    assert!(
        traces
            .iter()
            .any(|t| t["runId"] == "d1" && t["promptId"] == "draft_thoughts" && t["step"] == 0)
    );
    assert!(!serde_json::to_string(&traces).unwrap().contains(e2e::agent::TEST_KEY));

    // The second step's draft, rejected whole: the step stays as it was, nothing to save.
    page.click("[data-testid=next-step]");
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
    page.click("[data-testid=draft-step]");
    page.wait_for("document.querySelector('[data-testid=draft]')", "the second draft");
    page.click("[data-testid=draft-reject-all]");
    page.wait_for("!document.querySelector('[data-testid=draft]')", "the draft gone");
    assert_eq!(thought(&page, 1), "");
    assert_eq!(
        page.eval("document.querySelector('[data-testid=save]').disabled"),
        json!(true),
        "nothing to save"
    );
    let second = step_of(&stored(&page, "steps"), "d1", 1).clone();
    assert_eq!(second["thoughts"], json!({"thought1": "", "thought2": "", "thought3": ""}));
    assert!(second.get("draftedThoughts").is_none());

    // The JSONL export marks the drafted step.
    navigate(&browser, &page, "?");
    let dir = allow_downloads(&browser, "drafts-jsonl");
    page.click("[data-testid=export-open]");
    choose(&page, "[data-testid=export-format]", "jsonl");
    page.click("[data-testid=export-go]");
    let file = wait_for_download(&dir, ".jsonl");
    let exported = lines(&file);
    let marks: Vec<&Value> = exported.iter().map(|l| &l["draftedThoughts"]).collect();
    assert_eq!(marks, [&json!(["thought1", "thought2", "thought3"]), &json!([])]);
    page.click("[data-testid=notice] button");

    // And the fine-tuning export: the example's provenance and the card say so.
    let unpacked = finetune_export(&browser, &page, "drafts-finetune", 1);
    let examples = lines(&unpacked.join("train.jsonl"));
    assert_eq!(target(&examples[0])["current_state"]["thought_state"], edited);
    let provenance = lines(&unpacked.join("provenance.jsonl"));
    assert_eq!(
        provenance,
        [json!({"split": "train", "line": 0, "run_id": "d1", "step": 0,
            "drafted_thoughts": ["thought1", "thought2", "thought3"]})]
    );
    let card = std::fs::read_to_string(unpacked.join("README.md")).unwrap();
    assert!(card.contains("Steps whose thoughts a model drafted: 1 examples"), "{card}");
}

#[test]
fn a_batch_draft_shows_its_progress_and_stops_partway() {
    let mut browser = Browser::launch();
    let slow = Duration::from_millis(1500);
    let llm =
        ScriptedLlm::start((0..4).map(|i| drafted(&format!("I can see step {i}.")).after(slow)));
    browser.configure_agent(settings(llm.base_url()));
    let page = open_annotation(&mut browser, "");
    let steps: Vec<Value> = (0..4).map(|i| step_record("b1", i, ["", "", ""])).collect();
    seed(&page, &[run_record("b1", "Find the price of the steel kettle", 4)], &steps);
    navigate(&browser, &page, "?agentRunId=b1&qa=false");
    page.click("[data-testid=draft-batch]");
    page.wait_for_text("[data-testid=draft-progress]", "Drafting 1 of 4");
    page.wait_for_text("[data-testid=draft-progress]", "Drafting 2 of 4");
    page.click("[data-testid=draft-stop]");
    page.wait_for_text("[data-testid=notice]", "Drafting stopped: 2 of 4 steps drafted.");
    assert_eq!(llm.requests().len(), 2, "no step after the stop was asked");
    // The drafts that came wait on their steps; the steps are unchanged until accepted.
    page.wait_for("document.querySelector('[data-testid=draft]')", "step 1's draft");
    page.click("[data-testid=next-step]");
    page.wait_for("document.querySelector('[data-testid=draft]')", "step 2's draft");
    page.click("[data-testid=next-step]");
    page.wait_for_text("[data-testid=step-heading]", "Step 3 of 4");
    assert_eq!(page.eval("!document.querySelector('[data-testid=draft]')"), json!(true));
    page.wait_for_text("[data-testid=draft-batch]", "Draft thoughts for 2 steps without thoughts");
    assert!(stored(&page, "steps").iter().all(|s| s["thoughts"]["thought1"] == ""));
}

#[test]
fn a_provider_error_is_one_line_on_the_page_and_loses_nothing() {
    let mut browser = Browser::launch();
    let llm = ScriptedLlm::start([Reply::error(401, "invalid api key")]);
    browser.configure_agent(settings(llm.base_url()));
    let page = open_annotation(&mut browser, "");
    seed(&page, &[run_record("e1", "Find the kettle", 1)], &[step_record("e1", 0, ["", "", ""])]);
    navigate(&browser, &page, "?agentRunId=e1&qa=false");
    replace_text(&page, "[data-testid=thought1]", "I typed this myself.");
    page.click("[data-testid=draft-step]");
    let notice = page.wait_for_text("[data-testid=notice]", "Step 1: No draft:");
    assert!(!notice.contains('\n'), "{notice}");
    assert_eq!(thought(&page, 1), "I typed this myself.", "what was typed stays");
    assert_eq!(page.eval("!document.querySelector('[data-testid=draft]')"), json!(true));
}
