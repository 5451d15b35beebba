use serde_json::json;

use super::*;
use crate::export::{self, Options, Screenshots};

fn run(id: &str) -> Run {
    let mut r = crate::export::tests::run();
    r.id = id.into();
    r
}

fn steps(id: &str) -> Vec<Step> {
    let mut s = crate::export::tests::steps();
    s.iter_mut().for_each(|s| s.run_id = id.into());
    s
}

fn batch() -> Vec<(Run, Vec<Step>)> {
    use run_contract::telemetry::{LogEntry, LogKind, RoleSpend};
    let mut first = run("r1");
    first.telemetry.pauses = 1;
    first.telemetry.thinking_calls = 2;
    first.telemetry.spend.insert("navigator".into(), RoleSpend { calls: 3, ..Default::default() });
    for (at, step, kind, message) in [
        (1.0, 0, LogKind::Thinking, "Continue"),
        (2.0, 1, LogKind::Pause, "Paused by the user"),
        (3.0, 9, LogKind::Thinking, "Complete"),
    ] {
        first.telemetry.push(LogEntry { at, step, kind, message: message.into() });
    }
    vec![(first, steps("r1")), (run("r2"), steps("r2"))]
}

fn json_document(runs: &[(Run, Vec<Step>)]) -> String {
    let o = Options { anonymize: false, screenshots: Screenshots::Reference };
    let pieces: Vec<String> = runs.iter().map(|(r, s)| export::json_run(r, s, &o)).collect();
    format!(
        "{}{}{}",
        export::json_start("2026-11-24T09:00:00Z", "all runs", runs.len()),
        pieces.join(export::json_separator()),
        export::json_end()
    )
}

fn jsonl_document(runs: &[(Run, Vec<Step>)]) -> String {
    let o = Options { anonymize: false, screenshots: Screenshots::Reference };
    runs.iter().map(|(r, s)| export::jsonl_lines(r, s, &o)).collect()
}

fn none() -> HashSet<String> {
    HashSet::new()
}

/// The problems `text` gets, as (record, path) pairs.
fn rejections(name: &str, text: &str) -> Vec<Rejection> {
    match parse(name, text, &none()) {
        Ok(batch) => panic!("accepted: {batch:?}"),
        Err(r) => r,
    }
}

fn has(rejections: &[Rejection], record: &str, path: &str, words: &str) -> bool {
    rejections
        .iter()
        .any(|r| r.record == record && r.problem.path == path && r.problem.message.contains(words))
}

#[track_caller]
fn assert_has(rejections: &[Rejection], record: &str, path: &str, words: &str) {
    assert!(
        has(rejections, record, path, words),
        "no ({record}, {path}, …{words}…) in {rejections:#?}"
    );
}

/// `assert_has` for each (record, path, words): a file with many faults has each listed.
#[track_caller]
fn assert_has_all(rejections: &[Rejection], expected: &[(&str, &str, &str)]) {
    for &(record, path, words) in expected {
        assert_has(rejections, record, path, words);
    }
}

/// A JSON document edited as a Value.
fn edited(edit: impl FnOnce(&mut Value)) -> String {
    let mut doc: Value = serde_json::from_str(&json_document(&batch())).unwrap();
    edit(&mut doc);
    doc.to_string()
}

#[test]
fn json_export_round_trips_exactly() {
    let text = json_document(&batch());
    let read = parse("alphascout-runs.json", &text, &none()).unwrap();
    assert_eq!(read.runs, batch());
}

#[test]
fn a_bare_array_and_a_single_run_are_accepted() {
    let runs: Vec<Value> = batch()
        .iter()
        .map(|(r, s)| {
            let mut v = serde_json::to_value(r).unwrap();
            v["steps"] = serde_json::to_value(s).unwrap();
            v
        })
        .collect();
    let read = parse("runs.json", &Value::Array(runs.clone()).to_string(), &none()).unwrap();
    assert_eq!(read.runs, batch());
    let read = parse("one.json", &runs[0].to_string(), &none()).unwrap();
    assert_eq!(read.runs, batch()[..1]);
}

#[test]
fn steps_may_leave_out_their_run_id_and_come_in_any_order() {
    let text = edited(|doc| {
        let steps = doc["runs"][0]["steps"].as_array_mut().unwrap();
        steps.reverse();
        steps[0].as_object_mut().unwrap().remove("runId");
    });
    let read = parse("x.json", &text, &none()).unwrap();
    assert_eq!(read.runs, batch());
}

