//! Spelling and the quality score as a person meets them, in real Chromium over the
//! extension's real IndexedDB: a misspelled word is underlined where it stands (in review
//! mode too) and its likeliest fix comes first; every score counts the misspellings, whatever
//! the save changed (a status move, a tag, a batch move, a rollback); and runs without a
//! score say so, are scored when imported or first opened, and are counted, not silently
//! dropped, by the "Quality ≥" filter.

use e2e::annotation::*;
use e2e::browser::Page;
use serde_json::json;

/// `--bad` and `--fg` of `annotation.css` (light scheme): the underline and the text.
const BAD: [u8; 3] = [0xc4, 0x27, 0x1b];
const INK: [u8; 3] = [0x1b, 0x1f, 0x24];

const TYPOS: &str =
    "I can see the 'Serch' feild in the heder, but it is emty. I need to tipe kettle.";
const CLEAN: &str =
    "I can see the 'Search' field in the header, but it is empty. I need to type kettle.";

fn thoughts(thought2: &str) -> [&str; 3] {
    [
        "I opened the shop's home page.",
        thought2,
        "I should type kettle into the 'Search' field so that results appear.",
    ]
}

/// The open run's score in its header.
fn run_score(page: &Page) -> Option<u64> {
    quality_in(page, "[data-testid=run-header] [data-testid=run-quality]")
}

/// The selected step's score in its checks, which counts the misspellings marked in it.
fn step_score(page: &Page) -> u64 {
    quality_in(page, "[data-testid=step-quality]").expect("the step's quality")
}

/// Scrolls the page (not the thought's own box) so that thought `n` is in view.
fn show_thought(page: &Page, n: u8) {
    page.eval(&format!(
        "document.querySelector('[data-testid=thought{n}-field]').scrollIntoView({{block: 'center'}})"
    ));
}

/// The score the runs list shows for `run`.
fn row_score(page: &Page, run: &str) -> String {
    page.text(&format!("[data-testid=run-row][data-run={run}] [data-testid=run-quality]"))
}

/// Thought 2's word at `mark` shows red under it on screen, not only a style on it; the
/// screen is kept as `shot`.png for a person to look at.
fn underlined_on_screen(page: &Page, mark: &str, shot: &str) {
    show_thought(page, 2);
    let (red, ink) = pixels_over(page, mark, 6.0, BAD, INK);
    assert!(ink > 0, "the word is where its mark is");
    assert!(red > 20, "the misspelling is underlined in red on screen ({red} red pixels)");
    let shots = e2e::workspace_root().join("target/tmp/screenshots");
    page.screenshot(&shots.join(format!("{shot}.png")));
}

#[test]
fn a_misspelled_word_is_underlined_in_place_and_its_likeliest_fix_comes_first() {
    let (browser, page) = launch_annotation();
    seed(
        &page,
        &[run_record("sp", "Find the shop's address", 1)],
        &[step_record(
            "sp",
            0,
            [
                "I opened the shop's contact page.",
                "I can see the adress field, but it is empty.",
                "I should type the street into the field.",
            ],
        )],
    );
    navigate(&browser, &page, "?agentRunId=sp&qa=false");
    page.wait_for_text("[data-testid=thought2-issues]", "adress");
    let mark = "[data-testid=thought2-field] mark";
    page.wait_for(&format!("document.querySelector('{mark}')"), "the misspelling marked");
    let style = page.eval(&format!(
        "(() => {{ const s = getComputedStyle(document.querySelector('{mark}'));
           return [s.textDecorationLine, s.textDecorationStyle]; }})()"
    ));
    assert!(style[0].as_str().unwrap_or_default().contains("underline"), "{style}");
    assert_eq!(style[1], "wavy", "{style}");
    // What a person sees: red under the word, not only a style on it.
    underlined_on_screen(&page, mark, "annotation-misspelled");

    // One letter missing beats one letter too many of a rarer word: "address", not "dress".
    let first = page.eval(
        "document.querySelector('[data-testid=thought2-issues] [data-testid=apply-fix]').dataset.value",
    );
    assert_eq!(first, "address");

    // A thought too long for its box scrolls, and its marks scroll with it, under the words.
    let long = format!(
        "{}So I should type the street into the adress field.",
        "I checked the page again and nothing else changed on it. ".repeat(40)
    );
    replace_text(&page, "[data-testid=thought3]", &long);
    page.wait_for_text("[data-testid=thought3-issues]", "adress");
    show_thought(&page, 3);
    page.eval("(() => { const t = document.querySelector('[data-testid=thought3]'); t.scrollTop = t.scrollHeight; })()");
    let mark3 = "[data-testid=thought3-field] mark";
    page.wait_for(
        &format!(
            "(() => {{ const m = document.querySelector('{mark3}').getBoundingClientRect();
               const t = document.querySelector('[data-testid=thought3]').getBoundingClientRect();
               return t.height > 0 && m.top >= t.top && m.bottom <= t.bottom; }})()"
        ),
        "the mark scrolled into the box with its word",
    );
    let (red, ink) = pixels_over(&page, mark3, 6.0, BAD, INK);
    assert!(ink > 0, "the word is where its mark is, scrolled");
    assert!(red > 20, "the scrolled misspelling is underlined ({red} red pixels)");
    page.screenshot(
        &e2e::workspace_root().join("target/tmp/screenshots/annotation-misspelled-scrolled.png"),
    );
    page.click("[data-testid=discard-drafts]");

    // Read-only in review mode, and still marked.
    navigate(&browser, &page, "?agentRunId=sp&qa=true");
    page.wait_for(
        "document.querySelector('[data-testid=run-view]').dataset.qa === 'true'",
        "review mode",
    );
    page.wait_for(&format!("document.querySelector('{mark}')"), "the misspelling marked");
    assert_eq!(page.eval("document.querySelector('[data-testid=thought2]').readOnly"), true);
    underlined_on_screen(&page, mark, "annotation-misspelled-review");
}

