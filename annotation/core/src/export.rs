//! Exports for training data (seed §7.D, §8, §13 Day 3): JSON, JSONL, CSV, Markdown and a
//! ZIP of them with the screenshots.
//!
//! Exports stream: the page writes one piece at a time into a `Blob` (a start, then one piece
//! per run, then an end), so a thousand runs never sit in memory as one string. Every
//! function here makes one such piece.
//!
//! Screenshots are either left out, referenced by their key (the SHA-256 the sync server
//! serves them under) or, in a ZIP, stored as files at [`screenshot_path`].

use std::borrow::Cow;
use std::collections::HashSet;

use run_contract::ActionKind;
use run_contract::telemetry::{LogEntry, RoleSpend, Telemetry};
use serde::Serialize;
use serde_json::{Value, json};

use crate::anonymize::Anonymizer;
use crate::record::{Run, ScreenshotRef, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
pub enum Format {
    Json,
    Jsonl,
    Csv,
    Markdown,
    Zip,
}

impl Format {
    pub const ALL: [Format; 5] =
        [Format::Json, Format::Jsonl, Format::Csv, Format::Markdown, Format::Zip];

    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Markdown => "md",
            Format::Zip => "zip",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Jsonl => "application/x-ndjson",
            Format::Csv => "text/csv;charset=utf-8",
            Format::Markdown => "text/markdown;charset=utf-8",
            Format::Zip => "application/zip",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Format::Json => "JSON (full runs)",
            Format::Jsonl => "JSONL (a step a line)",
            Format::Csv => "CSV (a step a row)",
            Format::Markdown => "Markdown (to read)",
            Format::Zip => "ZIP (JSON, JSONL and screenshots)",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, tagged_de::UnitDeserialize)]
pub enum Screenshots {
    Omit,
    /// The screenshot's key (its SHA-256) and the file name it would have in a ZIP.
    #[default]
    Reference,
    /// ZIP only: the images as `screenshots/<sha256>.jpg`, each once.
    Files,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct Options {
    /// Replace or remove what identifies people (see [`crate::anonymize`]).
    pub anonymize: bool,
    pub screenshots: Screenshots,
}

/// "alphascout-runs-20261122-1030.jsonl" for an export made at 2026-11-22T10:30….
pub fn file_name(format: Format, at: &str) -> String {
    let digits: String = at.chars().filter(char::is_ascii_digit).take(12).collect();
    let stamp = match digits.len() {
        12 => format!("-{}-{}", &digits[..8], &digits[8..]),
        8..=11 => format!("-{}", &digits[..8]),
        _ => String::new(),
    };
    format!("alphascout-runs{stamp}.{}", format.extension())
}

/// Anonymizes `run` and its steps on their own (see [`crate::anonymize`]); an export of
/// many runs goes through one [`Export`], so placeholders agree across its runs.
pub fn anonymize(run: &mut Run, steps: &mut [Step]) {
    Anonymizer::new().apply(run, steps);
}

/// A run id made safe as a path segment: no separators, no "..", nothing a ZIP reader could
/// take as leaving the archive.
fn safe_segment(id: &str) -> String {
    let cleaned: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned.is_empty() { "run".into() } else { cleaned.to_owned() }
}

/// "screenshots/<sha256>.jpg" when the step has a screenshot (".png" for a PNG). Named by
/// content, as stored: an image many steps share is one file in a ZIP.
pub fn screenshot_path(step: &Step) -> Option<String> {
    let shot = step.screenshot.as_ref()?;
    let ext = if shot.mime == "image/png" { "png" } else { "jpg" };
    Some(format!("screenshots/{}.{ext}", safe_segment(&shot.key)))
}

/// The one string that stands for a step's screenshot in flat formats (JSONL, CSV).
fn screenshot_text(step: &Step, opts: &Options) -> Option<String> {
    match opts.screenshots {
        Screenshots::Omit => None,
        Screenshots::Reference => step.screenshot.as_ref().map(|s| s.key.clone()),
        Screenshots::Files => screenshot_path(step),
    }
}

/// The run and steps to write: copies through `anonymizer` when there is one, else
/// borrowed as they are.
fn prepared<'a>(
    run: &'a Run,
    steps: &'a [Step],
    anonymizer: Option<&mut Anonymizer>,
) -> (Cow<'a, Run>, Cow<'a, [Step]>) {
    match anonymizer {
        Some(anonymizer) => {
            let (mut run, mut steps) = (run.clone(), steps.to_vec());
            anonymizer.apply(&mut run, &mut steps);
            (Cow::Owned(run), Cow::Owned(steps))
        }
        None => (Cow::Borrowed(run), Cow::Borrowed(steps)),
    }
}

