//! Captures the annotation page as PNGs under `target/screenshots/`, 1280 px wide in light and
//! dark mode (the editor also at 1366×768 and 1920×1080), in each mode a person meets: the runs list (with analytics), the editor with its
//! checks, templates, JSON escaping, history with a diff, review mode with a suggestion and a
//! comment thread, the export dialog (and what anonymizing removes), the help overlay, an
//! import refused, the sync settings, and the editor at a narrow width.
//! `cargo run -p e2e --bin annotation_screenshots` (after `cargo xtask dist`).

use std::path::Path;
use std::time::Duration;

use e2e::annotation::*;
use e2e::browser::{Browser, Page};
use serde_json::{Value, json};

const THOUGHTS: [[&str; 3]; 4] = [
    [
        "I am on the Fixture Shop home page. My task is to find the price of the steel kettle.",
        "I can see the Kettles link in the top menu, but the kettle list is not open yet.",
        "I should click the Kettles link so that the list of kettles opens.",
    ],
    [
        "I clicked the Kettles link and the kettle list opened as expected.",
        "I can see two kettles: Steel kettle and Glass kettle, but no prices are shown in the list.",
        "I should click Steel kettle to open its page, where I expect the price.",
    ],
    ["clicked it", "page loaded with {\"price\": 24.99} data", "return the price"],
    [
        "I opened the Steel kettle page.",
        "I can see the price 24.99 € under the title.",
        "I should return the answer: the steel kettle costs 24.99 €.",
    ],
];

fn main() {
    let out = e2e::workspace_root().join("target/screenshots");
    let mut browser = Browser::launch();
    let page = open_annotation(&mut browser, "");
    let mut runs = Vec::new();
    let mut steps: Vec<Value> = Vec::new();
    let people = ["ann", "bea", "cal"];
    let statuses = ["draft", "in-review", "approved", "rejected", "draft", "approved"];
    for i in 0..12u32 {
        let id = format!("run-{i:02}");
        let mut run =
            run_record(&id, &format!("Task {i}: find the price of kettle model {}", 100 + i), 4);
        run["status"] = json!(statuses[i as usize % statuses.len()]);
        run["annotator"] = json!(people[i as usize % people.len()]);
        run["quality"] = json!(45 + (i * 37) % 55);
        run["tags"] = json!(if i % 2 == 0 { vec!["shop"] } else { vec!["shop", "kettles"] });
        run["createdAt"] = json!(format!("2026-11-{:02}T09:00:00.000Z", 10 + i));
        runs.push(run);
        for (index, thoughts) in THOUGHTS.iter().enumerate() {
            let mut step = step_record(&id, index as u32, *thoughts);
            step["verified"] = json!(index < (i as usize % 4));
            steps.push(step);
        }
    }
    runs[0]["subtasks"] = json!([
        {"id": "a", "title": "Open the kettle list", "description": "", "stepRange": [0, 1], "status": "annotated"},
        {"id": "b", "title": "Read the price", "description": "", "stepRange": [2, 3], "status": "pending"},
    ]);
    seed(&page, &runs, &steps);
    choose(&page, "[data-testid=user-role]", "qa_manager");
    navigate(&browser, &page, "");
    page.wait_for_text("[data-testid=runs-count]", "12 of 12 runs");
    let shoot = |name: &str| capture(&page, &out, name, (1280, 860));
    shoot("list");
    page.click("[data-testid=analytics-toggle]");
    page.wait_for("document.querySelector('[data-testid=analytics]')", "analytics");
    shoot("list-analytics");
    page.click("[data-testid=export-open]");
    shoot("export-dialog");
    page.click("[data-testid=export-anonymize]");
    page.wait_for(
        "document.querySelector('[data-testid=export-anonymize-scope]')",
        "what anonymizing removes",
    );
    shoot("export-dialog-anonymized");

    navigate(&browser, &page, "?agentRunId=run-00&qa=false");
    page.wait_for(
        "document.querySelector('[data-testid=screenshot-img]')?.complete",
        "the screenshot",
    );
    shoot("editor-checks");
    // The sizes annotators work at: everything a step needs on one screen.
    capture(&page, &out, "editor-1366", (1366, 768));
    capture(&page, &out, "editor-1920", (1920, 1080));
    page.click("[data-testid=tab-templates]");
    choose(&page, "[data-testid=template-select]", "general-success");
    shoot("editor-templates");
    page.click("[data-testid=step-row][data-index='2']");
    page.click("[data-testid=tab-json]");
    page.click("[data-testid=escape-preview2]");
    shoot("editor-json");
    page.click("[data-testid=step-row][data-index='1']");
    replace_text(
        &page,
        "[data-testid=thought1]",
        "I clicked the Kettles link, and the list opened.",
    );
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    page.click("[data-testid=tab-history]");
    page.click("[data-testid=version][data-number='2'] [data-testid=compare]");
    shoot("editor-history");
    page.click("[data-testid=tab-subtasks]");
    shoot("editor-subtasks");
    page.click("[data-testid=help]");
    shoot("help");
    page.click("[data-testid=help-overlay]");

    // Review mode: a reviewer's suggestion and comment on a run in review.
    choose(&page, "[data-testid=user-role]", "reviewer");
    navigate(&browser, &page, "?agentRunId=run-01&qa=true");
    page.click("[data-testid=suggest2]");
    replace_text(
        &page,
        "[data-testid=suggest-text]",
        "I can see two kettles, Steel kettle and Glass kettle, but the list shows no prices.",
    );
    page.click("[data-testid=suggest-submit]");
    page.wait_for("document.querySelector('[data-testid=suggestion]')", "the suggestion");
    replace_text(
        &page,
        "[data-testid=comment-text]",
        "Is the price really missing from the list, or just below the fold?",
    );
    page.click("[data-testid=comment-post]");
    page.wait_for("document.querySelector('[data-testid=thread]')", "the comment");
    shoot("review");

    // An import refused, with its reasons.
    navigate(&browser, &page, "");
    let file = e2e::workspace_root().join("target/tmp/screenshot-import.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        r#"{"format": "alphascout.runs", "version": 1, "runs": [{"id": "x", "status": "done"}]}"#,
    )
    .unwrap();
    choose_file(&page, "[data-testid=import-file]", &file);
    page.wait_for("document.querySelector('[data-testid=import-errors]')", "the import errors");
    shoot("import-refused");
    page.click("[data-testid=sync-state]");
    shoot("sync-settings");

    navigate(&browser, &page, "?agentRunId=run-02&qa=false");
    capture(&page, &out, "editor-narrow", (760, 860));
}

fn capture(page: &Page, out: &Path, name: &str, (width, height): (u32, u32)) {
    for scheme in ["light", "dark"] {
        let metrics =
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false});
        page.call("Emulation.setDeviceMetricsOverride", metrics).expect("viewport");
        let media = json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]});
        page.call("Emulation.setEmulatedMedia", media).expect("colour scheme");
        std::thread::sleep(Duration::from_millis(200));
        let path = out.join(format!("annotation-{name}-{scheme}.png"));
        page.screenshot(&path);
        println!("{}", path.display());
    }
}