#[test]
fn every_score_counts_the_misspellings_whatever_the_save_changed() {
    let (browser, page) = launch_annotation();
    // "stale" holds a score its misspelled text never earned: any save must score it again.
    let mut stale = run_record("stale", "Search the shop, tagged", 1);
    stale["quality"] = json!(100);
    seed(
        &page,
        &[
            run_record("submit", "Search the shop, submitted", 1),
            stale,
            run_record("batch", "Search the shop, batch", 1),
            run_record("rb", "Search the shop, rolled back", 1),
        ],
        &[
            step_record("submit", 0, thoughts(TYPOS)),
            step_record("stale", 0, thoughts(TYPOS)),
            step_record("batch", 0, thoughts(TYPOS)),
            step_record("rb", 0, thoughts(CLEAN)),
        ],
    );

    // A first save that only submits the run for review.
    navigate(&browser, &page, "?agentRunId=submit&qa=false");
    page.wait_for_text("[data-testid=thought2-issues]", "feild");
    page.click("[data-testid=to-in-review]");
    page.wait_for_text("[data-testid=notice]", "saved as version 2");
    let misspelled = step_score(&page);
    assert_eq!(run_score(&page), Some(misspelled), "submitting scores the misspellings");

    // A save that only changes the tags.
    navigate(&browser, &page, "?agentRunId=stale&qa=false");
    page.wait_for_text("[data-testid=thought2-issues]", "feild");
    replace_text(&page, "[data-testid=run-tags]", "kettles");
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    assert_eq!(step_score(&page), misspelled);
    assert_eq!(run_score(&page), Some(misspelled), "a tag edit scores the misspellings");

    // A rollback to a misspelled version.
    navigate(&browser, &page, "?agentRunId=rb&qa=false");
    page.wait_for_text("[data-testid=step-heading]", "Step 1 of 1");
    replace_text(&page, "[data-testid=thought2]", TYPOS);
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 2.");
    replace_text(&page, "[data-testid=thought2]", CLEAN);
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version 3.");
    let clean = run_score(&page).expect("a saved run's score");
    assert!(misspelled < clean, "misspellings lower the score: {misspelled} < {clean}");
    page.click("[data-testid=tab-history]");
    page.click("[data-testid=version][data-number='2'] [data-testid=rollback]");
    page.click("[data-testid=version][data-number='2'] [data-testid=rollback]");
    page.wait_for_text("[data-testid=notice]", "Rolled back to version 2, saved as version 4.");
    page.wait_for_text("[data-testid=thought2-issues]", "feild");
    page.click("[data-testid=tab-checks]");
    assert_eq!(step_score(&page), misspelled);
    assert_eq!(run_score(&page), Some(misspelled), "the rollback scores the misspellings");

    // A batch move from the list, which has no editor open.
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "4 of 4 runs");
    page.click("[data-testid=run-row][data-run=batch] input[type=checkbox]");
    page.click("[data-testid=batch-submit]");
    page.wait_for_text("[data-testid=notice]", "1 run moved to In review");
    page.wait_for_text(
        "[data-testid=run-row][data-run=batch] [data-testid=run-quality]",
        &misspelled.to_string(),
    );
    for run in ["submit", "stale", "batch", "rb"] {
        assert_eq!(row_score(&page, run), misspelled.to_string(), "{run} in the list");
    }
    // So the filter keeps exactly the runs that earned it.
    replace_text(&page, "[data-testid=filter-quality]", &clean.to_string());
    page.wait_for_text("[data-testid=runs-count]", "0 of 4 runs");
}