/// A piece written on its own: anonymized, when asked, with an anonymizer of its own.
fn alone(
    run: &Run,
    steps: &[Step],
    opts: &Options,
    write: fn(&Run, &[Step], &Options) -> String,
) -> String {
    let (run, steps) = prepared(run, steps, opts.anonymize.then(Anonymizer::new).as_mut());
    write(&run, &steps, opts)
}

/// The options a ZIP's documents are written with: screenshots as files, except when
/// anonymizing, where they are left out, since text inside an image cannot be removed.
pub fn zip_options(opts: &Options) -> Options {
    let screenshots = if opts.anonymize { Screenshots::Omit } else { Screenshots::Files };
    Options { screenshots, ..opts.clone() }
}

/// One export being written, a run at a time: its format, its options and, when
/// anonymizing, the one [`Anonymizer`] every run goes through, so a person, address or
/// number keeps one placeholder in every run of it.
pub struct Export {
    format: Format,
    opts: Options,
    anonymizer: Option<Anonymizer>,
    /// Runs written so far (JSON puts a separator before all but the first).
    written: usize,
    /// Screenshots already in the ZIP: an image many steps share is stored once.
    images: HashSet<String>,
    /// Each run's model-call traces (already redacted, see [`crate::traces`]), written as
    /// its `traces` in JSON and ZIP exports.
    traces: std::collections::HashMap<String, Vec<Value>>,
}

/// What a ZIP export gets of one run: its pieces of `runs.json` and `runs.jsonl`, and the
/// screenshots to store, each as (path in the archive, key in storage), each once.
#[derive(Debug, Clone, PartialEq)]
pub struct ZipRun {
    pub json: String,
    pub jsonl: String,
    pub screenshots: Vec<(String, String)>,
}

impl Export {
    /// An export in `format` of `runs`, which are all learned first when anonymizing (a
    /// reviewer of the last run named in the first is replaced too).
    pub fn new<'a>(
        format: Format,
        opts: &Options,
        runs: impl IntoIterator<Item = (&'a Run, &'a [Step])>,
    ) -> Export {
        let opts = if format == Format::Zip { zip_options(opts) } else { opts.clone() };
        let anonymizer = opts.anonymize.then(|| {
            let mut anonymizer = Anonymizer::new();
            runs.into_iter().for_each(|(run, steps)| anonymizer.learn(run, steps));
            anonymizer
        });
        let traces = Default::default();
        Export { format, opts, anonymizer, written: 0, images: HashSet::new(), traces }
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Whether this export carries traces: JSON and ZIP, unless anonymized (a trace holds
    /// the prompts as sent, page text included, which the anonymizer does not rewrite).
    pub fn wants_traces(&self) -> bool {
        matches!(self.format, Format::Json | Format::Zip) && !self.opts.anonymize
    }

    /// Gives run `run_id` its traces for this export (ignored when it carries none).
    pub fn add_traces(&mut self, run_id: &str, traces: Vec<Value>) {
        if self.wants_traces() {
            self.traces.insert(run_id.to_owned(), traces);
        }
    }

    fn with_traces<'a>(&self, run: Cow<'a, Run>) -> Cow<'a, Run> {
        match self.traces.get(&run.id) {
            Some(traces) => {
                let mut run = run.into_owned();
                run.extra.insert("traces".into(), Value::Array(traces.clone()));
                Cow::Owned(run)
            }
            None => run,
        }
    }

    /// The filter line as the export states it: anonymized too, as it may name an annotator.
    pub fn filter(&mut self, filter: &str) -> String {
        match &mut self.anonymizer {
            Some(anonymizer) => anonymizer.text(filter),
            None => filter.to_owned(),
        }
    }

    /// One run's piece in a text format, JSON's with the separator it needs.
    pub fn run(&mut self, run: &Run, steps: &[Step]) -> String {
        let first = self.written == 0;
        self.written += 1;
        let (run, steps) = prepared(run, steps, self.anonymizer.as_mut());
        let run = self.with_traces(run);
        let opts = &self.opts;
        match self.format {
            Format::Json | Format::Zip if !first => {
                format!("{}{}", json_separator(), write_json(&run, &steps, opts))
            }
            Format::Json | Format::Zip => write_json(&run, &steps, opts),
            Format::Jsonl => write_jsonl(&run, &steps, opts),
            Format::Csv => write_csv(&run, &steps, opts),
            Format::Markdown => write_markdown(&run, &steps, opts),
        }
    }

    /// One run's part of a ZIP export (see [`ZipRun`]).
    pub fn zip_run(&mut self, run: &Run, steps: &[Step]) -> ZipRun {
        let (run, steps) = prepared(run, steps, self.anonymizer.as_mut());
        let run = self.with_traces(run);
        let separator = if self.written == 0 { "" } else { json_separator() };
        self.written += 1;
        let mut screenshots = Vec::new();
        if self.opts.screenshots == Screenshots::Files {
            for step in steps.iter() {
                if let (Some(path), Some(shot)) = (screenshot_path(step), &step.screenshot)
                    && self.images.insert(shot.key.clone())
                {
                    screenshots.push((path, shot.key.clone()));
                }
            }
        }
        ZipRun {
            json: format!("{separator}{}", write_json(&run, &steps, &self.opts)),
            jsonl: write_jsonl(&run, &steps, &self.opts),
            screenshots,
        }
    }
}

