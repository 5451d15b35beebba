//! The annotation page in real Chromium over the extension's real IndexedDB: open a run by
//! URL, edit and check thoughts, templates, JSON escaping, completion, review, history,
//! export and import.

use std::process::Command;

use e2e::annotation::*;
use e2e::browser::Page;
use serde_json::{Value, json};

fn check_state(page: &Page, id: &str) -> String {
    page.eval(&format!("document.querySelector('[data-check={id}]')?.dataset.state ?? 'missing'"))
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn an_annotator_opens_a_run_by_url_fixes_its_thoughts_and_marks_steps_complete() {
    let (browser, page) = launch_annotation();
    let mut first = step_record(
        "r1",
        0,
        [
            "I opened the shop.",
            "I can see the Kettles link.",
            "I should click Kettles to see kettles.",
        ],
    );
    first["verified"] = json!(true);
    seed(
        &page,
        &[run_record("r1", "Find the price of the kettle", 3)],
        &[
            first,
            step_record("r1", 1, ["clicked it", "page loaded", "click the kettle"]),
            step_record("r1", 2, ["done", "price is there", "return the price"]),
        ],
    );

    // A run that is not here says so instead of showing an empty editor.
    navigate(&browser, &page, "?agentRunId=nope&qa=false");
    page.wait_for_text("[data-testid=missing]", "not stored in this browser");

    navigate(&browser, &page, "?agentRunId=r1&taskId=session-r1&qa=false");
    page.wait_for_text("[data-testid=run-title]", "Find the price of the kettle");
    assert_eq!(page.text("[data-testid=step-heading]"), "Step 2 of 3", "the first incomplete step");
    page.wait_for(
        "document.querySelector('[data-testid=screenshot-img]')?.complete",
        "the screenshot",
    );
    assert_eq!(page.text("[data-testid=thought1-count]"), "10 chars");

    // The checklist follows the typing.
    assert_eq!(check_state(&page, "first-person"), "bad");
    replace_text(
        &page,
        "[data-testid=thought1]",
        "I clicked the Kettles link and the kettle list opened.",
    );
    page.wait_for(
        "document.querySelector('[data-check=first-person]').dataset.state === 'ok'",
        "first person to pass",
    );
    assert_eq!(page.text("[data-testid=unsaved]"), "Unsaved edits");

    // Spelling is checked offline against the bundled dictionary; a fix is one click.
    replace_text(&page, "[data-testid=thought2]", "I can see the serch results for kettles.");
    page.wait_for_text("[data-testid=thought2-issues]", "serch");
    page.wait_for(
        "document.querySelector('.thought-wrap mark')",
        "the misspelling marked in place",
    );
    page.click("[data-testid=thought2-issues] [data-testid=apply-fix][data-value=search]");
    page.wait_for(
        "document.querySelector('[data-testid=thought2]').value === 'I can see the search results for kettles.'",
        "the fix applied",
    );

    // A template fills all three thoughts, placeholders and all.
    page.click("[data-testid=tab-templates]");
    page.wait_for(
        "document.querySelectorAll('[data-testid=template-select] option').length > 9",
        "the nine template families",
    );
    let template =
        page.eval("document.querySelectorAll('[data-testid=template-select] option')[1].value");
    choose(&page, "[data-testid=template-select]", template.as_str().unwrap());
    page.wait_for("document.querySelector('[data-testid=placeholder]')", "placeholders to fill");
    let placeholders = page
        .eval("document.querySelectorAll('[data-testid=placeholder]').length")
        .as_u64()
        .unwrap();
    for i in 0..placeholders {
        page.eval(&format!(
            "(() => {{ const input = document.querySelectorAll('[data-testid=placeholder]')[{i}];
                input.focus(); document.execCommand('insertText', false, 'Add to cart button'); }})()"
        ));
    }
    page.click("[data-testid=template-insert]");
    page.wait_for(
        "document.querySelector('[data-testid=thought3]').value.includes('Add to cart button')",
        "the template in thought 3",
    );
    let filled = format!("{} {} {}", thought(&page, 1), thought(&page, 2), thought(&page, 3));
    assert!(!filled.contains('<'), "every placeholder filled: {filled}");

    // JSON in a thought is escaped after a preview that checks it before and after.
    replace_text(
        &page,
        "[data-testid=thought2]",
        r#"I can see the cart data {"price": 24.99, "qty": 1} in the page, but it is not confirmed."#,
    );
    page.click("[data-testid=tab-json]");
    page.click("[data-testid=escape-preview2]");
    let preview = page.text("[data-testid=escape-result]");
    assert!(preview.contains(r#"\{"price": 24.99, "qty": 1\}"#), "{preview}");
    assert!(page.text("[data-testid=escape-summary]").contains("valid before: 1/1"));
    page.click("[data-testid=escape-apply]");
    page.wait_for(
        r#"document.querySelector('[data-testid=thought2]').value.includes('\\{"price"')"#,
        "the escaped text",
    );

    // Save & mark complete: stored, versioned, and on to the next step.
    page.click("[data-testid=mark-complete]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    page.wait_for_text("[data-testid=step-heading]", "Step 3 of 3");
    let steps = stored(&page, "steps");
    let saved = step_of(&steps, "r1", 1);
    assert_eq!(saved["verified"], true);
    assert!(saved["thoughts"]["thought2"].as_str().unwrap().contains(r#"\{"price""#));
    assert!(saved["thoughts"]["thought3"].as_str().unwrap().contains("Add to cart button"));
    assert_eq!(saved["lastEditedBy"], "me");
    let versions = stored(&page, "versions");
    assert_eq!(versions.len(), 2, "the run as captured, then the edit");
    assert_eq!(versions[0]["author"], "capture");
    assert_eq!(
        versions[0]["steps"][1]["thoughts"]["thought1"], "clicked it",
        "the original words are kept"
    );
    assert_eq!(page.text("[data-testid=run-progress]"), "66% complete");

    // Keyboard: Alt+↑ goes back a step; the help lists the shortcuts.
    press(&page, "ArrowUp", "ArrowUp", 1);
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 3");
    page.click("[data-testid=help]");
    page.wait_for_text("[data-testid=help-overlay]", "Save & mark complete");
}

#[test]
fn a_reviewer_suggests_and_comments_the_author_accepts_and_the_reviewer_approves() {
    let (browser, page) = launch_annotation();
    let mut run = run_record("r2", "Compare two kettles", 2);
    run["status"] = json!("in-review");
    run["annotator"] = json!("ann");
    seed(
        &page,
        &[run],
        &step_records(
            "r2",
            &[
                ["I am on the shop.", "I see the bar.", "I should search for kettles."],
                ["I searched.", "I can see two kettles.", "I should return both prices."],
            ],
        ),
    );

    set_user(&page, "rev", "reviewer");
    navigate(&browser, &page, "?agentRunId=r2&qa=true");
    page.wait_for(
        "document.querySelector('[data-testid=run-view]').dataset.qa === 'true'",
        "review mode",
    );
    assert_eq!(
        page.eval("document.querySelector('[data-testid=thought2]').readOnly"),
        true,
        "reviewers suggest, never edit"
    );
    page.click("[data-testid=suggest2]");
    replace_text(&page, "[data-testid=suggest-text]", "I can see the search bar, but it is empty.");
    page.wait_for(
        "document.querySelector('[data-testid=suggest-form] ins')",
        "the change shown as a diff",
    );
    page.click("[data-testid=suggest-submit]");
    page.wait_for(
        "document.querySelector('[data-testid=suggestion][data-state=pending]')",
        "a pending suggestion",
    );
    replace_text(&page, "[data-testid=comment-text]", "Which search bar: the header one?");
    page.click("[data-testid=comment-post]");
    page.wait_for_text("[data-testid=threads]", "Which search bar");
    // Approving waits for the author to decide on the suggestion.
    assert_eq!(page.eval("!!document.querySelector('[data-testid=to-approved]')"), false);
    page.wait_for_text("[data-testid=pending-count]", "1 suggestion pending");

    // The author sees the tracked change and accepts it.
    set_user(&page, "ann", "annotator");
    navigate(&browser, &page, "?agentRunId=r2&qa=false");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 2");
    page.click("[data-testid=tab-review]");
    page.wait_for_text("[data-testid=threads]", "Which search bar");
    page.click("[data-testid=suggestion-accept]");
    page.wait_for(
        "document.querySelector('[data-testid=suggestion][data-state=accepted]')",
        "the suggestion accepted",
    );
    page.wait_for(
        "document.querySelector('[data-testid=thought2]').value === 'I can see the search bar, but it is empty.'",
        "the accepted text in the thought",
    );
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    let steps = stored(&page, "steps");
    assert_eq!(
        step_of(&steps, "r2", 0)["thoughts"]["thought2"],
        "I can see the search bar, but it is empty."
    );
    let suggestions = stored(&page, "suggestions");
    assert_eq!(suggestions[0]["state"], "accepted");
    assert_eq!(suggestions[0]["resolvedBy"], "ann");
    page.click("[data-testid=resolve]");
    page.wait_for("document.querySelector('[data-testid=thread].resolved')", "the thread resolved");

    // The reviewer approves.
    set_user(&page, "rev", "reviewer");
    navigate(&browser, &page, "?agentRunId=r2&qa=true");
    page.click("[data-testid=to-approved]");
    // Its steps were never marked complete: Approve names that and waits for a yes.
    page.wait_for_text("[data-testid=approve-doubts]", "steps not complete");
    page.click("[data-testid=approve-anyway]");
    page.wait_for_text("[data-testid=run-status]", "Approved");
    // The badge shows the move at once; the notice says when it is stored.
    page.wait_for_text("[data-testid=notice]", "The run is now approved");
    let runs = stored(&page, "runs");
    assert_eq!(runs[0]["status"], "approved");
    assert_eq!(runs[0]["reviewedBy"], "rev");
    assert_eq!(stored(&page, "comments")[0]["resolved"], true);
}

#[test]
fn every_save_is_a_version_and_rolling_back_restores_one() {
    let (browser, page) = launch_annotation();
    seed(
        &page,
        &[run_record("r3", "Open the kettle page", 1)],
        &[step_record(
            "r3",
            0,
            ["I start on the shop.", "I can see the Kettles link.", "I should click it."],
        )],
    );
    navigate(&browser, &page, "?agentRunId=r3&qa=false");
    replace_text(
        &page,
        "[data-testid=thought3]",
        "I should click the Kettles link to open the list.",
    );
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    replace_text(
        &page,
        "[data-testid=thought3]",
        "I should click the Kettles link; the list should open.",
    );
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 3.");

    page.click("[data-testid=tab-history]");
    page.wait_for(
        "document.querySelectorAll('[data-testid=version]').length === 3",
        "three versions",
    );
    assert!(
        page.text("[data-testid=version-summary]").contains("thought 3"),
        "what changed is named"
    );
    page.click("[data-testid=version][data-number='1'] [data-testid=compare]");
    page.wait_for(
        "document.querySelector('[data-testid=diff-view] del')",
        "the changes from v1 to now",
    );
    page.click("[data-testid=version][data-number='1'] [data-testid=rollback]");
    page.click("[data-testid=version][data-number='1'] [data-testid=rollback]");
    page.wait_for_text("[data-testid=notice]", "Rolled back to version 1, saved as version 4.");
    assert_eq!(thought(&page, 3), "I should click it.");
    let steps = stored(&page, "steps");
    assert_eq!(step_of(&steps, "r3", 0)["thoughts"]["thought3"], "I should click it.");
    let versions = stored(&page, "versions");
    assert_eq!(versions.len(), 4, "rolling back adds a version; nothing is lost");
    assert_eq!(
        versions[2]["steps"][0]["thoughts"]["thought3"],
        "I should click the Kettles link; the list should open."
    );
}

fn export(page: &Page, dir: &std::path::Path, format: &str) -> std::path::PathBuf {
    page.click("[data-testid=export-open]");
    choose(page, "[data-testid=export-format]", format);
    page.click("[data-testid=export-go]");
    let file = wait_for_download(dir, &format!(".{format}"));
    page.wait_for_text("[data-testid=notice]", "Exported 2 runs (5 steps)");
    page.click("[data-testid=notice] button");
    file
}

#[test]
fn exports_in_every_format_parse_back() {
    let (browser, page) = launch_annotation();
    let mut steps: Vec<Value> = (0..3)
        .map(|i| {
            step_record(
                "r4",
                i,
                ["I opened, the \"shop\".", "I can see it,\nbut not yet.", "I should click Buy."],
            )
        })
        .collect();
    steps.extend((0..2).map(|i| {
        step_record("r5", i, ["I start.", "I can see the list.", "I should scroll down."])
    }));
    seed(
        &page,
        &[run_record("r4", "Buy a kettle", 3), run_record("r5", "List kettles", 2)],
        &steps,
    );
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "2 of 2 runs");
    let dir = allow_downloads(&browser, "exports");

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(export(&page, &dir, "json")).unwrap())
            .unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 2);
    let r4 = json["runs"].as_array().unwrap().iter().find(|r| r["id"] == "r4").unwrap();
    assert_eq!(r4["steps"][1]["thoughts"]["thought2"], "I can see it,\nbut not yet.");

    let jsonl = std::fs::read_to_string(export(&page, &dir, "jsonl")).unwrap();
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5, "one line per step");
    assert!(lines.iter().all(|l| l["thoughts"]["thought3"].is_string() && l["runId"].is_string()));

    let csv = std::fs::read_to_string(export(&page, &dir, "csv")).unwrap();
    assert!(
        csv.starts_with(
            "run_id,step_index,action_type,thought_1,thought_2,thought_3,screenshot_url"
        ),
        "{csv}"
    );
    assert!(csv.contains("\"I opened, the \"\"shop\"\".\""), "quotes and commas are escaped");
    assert!(csv.contains("\"I can see it,\nbut not yet.\""), "newlines stay inside quotes");

    let markdown = std::fs::read_to_string(export(&page, &dir, "md")).unwrap();
    assert!(markdown.contains("Buy a kettle") && markdown.contains("List kettles"));

    let zip = export(&page, &dir, "zip");
    // Every step's screenshot file is in the archive; an image steps share is stored once.
    let check = "import zipfile,sys,json
z=zipfile.ZipFile(sys.argv[1])
doc=json.loads(z.read('runs.json'))
files=[s['screenshot']['file'] for r in doc['runs'] for s in r['steps']]
print(json.dumps([z.testzip(), z.namelist(), len(doc['runs']), all(f in z.namelist() for f in files), len(files)]))";
    let listing = Command::new("python3")
        .args(["-c", check])
        .arg(&zip)
        .output()
        .expect("python3 reads the zip");
    assert!(listing.status.success(), "{}", String::from_utf8_lossy(&listing.stderr));
    let listing: Value = serde_json::from_slice(&listing.stdout).unwrap();
    assert_eq!(listing[0], Value::Null, "every CRC matches");
    let names: Vec<&str> =
        listing[1].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(names.contains(&"runs.json") && names.contains(&"runs.jsonl"), "{names:?}");
    assert_eq!((listing[3].clone(), listing[4].clone()), (json!(true), json!(5)), "{names:?}");
    let images = names.iter().filter(|n| n.ends_with(".jpg")).count();
    assert!((1..=5).contains(&images), "{names:?}");
    assert_eq!(listing[2], 2);

    // Re-importing the JSON export is refused (the runs are here), or taken as copies.
    let json_file = wait_for_download(&dir, ".json");
    choose_file(&page, "[data-testid=import-file]", &json_file);
    page.wait_for_text("[data-testid=import-errors]", "already");
    page.click("[data-testid=import-copies]");
    page.wait_for_text("[data-testid=runs-count]", "4 of 4 runs");

    // Runs gather into a collection, which then filters the list; managers see analytics.
    page.click("[data-testid=run-row][data-run=r4] input[type=checkbox]");
    page.click("[data-testid=run-row][data-run=r5] input[type=checkbox]");
    replace_text(&page, "[data-testid=collection-name]", "kettles-batch");
    page.click("[data-testid=collection-add]");
    page.wait_for_text("[data-testid=notice]", "Added 2 runs to the collection");
    page.wait_for("[...document.querySelectorAll('[data-testid=filter-collection] option')].some(o => o.value === 'kettles-batch')", "the collection in the filter");
    choose(&page, "[data-testid=filter-collection]", "kettles-batch");
    page.wait_for_text("[data-testid=runs-count]", "2 of 4 runs");
    choose(&page, "[data-testid=user-role]", "qa_manager");
    page.click("[data-testid=analytics-toggle]");
    page.wait_for(
        "document.querySelector('[data-testid=annotator-row] svg rect')",
        "the per-annotator chart",
    );
}

