//! An annotator's work is never lost and always explained, in real Chromium over the
//! extension's real IndexedDB: unsaved edits ask before leaving and come back after a
//! reload or a crash; a flagged issue, with its type, severity, reason and fix, reaches the
//! reviewer on the step and in the list's filter; misspelled thoughts lower the quality the
//! list filters on; and a run only the sync server holds opens by its URL.

use std::time::{Duration, Instant};

use crate::support::sync_server::SyncServer;
use e2e::annotation::*;
use e2e::browser::Page;
use serde_json::{Value, json};

/// Reloads the tab as a person would, answering the browser's "Leave site?" that unsaved
/// edits raise. Returns whether that question was asked.
fn reload_answering_leave(page: &Page) -> bool {
    page.call("Page.enable", json!({})).expect("Page.enable");
    page.eval("window.__leaving = true; setTimeout(() => location.reload(), 0); true");
    // While the question is up the page runs no script, so only the browser is asked.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut asked = false;
    while Instant::now() < deadline {
        if page.call("Page.handleJavaScriptDialog", json!({"accept": true})).is_ok() {
            asked = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    page.wait_for(
        "!window.__leaving && !!document.querySelector('[data-testid=run-view], [data-testid=runs-list]')",
        "the page to reload",
    );
    asked
}

#[test]
fn unsaved_edits_ask_before_leaving_and_come_back_after_a_reload_or_the_tab_closing() {
    let (mut browser, page) = launch_annotation();
    seed(
        &page,
        &[run_record("w1", "Find the kettle's price", 3)],
        &step_records(
            "w1",
            &[
                ["I start on the shop.", "I can see the Kettles link.", "I should click it."],
                ["I opened Kettles.", "I can see two kettles.", "I should open the steel one."],
                ["I opened it.", "I can see 24.99 €.", "I should return the price."],
            ],
        ),
    );
    navigate(&browser, &page, "?agentRunId=w1&qa=false");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 3");

    // Edit, click "← All runs": the page asks; staying keeps the edit on screen.
    replace_text(&page, "[data-testid=thought1]", "I start on the Fixture Shop's home page.");
    page.wait_for_text("[data-testid=unsaved]", "Unsaved edits");
    page.click("[data-testid=back-to-list]");
    page.wait_for_text("[data-testid=leave-dialog]", "Leave with unsaved edits?");
    assert!(page.text("[data-testid=leave-dialog]").contains("step 1"));
    page.click("[data-testid=leave-stay]");
    page.wait_for("!document.querySelector('[data-testid=leave-dialog]')", "the dialog to close");
    assert_eq!(thought(&page, 1), "I start on the Fixture Shop's home page.");

    // "Save and leave" saves a version, then goes.
    page.click("[data-testid=back-to-list]");
    page.click("[data-testid=leave-save]");
    page.wait_for("document.querySelector('[data-testid=runs-list]')", "the runs list");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    let steps = stored(&page, "steps");
    let first = steps.iter().find(|s| s["runId"] == "w1" && s["index"] == 0).unwrap();
    assert_eq!(first["thoughts"]["thought1"], "I start on the Fixture Shop's home page.");

    // Edit again, then reload the tab: the browser asks first, and the edit comes back,
    // marked unsaved, on the step it was made in.
    navigate(&browser, &page, "?agentRunId=w1&qa=false");
    page.click("[data-testid=step-row][data-index='1']");
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 3");
    replace_text(&page, "[data-testid=thought2]", "I can see two kettles, but no prices yet.");
    wait_stored(
        &page,
        "get('annotation', 'draft:w1').then(d => d && d.steps.some(s => s.thoughts.thought2.includes('no prices yet')))",
        "the draft as typed",
    );
    assert!(reload_answering_leave(&page), "Leave site? was asked");
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 3");
    assert_eq!(thought(&page, 2), "I can see two kettles, but no prices yet.");
    page.wait_for_text("[data-testid=unsaved]", "Unsaved edits");
    page.wait_for_text("[data-testid=restored]", "restored from a draft");
    page.wait_for_text("[data-testid=notice]", "Unsaved edits restored (step 2)");
    assert_eq!(
        page.eval(
            "document.querySelector('[data-testid=step-row][data-index=\"1\"]').dataset.draft"
        ),
        "true"
    );

    // Nor does the tab going away at once, as in a crash: nothing runs on the way out.
    replace_text(&page, "[data-testid=thought3]", "I should open the steel kettle's page.");
    wait_stored(
        &page,
        "get('annotation', 'draft:w1').then(d => d && d.steps.some(s => s.thoughts.thought3.includes('steel kettle')))",
        "the second draft",
    );
    browser
        .call("Target.closeTarget", json!({"targetId": page.target_id}))
        .expect("the tab closes");
    let again = open_annotation(&mut browser, "?agentRunId=w1&qa=false");
    again.wait_for_text("[data-testid=step-heading]", "Step 2 of 3");
    assert_eq!(thought(&again, 3), "I should open the steel kettle's page.");
    assert_eq!(thought(&again, 2), "I can see two kettles, but no prices yet.");

    // Discarding forgets them, stored draft and all.
    again.click("[data-testid=discard-drafts]");
    again.wait_for("!document.querySelector('[data-testid=unsaved]')", "the edits gone");
    assert_eq!(thought(&again, 2), "I can see two kettles.");
    wait_stored(&again, "get('annotation', 'draft:w1').then(d => d === undefined)", "no draft");
}

#[test]
fn a_flagged_issue_reaches_the_reviewer_on_the_step_and_in_the_list_filter() {
    let (browser, page) = launch_annotation();
    let mut run = run_record("w2", "Compare two kettles", 2);
    run["annotator"] = json!("ann");
    let mut other = run_record("w3", "List kettles", 1);
    other["annotator"] = json!("ann");
    seed(
        &page,
        &[run, other],
        &[
            step_record(
                "w2",
                0,
                ["I am on the shop.", "I see the bar.", "I should search for kettles."],
            ),
            step_record(
                "w2",
                1,
                ["I searched.", "I can see two kettles.", "I should return both prices."],
            ),
            step_record("w3", 0, ["I start.", "I can see the list.", "I should scroll down."]),
        ],
    );
    set_user(&page, "ann", "annotator");
    navigate(&browser, &page, "?agentRunId=w2&qa=false");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 2");

    // Type, severity, reason and fix are chosen; Alt+F keeps the reason typed.
    choose(&page, "[data-testid=flag-type]", "missing-context");
    choose(&page, "[data-testid=flag-severity]", "minor");
    replace_text(&page, "[data-testid=flag-reason]", "Thought 2 does not say which bar.");
    replace_text(&page, "[data-testid=flag-suggestion]", "Name the search bar in the header.");
    press(&page, "f", "KeyF", 1);
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    page.wait_for(
        "document.querySelector('[data-testid=step-row][data-index=\"0\"]').dataset.state === 'flagged'",
        "the step flagged",
    );
    page.wait_for_text("[data-testid=run-issues]", "1 open issue");
    let steps = stored(&page, "steps");
    let issue = &steps.iter().find(|s| s["runId"] == "w2" && s["index"] == 0).unwrap()["issues"][0];
    assert_eq!(issue["type"], "missing-context");
    assert_eq!(issue["severity"], "minor");
    assert_eq!(issue["description"], "Thought 2 does not say which bar.");
    assert_eq!(issue["suggestion"], "Name the search bar in the header.");
    assert_eq!(issue["flaggedBy"], "ann");

    // Marking the step complete keeps its issue; then the run goes to review.
    page.click("[data-testid=step-row][data-index='0']");
    page.click("[data-testid=mark-complete]");
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    let steps = stored(&page, "steps");
    let first = steps.iter().find(|s| s["runId"] == "w2" && s["index"] == 0).unwrap();
    assert_eq!(
        (first["verified"].clone(), first["issues"].as_array().map(Vec::len)),
        (json!(true), Some(1))
    );
    page.click("[data-testid=to-in-review]");
    page.wait_for_text("[data-testid=notice]", "The run is now in review");

    // The reviewer finds it from the list's filter …
    set_user(&page, "rev", "reviewer");
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "2 of 2 runs");
    choose(&page, "[data-testid=filter-issue]", "missing-context");
    page.wait_for_text("[data-testid=runs-count]", "1 of 2 runs");
    assert!(page.eval("!!document.querySelector('[data-testid=run-row][data-run=w2] [data-testid=run-issues]')") == true);
    choose(&page, "[data-testid=filter-issue]", "logic");
    page.wait_for_text("[data-testid=runs-count]", "0 of 2 runs");
    choose(&page, "[data-testid=filter-issue]", "open");
    page.wait_for_text("[data-testid=runs-count]", "1 of 2 runs");

    // … and on the step, with everything the annotator said, and resolves it.
    page.click("[data-testid=run-row][data-run=w2] [data-testid=review-run]");
    page.wait_for(
        "document.querySelector('[data-testid=run-view]')?.dataset.qa === 'true'",
        "review mode",
    );
    page.click("[data-testid=step-row][data-index='0']");
    assert!(page.text("[data-testid=step-row][data-index='0']").contains("⚑ 1"));
    page.click("[data-testid=tab-issues]");
    let shown = page.wait_for_text("[data-testid=issue]", "Thought 2 does not say which bar.");
    assert!(shown.contains("Missing context") && shown.contains("minor"), "{shown}");
    assert!(
        shown.contains("Name the search bar in the header.") && shown.contains("flagged by ann"),
        "{shown}"
    );
    page.click("[data-testid=issue-resolve]");
    page.wait_for(
        "document.querySelector('[data-testid=issue]')?.dataset.state === 'resolved'",
        "resolved",
    );
    // Resolving saves at once.
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    page.wait_for("!document.querySelector('[data-testid=unsaved]')", "nothing unsaved");
    page.wait_for_text("[data-testid=run-issues]", "0 open issues · 1 resolved");
    page.wait_for_text("[data-testid=run-metrics]", "issues flagged 1 · resolved 1");
    assert!(page.text("[data-testid=run-metrics]").contains("review rounds 1"));
    navigate(&browser, &page, "?");
    choose(&page, "[data-testid=filter-issue]", "open");
    page.wait_for_text("[data-testid=runs-count]", "0 of 2 runs");
}

#[test]
fn a_misspelled_thought_lowers_the_quality_and_the_filter_drops_the_run() {
    let (browser, page) = launch_annotation();
    let base =
        ["I opened the shop's home page.", "I can see the Search field.", "I should search."];
    seed(
        &page,
        &[
            run_record("clean", "Search the shop", 1),
            run_record("typos", "Search the shop again", 1),
        ],
        &[step_record("clean", 0, base), step_record("typos", 0, base)],
    );
    let edit = |run: &str, text: &str| {
        navigate(&browser, &page, &format!("?agentRunId={run}&qa=false"));
        page.wait_for_text("[data-testid=step-heading]", "Step 1 of 1");
        replace_text(&page, "[data-testid=thought2]", text);
        page.click("[data-testid=save]");
        page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
        page.text("[data-testid=step-quality]")
    };
    let good = edit(
        "clean",
        "I can see the 'Search' field in the header, but it is empty. I need to type kettle.",
    );
    let bad = edit(
        "typos",
        "I can see the 'Serch' feild in the heder, but it is emty. I need to tipe kettle.",
    );
    page.wait_for_text("[data-testid=thought2-issues]", "feild");
    assert_ne!(good, bad, "the step's quality counts the misspellings: {good} vs {bad}");

    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "2 of 2 runs");
    let quality = |run: &str| -> u64 {
        page.text(&format!("[data-testid=run-row][data-run={run}] [data-testid=run-quality]"))
            .parse()
            .unwrap_or_else(|e| panic!("{run}'s quality: {e}"))
    };
    let (clean, typos) = (quality("clean"), quality("typos"));
    assert!(typos < clean, "misspellings lower the run's quality: {typos} < {clean}");
    replace_text(&page, "[data-testid=filter-quality]", &clean.to_string());
    page.wait_for_text("[data-testid=runs-count]", "1 of 2 runs");
    assert_eq!(
        page.eval("!!document.querySelector('[data-testid=run-row][data-run=typos]')"),
        false
    );
    assert_eq!(
        page.eval("!!document.querySelector('[data-testid=run-row][data-run=clean]')"),
        true
    );
}