#[test]
fn runs_without_a_score_say_so_and_are_scored_when_imported_or_first_opened() {
    let (browser, page) = launch_annotation();
    seed(
        &page,
        &[run_record("u1", "Search the shop", 1), run_record("u2", "Search the shop again", 1)],
        &[step_record("u1", 0, thoughts(CLEAN)), step_record("u2", 0, thoughts(CLEAN))],
    );
    navigate(&browser, &page, "?");
    page.wait_for_text("[data-testid=runs-count]", "2 of 2 runs");
    assert_eq!(row_score(&page, "u1"), "—");
    assert_eq!(
        page.eval(
            "document.querySelector('[data-testid=run-row][data-run=u1] [data-testid=run-quality]').title"
        ),
        "not scored yet"
    );
    // A quality bound passes only scored runs, and says how many it hides for want of one.
    replace_text(&page, "[data-testid=filter-quality]", "0");
    page.wait_for_text("[data-testid=runs-count]", "0 of 2 runs");
    page.wait_for_text("[data-testid=unscored-hidden]", "2 unscored runs hidden");
    page.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/annotation-unscored.png"));

    // Opening a run scores it.
    navigate(&browser, &page, "?agentRunId=u1&qa=false");
    page.wait_for(
        "/quality \\d+/.test(document.querySelector('[data-testid=run-header] [data-testid=run-quality]')?.textContent ?? '')",
        "the run scored on first open",
    );
    let score = run_score(&page).expect("a score");
    assert_eq!(score, step_score(&page), "scored with its spelling, as the step is");
    wait_stored(
        &page,
        &format!("get('runs', 'u1').then(r => r.quality === {score})"),
        "u1's score",
    );
    page.click("[data-testid=back-to-list]");
    page.wait_for_text(
        "[data-testid=run-row][data-run=u1] [data-testid=run-quality]",
        &score.to_string(),
    );
    replace_text(&page, "[data-testid=filter-quality]", "0");
    page.wait_for_text("[data-testid=runs-count]", "1 of 2 runs");
    page.wait_for_text("[data-testid=unscored-hidden]", "1 unscored run hidden");

    // Imported runs are scored as they come in, whatever score the file claims.
    let dir = e2e::workspace_root().join("target/tmp/imports");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |id: &str, thought2: &str| {
        let [t1, t2, t3] = thoughts(thought2);
        json!({"id": id, "taskId": "s", "taskPrompt": format!("Imported {id}"), "status": "draft",
            "totalSteps": 1, "quality": 100,
            "steps": [{"runId": id, "index": 0, "thoughts": {"thought1": t1, "thought2": t2, "thought3": t3}}]})
    };
    let file = dir.join("scored-on-import.json");
    let runs = [run("imp-clean", CLEAN), run("imp-typos", TYPOS)];
    std::fs::write(
        &file,
        json!({"format": "alphascout.runs", "version": 1, "runs": runs}).to_string(),
    )
    .unwrap();
    choose_file(&page, "[data-testid=import-file]", &file);
    page.wait_for_text("[data-testid=notice]", "Imported 2 runs");
    page.wait_for_text("[data-testid=runs-count]", "3 of 4 runs");
    let imported = |id: &str| -> u64 {
        row_score(&page, id).parse().unwrap_or_else(|e| panic!("{id}'s score: {e}"))
    };
    assert_eq!(imported("imp-clean"), score, "the same text scores the same");
    assert!(imported("imp-typos") < score, "the file's 100 is not taken on trust");
    page.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/annotation-scored.png"));
}
