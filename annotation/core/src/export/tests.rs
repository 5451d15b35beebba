use std::time::Instant;

use serde_json::json;

use super::*;
use crate::record::{ReviewStatus, StepAction, Thought, Thoughts};
use run_contract::telemetry::LogKind;

const AUTHOR: &str = "alice.annotator";
const REVIEWER: &str = "bob.reviewer";

pub(crate) fn run() -> Run {
    let mut extra = serde_json::Map::new();
    extra.insert("reviewerEmail".into(), json!("bob@example.test"));
    extra.insert("meta".into(), json!({"source": "capture", "importedBy": AUTHOR}));
    Run {
        id: "run-1".into(),
        task_id: "task-1".into(),
        task_prompt: "Find a kettle, under 30 €".into(),
        follow_ups: vec!["cheaper please".into()],
        status: ReviewStatus::Approved,
        agent_status: "done".into(),
        final_answer: Some("The Acme kettle costs 25 €.".into()),
        created_at: "2026-11-22T10:00:00.000Z".into(),
        updated_at: "2026-11-22T11:00:00.000Z".into(),
        created_by: AUTHOR.into(),
        reviewed_by: Some(REVIEWER.into()),
        total_steps: 2,
        annotator: Some(AUTHOR.into()),
        tags: vec!["shop".into()],
        collections: vec!["batch 1".into()],
        version: 3,
        quality: Some(88),
        extra,
        ..Run::default()
    }
}

pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step {
            run_id: "run-1".into(),
            index: 0,
            url: "http://shop.test/".into(),
            title: "Shop".into(),
            screenshot: Some(ScreenshotRef {
                key: "ab".repeat(32),
                timestamp: "2026-11-22T10:00:30.000Z".into(),
                mime: "image/jpeg".into(),
                bytes: 2048,
            }),
            action: StepAction {
                kind: "type".into(),
                target: "Search box".into(),
                value: Some("kettle".into()),
            },
            thoughts: Thoughts {
                thought1: "The shop's home page is open.".into(),
                thought2: "There is a search box, \"Search…\", at the top; it is empty.".into(),
                thought3: "I should type \"kettle\" into it,\nthen press Enter.".into(),
            },
            verified: true,
            issues: vec![
                json!({"type": "logic", "description": "check", "flaggedBy": REVIEWER, "flaggedAt": "2026-11-22T10:30:00Z"}),
            ],
            last_edited_by: AUTHOR.into(),
            last_edited_at: "2026-11-22T10:40:00.000Z".into(),
            outcome: "ok".into(),
            ..Step::default()
        },
        Step {
            run_id: "run-1".into(),
            index: 1,
            url: "http://shop.test/search?q=kettle".into(),
            action: StepAction {
                kind: "click".into(),
                target: "=HYPERLINK(\"x\")".into(),
                value: None,
            },
            thoughts: Thoughts {
                thought1: "# Not a heading\n\n- not a list\n1. not numbered".into(),
                thought2: "-5 °C is *cold* | `code` <b>bold</b> [link](http://x)".into(),
                thought3: "@mention +plus".into(),
            },
            last_edited_by: AUTHOR.into(),
            last_edited_at: "2026-11-22T10:50:00.000Z".into(),
            outcome: "ok".into(),
            ..Step::default()
        },
    ]
}

/// A telemetry log of (step, kind, message), with spend for two roles.
fn logged(entries: &[(u32, LogKind, &str)]) -> Telemetry {
    let mut telemetry =
        Telemetry { pauses: 1, resumes: 1, thinking_calls: 2, ..Default::default() };
    for (n, (step, kind, message)) in entries.iter().enumerate() {
        let at = 1_764_000_000_000.0 + n as f64;
        telemetry.push(LogEntry { at, step: *step, kind: *kind, message: (*message).into() });
    }
    let spend =
        |calls, input_tokens, cost| RoleSpend { calls, input_tokens, output_tokens: 10, cost };
    telemetry.spend.insert("navigator".into(), spend(2, 3000, 0.01));
    telemetry.spend.insert("thinking".into(), spend(1, 500, 0.002));
    telemetry
}