/// `record` without `keys`.
fn without(record: Value, keys: &[&str]) -> Value {
    let Value::Object(map) = record else { return record };
    Value::Object(map.into_iter().filter(|(k, _)| !keys.contains(&k.as_str())).collect())
}

#[test]
fn a_run_only_on_the_sync_server_opens_by_its_url() {
    let server = SyncServer::start("annotation-fetch");
    let (browser, page) = launch_annotation();
    // Synced with an empty server first: this browser holds no run.
    configure_sync(&page, &server.url(), &server.tokens["quinn"]);
    wait_sync(&page, "synced");

    // Someone else's browser put a run on the server since.
    // The server takes a run's content, not this browser's review state.
    let run = without(
        run_record("far-1", "Find the teapot's price", 2),
        &["status", "updatedAt", "reviewedBy"],
    );
    let created = server.put("quinn", "/runs/far-1", &run);
    assert_eq!(created.status, 201, "{}", created.body);
    for index in 0..2 {
        let step =
            step_record("far-1", index, ["I start.", "I can see the teapot.", "I should open it."]);
        let created = server.put("quinn", &format!("/runs/far-1/steps/{index}"), &step);
        assert_eq!(created.status, 201, "{}", created.body);
    }

    // Its link opens it here: fetched from the server, not "missing".
    navigate(&browser, &page, "?agentRunId=far-1&taskId=session-far-1&qa=false");
    page.wait_for_text("[data-testid=run-title]", "Find the teapot's price");
    assert_eq!(page.text("[data-testid=step-heading]"), "Step 1 of 2");
    assert!(stored(&page, "runs").iter().any(|r| r["id"] == "far-1"), "stored here now");

    // A run neither here nor there says so, and offers its task's runs.
    navigate(&browser, &page, "?agentRunId=nowhere&taskId=session-far-1&qa=false");
    page.wait_for_text("[data-testid=missing]", "sync server does not have it either");
    page.click("[data-testid=task-runs]");
    page.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");
    assert_eq!(page.eval("document.querySelector('[data-testid=search]').value"), "session-far-1");
}