#[test]
fn an_anonymized_export_holds_no_personal_data_and_no_screenshot() {
    let (browser, page) = launch_annotation();
    let mut run = run_record("r7", "Email jane.doe@example.com or call +44 20 7946 0958", 1);
    run["createdBy"] = json!("erin.author");
    run["annotator"] = json!("erin.author");
    run["reviewedBy"] = json!("frank.reviewer");
    run["userId"] = json!("u-48151623");
    run["startUrl"] = json!("https://shop.test/login?session=abc123");
    let mut step = step_record(
        "r7",
        0,
        ["erin.author asked for it.", "The field is empty.", "I type Rosebud Lane 12 in."],
    );
    step["url"] = json!("https://shop.test/account/sess_9f8e7d6c5b4a39281706?id=5#top");
    step["action"] =
        json!({"type": "type", "target": "Security answer", "value": "Rosebud Lane 12"});
    step["actions"] = json!([{"action": {"action": "type", "id": 4, "text": "Rosebud Lane 12"},
        "target": "Security answer", "ok": true, "message": "Typed into [4]; it now reads \"Rosebud Lane 12\""}]);
    seed(&page, &[run], &[step]);
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");
    let dir = allow_downloads(&browser, "anonymized");
    let personal = [
        "jane.doe",
        "7946",
        "erin.author",
        "frank.reviewer",
        "u-48151623",
        "session=",
        "abc123",
        "sess_9f8e7d6c5b4a39281706",
        "?id=5",
        "Rosebud",
        "09:00:00.000Z",
        "09:01:00.000Z",
    ];

    for format in ["zip", "jsonl", "csv", "md", "json"] {
        page.click("[data-testid=export-open]");
        choose(&page, "[data-testid=export-format]", format);
        page.click("[data-testid=export-anonymize]");
        let scope = page.wait_for_text(
            "[data-testid=export-anonymize-scope]",
            "cannot find a name it was never given",
        );
        assert!(scope.contains("[typed text]") && scope.contains("screenshots"), "{scope}");
        page.click("[data-testid=export-go]");
        let file = wait_for_download(&dir, &format!(".{format}"));
        page.wait_for_text("[data-testid=notice]", "Exported 1 runs (1 steps)");
        page.click("[data-testid=notice] button");
        let text = if format == "zip" {
            // Every entry's name and text, CRCs checked.
            let read = "import zipfile,sys,json
z=zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(json.dumps([z.namelist(), ''.join(z.read(n).decode() for n in z.namelist())]))";
            let out = Command::new("python3").args(["-c", read]).arg(&file).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(listing[0], json!(["README.txt", "runs.json", "runs.jsonl"]), "no image");
            listing[1].as_str().unwrap().to_owned()
        } else {
            std::fs::read_to_string(&file).unwrap()
        };
        for secret in personal {
            assert!(!text.contains(secret), "the {format} export holds {secret:?}: {text}");
        }
        // (Markdown escapes the brackets.)
        assert!(text.contains("typed text") && text.contains("email 1"), "{text}");
        std::fs::remove_file(&file).unwrap();
    }
}