#[test]
fn telemetry_goes_beside_each_step_in_every_format() {
    let mut r = run();
    r.telemetry = logged(&[
        (0, LogKind::Thinking, "Continue: the task is clear"),
        (1, LogKind::Pause, "Paused by the user"),
        (1, LogKind::FollowUp, "Steering: only steel kettles"),
        (2, LogKind::Thinking, "Complete: the Acme kettle costs 25 €"),
    ]);
    let s = steps();
    let o = opts(Screenshots::Reference, false);
    let doc: Value = serde_json::from_str(&document(&[(r.clone(), s.clone())], &o)).unwrap();
    assert_eq!(doc["runs"][0]["telemetry"]["log"].as_array().unwrap().len(), 4);
    assert_eq!(doc["runs"][0]["telemetry"]["spend"]["navigator"]["inputTokens"], 3000);

    let lines: Vec<Value> =
        jsonl_lines(&r, &s, &o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds = |line: &Value| -> Vec<String> {
        line["telemetry"].as_array().unwrap().iter().map(|e| e["kind"].to_string()).collect()
    };
    assert_eq!(kinds(&lines[0]), ["\"thinking\""]);
    assert_eq!(
        kinds(&lines[1]),
        ["\"pause\"", "\"follow_up\"", "\"thinking\""],
        "the last line also carries what came after it"
    );
    assert_eq!(lines[1]["runTelemetry"]["spend"]["thinking"]["calls"], 1);
    assert_eq!(lines[0]["runTelemetry"], lines[1]["runTelemetry"]);

    let rows = read_csv(&(csv_header() + &csv_rows(&r, &s, &o)));
    let column = rows[0].iter().position(|c| c == "telemetry").unwrap();
    assert_eq!(rows[1][column], "decision: Continue: the task is clear");
    assert_eq!(
        rows[2][column],
        "pause: Paused by the user\nsteering: Steering: only steel kettles\n\
         decision: Complete: the Acme kettle costs 25 €"
    );

    let markdown = markdown_run(&r, &s, &o);
    assert!(markdown.contains("**Telemetry:** 1 pause · 1 resume · 2 ThinkingAgent calls"));
    assert!(markdown.contains("| navigator | 2 | 3000 | 10 | 0.0100 |"), "{markdown}");
    assert!(markdown.contains("| all | 3 | 3500 | 20 | 0.0120 |"), "{markdown}");
    let step2 = markdown.find("### Step 2").unwrap();
    let steering = markdown.find("- _steering_: Steering: only steel kettles").unwrap();
    let after = markdown.find("**After the last step:**").unwrap();
    assert!(step2 < steering && steering < after, "{markdown}");
    assert!(markdown[after..].contains("- _decision_: Complete: the Acme kettle costs 25 €"));

    // A run captured before telemetry says nothing of it.
    let plain = markdown_run(&run(), &s, &o);
    assert!(!plain.contains("Telemetry") && !plain.contains("What happened"));
}

fn opts(screenshots: Screenshots, anonymize: bool) -> Options {
    Options { anonymize, screenshots }
}

fn document(runs: &[(Run, Vec<Step>)], o: &Options) -> String {
    let mut out = json_start("2026-11-24T09:00:00Z", "approved", runs.len());
    for (i, (r, s)) in runs.iter().enumerate() {
        if i > 0 {
            out.push_str(json_separator());
        }
        out.push_str(&json_run(r, s, o));
    }
    out.push_str(json_end());
    out
}

/// RFC 4180, for reading our CSV back: quoted fields may hold commas, quotes and line breaks.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                other => field.push(other),
            }
            continue;
        }
        match c {
            '"' => {
                assert!(field.is_empty(), "a quote inside an unquoted field");
                quoted = true;
            }
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => assert_eq!(chars.next(), Some('\n'), "CR without LF"),
            '\n' => panic!("bare LF ends a row"),
            other => field.push(other),
        }
        if c == '\r' {
            row.push(std::mem::take(&mut field));
            rows.push(std::mem::take(&mut row));
        }
    }
    assert!(!quoted, "unterminated quote");
    assert!(field.is_empty() && row.is_empty(), "last row without CRLF");
    rows
}

#[test]
fn formats_name_their_files() {
    assert_eq!(
        file_name(Format::Jsonl, "2026-11-22T10:30:15.000Z"),
        "alphascout-runs-20261122-1030.jsonl"
    );
    assert_eq!(file_name(Format::Csv, "2026-11-22"), "alphascout-runs-20261122.csv");
    assert_eq!(file_name(Format::Zip, ""), "alphascout-runs.zip");
    let exts: Vec<&str> = Format::ALL.iter().map(|f| f.extension()).collect();
    assert_eq!(exts, ["json", "jsonl", "csv", "md", "zip"]);
    assert!(Format::ALL.iter().all(|f| !f.mime().is_empty() && !f.label().is_empty()));
}

#[test]
fn screenshot_paths_are_named_by_content_and_safe() {
    let s = &steps()[0];
    let key = "ab".repeat(32);
    assert_eq!(screenshot_path(s), Some(format!("screenshots/{key}.jpg")));
    let mut evil = s.clone();
    evil.screenshot.as_mut().unwrap().key = "../../etc/passwd".into();
    assert_eq!(screenshot_path(&evil).as_deref(), Some("screenshots/_.._etc_passwd.jpg"));
    assert_eq!(screenshot_path(&steps()[1]), None);
}

#[test]
fn json_document_holds_the_runs_and_their_steps() {
    let runs = vec![(run(), steps()), (Run { id: "run-2".into(), ..run() }, vec![])];
    let text = document(&runs, &opts(Screenshots::Reference, false));
    let doc: Value = serde_json::from_str(&text).expect(&text);
    assert_eq!(doc["format"], "alphascout.runs");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["filter"], "approved");
    assert_eq!(doc["runCount"], 2);
    assert_eq!(doc["runs"][0]["taskPrompt"], "Find a kettle, under 30 €");
    assert_eq!(doc["runs"][0]["steps"][1]["thoughts"]["thought3"], "@mention +plus");
    assert_eq!(
        doc["runs"][0]["steps"][0]["screenshot"]["file"],
        format!("screenshots/{}.jpg", "ab".repeat(32))
    );
    assert_eq!(doc["runs"][0]["steps"][0]["screenshot"]["key"], "ab".repeat(32));
    assert_eq!(doc["runs"][0]["reviewerEmail"], "bob@example.test", "unknown fields travel");
    assert_eq!(doc["runs"][1]["steps"], json!([]));
    let omitted = document(&runs, &opts(Screenshots::Omit, false));
    let doc: Value = serde_json::from_str(&omitted).unwrap();
    assert_eq!(doc["runs"][0]["steps"][0]["screenshot"], Value::Null);
    // Zero runs is still a document.
    let empty = format!("{}{}", json_start("", "all runs", 0), json_end());
    assert_eq!(serde_json::from_str::<Value>(&empty).unwrap()["runs"], json!([]));
}