#[test]
fn approving_runs_with_open_work_asks_first_on_one_run_and_in_a_batch_and_the_export_counts_them() {
    let (browser, page) = launch_annotation();
    let mut unfinished = run_record("open", "Compare two kettles", 3);
    unfinished["status"] = json!("in-review");
    unfinished["annotator"] = json!("ann");
    let mut finished = run_record("done", "List kettles", 1);
    finished["status"] = json!("in-review");
    finished["annotator"] = json!("ann");
    let mut flagged = step_record("open", 0, ["I start.", "I see the shop.", "I will search."]);
    flagged["verified"] = json!(true);
    flagged["issues"] = json!([{"id": "issue-1", "type": "logic", "severity": "major",
        "description": "The thought contradicts the screenshot.", "status": "open",
        "flaggedBy": "rev", "flaggedAt": "2026-11-20T09:02:00.000Z"}]);
    let mut complete = step_record("done", 0, ["I start.", "I see the list.", "I will read it."]);
    complete["verified"] = json!(true);
    seed(
        &page,
        &[unfinished, finished],
        &[
            flagged,
            step_record("open", 1, ["I searched.", "I see kettles.", "I will compare."]),
            step_record("open", 2, ["I compared.", "I see prices.", "I will answer."]),
            complete,
        ],
    );
    set_user(&page, "rev", "reviewer");

    // One run: Approve names what is open; Cancel leaves it in review.
    navigate(&browser, &page, "?agentRunId=open&qa=true");
    page.click("[data-testid=to-approved]");
    let asked = page.wait_for_text("[data-testid=approve-doubts]", "1 open issue");
    assert!(asked.contains("2 of 3 steps not complete"), "{asked}");
    page.click("[data-testid=approve-cancel]");
    page.wait_for(
        "!document.querySelector('[data-testid=approve-confirm]')",
        "the question to close",
    );
    let status = |page: &e2e::browser::Page, id: &str| {
        stored(page, "runs").iter().find(|r| r["id"] == id).unwrap()["status"].clone()
    };
    assert_eq!(status(&page, "open"), "in-review");

    // The fine-tuning dialog counts the unfinished run among those it would take.
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "2 of 2 runs");
    page.click("[data-testid=finetune-open]");
    page.wait_for_text("[data-testid=finetune-unfinished]", "1 of these runs has open issues");
    page.click("[data-testid=finetune-dialog] .row button:not(.primary)");

    // A batch: both picked, the question, then only the finished one approved.
    page.click("[data-run=open] input[type=checkbox]");
    page.click("[data-run=done] input[type=checkbox]");
    page.wait_for_text("[data-testid=batch-bar]", "2 picked");
    page.click("[data-testid=batch-approve]");
    page.wait_for_text("[data-testid=batch-approve-doubts]", "1 of the 2 picked runs");
    page.click("[data-testid=batch-approve-finished]");
    page.wait_for_text("[data-testid=notice]", "1 run moved to Approved");
    assert_eq!(status(&page, "done"), "approved");
    assert_eq!(status(&page, "open"), "in-review");
}

