//! Import, validated and all or nothing.
//!
//! Reads what [`crate::export`] writes: the JSON document (`"format": "alphascout.runs"`,
//! version 1), a bare array of runs with their steps, or JSONL with a step a line (grouped
//! into runs by `runId`; screenshots are dropped, as the lines carry only references). Every
//! record and field is checked and every problem is reported, each with the record it is in,
//! the field's path and what was expected; if there is any, nothing is imported.
//!
//! Imported runs keep everything they carry (status, annotations, versions); nothing is set
//! or reset. A run whose id already exists here is refused; [`as_copies`] gives the runs new
//! ids for importing alongside.

use std::collections::{HashMap, HashSet};

use run_contract::problem::dot_pointer;
use run_contract::telemetry::{LogEntry, Telemetry};
use run_contract::{ActionKind, Problem};
use serde_json::{Map, Value};

use crate::export::{DOCUMENT_FORMAT, DOCUMENT_VERSION};
use crate::record::{ReviewStatus, Run, Step, StepAction, Thoughts};

/// One problem found in the file: the record it is in, and the problem at a JSON Pointer
/// inside that record (`/steps/1/url`; `""` for the record as a whole), whose message says
/// for a person what is wrong and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// Where: "file", "run 3 (id abc)", "run 2 (id abc), step 5", "line 17".
    pub record: String,
    pub problem: Problem,
}

/// As the runs list shows it: `run 2 (id r2) · /steps/1/url: why`.
impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Problem { path, message } = &self.problem;
        if path.is_empty() {
            write!(f, "{}: {message}", self.record)
        } else {
            write!(f, "{} · {path}: {message}", self.record)
        }
    }
}

/// Runs ready to store, each with its steps in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub runs: Vec<(Run, Vec<Step>)>,
}

/// The longest thought accepted, in characters.
pub const MAX_THOUGHT_CHARS: usize = 20_000;
/// The longest of any other text field.
pub const MAX_TEXT_CHARS: usize = 100_000;
const MAX_ID_CHARS: usize = 200;
/// The largest file imported, in bytes (100 MB: a JSON export of about 3,000 runs of 20
/// steps). The page holds the text, its parse and the records at once, about six times the
/// file; past this a tab's memory runs short.
pub const MAX_IMPORT_BYTES: u64 = 100 * 1024 * 1024;

/// `bytes` in MB (of 1024 × 1024 bytes), rounded up to a tenth, so a file just over the cap
/// never reads as the cap itself; whole numbers without the tenth.
fn megabytes(bytes: u64) -> String {
    let tenths = (bytes as f64 / (1024.0 * 1024.0) * 10.0).ceil() as u64;
    if tenths.is_multiple_of(10) {
        format!("{} MB", tenths / 10)
    } else {
        format!("{}.{} MB", tenths / 10, tenths % 10)
    }
}

/// The rejection for a file of `bytes` bytes, if it is too big to import. The page asks
/// before reading the file; [`parse`] and [`read`] ask again of the text.
pub fn too_big(bytes: u64) -> Option<Vec<Rejection>> {
    (bytes > MAX_IMPORT_BYTES).then(|| {
        one(
            "file",
            format!(
                "the file is {}; imports take at most {}, so export fewer runs at a time",
                megabytes(bytes),
                megabytes(MAX_IMPORT_BYTES)
            ),
        )
    })
}

/// A broken file can hold a problem per line; past this many, only a count is kept.
const MAX_REJECTIONS: usize = 200;

/// Reads and checks `text` (the file's contents) and refuses runs whose ids are in
/// `existing_ids`. Either every run is good, or `Err` lists every problem.
pub fn parse(
    file_name: &str,
    text: &str,
    existing_ids: &HashSet<String>,
) -> Result<Batch, Vec<Rejection>> {
    read_with(file_name, text, Some(existing_ids))
}

/// [`parse`] without the check against existing runs: for "import as copies" after
/// [`parse`] refused ids that are already here.
pub fn read(file_name: &str, text: &str) -> Result<Batch, Vec<Rejection>> {
    read_with(file_name, text, None)
}

/// The ids in `batch` that are already in `existing_ids`.
pub fn existing(batch: &Batch, existing_ids: &HashSet<String>) -> Vec<String> {
    batch.runs.iter().map(|(r, _)| r.id.clone()).filter(|id| existing_ids.contains(id)).collect()
}