#[test]
fn jsonl_has_a_step_a_line() {
    let text = jsonl_lines(&run(), &steps(), &opts(Screenshots::Reference, false));
    assert!(text.ends_with('\n'));
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect(l)).collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    assert_eq!(first["runId"], "run-1");
    assert_eq!(first["taskId"], "task-1");
    assert_eq!(first["taskPrompt"], "Find a kettle, under 30 €");
    assert_eq!(first["stepIndex"], 0);
    assert_eq!(first["totalSteps"], 2);
    assert_eq!(first["action"], json!({"type": "type", "target": "Search box", "value": "kettle"}));
    assert_eq!(
        first["thoughts"]["thought3"],
        "I should type \"kettle\" into it,\nthen press Enter."
    );
    assert_eq!(first["status"], "approved");
    assert_eq!(first["quality"], 88);
    assert_eq!(first["screenshot"], "ab".repeat(32));
    assert_eq!(first["annotator"], AUTHOR);
    assert_eq!(lines[1]["screenshot"], Value::Null);
    let files = jsonl_lines(&run(), &steps(), &opts(Screenshots::Files, true));
    let first: Value = serde_json::from_str(files.lines().next().unwrap()).unwrap();
    assert_eq!(first["screenshot"], format!("screenshots/{}.jpg", "ab".repeat(32)));
    assert!(first.get("annotator").is_none());
    assert_eq!(jsonl_lines(&run(), &[], &Options::default()), "");
}

#[test]
fn csv_reads_back_cell_for_cell() {
    let mut text = csv_header();
    text.push_str(&csv_rows(&run(), &steps(), &opts(Screenshots::Reference, false)));
    let rows = read_csv(&text);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0], CSV_COLUMNS);
    // Seed §13 Day 3's columns come first, in its order.
    let day3 = "run_id step_index action_type thought_1 thought_2 thought_3 screenshot_url";
    assert_eq!(rows[0][..7], day3.split(' ').collect::<Vec<_>>());
    assert!(rows.iter().all(|r| r.len() == CSV_COLUMNS.len()));
    let s = &steps();
    assert_eq!(rows[1][0], "run-1");
    assert_eq!(rows[1][1], "0");
    assert_eq!(rows[1][2], "type");
    assert_eq!(rows[1][3], s[0].thoughts.thought1);
    assert_eq!(rows[1][4], s[0].thoughts.thought2, "quotes survive");
    assert_eq!(rows[1][5], s[0].thoughts.thought3, "line breaks survive");
    assert_eq!(rows[1][6], "ab".repeat(32));
    assert_eq!(rows[1][10], "Find a kettle, under 30 €", "commas survive");
    assert_eq!(rows[1][11], "approved");
    assert_eq!(rows[1][12], "88");
    assert_eq!(rows[1][13], AUTHOR);
    // Formula-looking text is defused; the rest is untouched.
    assert_eq!(rows[2][7], "'=HYPERLINK(\"x\")");
    assert_eq!(rows[2][4], "'-5 °C is *cold* | `code` <b>bold</b> [link](http://x)");
    assert_eq!(rows[2][5], "'@mention +plus");
    assert_eq!(rows[2][3], s[1].thoughts.thought1);
    assert_eq!(rows[2][6], "", "no screenshot");
}

#[test]
fn markdown_keeps_its_structure_whatever_the_text() {
    let mut text = markdown_start("2026-11-24T09:00:00Z", "approved · quality ≥ 80", 1, 2);
    text.push_str(&markdown_run(&run(), &steps(), &opts(Screenshots::Reference, false)));
    assert!(text.starts_with("# AlphaScout runs\n"));
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# AlphaScout runs",
            "## Find a kettle, under 30 €",
            "### Step 1 — type “Search box” with “kettle”",
            "### Step 2 — click “\\=HYPERLINK(\"x\")”",
        ]
    );
    // No line of user text starts a list, a quote, a table or a code block.
    for line in text.lines() {
        assert!(
            !line.starts_with("- ") && !line.starts_with("1. ") && !line.starts_with('>'),
            "{line}"
        );
        assert!(!line.starts_with("```") && !line.starts_with('|'), "{line}");
    }
    assert!(text.contains("\\# Not a heading\\\n\\- not a list\\\n1\\. not numbered"), "{text}");
    assert!(
        text.contains("\\*cold\\* \\| \\`code\\` \\<b\\>bold\\</b\\> \\[link\\](http://x)"),
        "{text}"
    );
    assert!(text.contains("**Thought 3.** I should type \"kettle\" into it,\\\nthen press Enter."));
    assert!(text.contains("Status: Approved · Quality: 88"));
    assert!(text.contains("Screenshot: `abab"));
    assert_eq!(markdown_text("a\n\n\nb"), "a\\\nb");
    assert_eq!(markdown_text("12) x"), "12\\) x");
    assert_eq!(markdown_text("Find it #"), "Find it \\#");
    assert_eq!(markdown_text("2026 is a year"), "2026 is a year");
}

#[test]
fn markdown_says_which_thoughts_a_model_drafted_and_shows_the_navigators_notes() {
    let mut s = steps();
    s[0].drafted_thoughts = vec![Thought::Two];
    s[0].navigator = Some(run_records::NavigatorNotes {
        memory: "The search box is at the top.".into(),
        ..Default::default()
    });
    let text = markdown_run(&run(), &s, &opts(Screenshots::Omit, false));
    assert!(text.contains("**Thought 2.** _(AI-drafted)_ "), "{text}");
    assert!(!text.contains("**Thought 1.** _(AI-drafted)_"));
    assert!(text.contains("_Memory:_ The search box is at the top."), "{text}");
}