// ---------------------------------------------------------------- JSON

/// The export document's `format`; import checks it.
pub const DOCUMENT_FORMAT: &str = "alphascout.runs";
pub const DOCUMENT_VERSION: u64 = 1;

/// `{"format":"alphascout.runs","version":1,"exportedAt":…,"filter":…,"runCount":N,"runs":[`
pub fn json_start(exported_at: &str, filter: &str, runs: usize) -> String {
    let head = json!({
        "format": DOCUMENT_FORMAT,
        "version": DOCUMENT_VERSION,
        "exportedAt": exported_at,
        "filter": filter,
        "runCount": runs,
    })
    .to_string();
    // Reopen the object to append the runs array.
    format!("{},\"runs\":[\n", &head[..head.len() - 1])
}

fn screenshot_object(step: &Step, shot: &ScreenshotRef) -> Value {
    let mut value = serde_json::to_value(shot).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("file".into(), screenshot_path(step).map_or(Value::Null, Value::String));
    }
    value
}

/// One run as a JSON object with its steps in `"steps"`. Screenshots: `null` when omitted,
/// else the stored reference plus `"file"`, its path in a ZIP export.
pub fn json_run(run: &Run, steps: &[Step], opts: &Options) -> String {
    alone(run, steps, opts, write_json)
}

fn write_json(run: &Run, steps: &[Step], opts: &Options) -> String {
    let steps: Vec<Value> = steps
        .iter()
        .map(|step| {
            let mut value = serde_json::to_value(step).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                let shot = match (&step.screenshot, opts.screenshots) {
                    (Some(shot), Screenshots::Reference | Screenshots::Files) => {
                        screenshot_object(step, shot)
                    }
                    _ => Value::Null,
                };
                map.insert("screenshot".into(), shot);
            }
            value
        })
        .collect();
    let mut value = serde_json::to_value(run).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("steps".into(), Value::Array(steps));
    }
    value.to_string()
}

pub fn json_separator() -> &'static str {
    ",\n"
}

pub fn json_end() -> &'static str {
    "\n]}\n"
}

// ---------------------------------------------------------------- JSONL

#[derive(Serialize)]
struct ActionOut<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    target: &'a str,
    value: Option<&'a str>,
}

/// One JSONL line: a step with what a training pipeline needs of its run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    run_id: &'a str,
    task_id: &'a str,
    task_prompt: &'a str,
    step_index: u32,
    total_steps: usize,
    url: &'a str,
    title: &'a str,
    action: ActionOut<'a>,
    thoughts: &'a crate::record::Thoughts,
    /// The thoughts a model drafted and a person accepted (`thought1`…), empty when none:
    /// training can leave them out or weight them.
    drafted_thoughts: Vec<&'static str>,
    extended_thoughts: &'a [String],
    /// The Navigator's evaluation, memory and next goal as annotated, on steps that have them.
    #[serde(skip_serializing_if = "Option::is_none")]
    navigator: Option<&'a crate::record::NavigatorNotes>,
    outcome: &'a str,
    verified: bool,
    status: &'a str,
    quality: Option<u8>,
    tags: &'a [String],
    screenshot: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotator: Option<&'a str>,
    /// What the agents logged since the step before (the last line also carries what came
    /// after the last step): decisions, pauses, questions, steering.
    telemetry: Vec<&'a LogEntry>,
    /// The run's telemetry counts and spend per role (the same on every line of a run).
    run_telemetry: RunTelemetry<'a>,
}