/// The batch with a new id for every run (and its steps), for importing next to the
/// originals. A copy was never synced, so it loses `serverVersion`; it remembers the id it
/// was copied from in `copiedFrom`.
pub fn as_copies(batch: Batch, mut new_id: impl FnMut() -> String) -> Batch {
    let runs = batch
        .runs
        .into_iter()
        .map(|(mut run, mut steps)| {
            let id = new_id();
            let old = std::mem::replace(&mut run.id, id.clone());
            run.extra.insert("copiedFrom".into(), Value::String(old));
            run.server_version = None;
            for step in &mut steps {
                step.run_id = id.clone();
            }
            (run, steps)
        })
        .collect();
    Batch { runs }
}

// ---------------------------------------------------------------- problems

#[derive(Default)]
struct Problems {
    list: Vec<Rejection>,
    more: usize,
}

impl Problems {
    /// `path` is a dot path inside the record (`steps.1.url`: the checks walk keys that
    /// hold no dots), reported as a JSON Pointer.
    fn add(&mut self, record: &str, path: &str, message: impl Into<String>) {
        if self.list.len() < MAX_REJECTIONS {
            self.list.push(Rejection {
                record: record.to_owned(),
                problem: Problem::new(dot_pointer(path), message),
            });
        } else {
            self.more += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn done(mut self) -> Vec<Rejection> {
        if self.more > 0 {
            self.list.push(Rejection {
                record: "file".into(),
                problem: Problem::whole(format!("… and {} more problems not listed", self.more)),
            });
        }
        self.list
    }
}

fn one(record: &str, message: impl Into<String>) -> Vec<Rejection> {
    vec![Rejection { record: record.into(), problem: Problem::whole(message) }]
}

/// How a value's type reads in a message.
fn kind(value: &Value) -> String {
    let short = |s: String| {
        if s.chars().count() > 30 {
            format!("{}…", s.chars().take(30).collect::<String>())
        } else {
            s
        }
    };
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the text \"{}\"", short(s.clone())),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") }
}

/// Checks the fields of one JSON object, reporting under one record.
struct Fields<'a, 'p> {
    obj: &'a Map<String, Value>,
    record: &'a str,
    /// Path of `obj` inside the record.
    prefix: String,
    problems: &'p mut Problems,
}

impl<'a> Fields<'a, '_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        let path = join(&self.prefix, key);
        self.problems.add(self.record, &path, message);
    }

    /// The value at `key`, or a "missing" problem if `required`. `null` counts as missing.
    fn get(&mut self, key: &str, required: bool, what: &str) -> Option<&'a Value> {
        match self.obj.get(key) {
            Some(Value::Null) | None => {
                if required {
                    self.problem(key, format!("missing; expected {what}"));
                }
                None
            }
            Some(v) => Some(v),
        }
    }

    /// The value at `key` when it is `what` (as `is` tells), else a problem saying what it is.
    fn of_kind(
        &mut self,
        key: &str,
        required: bool,
        what: &str,
        is: fn(&Value) -> bool,
    ) -> Option<&'a Value> {
        let value = self.get(key, required, what)?;
        if is(value) {
            return Some(value);
        }
        self.problem(key, format!("expected {what}, found {}", kind(value)));
        None
    }

    fn text(&mut self, key: &str, required: bool, max: usize) -> Option<&'a str> {
        let s = self.of_kind(key, required, "text", Value::is_string)?.as_str()?;
        let chars = s.chars().count();
        if chars > max {
            self.problem(key, format!("too long: {chars} characters, at most {max}"));
        }
        Some(s)
    }

    fn uint(&mut self, key: &str, required: bool, max: u64) -> Option<u64> {
        let value = self.get(key, required, "a whole number")?;
        match value.as_u64() {
            Some(n) if n <= max => Some(n),
            Some(n) => {
                self.problem(key, format!("{n} is too large; at most {max}"));
                None
            }
            None => {
                self.problem(
                    key,
                    format!("expected a whole number of 0 or more, found {}", kind(value)),
                );
                None
            }
        }
    }

    fn number(&mut self, key: &str) {
        self.of_kind(key, false, "a number", Value::is_number);
    }

    fn int(&mut self, key: &str) {
        self.of_kind(key, false, "a whole number", |v| v.as_i64().is_some());
    }

    fn boolean(&mut self, key: &str) {
        self.of_kind(key, false, "true or false", Value::is_boolean);
    }

    fn list(&mut self, key: &str, required: bool) -> Option<&'a Vec<Value>> {
        self.of_kind(key, required, "a list", Value::is_array)?.as_array()
    }

    fn texts(&mut self, key: &str, max: usize) -> Vec<&'a str> {
        let Some(items) = self.list(key, false) else { return Vec::new() };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("{key}.{i}");
            match item.as_str() {
                Some(s) if s.chars().count() > max => self.problem(
                    &path,
                    format!("too long: {} characters, at most {max}", s.chars().count()),
                ),
                Some(s) => out.push(s),
                None => self.problem(&path, format!("expected text, found {}", kind(item))),
            }
        }
        out
    }

    /// An optional field read as `T` (absent or null: its default), with a problem naming
    /// `what` it should be when it is not.
    fn decoded<T: serde::de::DeserializeOwned + Default>(&mut self, key: &str, what: &str) -> T {
        match self.obj.get(key) {
            None | Some(Value::Null) => T::default(),
            Some(value) => serde_json::from_value(value.clone()).unwrap_or_else(|e| {
                self.problem(key, format!("not {what}: {e}"));
                T::default()
            }),
        }
    }

    fn object(&mut self, key: &str, required: bool) -> Option<&'a Map<String, Value>> {
        self.of_kind(key, required, "an object", Value::is_object)?.as_object()
    }

    /// The same checks on a nested object.
    fn nested<'q>(&'q mut self, key: &str, obj: &'a Map<String, Value>) -> Fields<'a, 'q> {
        Fields {
            obj,
            record: self.record,
            prefix: join(&self.prefix, key),
            problems: self.problems,
        }
    }

    fn status(&mut self, key: &str) -> Option<ReviewStatus> {
        let text = self.text(key, false, 100)?;
        let status = ReviewStatus::parse(text);
        if status.is_none() {
            let names: Vec<&str> = ReviewStatus::ALL.iter().map(|s| s.as_str()).collect();
            self.problem(
                key,
                format!("unknown status \"{text}\"; expected one of {}", names.join(", ")),
            );
        }
        status
    }

    fn quality(&mut self, key: &str) -> Option<u8> {
        self.uint(key, false, 100).map(|q| q as u8)
    }

    fn thoughts(&mut self) {
        if let Some(thoughts) = self.object("thoughts", true) {
            let mut t = self.nested("thoughts", thoughts);
            for key in ["thought1", "thought2", "thought3"] {
                t.text(key, true, MAX_THOUGHT_CHARS);
            }
        }
        self.texts("extendedThoughts", MAX_THOUGHT_CHARS);
    }

    fn action(&mut self) {
        if let Some(action) = self.object("action", false) {
            let mut a = self.nested("action", action);
            a.text("type", false, 100);
            a.text("target", false, MAX_TEXT_CHARS);
            a.text("value", false, MAX_TEXT_CHARS);
        }
    }
}