#[test]
fn jsonl_export_round_trips_thoughts_and_actions() {
    let text = jsonl_document(&batch());
    let read = parse("alphascout-runs.jsonl", &text, &none()).unwrap();
    assert_eq!(read.runs.len(), 2);
    for ((run, steps), (orig_run, orig_steps)) in read.runs.iter().zip(batch()) {
        assert_eq!(run.id, orig_run.id);
        assert_eq!(run.task_id, orig_run.task_id);
        assert_eq!(run.task_prompt, orig_run.task_prompt);
        assert_eq!(run.status, orig_run.status);
        assert_eq!(run.quality, orig_run.quality);
        assert_eq!(run.annotator, orig_run.annotator);
        assert_eq!(run.tags, orig_run.tags);
        assert_eq!(run.telemetry, orig_run.telemetry, "the log, from the lines it was split over");
        assert_eq!(steps.len(), orig_steps.len());
        for (s, o) in steps.iter().zip(&orig_steps) {
            assert_eq!(s.run_id, o.run_id);
            assert_eq!(s.index, o.index);
            assert_eq!(s.thoughts, o.thoughts);
            assert_eq!(s.action, o.action);
            assert_eq!(s.url, o.url);
            assert_eq!(s.verified, o.verified);
            assert_eq!(s.screenshot, None, "screenshots are dropped");
        }
    }
    // Without the extension, JSONL is recognised by its shape; one line is JSONL too.
    assert_eq!(
        parse("export.txt", &text, &none()).unwrap(),
        parse("x.jsonl", &text, &none()).unwrap()
    );
    let one_line = text.lines().next().unwrap().replace("\"totalSteps\":2", "\"totalSteps\":1");
    assert_eq!(parse("line.json", &one_line, &none()).unwrap().runs[0].1.len(), 1);
    // CRLF line ends and blank lines are fine.
    let crlf = text.replace('\n', "\r\n\r\n");
    assert_eq!(parse("x.jsonl", &crlf, &none()).unwrap().runs.len(), 2);
}

#[test]
fn existing_ids_are_refused_and_copies_get_new_ones() {
    let text = json_document(&batch());
    let existing: HashSet<String> = ["r2".to_owned()].into();
    let r = parse("x.json", &text, &existing).unwrap_err();
    assert_eq!(r.len(), 1);
    assert_has(&r, "run 2 (id r2)", "/id", "already exists here; delete it or import a copy");
    let jsonl = parse("x.jsonl", &jsonl_document(&batch()), &existing).unwrap_err();
    assert_has(&jsonl, "run r2 (line 3)", "/runId", "already exists here");

    let read = read("x.json", &text).unwrap();
    assert_eq!(existing_ids_of(&read, &existing), ["r2"]);
    let mut n = 0;
    let copies = as_copies(read, || {
        n += 1;
        format!("copy-{n}")
    });
    assert_eq!(copies.runs[1].0.id, "copy-2");
    assert!(copies.runs[1].1.iter().all(|s| s.run_id == "copy-2"));
    assert_eq!(copies.runs[1].0.extra["copiedFrom"], "r2");
    assert_eq!(copies.runs[1].0.server_version, None);
    assert!(existing_ids_of(&copies, &existing).is_empty());
}

fn existing_ids_of(batch: &Batch, ids: &HashSet<String>) -> Vec<String> {
    existing(batch, ids)
}

#[test]
fn every_problem_is_reported_with_its_place() {
    let text = edited(|doc| {
        let r0 = &mut doc["runs"][0];
        r0["status"] = json!("done");
        r0["quality"] = json!(120);
        r0["tags"] = json!(["ok", 5]);
        r0.as_object_mut().unwrap().remove("taskPrompt");
        r0["steps"][0]["thoughts"]["thought2"] = json!(42);
        r0["steps"][0]["thoughts"].as_object_mut().unwrap().remove("thought3");
        r0["steps"][1]["index"] = json!(0);
        r0["steps"][1]["runId"] = json!("other");
        r0["steps"][1]["thoughts"]["thought1"] = json!("x".repeat(MAX_THOUGHT_CHARS + 1));
        let r1 = &mut doc["runs"][1];
        r1["id"] = json!("r1");
        r1["totalSteps"] = json!(5);
        r1["steps"][0].as_object_mut().unwrap().remove("index");
        r1["steps"][1] = json!("a step?");
        doc["runs"].as_array_mut().unwrap().push(json!(7));
        doc["runs"].as_array_mut().unwrap().push(json!({"taskPrompt": "no id", "steps": []}));
    });
    let r = rejections("x.json", &text);
    assert_has_all(
        &r,
        &[
            (
                "run 1 (id r1)",
                "/status",
                "unknown status \"done\"; expected one of draft, in-review, approved, rejected, archived",
            ),
            ("run 1 (id r1)", "/quality", "120 is too large; at most 100"),
            ("run 1 (id r1)", "/tags/1", "expected text, found the number 5"),
            ("run 1 (id r1)", "/taskPrompt", "missing"),
            ("run 1 (id r1), step 1", "/thoughts/thought2", "expected text, found the number 42"),
            ("run 1 (id r1), step 1", "/thoughts/thought3", "missing; expected text"),
            ("run 1 (id r1), step 2", "/index", "index 0 is also used by step 1"),
            ("run 1 (id r1), step 2", "/runId", "names run \"other\" but is inside run \"r1\""),
            (
                "run 1 (id r1), step 2",
                "/thoughts/thought1",
                "too long: 20001 characters, at most 20000",
            ),
            ("run 2 (id r1)", "/id", "also used by run 1 (id r1)"),
            ("run 2 (id r1)", "/totalSteps", "says 5 steps but the run has 2"),
            ("run 2 (id r1), step 1", "/index", "missing"),
            ("run 2 (id r1), step 1", "/runId", "names run \"r2\" but is inside run \"r1\""),
            ("run 2 (id r1), step 2", "", "expected a step object, found the text \"a step?\""),
            ("run 3", "", "expected a run object, found the number 7"),
            ("run 4", "/id", "missing"),
        ],
    );
    assert_eq!(r.len(), 16, "{r:#?}");
}