/// A run's telemetry without its log (the lines carry the log, beside their steps).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunTelemetry<'a> {
    pauses: u32,
    resumes: u32,
    thinking_calls: u32,
    spend: &'a lean::StrMap<RoleSpend>,
}

/// The run's steps, a JSON object a line, each line ending "\n". `totalSteps` is the number
/// of steps exported, so a reader can tell a complete run.
pub fn jsonl_lines(run: &Run, steps: &[Step], opts: &Options) -> String {
    alone(run, steps, opts, write_jsonl)
}

fn write_jsonl(run: &Run, steps: &[Step], opts: &Options) -> String {
    let mut out = String::with_capacity(steps.len() * 1024);
    let log = crate::telemetry::by_step(&run.telemetry, steps);
    for (at, step) in steps.iter().enumerate() {
        let mut telemetry = log.steps[at].clone();
        if at + 1 == steps.len() {
            telemetry.extend(&log.after);
        }
        let line = Line {
            run_id: &run.id,
            task_id: &run.task_id,
            task_prompt: &run.task_prompt,
            step_index: step.index,
            total_steps: steps.len(),
            url: &step.url,
            title: &step.title,
            action: ActionOut {
                kind: step.action.kind.as_str(),
                target: &step.action.target,
                value: step.action.value.as_deref(),
            },
            thoughts: &step.thoughts,
            drafted_thoughts: crate::drafting::marks(step),
            extended_thoughts: &step.extended_thoughts,
            navigator: step.navigator.as_ref(),
            outcome: &step.outcome,
            verified: step.verified,
            status: run.status.as_str(),
            quality: run.quality,
            tags: &run.tags,
            screenshot: screenshot_text(step, opts),
            annotator: run.annotator.as_deref(),
            telemetry,
            run_telemetry: RunTelemetry {
                pauses: run.telemetry.pauses,
                resumes: run.telemetry.resumes,
                thinking_calls: run.telemetry.thinking_calls,
                spend: &run.telemetry.spend,
            },
        };
        // Serializing borrowed fields cannot fail.
        if let Ok(text) = serde_json::to_string(&line) {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out
}

// ---------------------------------------------------------------- CSV

/// Seed §13 Day 3's columns first, then the rest. `telemetry` holds what the agents logged
/// since the step before, a line each (the last step's row also what came after it).
/// `drafted_thoughts` names the thoughts a model drafted (`thought1;thought3`).
pub const CSV_COLUMNS: [&str; 17] = [
    "run_id",
    "step_index",
    "action_type",
    "thought_1",
    "thought_2",
    "thought_3",
    "screenshot_url",
    "action_target",
    "action_value",
    "url",
    "task_prompt",
    "status",
    "quality",
    "annotator",
    "outcome",
    "telemetry",
    "drafted_thoughts",
];

/// Characters a spreadsheet may skip before reading a cell as a formula: whitespace (tab,
/// CR, no-break spaces…), control characters (NUL…) and invisible ones (zero-width spaces,
/// a byte-order mark).
fn skipped(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
}

/// One cell, RFC 4180: quoted when it holds a quote, comma or line break (quotes doubled).
/// Text a spreadsheet would run as a formula gets a leading `'`: starting with `=`, `+`,
/// `-` or `@`, also after characters it may skip ([`skipped`]), or starting with a control
/// character (tab, CR, NUL…).
fn cell(out: &mut String, text: &str) {
    let lead = text.trim_start_matches(skipped);
    let guarded = text.starts_with(char::is_control)
        || matches!(lead.chars().next(), Some('=' | '+' | '-' | '@'));
    let quote =
        text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ');
    if quote {
        out.push('"');
    }
    if guarded {
        out.push('\'');
    }
    if quote {
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

fn row(out: &mut String, cells: &[&str]) {
    for (i, text) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        cell(out, text);
    }
    out.push_str("\r\n");
}

/// The header line, ending CRLF.
pub fn csv_header() -> String {
    let mut out = String::new();
    row(&mut out, &CSV_COLUMNS);
    out
}

/// A row per step, each ending CRLF.
pub fn csv_rows(run: &Run, steps: &[Step], opts: &Options) -> String {
    alone(run, steps, opts, write_csv)
}

fn write_csv(run: &Run, steps: &[Step], opts: &Options) -> String {
    let mut out = String::with_capacity(steps.len() * 1024);
    let quality = run.quality.map(|q| q.to_string()).unwrap_or_default();
    let annotator = run.annotator.as_deref().unwrap_or("");
    let log = crate::telemetry::by_step(&run.telemetry, steps);
    for (at, step) in steps.iter().enumerate() {
        let index = step.index.to_string();
        let last = at + 1 == steps.len();
        let telemetry: Vec<String> = log.steps[at]
            .iter()
            .chain(if last { &log.after[..] } else { &[] })
            .map(|entry| crate::telemetry::line(entry))
            .collect();
        let telemetry = telemetry.join("\n");
        let shot = screenshot_text(step, opts).unwrap_or_default();
        let drafted = crate::drafting::marks(step).join(";");
        row(
            &mut out,
            &[
                &run.id,
                &index,
                step.action.kind.as_str(),
                &step.thoughts.thought1,
                &step.thoughts.thought2,
                &step.thoughts.thought3,
                &shot,
                &step.action.target,
                step.action.value.as_deref().unwrap_or(""),
                &step.url,
                &run.task_prompt,
                run.status.as_str(),
                &quality,
                annotator,
                &step.outcome,
                &telemetry,
                &drafted,
            ],
        );
    }
    out
}

// ---------------------------------------------------------------- Markdown

/// User text made inert in Markdown: punctuation that starts structure is backslash-escaped,
/// line starts that would open a heading, list, quote or table are escaped, and line breaks
/// become hard breaks inside one paragraph (blank lines dropped), so no text can end the
/// block it is in or start a new one.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push_str("\\\n");
        }
        let mut chars = line.chars().peekable();
        let mut at_start = true;
        while let Some(c) = chars.next() {
            match c {
                // '#' anywhere: a trailing "#" would close a heading.
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '!' | '$'
                | '#' => {
                    out.push('\\');
                    out.push(c);
                }
                '+' | '-' | '=' | ':' if at_start => {
                    out.push('\\');
                    out.push(c);
                }
                // "1." or "1)" at a line start would open an ordered list.
                d if at_start && d.is_ascii_digit() => {
                    out.push(d);
                    while let Some(&next) = chars.peek() {
                        if next.is_ascii_digit() {
                            out.push(next);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    if let Some(&next @ ('.' | ')')) = chars.peek() {
                        out.push('\\');
                        out.push(next);
                        chars.next();
                    }
                }
                other => out.push(other),
            }
            at_start = false;
        }
    }
    out
}

/// The document's title and what it holds.
pub fn markdown_start(exported_at: &str, filter: &str, runs: usize, steps: usize) -> String {
    let mut out = String::from("# AlphaScout runs\n\n");
    let mut facts = Vec::new();
    if !exported_at.is_empty() {
        facts.push(format!("Exported {}", markdown_text(exported_at)));
    }
    facts.push(format!(
        "Filter: {}",
        markdown_text(if filter.is_empty() { "all runs" } else { filter })
    ));
    facts.push(format!("{runs} run{}", if runs == 1 { "" } else { "s" }));
    facts.push(format!("{steps} step{}", if steps == 1 { "" } else { "s" }));
    out.push_str(&facts.join(" · "));
    out.push_str("\n\n");
    out
}

/// A run: heading with the prompt, its status and quality, then each step's action and
/// thoughts.
pub fn markdown_run(run: &Run, steps: &[Step], opts: &Options) -> String {
    alone(run, steps, opts, write_markdown)
}

fn write_markdown(run: &Run, steps: &[Step], opts: &Options) -> String {
    let mut out = String::with_capacity(256 + steps.len() * 1200);
    let prompt = run.task_prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() { "(no prompt)".to_owned() } else { markdown_text(&prompt) };
    out.push_str(&format!("## {prompt}\n\n"));
    let mut facts = vec![
        format!("Run `{}`", run.id.replace('`', "'")),
        format!("Status: {}", run.status.label()),
        format!("Quality: {}", run.quality.map_or("not scored".into(), |q| q.to_string())),
        format!("{} step{}", steps.len(), if steps.len() == 1 { "" } else { "s" }),
    ];
    if let Some(annotator) = run.annotator.as_deref().filter(|a| !a.is_empty()) {
        facts.push(format!("Annotator: {}", markdown_text(annotator)));
    }
    if !run.tags.is_empty() {
        let tags: Vec<String> = run.tags.iter().map(|t| markdown_text(t)).collect();
        facts.push(format!("Tags: {}", tags.join(", ")));
    }
    out.push_str(&facts.join(" · "));
    out.push_str("\n\n");
    if let Some(answer) = run.final_answer.as_deref().filter(|a| !a.trim().is_empty()) {
        out.push_str(&format!("**Answer:** {}\n\n", markdown_text(answer)));
    }
    markdown_spend(&mut out, &run.telemetry);
    let log = crate::telemetry::by_step(&run.telemetry, steps);
    for (at, step) in steps.iter().enumerate() {
        let mut action = markdown_text(match &step.action.kind {
            ActionKind::None => "no action",
            kind => kind.as_str(),
        });
        if !step.action.target.trim().is_empty() {
            action.push_str(&format!(" “{}”", markdown_text(&step.action.target)));
        }
        if let Some(value) = step.action.value.as_deref().filter(|v| !v.is_empty()) {
            action.push_str(&format!(" with “{}”", markdown_text(value)));
        }
        out.push_str(&format!("### Step {} — {action}\n\n", step.index + 1));
        if !step.url.is_empty() {
            out.push_str(&format!("Page: {}\n\n", markdown_text(&step.url)));
        }
        if opts.screenshots != Screenshots::Omit
            && let Some(text) = screenshot_text(step, opts)
        {
            out.push_str(&format!("Screenshot: `{}`\n\n", text.replace('`', "'")));
        }
        for which in crate::record::Thought::ALL {
            let text = step.thoughts.get(which);
            let text =
                if text.trim().is_empty() { "_(empty)_".to_owned() } else { markdown_text(text) };
            // A reader weighs a model's draft differently from a person's words.
            let drafted =
                if step.drafted_thoughts.contains(&which) { " _(AI-drafted)_" } else { "" };
            out.push_str(&format!("**Thought {}.**{drafted} {text}\n\n", which.number()));
        }
        if let Some(notes) = &step.navigator {
            for which in run_records::NavigatorNote::ALL {
                let text = notes.get(which);
                if !text.trim().is_empty() {
                    out.push_str(&format!("_{}:_ {}\n\n", which.label(), markdown_text(text)));
                }
            }
        }
        markdown_log(&mut out, "What happened before this step", &log.steps[at]);
    }
    markdown_log(&mut out, "After the last step", &log.after);
    out
}

/// The run's telemetry counts and spend per role, when it has any.
fn markdown_spend(out: &mut String, telemetry: &Telemetry) {
    if telemetry.is_empty() {
        return;
    }
    out.push_str(&format!("**Telemetry:** {}\n\n", crate::telemetry::counts(telemetry)));
    if telemetry.spend.is_empty() {
        return;
    }
    out.push_str(
        "| role | calls | input tokens | output tokens | cost (USD) |\n|---|---|---|---|---|\n",
    );
    let total = telemetry.total();
    let rows = telemetry.spend.iter().map(|(role, s)| (markdown_text(role), s));
    for (role, spend) in rows.chain([("all".to_owned(), &total)]) {
        out.push_str(&format!(
            "| {role} | {} | {} | {} | {:.4} |\n",
            spend.calls, spend.input_tokens, spend.output_tokens, spend.cost
        ));
    }
    out.push('\n');
}

/// Log entries as a list under a bold label; nothing when there are none.
fn markdown_log(out: &mut String, label: &str, entries: &[&LogEntry]) {
    if entries.is_empty() {
        return;
    }
    out.push_str(&format!("**{label}:**\n\n"));
    for entry in entries {
        out.push_str(&format!("- _{}_: {}\n", entry.kind.label(), markdown_text(&entry.message)));
    }
    out.push('\n');
}

// ---------------------------------------------------------------- ZIP

/// CRC-32 (IEEE) of `data`, as ZIP wants it.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Continues a CRC-32 over more data: `crc32_update(crc32(a), b) == crc32(a ++ b)`; start
/// from 0. For data the page hashes piece by piece.
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(crc);
    hasher.update(data);
    hasher.finalize()
}

struct ZipEntry {
    name: Vec<u8>,
    crc32: u32,
    size: u64,
    offset: u64,
}

/// A store-only (method 0) ZIP written front to back: each entry's local header and data,
/// then [`ZipWriter::finish`]'s central directory. Past 65,535 entries or 4 GiB it writes
/// ZIP64 records, which every current unzip tool reads.
pub struct ZipWriter {
    entries: Vec<ZipEntry>,
    offset: u64,
    /// MS-DOS time and date of every entry.
    time: u16,
    date: u16,
    /// Tests force the ZIP64 records without writing 4 GiB.
    force_zip64: bool,
}

impl Default for ZipWriter {
    fn default() -> Self {
        Self::new()
    }
}

const U32_MAX: u64 = 0xFFFF_FFFF;

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

impl ZipWriter {
    /// Entries dated 1980-01-01 00:00, the earliest ZIP can say (an export's content, not
    /// its files' times, is what matters; see [`ZipWriter::with_time`]).
    pub fn new() -> Self {
        ZipWriter {
            entries: Vec::new(),
            offset: 0,
            time: 0,
            date: (1 << 5) | 1,
            force_zip64: false,
        }
    }

    /// Entries dated `at` (ISO 8601, read as local time; ZIP has no zones).
    pub fn with_time(at: &str) -> Self {
        let mut zip = ZipWriter::new();
        let num = |range: std::ops::Range<usize>| at.get(range).and_then(|s| s.parse::<u16>().ok());
        if let (Some(y), Some(mo), Some(d)) = (num(0..4), num(5..7), num(8..10))
            && (1980..=2107).contains(&y)
            && (1..=12).contains(&mo)
            && (1..=31).contains(&d)
        {
            zip.date = ((y - 1980) << 9) | (mo << 5) | d;
            let (h, mi, s) =
                (num(11..13).unwrap_or(0), num(14..16).unwrap_or(0), num(17..19).unwrap_or(0));
            if h < 24 && mi < 60 && s < 60 {
                zip.time = (h << 11) | (mi << 5) | (s / 2);
            }
        }
        zip
    }

    /// Bytes written so far (headers plus data).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many entries so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A whole entry: its local header followed by `data`.
    pub fn entry(&mut self, name: &str, data: &[u8]) -> Vec<u8> {
        let mut out = self.entry_header(name, data.len() as u64, crc32(data));
        out.extend_from_slice(data);
        out
    }

    /// Only the local header of an entry whose `data_len` bytes (with CRC `crc32`) the
    /// caller writes right after it.
    pub fn entry_header(&mut self, name: &str, data_len: u64, crc32: u32) -> Vec<u8> {
        let name = name.as_bytes().to_vec();
        let big = data_len >= U32_MAX || self.force_zip64;
        let mut out = Vec::with_capacity(30 + name.len() + 20);
        put32(&mut out, 0x0403_4b50);
        put16(&mut out, if big { 45 } else { 20 }); // version needed
        put16(&mut out, 1 << 11); // names are UTF-8
        put16(&mut out, 0); // stored
        put16(&mut out, self.time);
        put16(&mut out, self.date);
        put32(&mut out, crc32);
        let size32 = if big { U32_MAX as u32 } else { data_len as u32 };
        put32(&mut out, size32); // compressed
        put32(&mut out, size32); // uncompressed
        put16(&mut out, name.len() as u16);
        put16(&mut out, if big { 20 } else { 0 });
        out.extend_from_slice(&name);
        if big {
            put16(&mut out, 0x0001);
            put16(&mut out, 16);
            put64(&mut out, data_len);
            put64(&mut out, data_len);
        }
        self.entries.push(ZipEntry { name, crc32, size: data_len, offset: self.offset });
        self.offset += out.len() as u64 + data_len;
        out
    }

    /// The central directory and end records; the archive is complete after these bytes.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * 64 + 100);
        let start = self.offset;
        for e in &self.entries {
            let big_size = e.size >= U32_MAX || self.force_zip64;
            let big_offset = e.offset >= U32_MAX || self.force_zip64;
            let mut extra = Vec::new();
            if big_size || big_offset {
                put16(&mut extra, 0x0001);
                put16(&mut extra, if big_size { 16 } else { 0 } + if big_offset { 8 } else { 0 });
                if big_size {
                    put64(&mut extra, e.size);
                    put64(&mut extra, e.size);
                }
                if big_offset {
                    put64(&mut extra, e.offset);
                }
            }
            let version = if extra.is_empty() { 20 } else { 45 };
            put32(&mut out, 0x0201_4b50);
            put16(&mut out, version); // made by (MS-DOS attributes)
            put16(&mut out, version); // needed
            put16(&mut out, 1 << 11);
            put16(&mut out, 0);
            put16(&mut out, self.time);
            put16(&mut out, self.date);
            put32(&mut out, e.crc32);
            let size32 = if big_size { U32_MAX as u32 } else { e.size as u32 };
            put32(&mut out, size32);
            put32(&mut out, size32);
            put16(&mut out, e.name.len() as u16);
            put16(&mut out, extra.len() as u16);
            put16(&mut out, 0); // comment
            put16(&mut out, 0); // disk
            put16(&mut out, 0); // internal attributes
            put32(&mut out, 0); // external attributes
            put32(&mut out, if big_offset { U32_MAX as u32 } else { e.offset as u32 });
            out.extend_from_slice(&e.name);
            out.extend_from_slice(&extra);
        }
        let size = out.len() as u64;
        let count = self.entries.len() as u64;
        let zip64 = self.force_zip64 || count >= 0xFFFF || start >= U32_MAX || size >= U32_MAX;
        if zip64 {
            let record = start + size;
            put32(&mut out, 0x0606_4b50); // ZIP64 end of central directory
            put64(&mut out, 44);
            put16(&mut out, 45);
            put16(&mut out, 45);
            put32(&mut out, 0);
            put32(&mut out, 0);
            put64(&mut out, count);
            put64(&mut out, count);
            put64(&mut out, size);
            put64(&mut out, start);
            put32(&mut out, 0x0706_4b50); // its locator
            put32(&mut out, 0);
            put64(&mut out, record);
            put32(&mut out, 1);
        }
        put32(&mut out, 0x0605_4b50);
        put16(&mut out, 0);
        put16(&mut out, 0);
        let count16 = if zip64 { 0xFFFF } else { count as u16 };
        put16(&mut out, count16);
        put16(&mut out, count16);
        put32(&mut out, if zip64 { U32_MAX as u32 } else { size as u32 });
        put32(&mut out, if zip64 { U32_MAX as u32 } else { start as u32 });
        put16(&mut out, 0);
        out
    }
}