// ---------------------------------------------------------------- JSON

/// Which ids were seen where, and which exist already.
struct Ids<'a> {
    seen: HashMap<String, String>,
    existing: Option<&'a HashSet<String>>,
}

impl Ids<'_> {
    /// Records `id` for `record`, reporting a repeat or one that exists already.
    fn claim(&mut self, id: &str, record: &str, path: &str, problems: &mut Problems) {
        if let Some(first) = self.seen.get(id) {
            problems.add(
                record,
                path,
                format!("the id \"{id}\" is also used by {first}; each run needs its own id"),
            );
        } else {
            self.seen.insert(id.to_owned(), record.to_owned());
        }
        if self.existing.is_some_and(|e| e.contains(id)) {
            problems.add(
                record,
                path,
                format!("a run with id \"{id}\" already exists here; delete it or import a copy"),
            );
        }
    }
}

fn run_label(position: usize, obj: Option<&Map<String, Value>>) -> String {
    match obj.and_then(|o| o.get("id")).and_then(Value::as_str).filter(|id| !id.is_empty()) {
        Some(id) => format!("run {position} (id {})", id.chars().take(60).collect::<String>()),
        None => format!("run {position}"),
    }
}

/// The run-level fields every form shares.
fn check_run_fields(f: &mut Fields) {
    f.text("taskId", false, MAX_ID_CHARS);
    f.text("taskPrompt", true, MAX_TEXT_CHARS);
    f.texts("followUps", MAX_TEXT_CHARS);
    f.status("status");
    f.text("agentStatus", false, 100);
    f.text("finalAnswer", false, MAX_TEXT_CHARS);
    for key in ["createdAt", "updatedAt", "createdBy", "reviewedBy", "annotator"] {
        f.text(key, false, 200);
    }
    f.text("startUrl", false, MAX_TEXT_CHARS);
    f.uint("totalSteps", false, u32::MAX as u64);
    f.uint("version", false, u32::MAX as u64);
    f.quality("quality");
    f.int("serverVersion");
    f.number("cost");
    f.texts("tags", 200);
    f.texts("collections", 200);
    if let Some(subtasks) = f.list("subtasks", false) {
        for (i, item) in subtasks.iter().enumerate() {
            let key = format!("subtasks.{i}");
            let Some(obj) = item.as_object() else {
                f.problem(&key, format!("expected a subtask object, found {}", kind(item)));
                continue;
            };
            let mut s = f.nested(&key, obj);
            for text in ["id", "title", "description", "status"] {
                s.text(text, false, MAX_TEXT_CHARS);
            }
            match obj.get("stepRange").and_then(Value::as_array) {
                Some(range)
                    if range.len() == 2
                        && range
                            .iter()
                            .all(|v| v.as_u64().is_some_and(|n| n <= u32::MAX as u64)) => {}
                _ => {
                    s.problem("stepRange", "expected [first, last] step indexes, two whole numbers")
                }
            }
        }
    }
}