#[test]
fn anonymized_exports_name_nobody_and_no_time() {
    let o = opts(Screenshots::Files, true);
    let mut outputs = vec![
        ("json", document(&[(run(), steps())], &o)),
        ("jsonl", jsonl_lines(&run(), &steps(), &o)),
        ("csv", csv_rows(&run(), &steps(), &o)),
        ("markdown", markdown_run(&run(), &steps(), &o)),
    ];
    let o = opts(Screenshots::Reference, true);
    outputs.push(("json ref", json_run(&run(), &steps(), &o)));
    for (format, text) in &outputs {
        for secret in [AUTHOR, REVIEWER, "bob@example.test", "2026-11-22", "10:00:30", "importedBy"]
        {
            assert!(!text.contains(secret), "{format} export leaks {secret}: {text}");
        }
    }
    // …while a normal export has them (so the search above means something).
    let plain = json_run(&run(), &steps(), &opts(Screenshots::Reference, false));
    for secret in [AUTHOR, REVIEWER, "bob@example.test", "2026-11-22"] {
        assert!(plain.contains(secret), "{secret}");
    }
    // Anonymizing keeps the content, except what the agent typed ("kettle"), wherever it is.
    let (mut r, mut s) = (run(), steps());
    anonymize(&mut r, &mut s);
    assert_eq!(r.task_prompt, "Find a [typed text], under 30 €");
    assert_eq!(s[0].thoughts.thought2, steps()[0].thoughts.thought2);
    assert_eq!(
        s[0].thoughts.thought3,
        "I should type \"[typed text]\" into it,\nthen press Enter."
    );
    assert_eq!(s[1].url, "http://shop.test/search");
    assert_eq!(s[0].issues[0]["description"], "check");
    assert_eq!(r.extra["meta"]["source"], "capture");
}

/// A ZIP read back by hand: every local header where the central directory says, with the
/// right name, size and CRC.
fn check_zip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as u64;
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let end = bytes.len() - 22;
    assert_eq!(u32_at(end), 0x0605_4b50, "end record");
    let (mut count, mut cd_size, mut cd_start) =
        (u16_at(end + 10), u32_at(end + 12), u32_at(end + 16));
    if count == 0xFFFF {
        let locator = end - 20;
        assert_eq!(u32_at(locator), 0x0706_4b50, "ZIP64 locator");
        let record = u64_at(locator + 8) as usize;
        assert_eq!(u32_at(record), 0x0606_4b50, "ZIP64 end record");
        count = u64_at(record + 32);
        cd_size = u64_at(record + 40);
        cd_start = u64_at(record + 48);
        assert_eq!(record as u64, cd_start + cd_size);
    } else {
        assert_eq!(cd_start + cd_size, end as u64);
    }
    let mut at = cd_start as usize;
    let mut files = Vec::new();
    for _ in 0..count {
        assert_eq!(u32_at(at), 0x0201_4b50, "central header");
        assert_eq!(u16_at(at + 10), 0, "stored");
        let crc = u32_at(at + 16) as u32;
        let (name_len, extra_len, comment_len) =
            (u16_at(at + 28) as usize, u16_at(at + 30) as usize, u16_at(at + 32) as usize);
        let name = String::from_utf8(bytes[at + 46..at + 46 + name_len].to_vec()).unwrap();
        let mut size = u32_at(at + 24);
        let mut offset = u32_at(at + 42);
        if extra_len > 0 {
            let extra = at + 46 + name_len;
            assert_eq!(u16_at(extra), 1, "ZIP64 extra");
            let mut field = extra + 4;
            if size == 0xFFFF_FFFF {
                size = u64_at(field);
                field += 16;
            }
            if offset == 0xFFFF_FFFF {
                offset = u64_at(field);
            }
        }
        let local = offset as usize;
        assert_eq!(u32_at(local), 0x0403_4b50, "local header of {name}");
        assert_eq!(u32_at(local + 14) as u32, crc);
        let local_name_len = u16_at(local + 26) as usize;
        let local_extra = u16_at(local + 28) as usize;
        assert_eq!(&bytes[local + 30..local + 30 + local_name_len], name.as_bytes());
        let data_at = local + 30 + local_name_len + local_extra;
        let data = bytes[data_at..data_at + size as usize].to_vec();
        assert_eq!(crc32(&data), crc, "CRC of {name}");
        files.push((name, data));
        at += 46 + name_len + extra_len + comment_len;
    }
    assert_eq!(at as u64, cd_start + cd_size);
    files
}