#[test]
fn nested_fields_are_checked_too() {
    let text = edited(|doc| {
        let r0 = &mut doc["runs"][0];
        r0["subtasks"] = json!([{"title": "Open", "stepRange": [0]}, "x"]);
        r0["steps"][0]["screenshot"] = json!({"bytes": -1});
        r0["steps"][0]["action"] = json!({"type": 3});
        r0["steps"][0]["issues"] = json!(["bad"]);
        r0["steps"][1]["verified"] = json!("yes");
        r0["followUps"] = json!("not a list");
    });
    let r = rejections("x.json", &text);
    assert_has_all(
        &r,
        &[
            ("run 1 (id r1)", "/subtasks/0/stepRange", "expected [first, last]"),
            ("run 1 (id r1)", "/subtasks/1", "expected a subtask object"),
            ("run 1 (id r1)", "/followUps", "expected a list, found the text"),
            ("run 1 (id r1), step 1", "/screenshot/key", "missing"),
            ("run 1 (id r1), step 1", "/screenshot/bytes", "expected a whole number of 0 or more"),
            ("run 1 (id r1), step 1", "/action/type", "expected text, found the number 3"),
            ("run 1 (id r1), step 1", "/issues/0", "expected an issue object"),
            ("run 1 (id r1), step 2", "/verified", "expected true or false"),
        ],
    );
    assert_eq!(r.len(), 8, "{r:#?}");
}

#[test]
fn jsonl_problems_name_their_lines() {
    let mut lines: Vec<String> = jsonl_document(&batch()).lines().map(str::to_owned).collect();
    let negative = lines[0].replace("\"stepIndex\":0", "\"stepIndex\":-1");
    lines[0] = lines[0].replace("\"status\":\"approved\"", "\"status\":\"done\"");
    lines[1] = lines[1].replace("Find a kettle", "Find a teapot");
    lines[2] = lines[2][..40].to_owned();
    lines.push(lines[3].clone());
    lines.push("[1, 2]".into());
    lines.push(negative);
    let r = rejections("x.jsonl", &lines.join("\n"));
    assert_has_all(
        &r,
        &[
            ("line 1", "/status", "unknown status \"done\""),
            ("line 2", "/taskPrompt", "differs from line 1 of the same run"),
            ("line 3", "", "not valid JSON at column"),
            ("line 3", "", "EOF while parsing"),
            ("line 5", "/stepIndex", "step 1 of run \"r2\" is also on line 4"),
            ("line 6", "", "expected a step object, found a list"),
            ("line 7", "/stepIndex", "expected a whole number of 0 or more, found the number -1"),
            ("run r2 (line 4)", "/totalSteps", "says 2 steps but the file has 1"),
        ],
    );
}

#[test]
fn jsonl_that_lost_lines_is_refused() {
    let text = jsonl_document(&batch());
    let lines: Vec<&str> = text.lines().collect();
    let r = rejections("x.jsonl", &[lines[0], lines[2], lines[3]].join("\n"));
    assert_has(&r, "run r1 (line 1)", "/totalSteps", "says 2 steps but the file has 1");
    assert_eq!(r.len(), 1);
}