fn check_step(
    obj: &Map<String, Value>,
    record: &str,
    run_id: Option<&str>,
    problems: &mut Problems,
) -> Option<u32> {
    let mut f = Fields { obj, record, prefix: String::new(), problems };
    let index = f.uint("index", true, u32::MAX as u64).map(|i| i as u32);
    if let (Some(step_run), Some(run_id)) = (f.text("runId", false, MAX_ID_CHARS), run_id)
        && step_run != run_id
    {
        f.problem(
            "runId",
            format!("this step names run \"{step_run}\" but is inside run \"{run_id}\""),
        );
    }
    for key in ["url", "title", "lastEditedBy", "lastEditedAt", "outcome"] {
        f.text(key, false, MAX_TEXT_CHARS);
    }
    if let Some(shot) = f.object("screenshot", false) {
        let mut s = f.nested("screenshot", shot);
        s.text("key", true, 200);
        s.text("timestamp", false, 200);
        s.text("mime", false, 200);
        s.uint("bytes", false, u32::MAX as u64);
    }
    f.action();
    f.list("actions", false);
    f.thoughts();
    f.boolean("verified");
    if let Some(issues) = f.list("issues", false) {
        for (i, issue) in issues.iter().enumerate() {
            if !issue.is_object() {
                f.problem(
                    &format!("issues.{i}"),
                    format!("expected an issue object, found {}", kind(issue)),
                );
            }
        }
    }
    f.texts("traceIds", 200);
    f.number("durationMs");
    index
}

/// Turns checked JSON into the record type; only fails if a check above is missing.
fn decode<T: serde::de::DeserializeOwned>(
    value: Value,
    record: &str,
    problems: &mut Problems,
) -> Option<T> {
    match serde_json::from_value(value) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.add(record, "", format!("could not be read: {e}"));
            None
        }
    }
}