fn build_zip(mut zip: ZipWriter) -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let o = opts(Screenshots::Files, false);
    let json = document(&[(run(), steps())], &o);
    let lines = jsonl_lines(&run(), &steps(), &o);
    let image: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 256) as u8).collect();
    let mut out = zip.entry("README.txt", zip_readme("t", "all runs", 1, 2, &o).as_bytes());
    out.extend(zip.entry(ZIP_DOCUMENT, json.as_bytes()));
    // The page appends big data itself after the header, hashing it piece by piece.
    let crc = crc32_update(crc32_update(0, &lines.as_bytes()[..10]), &lines.as_bytes()[10..]);
    assert_eq!(crc, crc32(lines.as_bytes()));
    out.extend(zip.entry_header(ZIP_LINES, lines.len() as u64, crc));
    out.extend_from_slice(lines.as_bytes());
    let path = screenshot_path(&steps()[0]).unwrap();
    out.extend(zip.entry(&path, &image));
    out.extend(zip.entry("empty.txt", b""));
    out.extend(zip.entry("ünïcode/naïve.txt", "é".as_bytes()));
    assert_eq!(zip.offset(), out.len() as u64);
    assert_eq!(zip.len(), 6);
    out.extend(zip.finish());
    let expected = vec![
        ("README.txt".to_owned(), zip_readme("t", "all runs", 1, 2, &o).into_bytes()),
        (ZIP_DOCUMENT.to_owned(), json.into_bytes()),
        (ZIP_LINES.to_owned(), lines.into_bytes()),
        (path, image),
        ("empty.txt".to_owned(), vec![]),
        ("ünïcode/naïve.txt".to_owned(), "é".as_bytes().to_vec()),
    ];
    (out, expected)
}