/// Issue 27's keyboard path: from the list, Alt+R opens the first run the filter shows;
/// Alt+1 and typing edit a thought, Ctrl+Enter marks each step complete and moves on,
/// Ctrl+Shift+Enter submits the run and lands on the next run of the filter, and Alt+R on the
/// last one says so. No click after the filter is chosen.
#[test]
fn a_queue_is_walked_by_keyboard_alone_from_the_first_run_to_the_next() {
    let (browser, page) = launch_annotation();
    let mut runs = Vec::new();
    let mut steps = Vec::new();
    for (n, (id, status)) in
        [("q1", "draft"), ("q2", "draft"), ("q3", "approved")].iter().enumerate()
    {
        let mut run = run_record(id, &format!("Queue task {}", n + 1), 2);
        run["status"] = json!(status);
        // Newest first: q1 heads the list.
        run["createdAt"] = json!(format!("2026-11-2{}T09:00:00.000Z", 5 - n));
        runs.push(run);
        for index in 0..2 {
            steps.push(step_record(
                id,
                index,
                ["I am on the shop.", "I can see the Kettles link.", "I should click it."],
            ));
        }
    }
    seed(&page, &runs, &steps);
    navigate(&browser, &page, "");
    page.wait_for_text("[data-testid=runs-count]", "3 of 3 runs");
    page.click("[data-testid=filter-draft]");
    page.wait_for_text("[data-testid=runs-count]", "2 of 3 runs");

    press(&page, "r", "KeyR", 1);
    page.wait_for_text("[data-testid=run-title]", "Queue task 1");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 2");
    for step in 1..=2 {
        press(&page, "1", "Digit1", 1);
        page.wait_for("document.activeElement?.dataset.testid === 'thought1'", "thought 1 focused");
        page.call("Input.insertText", json!({"text": " It sells kettles."})).unwrap();
        press(&page, "Enter", "Enter", 2);
        if step == 1 {
            page.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
        }
    }
    wait_stored(
        &page,
        "get('steps', ['q1', 1]).then(s => s && s.verified && s.thoughts.thought1.endsWith('It sells kettles.'))",
        "both steps of q1 complete",
    );
    // Submit, and the next run in the filter opens, although q1 has left the filter.
    press(&page, "Enter", "Enter", 2 | 8);
    page.wait_for_text("[data-testid=run-title]", "Queue task 2");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 2");
    wait_stored(
        &page,
        "get('runs', 'q1').then(r => r && r.status === 'in-review')",
        "q1 submitted",
    );

    // Alt+N finds the step that needs work; Alt+I opens Issues; Alt+R has no run left.
    press(&page, "n", "KeyN", 1);
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
    press(&page, "i", "KeyI", 1);
    page.wait_for(
        "document.querySelector('[data-testid=tab-issues]').classList.contains('on')",
        "Issues",
    );
    press(&page, "r", "KeyR", 1);
    page.wait_for_text("[data-testid=notice]", "That was the last run in the list.");
    assert_eq!(page.text("[data-testid=run-title]"), "Queue task 2");
}