/// One run with its steps, as in the JSON document or a bare array.
fn json_run(
    value: &Value,
    position: usize,
    ids: &mut Ids,
    problems: &mut Problems,
) -> Option<(Run, Vec<Step>)> {
    let Some(obj) = value.as_object() else {
        problems.add(
            &format!("run {position}"),
            "",
            format!("expected a run object, found {}", kind(value)),
        );
        return None;
    };
    let record = run_label(position, Some(obj));
    let before = problems.list.len() + problems.more;
    let mut f = Fields { obj, record: &record, prefix: String::new(), problems };
    let id = f.text("id", true, MAX_ID_CHARS);
    if id == Some("") {
        f.problem("id", "empty; every run needs an id");
    }
    check_run_fields(&mut f);
    let steps = f.list("steps", true);
    if let Some(id) = id.filter(|id| !id.is_empty()) {
        ids.claim(id, &record, "id", problems);
    }
    let mut indexes: HashMap<u32, usize> = HashMap::new();
    let mut step_values = Vec::new();
    for (i, step) in steps.into_iter().flatten().enumerate() {
        let step_record = format!("{record}, step {}", i + 1);
        let Some(step_obj) = step.as_object() else {
            problems.add(&step_record, "", format!("expected a step object, found {}", kind(step)));
            continue;
        };
        if let Some(index) = check_step(step_obj, &step_record, id, problems)
            && let Some(first) = indexes.insert(index, i + 1)
        {
            problems.add(
                &step_record,
                "index",
                format!("index {index} is also used by step {first} of this run"),
            );
        }
        let mut step_obj = step_obj.clone();
        // Steps may leave out the run they are in.
        if let Some(id) = id {
            step_obj.entry("runId").or_insert_with(|| Value::String(id.to_owned()));
        }
        step_values.push((step_record, Value::Object(step_obj)));
    }
    if let (Some(total), Some(steps)) = (obj.get("totalSteps").and_then(Value::as_u64), steps)
        && total != steps.len() as u64
    {
        problems.add(
            &record,
            "totalSteps",
            format!("says {total} steps but the run has {}", steps.len()),
        );
    }
    if problems.list.len() + problems.more > before {
        return None;
    }
    let mut run_obj = obj.clone();
    run_obj.remove("steps");
    let run: Run = decode(Value::Object(run_obj), &record, problems)?;
    let mut steps = Vec::new();
    for (step_record, value) in step_values {
        steps.push(decode::<Step>(value, &step_record, problems)?);
    }
    lean::sort_by_key(&mut steps, |s| s.index);
    Some((run, steps))
}

fn json_runs(items: &[Value], ids: &mut Ids, problems: &mut Problems) -> Vec<(Run, Vec<Step>)> {
    items.iter().enumerate().filter_map(|(i, v)| json_run(v, i + 1, ids, problems)).collect()
}

fn document(
    obj: &Map<String, Value>,
    ids: &mut Ids,
    problems: &mut Problems,
) -> Vec<(Run, Vec<Step>)> {
    match obj.get("format") {
        Some(Value::String(f)) if f == DOCUMENT_FORMAT => {}
        Some(other) => {
            problems.add("file", "format", format!(
                "this is not an AlphaScout runs export: format is {}, expected \"{DOCUMENT_FORMAT}\"",
                kind(other)
            ));
            return Vec::new();
        }
        None => {
            problems.add("file", "format", format!("missing; expected \"{DOCUMENT_FORMAT}\""));
            return Vec::new();
        }
    }
    match obj.get("version").map(|v| (v, v.as_u64())) {
        Some((_, Some(DOCUMENT_VERSION))) => {}
        Some((_, Some(v))) => {
            problems.add("file", "version", format!(
                "version {v} is not supported; this page reads version {DOCUMENT_VERSION} (is AlphaScout up to date?)"
            ));
            return Vec::new();
        }
        Some((other, None)) => {
            problems.add(
                "file",
                "version",
                format!("expected the number {DOCUMENT_VERSION}, found {}", kind(other)),
            );
            return Vec::new();
        }
        None => {
            problems.add("file", "version", format!("missing; expected {DOCUMENT_VERSION}"));
            return Vec::new();
        }
    }
    match obj.get("runs") {
        Some(Value::Array(items)) => json_runs(items, ids, problems),
        Some(other) => {
            problems.add("file", "runs", format!("expected a list of runs, found {}", kind(other)));
            Vec::new()
        }
        None => {
            problems.add("file", "runs", "missing; expected a list of runs");
            Vec::new()
        }
    }
}

// ---------------------------------------------------------------- JSONL

/// serde_json's message without its " at line 1 column 5" (we say where ourselves).
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// A run being gathered from lines.
struct Group {
    run_id: String,
    first_line: usize,
    /// The run-level fields as on its first line, to compare later lines with.
    header: Map<String, Value>,
    run: Run,
    steps: Vec<Step>,
    indexes: HashMap<u32, usize>,
    total: Option<u64>,
    /// The telemetry entries its lines carry, in file order.
    log: Vec<LogEntry>,
}

/// Run-level fields every line of a run repeats; they must agree.
const LINE_RUN_FIELDS: [&str; 8] = [
    "taskId",
    "taskPrompt",
    "status",
    "quality",
    "totalSteps",
    "annotator",
    "tags",
    "runTelemetry",
];