/// Python's zipfile as a second opinion, where Python exists.
fn python_check(bytes: &[u8], name: &str) {
    let path = std::env::temp_dir().join(format!("alphascout-{}-{name}.zip", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let script = "import zipfile,sys\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(len(z.namelist()))";
    match std::process::Command::new("python3").arg("-c").arg(script).arg(&path).output() {
        Ok(out) if out.status.success() => {
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "6");
        }
        Ok(out) => panic!(
            "python3's zipfile rejects the archive: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => eprintln!("python3 not found; skipping the zipfile cross-check"),
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn zip_archives_read_back() {
    let (bytes, expected) = build_zip(ZipWriter::with_time("2026-11-24T09:30:10Z"));
    assert_eq!(check_zip(&bytes), expected);
    // DOS date and time of the first entry: 2026-11-24 09:30:10.
    assert_eq!(u16::from_le_bytes([bytes[12], bytes[13]]), (46 << 9) | (11 << 5) | 24);
    assert_eq!(u16::from_le_bytes([bytes[10], bytes[11]]), (9 << 11) | (30 << 5) | 5);
    python_check(&bytes, "plain");
}

#[test]
fn zip64_records_read_back() {
    let mut zip = ZipWriter::new();
    zip.force_zip64 = true;
    let (bytes, expected) = build_zip(zip);
    assert_eq!(check_zip(&bytes), expected);
    python_check(&bytes, "zip64");
}

#[test]
fn empty_zip_is_valid() {
    let bytes = ZipWriter::new().finish();
    assert!(check_zip(&bytes).is_empty());
    assert_eq!(bytes.len(), 22);
}

#[test]
fn crc32_matches_the_standard() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn exports_of_a_thousand_runs_are_fast() {
    let thought = "I can see the product page with the price, the size selector and the add to basket button; the price is 25 € which is under the limit, so ".repeat(2);
    let runs: Vec<(Run, Vec<Step>)> = (0..1000)
        .map(|i| {
            let r = Run { id: format!("run-{i}"), ..run() };
            let s: Vec<Step> = (0..20)
                .map(|j| {
                    let mut step = steps()[0].clone();
                    step.index = j;
                    step.thoughts = Thoughts {
                        thought1: format!("{thought}{j}"),
                        thought2: format!("{thought}, \"quoted\" {j}"),
                        thought3: format!("{thought}\nnext {j}"),
                    };
                    step
                })
                .collect();
            (r, s)
        })
        .collect();
    let o = Options::default();
    for (name, f) in [
        ("JSONL", jsonl_lines as fn(&Run, &[Step], &Options) -> String),
        ("CSV", csv_rows),
        ("JSON", json_run),
        ("Markdown", markdown_run),
    ] {
        let started = Instant::now();
        let bytes: usize = runs.iter().map(|(r, s)| f(r, s, &o).len()).sum();
        eprintln!(
            "{name}: 1,000 runs × 20 steps, {:.1} MB in {:?}",
            bytes as f64 / 1e6,
            started.elapsed()
        );
    }
    // Anonymized, every step typing a value of its own: 20,000 values to look for in every
    // text, most starting with the same word.
    let mut runs = runs;
    for (i, (_, steps)) in runs.iter_mut().enumerate() {
        for step in steps.iter_mut() {
            step.action.value = Some(format!("kettle {i} {}", step.index));
        }
    }
    let anonymous = opts(Screenshots::Reference, true);
    let started = Instant::now();
    let mut export =
        Export::new(Format::Jsonl, &anonymous, runs.iter().map(|(r, s)| (r, s.as_slice())));
    let bytes: usize = runs.iter().map(|(r, s)| export.run(r, s).len()).sum();
    eprintln!(
        "JSONL anonymized: 1,000 runs × 20 steps, {:.1} MB in {:?}",
        bytes as f64 / 1e6,
        started.elapsed()
    );
    let started = Instant::now();
    let mut zip = ZipWriter::new();
    let data = vec![7u8; 50_000];
    let mut total = 0;
    for i in 0..20_000 {
        total += zip
            .entry_header(
                &format!("screenshots/run-{}/{}.jpg", i / 20, i % 20),
                data.len() as u64,
                crc32(&data),
            )
            .len();
    }
    total += zip.finish().len();
    eprintln!(
        "ZIP: 20,000 screenshot entries of 50 kB (headers {total} bytes, CRCs included) in {:?}",
        started.elapsed()
    );
}

/// One of a step's `actions` as the engine stores it (`run_records::ExecutedAction`).
fn executed(action: run_contract::action::Action, target: &str, message: &str) -> Value {
    serde_json::to_value(run_records::ExecutedAction {
        action,
        target: target.into(),
        ok: true,
        message: message.into(),
    })
    .unwrap()
}

/// A run full of what an anonymized export must not hold: people named in fields and in
/// text, addresses, phone numbers, URLs with sessions and queries, typed and chosen text
/// (in the engine's shapes, and repeated in the action's result and in thoughts), unknown
/// keys that name people. It also holds what must stay: the engine's author `agent` and its
/// `[secret]` mask, prices, dates, ids.
fn personal_run() -> (Run, Vec<Step>) {
    use run_contract::action::Action as Engine;
    let mut extra = serde_json::Map::new();
    extra.insert("created_by".into(), json!("carol.owner"));
    extra.insert("userId".into(), json!("u-48151623"));
    extra.insert("meta".into(), json!({"lastEditedBy": "dave.editor", "source": "capture"}));
    let run = Run {
        id: "run-7".into(),
        task_id: "task-7".into(),
        task_prompt: "Email Jane at jane.doe@example.com or call +44 20 7946 0958 about the \
                      kettle under 30 €; carol.owner asked for it"
            .into(),
        follow_ups: vec!["Also ping (415) 555-2671 and dave.editor".into()],
        final_answer: Some("Sent to JANE.DOE@EXAMPLE.COM; order 123456789 costs 25.99 €".into()),
        created_by: "erin.author".into(),
        reviewed_by: Some("frank.reviewer".into()),
        annotator: Some("erin.author".into()),
        start_url: "https://shop.example.com/login?session=abc123&user=jane".into(),
        created_at: "2026-11-22T10:00:00.000Z".into(),
        telemetry: logged(&[
            (0, LogKind::FollowUp, "Steering: write to jane.doe@example.com, not carol.owner"),
            (1, LogKind::UserInput, "Should I call +44 20 7946 0958?"),
        ]),
        extra,
        ..Run::default()
    };
    let steps = vec![
        Step {
            run_id: "run-7".into(),
            index: 0,
            url: "https://shop.example.com/account/sess_9f8e7d6c5b4a39281706/orders?id=5#top"
                .into(),
            title: "Account of frank.reviewer".into(),
            screenshot: Some(ScreenshotRef {
                key: "cd".repeat(32),
                timestamp: "2026-11-22T10:00:31.000Z".into(),
                mime: "image/jpeg".into(),
                bytes: 10,
            }),
            action: StepAction {
                kind: "type".into(),
                target: "Security answer".into(),
                value: Some("Rosebud Lane 12".into()),
            },
            actions: vec![
                executed(
                    Engine::Type { id: 4, text: "Rosebud Lane 12".into(), clear: true },
                    "Security answer",
                    "Typed into [4]; it now reads \"Rosebud Lane 12\"",
                ),
                executed(
                    Engine::SelectOption { id: 5, option: "Mrs Jane Doe".into(), deselect: false },
                    "Title",
                    "Selected \"Mrs Jane Doe\" in [5]",
                ),
            ],
            thoughts: Thoughts {
                thought1: "Step 2 of 5: the cart shows 2 items for 49.90 € on 2026-11-22.".into(),
                thought2: "erin.author said to use 020 7946 0958 or 06 12 34 56 78.".into(),
                thought3: "See http://help.example.com/faq?email=jane.doe@example.com.".into(),
            },
            issues: vec![json!({"description": "ask erin.author", "reviewed_by": "gina.qa"})],
            last_edited_by: "erin.author".into(),
            outcome: "ok".into(),
            ..Step::default()
        },
        Step {
            run_id: "run-7".into(),
            index: 1,
            url: "https://shop.example.com/cart".into(),
            action: StepAction {
                kind: "select".into(),
                target: "Title".into(),
                value: Some("Mrs Jane Doe".into()),
            },
            thoughts: Thoughts {
                thought1: "Run id run-0123-4567-8901 is fine, so is v2.0.10. The field reads \
                           rosebud lane 12 now."
                    .into(),
                thought2: "Write to jane.doe@example.com again.".into(),
                thought3: "gina.qa checks it.".into(),
            },
            extended_thoughts: vec!["The agent chose Mrs Jane Doe as the title.".into()],
            ..Step::default()
        },
        Step {
            run_id: "run-7".into(),
            index: 2,
            url: "https://shop.example.com/login".into(),
            action: StepAction {
                kind: "type".into(),
                target: "Password".into(),
                value: Some("[secret]".into()),
            },
            actions: vec![
                executed(
                    Engine::Type { id: 6, text: "[secret]".into(), clear: true },
                    "Password",
                    "Typed the password into [6]",
                ),
                executed(
                    Engine::WebSearch { query: "Jane Doe Rosebud Lane".into() },
                    "",
                    "Searched",
                ),
            ],
            thoughts: Thoughts {
                thought1: "I typed [secret] into the password field.".into(),
                ..Thoughts::default()
            },
            last_edited_by: "agent".into(),
            ..Step::default()
        },
    ];
    (run, steps)
}

/// Strings of [`personal_run`] no anonymized export may hold.
const PERSONAL: [&str; 25] = [
    "jane.doe",
    "JANE.DOE",
    "Jane Doe",
    "7946",
    "555-2671",
    "12 34 56 78",
    "session=",
    "abc123",
    "user=jane",
    "sess_9f8e7d6c5b4a39281706",
    "?id=5",
    "#top",
    "email=",
    "Rosebud",
    "rosebud",
    "carol.owner",
    "u-48151623",
    "dave.editor",
    "erin.author",
    "frank.reviewer",
    "gina.qa",
    "10:00:31",
    // As keys: the README may name them to say they go.
    "\"userId\"",
    "\"created_by\"",
    "2026-11-22T",
];

/// What anonymizing keeps of [`personal_run`].
const KEPT: [&str; 12] = [
    "shop.example.com/account/",
    "/orders",
    "https://shop.example.com/cart",
    "123456789",
    "25.99",
    "49.90",
    "Step 2 of 5",
    "run-0123-4567-8901",
    "v2.0.10",
    "The agent chose [selected option] as the title.",
    "I typed [secret] into the password field.",
    "\"text\":\"[secret]\"",
];

fn assert_anonymous(format: &str, text: &str) {
    for secret in PERSONAL {
        assert!(!text.contains(secret), "{format} export leaks {secret:?}: {text}");
    }
}

#[test]
fn anonymized_exports_hold_no_personal_data() {
    let (r, s) = personal_run();
    for screenshots in [Screenshots::Reference, Screenshots::Omit, Screenshots::Files] {
        let o = opts(screenshots, true);
        let json = document(&[(r.clone(), s.clone())], &o);
        let outputs = [
            ("json", json.clone()),
            ("jsonl", jsonl_lines(&r, &s, &o)),
            ("csv", csv_rows(&r, &s, &o)),
            ("markdown", markdown_run(&r, &s, &o)),
        ];
        for (format, text) in &outputs {
            assert_anonymous(format, text);
        }
        for kept in KEPT {
            assert!(json.contains(kept), "the JSON export lost {kept:?}: {json}");
        }
        // The same address is the same placeholder wherever it is.
        let doc: Value = serde_json::from_str(&json).unwrap();
        let prompt = doc["runs"][0]["taskPrompt"].as_str().unwrap();
        assert!(prompt.contains("[email 1]") && prompt.contains("[phone 1]"), "{prompt}");
        assert!(prompt.contains("[person "), "{prompt}");
        assert_eq!(doc["runs"][0]["steps"][1]["thoughts"]["thought2"], "Write to [email 1] again.");
        assert_eq!(doc["runs"][0]["steps"][0]["action"]["value"], "[typed text]");
        assert_eq!(doc["runs"][0]["steps"][1]["action"]["value"], "[selected option]");
        let step0 = &doc["runs"][0]["steps"][0];
        assert_eq!(step0["actions"][0]["message"], "Typed into [4]; it now reads \"[typed text]\"");
        assert_eq!(step0["actions"][1]["action"]["option"], "[selected option]");
        // The engine's mask is no typed text of anyone's: it stays as captured.
        // Every placeholder the file holds is one the export dialog explains.
        let said = crate::anonymize::REMOVES.join(" ");
        for placeholder in json.split('[').skip(1).filter_map(|p| p.split(']').next()) {
            let kind = placeholder.trim_end_matches(|c: char| c.is_ascii_digit() || c == ' ');
            if kind.chars().all(|c| c.is_ascii_lowercase() || c == ' ') {
                assert!(said.contains(&format!("[{kind}")), "[{placeholder}] is not explained");
            }
        }
        let log = &doc["runs"][0]["telemetry"]["log"];
        assert!(log[0]["message"].as_str().unwrap().contains("[email 1]"), "{log}");
        assert!(log.as_array().unwrap().iter().all(|e| e["at"] == 0.0), "times go: {log}");
        let step2 = &doc["runs"][0]["steps"][2];
        assert_eq!(step2["action"]["value"], "[secret]");
        assert_eq!(step2["actions"][1]["action"]["query"], "[typed text]");
    }
    // Every format the export dialog offers, written as the page writes it (one export, the
    // filter line too).
    let runs = [(r.clone(), s.clone())];
    for format in Format::ALL {
        let o = opts(Screenshots::Reference, true);
        let mut export = Export::new(format, &o, runs.iter().map(|(r, s)| (r, s.as_slice())));
        let mut text = export.filter("annotator erin.author, text “jane.doe@example.com”");
        text += &export.run(&r, &s);
        let part = export.zip_run(&r, &s);
        text += &format!("{}{}{:?}", part.json, part.jsonl, part.screenshots);
        assert_anonymous(&format!("{format:?}"), &text);
    }
    // A plain export holds them all, so the searches above mean something.
    let plain = document(&[(r, s)], &opts(Screenshots::Reference, false));
    for secret in PERSONAL {
        assert!(plain.contains(secret), "{secret}");
    }
}

#[test]
fn csv_cells_that_a_spreadsheet_would_run_are_defused() {
    for text in [
        "\0=1+1",
        "\0\0+1",
        " =1+1",
        "\u{a0}=1+1",
        "\u{feff}=1+1",
        "\u{200b}@SUM(A1)",
        "\n@SUM(A1)",
        "\r=1",
        "\t=1",
        " \t-2+3",
        "\u{1}=1",
        "\u{0}cmd",
        "\u{7f}x",
    ] {
        let mut out = String::new();
        cell(&mut out, text);
        let read = read_csv(&format!("{out}\r\n"));
        assert!(read[0][0].starts_with('\''), "{text:?} → {out:?}");
        assert_eq!(&read[0][0][1..], text, "the text itself is kept");
    }
    let mut out = String::new();
    cell(&mut out, "a =1");
    assert_eq!(out, "a =1", "only a cell's start counts");
}

/// A ZIP export put together as the page does it, read back.
fn zip_export(runs: &[(Run, Vec<Step>)], opts: &Options) -> Vec<(String, Vec<u8>)> {
    let mut export = Export::new(Format::Zip, opts, runs.iter().map(|(r, s)| (r, s.as_slice())));
    let filter = export.filter("annotator erin.author");
    let mut zip = ZipWriter::new();
    let readme = zip_readme("t", &filter, runs.len(), 3, export.options());
    let mut bytes = zip.entry(ZIP_README, readme.as_bytes());
    let (mut json, mut jsonl) = (json_start("t", &filter, runs.len()), String::new());
    for (run, steps) in runs {
        let part = export.zip_run(run, steps);
        json.push_str(&part.json);
        jsonl.push_str(&part.jsonl);
        for (path, key) in part.screenshots {
            bytes.extend(zip.entry(&path, key.as_bytes()));
        }
    }
    json.push_str(json_end());
    bytes.extend(zip.entry(ZIP_DOCUMENT, json.as_bytes()));
    bytes.extend(zip.entry(ZIP_LINES, jsonl.as_bytes()));
    bytes.extend(zip.finish());
    check_zip(&bytes)
}

#[test]
fn anonymized_zip_exports_leave_screenshots_out() {
    let (r, s) = personal_run();
    let second = (Run { id: "run-8".into(), ..r.clone() }, s.clone());
    let runs = [(r, s), second];
    let plain = zip_export(&runs, &opts(Screenshots::Files, false));
    let names: Vec<&str> = plain.iter().map(|(name, _)| name.as_str()).collect();
    let shot = format!("screenshots/{}.jpg", "cd".repeat(32));
    assert_eq!(names, [ZIP_README, shot.as_str(), ZIP_DOCUMENT, ZIP_LINES], "shared image once");

    let anonymous = zip_export(&runs, &opts(Screenshots::Files, true));
    let names: Vec<&str> = anonymous.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, [ZIP_README, ZIP_DOCUMENT, ZIP_LINES]);
    for (name, data) in &anonymous {
        let text = String::from_utf8(data.clone()).unwrap();
        assert_anonymous(name, &text);
        assert!(!text.contains("screenshots/"), "{name} names an image it does not hold");
    }
    let readme = String::from_utf8(anonymous[0].1.clone()).unwrap();
    assert!(readme.contains("annotator [person 1]") && readme.contains("anonymized"), "{readme}");
    assert!(readme.contains("text inside an image cannot be removed"), "{readme}");
    // It says what was removed and what could not be, as the export dialog does.
    for item in crate::anonymize::REMOVES {
        assert!(readme.contains(item), "{readme}");
    }
    assert!(readme.contains(crate::anonymize::CANNOT), "{readme}");
    let plain = String::from_utf8(plain[0].1.clone()).unwrap();
    assert!(!plain.contains("Anonymized"), "{plain}");
}

#[test]
fn one_export_gives_a_person_one_placeholder_in_every_run() {
    let (r, s) = personal_run();
    let mut later = Run { id: "run-9".into(), ..r.clone() };
    later.reviewed_by = Some("zed.reviewer".into());
    let mut first_steps = s.clone();
    first_steps[1].thoughts.thought3 = "zed.reviewer will check jane.doe@example.com".into();
    let runs = [(r, first_steps), (later, s)];
    let o = opts(Screenshots::Reference, true);
    let mut export = Export::new(Format::Json, &o, runs.iter().map(|(r, s)| (r, s.as_slice())));
    let mut text = json_start("t", "all runs", 2);
    for (run, steps) in &runs {
        text.push_str(&export.run(run, steps));
    }
    text.push_str(json_end());
    let doc: Value = serde_json::from_str(&text).expect(&text);
    assert!(!text.contains("zed.reviewer"), "a reviewer of a later run is known from the start");
    let thought = |run: usize, step: usize, key: &str| {
        doc["runs"][run]["steps"][step]["thoughts"][key].as_str().unwrap().to_owned()
    };
    assert!(thought(0, 1, "thought3").ends_with("will check [email 1]"));
    assert_eq!(thought(1, 1, "thought2"), "Write to [email 1] again.");
    assert_eq!(thought(0, 0, "thought2"), thought(1, 0, "thought2"), "same people, same text");
}

#[test]
fn drafted_thoughts_and_the_navigators_notes_are_marked_in_json_jsonl_and_csv() {
    let mut s = steps();
    s[1].drafted_thoughts = vec![Thought::One, Thought::Three];
    s[1].navigator = Some(crate::record::NavigatorNotes {
        memory: "The kettle costs 20 €".into(),
        ..Default::default()
    });
    let o = opts(Screenshots::Reference, false);
    let lines: Vec<Value> =
        jsonl_lines(&run(), &s, &o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["draftedThoughts"], json!([]));
    assert_eq!(lines[1]["draftedThoughts"], json!(["thought1", "thought3"]));
    assert_eq!(lines[1]["navigator"]["memory"], "The kettle costs 20 €");
    assert!(lines[0].get("navigator").is_none());
    let json: Value = serde_json::from_str(&json_run(&run(), &s, &o)).unwrap();
    assert_eq!(json["steps"][1]["draftedThoughts"], json!(["thought1", "thought3"]));
    let mut text = csv_header();
    text.push_str(&csv_rows(&run(), &s, &o));
    let rows = read_csv(&text);
    let column = CSV_COLUMNS.iter().position(|c| *c == "drafted_thoughts").unwrap();
    assert_eq!((rows[1][column].as_str(), rows[2][column].as_str()), ("", "thought1;thought3"));
}