#[test]
fn files_that_are_not_exports_are_explained() {
    // Each (name, text, words): the file's one problem, said of the file as a whole.
    for (name, text, words) in [
        ("x.json", "", "the file is empty"),
        ("x.json", " \n\t", "the file is empty"),
        (
            "x.zip",
            "PK\u{3}\u{4}\u{14}\0\0",
            "this is a ZIP archive; unzip it and import its runs.json",
        ),
        ("x.png", "\u{89}PNG\r\n\u{1a}\n\0\0", "binary file"),
        ("x.json", "{\"runs\": [\n  {\"id\": 1,}\n]}", "not valid JSON at line 2, column"),
        ("x.json", "42", "found the number 42"),
        ("x.json", "{\"hello\": 1}", "expected an AlphaScout export"),
        ("x.json", "[]", "no runs in the file"),
    ] {
        assert_has(&rejections(name, text), "file", "", words);
    }
    // Each (edit, path, words): an export whose header was edited, and what is said of it.
    type Edit = fn(&mut Value);
    let edits: [(Edit, &str, &str); 4] = [
        (
            |doc| doc["format"] = json!("promptgrid.templates"),
            "/format",
            "not an AlphaScout runs export: format is the text \"promptgrid.templates\"",
        ),
        (
            |doc| doc["version"] = json!(2),
            "/version",
            "version 2 is not supported; this page reads version 1",
        ),
        (
            |doc| doc.as_object_mut().unwrap().remove("format").map(drop).unwrap(),
            "/format",
            "missing",
        ),
        (|doc| doc["runs"] = json!({}), "/runs", "expected a list of runs, found an object"),
    ];
    for (edit, path, words) in edits {
        assert_has(&rejections("x.json", &edited(edit)), "file", path, words);
    }
    // A byte-order mark is not a problem.
    assert!(parse("x.json", &format!("\u{feff}{}", json_document(&batch())), &none()).is_ok());
}

#[test]
fn a_flood_of_problems_is_capped() {
    let text = "{\n".repeat(1000);
    let r = rejections("x.jsonl", &text);
    assert_eq!(r.len(), MAX_REJECTIONS + 1);
    assert!(r.last().unwrap().problem.message.contains("800 more problems"), "{:?}", r.last());
}

#[test]
fn truncated_or_garbled_files_never_panic_and_never_half_import() {
    let full_json = json_document(&batch());
    let full_jsonl = jsonl_document(&batch());
    for (name, full) in [("x.json", &full_json), ("x.jsonl", &full_jsonl), ("x.txt", &full_jsonl)] {
        let cuts: Vec<usize> = full.char_indices().map(|(i, _)| i).step_by(7).collect();
        for cut in cuts {
            let text = &full[..cut];
            if let Ok(batch) = parse(name, text, &none()) {
                // A cut at a line end of JSONL can leave whole runs; never a partial one.
                for (run, steps) in &batch.runs {
                    assert_eq!(steps.len(), 2, "partial run {} from a cut at {cut}", run.id);
                }
            }
            // Garbled: a byte flipped to a quote or brace.
            let mut garbled = full.clone();
            if full.is_char_boundary(cut) && cut < full.len() && full.as_bytes()[cut].is_ascii() {
                garbled.replace_range(cut..cut + 1, if cut % 2 == 0 { "\"" } else { "}" });
                let _ = parse(name, &garbled, &none());
            }
        }
    }
}

#[test]
fn deeply_nested_input_is_refused_not_overflowed() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_has(&rejections("x.json", &deep), "file", "", "not valid JSON");
    let deep_line = format!("{{\"runId\":{}}}", "[".repeat(100_000));
    let _ = rejections("x.jsonl", &deep_line);
}

#[test]
fn rejections_read_as_sentences() {
    let r = Rejection {
        record: "line 3".into(),
        problem: Problem::new("/thoughts/thought1", "missing; expected text"),
    };
    assert_eq!(r.to_string(), "line 3 · /thoughts/thought1: missing; expected text");
}

#[test]
fn files_over_the_size_cap_are_refused_saying_their_size() {
    let big = " ".repeat(100 * 1024 * 1024 + 1);
    let r = rejections("huge.json", &big);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        r[0].to_string(),
        "file: the file is 100.1 MB; imports take at most 100 MB, so export fewer runs at a time"
    );
    assert!(too_big(MAX_IMPORT_BYTES).is_none(), "a file of the cap itself comes in");
    let r = too_big(250 * 1024 * 1024 + 5).unwrap();
    assert!(r[0].problem.message.starts_with("the file is 250.1 MB;"), "{r:?}");
}

#[test]
fn a_jsonl_line_with_a_malformed_telemetry_log_is_refused_saying_so() {
    let text = jsonl_document(&batch());
    let first = text.lines().next().unwrap();
    let mut line: Value = serde_json::from_str(first).unwrap();
    line["telemetry"] = json!([{"step": "two", "kind": "thinking"}]);
    let problems = rejections("bad.jsonl", &line.to_string());
    assert!(
        problems.iter().any(|r| r.problem.path == "/telemetry"
            && r.problem.message.starts_with("not a list of log entries")),
        "{problems:?}"
    );
}