/// Whether every element `selectors` names is inside the viewport and on top at its centre
/// (a person sees it and can click it without scrolling).
fn in_view_and_uncovered(page: &Page, selectors: &[&str]) -> Vec<String> {
    let list = json!(selectors);
    let found = page.eval(&format!(
        r#"{list}.filter((sel) => {{
            const el = document.querySelector(sel);
            if (!el) return true;
            const r = el.getBoundingClientRect();
            const inside = r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return !(inside && top && (top === el || el.contains(top)));
        }})"#
    ));
    serde_json::from_value(found).unwrap()
}

/// Issue 27's one screen: at 1366×768 a step's screenshot (fitted to its column's width), its
/// action, all three thoughts and Save are in view and uncovered; Alt+Z shows the screenshot
/// full size over the page and Esc closes it; a notice sits in the top bar over no control;
/// review mode offers the reviewer's controls and none of the writing aids.
#[test]
fn a_step_fits_one_screen_and_review_mode_shows_the_reviewers_controls() {
    let (browser, page) = launch_annotation();
    let long = "I can see the Kettles link in the top menu and the search box, but the kettle list is not open yet and no price is shown.";
    let runs = [run_record("s1", "Find the kettle's price", 2)];
    let steps = [
        step_record(
            "s1",
            0,
            [
                "I am on the Fixture Shop home page, where my task starts.",
                long,
                "I should click the Kettles link so the list of kettles opens.",
            ],
        ),
        step_record(
            "s1",
            1,
            [
                "I clicked the Kettles link and the list opened.",
                long,
                "I should open the steel kettle.",
            ],
        ),
    ];
    seed(&page, &runs, &steps);
    let metrics = json!({"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": false});
    page.call("Emulation.setDeviceMetricsOverride", metrics).unwrap();
    navigate(&browser, &page, "?agentRunId=s1&qa=false");
    page.wait_for(
        "document.querySelector('[data-testid=screenshot-img]')?.complete",
        "the screenshot",
    );
    let essentials = [
        "[data-testid=screenshot-img]",
        "[data-testid=action-type]",
        "[data-testid=action-target]",
        "[data-testid=thought1]",
        "[data-testid=thought2]",
        "[data-testid=thought3]",
        "[data-testid=save]",
        "[data-testid=mark-complete]",
    ];
    assert_eq!(in_view_and_uncovered(&page, &essentials), Vec::<String>::new());
    let fitted = page.eval(
        "(() => { const i = document.querySelector('[data-testid=screenshot-img]'); \
         return Math.abs(i.getBoundingClientRect().width - i.parentElement.clientWidth) < 2; })()",
    );
    assert_eq!(fitted, true, "the screenshot fills its column's width");

    press(&page, "z", "KeyZ", 1);
    page.wait_for(
        "(() => { const i = document.querySelector('[data-testid=screenshot-img]'); return i.getBoundingClientRect().width === i.naturalWidth; })()",
        "the screenshot at full size",
    );
    press(&page, "Escape", "Escape", 0);
    page.wait_for("!document.querySelector('[data-testid=screenshot].zoomed')", "the zoom closed");

    // A notice (here, a save's) is in the top bar and covers no control.
    replace_text(
        &page,
        "[data-testid=thought1]",
        "I am on the Fixture Shop's home page, where my task starts.",
    );
    press(&page, "s", "KeyS", 2);
    page.wait_for_text("[data-testid=notice]", "Saved");
    let covering = page.eval(
        "(() => { const n = document.querySelector('[data-testid=notice]').getBoundingClientRect(); \
         return [...document.querySelectorAll('button, input, select, textarea')].filter(c => c.closest('[data-testid=notice]') === null) \
           .filter(c => { const r = c.getBoundingClientRect(); return r.width && r.left < n.right && r.right > n.left && r.top < n.bottom && r.bottom > n.top; }).length; })()",
    );
    assert_eq!(covering, 0, "the notice overlaps no control");
    assert_eq!(in_view_and_uncovered(&page, &essentials), Vec::<String>::new());

    // Review mode: the reviewer's controls, no writing aids.
    set_user(&page, "rita", "reviewer");
    navigate(&browser, &page, "?agentRunId=s1&qa=true");
    page.wait_for("document.querySelector('[data-testid=suggest1]')", "Suggest change");
    let present = |sel: &str| page.eval(&format!("!!document.querySelector({sel:?})")) == true;
    for absent in [
        "[data-testid=save]",
        "[data-testid=tab-templates]",
        "[data-testid=tab-json]",
        "[data-testid=duplicate]",
        "[data-testid=run-tags]",
        "[data-testid=extended-thoughts]",
    ] {
        assert!(!present(absent), "{absent} shows in review mode");
    }
    assert!(present("[data-testid=tab-review]") && present("[data-testid=run-tags-read]"));
    assert_eq!(
        in_view_and_uncovered(&page, &["[data-testid=suggest1]", "[data-testid=thought3]"]),
        Vec::<String>::new()
    );
}