#[test]
fn a_corrupt_import_is_refused_whole_with_every_problem_named() {
    let (browser, page) = launch_annotation();
    seed(
        &page,
        &[run_record("r6", "Keep me", 1)],
        &[step_record("r6", 0, ["I a.", "I b.", "I c."])],
    );
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");

    let dir = e2e::workspace_root().join("target/tmp/imports");
    std::fs::create_dir_all(&dir).unwrap();
    let good = json!({"id": "new-1", "taskId": "s", "taskPrompt": "A good run", "status": "draft", "totalSteps": 1,
        "steps": [{"runId": "new-1", "index": 0, "thoughts": {"thought1": "I", "thought2": "I", "thought3": "I"}}]});
    let bad = json!({"id": "new-2", "taskId": "s", "status": "finished", "totalSteps": 1,
        "steps": [{"runId": "new-2", "index": "zero", "thoughts": {"thought1": 5}}]});
    let file = dir.join("corrupt.json");
    std::fs::write(
        &file,
        json!({"format": "alphascout.runs", "version": 1, "runs": [good, bad]}).to_string(),
    )
    .unwrap();
    choose_file(&page, "[data-testid=import-file]", &file);
    let errors = page.wait_for_text("[data-testid=import-errors]", "nothing changed");
    assert!(errors.contains("taskPrompt"), "{errors}");
    assert!(errors.contains("status"), "{errors}");
    assert!(errors.contains("index"), "{errors}");
    page.wait_for_text("[data-testid=notice]", "Nothing was imported from corrupt.json");
    assert_eq!(stored(&page, "runs").len(), 1, "the good run was not half-imported");

    let truncated = dir.join("truncated.json");
    std::fs::write(
        &truncated,
        r#"{"format": "alphascout.runs", "version": 1, "runs": [{"id": "x""#,
    )
    .unwrap();
    choose_file(&page, "[data-testid=import-file]", &truncated);
    page.wait_for_text("[data-testid=notice]", "Nothing was imported from truncated.json");
    assert!(page.text("[data-testid=import-errors]").contains("line 1"));
    assert_eq!(stored(&page, "runs").len(), 1);
    assert_eq!(page.text("[data-testid=runs-count]"), "1 of 1 runs");

    // A file over the cap is refused before it is read (sparse: 101 MB on paper only).
    let huge = dir.join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(101 * 1024 * 1024).unwrap();
    choose_file(&page, "[data-testid=import-file]", &huge);
    page.wait_for_text(
        "[data-testid=notice]",
        "Nothing was imported from huge.json: the file is 101 MB; imports take at most 100 MB",
    );
    assert!(page.text("[data-testid=import-errors]").contains("export fewer runs at a time"));
    assert_eq!(stored(&page, "runs").len(), 1, "what was stored stays");
    assert_eq!(page.text("[data-testid=runs-count]"), "1 of 1 runs");
    std::fs::remove_file(&huge).unwrap();
}