fn jsonl(text: &str, ids: &mut Ids, problems: &mut Problems) -> Vec<(Run, Vec<Step>)> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    let mut any = false;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let record = format!("line {line_no}");
        if line.trim().is_empty() {
            continue;
        }
        any = true;
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                problems.add(
                    &record,
                    "",
                    format!("not valid JSON at column {}: {}", e.column(), json_message(&e)),
                );
                continue;
            }
        };
        let Some(obj) = value.as_object() else {
            problems.add(&record, "", format!("expected a step object, found {}", kind(&value)));
            continue;
        };
        let before = problems.list.len() + problems.more;
        let mut f = Fields { obj, record: &record, prefix: String::new(), problems };
        let run_id = f.text("runId", true, MAX_ID_CHARS);
        if run_id == Some("") {
            f.problem("runId", "empty; every step needs its run's id");
        }
        let index = f.uint("stepIndex", true, u32::MAX as u64).map(|i| i as u32);
        check_run_fields(&mut f);
        for key in ["url", "title", "outcome"] {
            f.text(key, false, MAX_TEXT_CHARS);
        }
        f.action();
        f.thoughts();
        f.boolean("verified");
        let log: Vec<LogEntry> = f.decoded("telemetry", "a list of log entries");
        let _: Telemetry = f.decoded("runTelemetry", "the run's telemetry counts and spend");
        let (Some(run_id), Some(index)) = (run_id.filter(|id| !id.is_empty()), index) else {
            continue;
        };
        let position = match by_id.get(run_id) {
            Some(&p) => {
                let group = &groups[p];
                for key in LINE_RUN_FIELDS {
                    if obj.get(key).unwrap_or(&Value::Null)
                        != group.header.get(key).unwrap_or(&Value::Null)
                    {
                        problems.add(&record, key, format!(
                            "differs from line {} of the same run; every line of a run must repeat the same {key}",
                            group.first_line
                        ));
                    }
                }
                if let Some(first) = groups[p].indexes.get(&index) {
                    problems.add(
                        &record,
                        "stepIndex",
                        format!("step {index} of run \"{run_id}\" is also on line {first}"),
                    );
                }
                p
            }
            None => {
                let run_record = format!("run {run_id} (line {line_no})");
                ids.claim(run_id, &run_record, "runId", problems);
                by_id.insert(run_id.to_owned(), groups.len());
                let header: Map<String, Value> = LINE_RUN_FIELDS
                    .iter()
                    .filter_map(|k| obj.get(*k).map(|v| ((*k).to_owned(), v.clone())))
                    .collect();
                groups.push(Group {
                    run_id: run_id.to_owned(),
                    first_line: line_no,
                    header,
                    run: Run::default(),
                    steps: Vec::new(),
                    indexes: HashMap::new(),
                    total: obj.get("totalSteps").and_then(Value::as_u64),
                    log: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[position];
        group.indexes.entry(index).or_insert(line_no);
        if problems.list.len() + problems.more > before {
            continue;
        }
        if group.steps.is_empty() {
            group.run = line_run(obj, run_id);
        }
        group.steps.push(line_step(obj, run_id, index));
        group.log.extend(log);
    }
    if !any {
        problems.add("file", "", "no lines with steps");
    }
    for group in &groups {
        let lines = group.indexes.len() as u64;
        if let Some(total) = group.total
            && total != lines
        {
            problems.add(
                &format!("run {} (line {})", group.run_id, group.first_line),
                "totalSteps",
                format!("says {total} steps but the file has {lines} for this run"),
            );
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            lean::sort_by_key(&mut g.steps, |s| s.index);
            // Lines may come in any order; entries keep theirs within a step.
            lean::sort_by_key(&mut g.log, |e| e.step);
            g.run.telemetry.log = g.log;
            (g.run, g.steps)
        })
        .collect()
}

fn string(obj: &Map<String, Value>, key: &str) -> String {
    obj.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

fn strings(obj: &Map<String, Value>, key: &str) -> Vec<String> {
    obj.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A run from a checked line: what the line carries, nothing more.
fn line_run(obj: &Map<String, Value>, run_id: &str) -> Run {
    Run {
        id: run_id.to_owned(),
        task_id: string(obj, "taskId"),
        task_prompt: string(obj, "taskPrompt"),
        status: obj
            .get("status")
            .and_then(Value::as_str)
            .and_then(ReviewStatus::parse)
            .unwrap_or_default(),
        quality: obj.get("quality").and_then(Value::as_u64).map(|q| q as u8),
        annotator: obj.get("annotator").and_then(Value::as_str).map(str::to_owned),
        tags: strings(obj, "tags"),
        total_steps: obj.get("totalSteps").and_then(Value::as_u64).unwrap_or(0) as u32,
        telemetry: obj
            .get("runTelemetry")
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .unwrap_or_default(),
        ..Run::default()
    }
}

fn line_step(obj: &Map<String, Value>, run_id: &str, index: u32) -> Step {
    let action = obj.get("action").and_then(Value::as_object);
    let thoughts = obj.get("thoughts").and_then(Value::as_object);
    let thought = |k: &str| thoughts.map(|t| string(t, k)).unwrap_or_default();
    Step {
        run_id: run_id.to_owned(),
        index,
        url: string(obj, "url"),
        title: string(obj, "title"),
        action: StepAction {
            kind: ActionKind::parse(&action.map(|a| string(a, "type")).unwrap_or_default()),
            target: action.map(|a| string(a, "target")).unwrap_or_default(),
            value: action.and_then(|a| a.get("value")).and_then(Value::as_str).map(str::to_owned),
        },
        thoughts: Thoughts {
            thought1: thought("thought1"),
            thought2: thought("thought2"),
            thought3: thought("thought3"),
        },
        extended_thoughts: strings(obj, "extendedThoughts"),
        verified: obj.get("verified").and_then(Value::as_bool).unwrap_or(false),
        outcome: string(obj, "outcome"),
        ..Step::default()
    }
}

// ---------------------------------------------------------------- the file

const EXPECTED: &str = "expected an AlphaScout export: the JSON document ({\"format\": \"alphascout.runs\", …}), a list of runs, or JSONL with a step a line";

fn read_with(
    file_name: &str,
    text: &str,
    existing: Option<&HashSet<String>>,
) -> Result<Batch, Vec<Rejection>> {
    if let Some(rejection) = too_big(text.len() as u64) {
        return Err(rejection);
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.starts_with("PK\u{3}\u{4}") || text.starts_with("PK\u{5}\u{6}") {
        return Err(one("file", "this is a ZIP archive; unzip it and import its runs.json"));
    }
    if text.contains('\0') {
        return Err(one("file", format!("this is a binary file, not text; {EXPECTED}")));
    }
    if text.trim().is_empty() {
        return Err(one("file", format!("the file is empty; {EXPECTED}")));
    }
    let lower = file_name.to_ascii_lowercase();
    let lines_by_name = lower.ends_with(".jsonl") || lower.ends_with(".ndjson");
    let mut ids = Ids { seen: HashMap::new(), existing };
    let mut problems = Problems::default();
    let runs = if lines_by_name {
        jsonl(text, &mut ids, &mut problems)
    } else {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) if obj.contains_key("runId") => {
                jsonl(text, &mut ids, &mut problems)
            }
            Ok(Value::Object(obj)) if obj.contains_key("format") || obj.contains_key("runs") => {
                document(&obj, &mut ids, &mut problems)
            }
            // A single run object, as a run's own export might be.
            Ok(value @ Value::Object(_))
                if value.get("id").is_some() && value.get("steps").is_some() =>
            {
                json_runs(std::slice::from_ref(&value), &mut ids, &mut problems)
            }
            Ok(Value::Array(items)) => json_runs(&items, &mut ids, &mut problems),
            Ok(other) => return Err(one("file", format!("{EXPECTED}; found {}", kind(&other)))),
            Err(e) => {
                let mut lines = text.lines().filter(|l| !l.trim().is_empty());
                let first_is_object = lines
                    .next()
                    .and_then(|l| serde_json::from_str::<Value>(l).ok())
                    .is_some_and(|v| v.is_object());
                if first_is_object && lines.next().is_some() {
                    jsonl(text, &mut ids, &mut problems)
                } else {
                    return Err(one(
                        "file",
                        format!(
                            "not valid JSON at line {}, column {}: {}",
                            e.line(),
                            e.column(),
                            json_message(&e)
                        ),
                    ));
                }
            }
        }
    };
    if problems.is_empty() && runs.is_empty() {
        problems.add("file", "", "no runs in the file");
    }
    if problems.is_empty() { Ok(Batch { runs }) } else { Err(problems.done()) }
}

#[cfg(test)]
mod tests;