/// The entry names of a ZIP export, in the order the page writes them (screenshots come
/// between the README and the documents).
pub const ZIP_README: &str = "README.txt";
pub const ZIP_DOCUMENT: &str = "runs.json";
pub const ZIP_LINES: &str = "runs.jsonl";

/// A small README put first in every ZIP export, saying what is in it.
pub fn zip_readme(
    exported_at: &str,
    filter: &str,
    runs: usize,
    steps: usize,
    opts: &Options,
) -> String {
    let shots = match opts.screenshots {
        Screenshots::Omit if opts.anonymize => {
            "left out, as the export is anonymized and text inside an image cannot be removed"
        }
        Screenshots::Omit => "not included",
        Screenshots::Reference => "referenced by key (SHA-256), not included",
        Screenshots::Files => {
            "in screenshots/<sha256>.jpg, named by content (each step names its file)"
        }
    };
    let when =
        if exported_at.is_empty() { String::new() } else { format!("Exported {exported_at}.\n") };
    let mut readme = format!(
        "AlphaScout runs\n{when}Filter: {filter}\n{runs} runs, {steps} steps{}.\n\n\
         runs.json   the full runs (format \"{DOCUMENT_FORMAT}\", version {DOCUMENT_VERSION}); import this\n\
         runs.jsonl  one step a line, for training pipelines\n\
         Screenshots: {shots}.\n",
        if opts.anonymize { ", anonymized" } else { "" }
    );
    if opts.anonymize {
        readme.push_str("\nAnonymized: removed or replaced\n");
        for item in crate::anonymize::REMOVES {
            readme.push_str(&format!("- {item}\n"));
        }
        readme.push_str(&format!("{}\n", crate::anonymize::CANNOT));
    }
    readme
}

#[cfg(test)]
pub(crate) mod tests;
