//! Validation of request bodies against the contract's schemas, by hand: every problem is
//! collected with its dot path (`subtasks.3.title`), so a `422` lists them all at once.
//! Lengths count Unicode scalar values (`chars()`). Unknown fields are errors.

use serde_json::{Map, Value};

use crate::problem::FieldError;

/// `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`
pub fn is_id(text: &str) -> bool {
    handle(text, 128, |c| c.is_ascii_alphanumeric())
}

/// `^[a-z0-9][a-z0-9._-]{0,63}$`
pub fn is_user_id(text: &str) -> bool {
    handle(text, 64, |c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Tags have the user-id shape.
pub fn is_tag(text: &str) -> bool {
    is_user_id(text)
}

/// `^[0-9a-f]{64}$`
pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn handle(text: &str, max: usize, first: impl Fn(char) -> bool) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(&first)
        && text.len() <= max
        && chars.all(|c| first(c) || matches!(c, '.' | '_' | '-'))
}

pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// Collects problems.
#[derive(Debug, Default)]
pub struct Check {
    pub errors: Vec<FieldError>,
}

impl Check {
    pub fn err(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(path, message));
    }

    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// Rejects U+0000 anywhere (PostgreSQL cannot store it), keys included.
    pub fn no_nul(&mut self, value: &Value, path: &str) {
        match value {
            Value::String(s) if s.contains('\0') => self.err(path, "must not contain U+0000"),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.no_nul(item, &join(path, &i.to_string()));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    if key.contains('\0') {
                        self.err(path, "keys must not contain U+0000");
                    }
                    self.no_nul(item, &join(path, key));
                }
            }
            _ => {}
        }
    }

    /// An object with only `known` fields and all of `required`.
    pub fn object<'a>(
        &mut self,
        value: &'a Value,
        path: &str,
        known: &[&str],
        required: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.err(path, "must be an object");
            return None;
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                self.err(&join(path, key), "unknown field");
            }
        }
        for key in required {
            if !map.contains_key(*key) {
                self.err(&join(path, key), "is required");
            }
        }
        Some(map)
    }

    /// A string of `min..=max` characters, when present.
    pub fn string<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        min: usize,
        max: usize,
    ) -> Option<&'a str> {
        self.string_value(map.get(key)?, &join(path, key), min, max)
    }

    pub fn string_value<'a>(
        &mut self,
        value: &'a Value,
        path: &str,
        min: usize,
        max: usize,
    ) -> Option<&'a str> {
        let Some(text) = value.as_str() else {
            self.err(path, "must be a string");
            return None;
        };
        let len = text.chars().count();
        if len < min {
            self.err(
                path,
                if min == 1 {
                    "must not be empty".into()
                } else {
                    format!("must have at least {min} characters")
                },
            );
            return None;
        }
        if len > max {
            self.err(path, format!("must have at most {max} characters (has {len})"));
            return None;
        }
        Some(text)
    }

    /// A string or null, when present.
    pub fn opt_string<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        max: usize,
    ) -> Option<&'a str> {
        match map.get(key)? {
            Value::Null => None,
            value => self.string_value(value, &join(path, key), 0, max),
        }
    }

    pub fn enumeration<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        allowed: &[&str],
    ) -> Option<&'a str> {
        let value = map.get(key)?;
        let path = join(path, key);
        match value.as_str() {
            Some(text) if allowed.contains(&text) => Some(text),
            _ => {
                self.err(&path, format!("must be one of {}", allowed.join(", ")));
                None
            }
        }
    }

    /// A string matching `test`, described by `what` in the message.
    pub fn shaped<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        test: fn(&str) -> bool,
        what: &str,
    ) -> Option<&'a str> {
        let value = map.get(key)?;
        self.shaped_value(value, &join(path, key), test, what)
    }

    pub fn shaped_value<'a>(
        &mut self,
        value: &'a Value,
        path: &str,
        test: fn(&str) -> bool,
        what: &str,
    ) -> Option<&'a str> {
        match value.as_str() {
            Some(text) if test(text) => Some(text),
            Some(_) => {
                self.err(path, format!("must be {what}"));
                None
            }
            None => {
                self.err(path, "must be a string");
                None
            }
        }
    }

    pub fn timestamp<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
    ) -> Option<&'a str> {
        self.shaped(map, path, key, |t| crate::time::parse_ms(t).is_some(), "an RFC 3339 date-time")
    }

    /// An integer in `min..=max`, when present.
    pub fn integer(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        min: i64,
        max: i64,
    ) -> Option<i64> {
        self.integer_value(map.get(key)?, &join(path, key), min, max)
    }

    pub fn integer_value(&mut self, value: &Value, path: &str, min: i64, max: i64) -> Option<i64> {
        match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            Some(_) => {
                self.err(path, format!("must be between {min} and {max}"));
                None
            }
            None if value.is_u64() => {
                self.err(path, format!("must be at most {max}"));
                None
            }
            None => {
                self.err(path, "must be an integer");
                None
            }
        }
    }

    /// A non-negative integer of any size (token counts).
    pub fn count(&mut self, map: &Map<String, Value>, path: &str, key: &str) {
        if let Some(value) = map.get(key)
            && !value.is_u64()
        {
            self.err(&join(path, key), "must be an integer of at least 0");
        }
    }

    /// A number, at least `min` when given.
    pub fn number(&mut self, map: &Map<String, Value>, path: &str, key: &str, min: Option<f64>) {
        let Some(value) = map.get(key) else { return };
        let path = join(path, key);
        match value.as_f64() {
            Some(n) if min.is_some_and(|min| n < min) => {
                self.err(&path, format!("must be at least {}", min.unwrap_or_default()));
            }
            Some(_) => {}
            None => self.err(&path, "must be a number"),
        }
    }

    pub fn boolean(&mut self, map: &Map<String, Value>, path: &str, key: &str) -> Option<bool> {
        let value = map.get(key)?;
        let b = value.as_bool();
        if b.is_none() {
            self.err(&join(path, key), "must be true or false");
        }
        b
    }

    /// An array of at most `max` items, when present.
    pub fn array<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        max: usize,
    ) -> Option<&'a Vec<Value>> {
        let value = map.get(key)?;
        let path = join(path, key);
        let Some(items) = value.as_array() else {
            self.err(&path, "must be an array");
            return None;
        };
        if items.len() > max {
            self.err(&path, format!("must have at most {max} items (has {})", items.len()));
            return None;
        }
        Some(items)
    }

    /// An array of strings of at most `max_len` characters each.
    pub fn strings(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        max_items: usize,
        max_len: usize,
    ) {
        if let Some(items) = self.array(map, path, key, max_items) {
            let path = join(path, key);
            for (i, item) in items.iter().enumerate() {
                self.string_value(item, &join(&path, &i.to_string()), 0, max_len);
            }
        }
    }

    fn usage(&mut self, map: &Map<String, Value>, path: &str, key: &str) {
        let Some(value) = map.get(key) else { return };
        let path = join(path, key);
        let fields = ["input_tokens", "output_tokens"];
        if let Some(usage) = self.object(value, &path, &fields, &fields) {
            for field in fields {
                self.count(usage, &path, field);
            }
        }
    }
}

// ------------------------------------------------------------------------------- runs

/// `AgentRun` fields as the server stores them (the record's content).
pub const RUN_CONTENT: [&str; 14] = [
    "id",
    "taskId",
    "taskPrompt",
    "followUps",
    "agentStatus",
    "finalAnswer",
    "createdAt",
    "createdBy",
    "subtasks",
    "totalSteps",
    "startUrl",
    "models",
    "usage",
    "cost",
];

/// Read-only fields a run write may carry back; ignored.
const RUN_IGNORED: [&str; 10] = [
    "status",
    "updatedAt",
    "reviewedBy",
    "version",
    "etag",
    "headerVersion",
    "updatedBy",
    "storedSteps",
    "openThreads",
    "pendingSuggestions",
];

/// A validated run write.
#[derive(Debug)]
pub struct RunWrite {
    /// The content fields only (`RUN_CONTENT`, `finalAnswer` defaulting to null).
    pub content: Map<String, Value>,
    pub tags: Option<Vec<String>>,
    pub annotator: Option<String>,
}

/// Checks a `RunWrite` body. `status`, `updatedAt` and `reviewedBy` are read-only and so not
/// required in writes, although `AgentRun` lists them as required.
pub fn run_write(body: &Value, c: &mut Check) -> Option<RunWrite> {
    c.no_nul(body, "");
    let known: Vec<&str> = RUN_CONTENT
        .iter()
        .chain(RUN_IGNORED.iter())
        .chain(&["tags", "annotator"])
        .copied()
        .collect();
    let required = [
        "id",
        "taskId",
        "taskPrompt",
        "followUps",
        "agentStatus",
        "createdAt",
        "createdBy",
        "subtasks",
        "totalSteps",
        "startUrl",
        "models",
        "usage",
        "cost",
    ];
    let map = c.object(body, "", &known, &required)?;
    c.shaped(map, "", "id", is_id, "an id (letters, digits, '.', '_', '-'; 128 at most)");
    c.shaped(map, "", "taskId", is_id, "an id (letters, digits, '.', '_', '-'; 128 at most)");
    c.string(map, "", "taskPrompt", 1, 50_000);
    c.strings(map, "", "followUps", 200, 20_000);
    c.enumeration(map, "", "agentStatus", &["running", "paused", "done", "failed", "cancelled"]);
    c.opt_string(map, "", "finalAnswer", 50_000);
    c.timestamp(map, "", "createdAt");
    c.string(map, "", "createdBy", 0, 200);
    if let Some(subtasks) = c.array(map, "", "subtasks", 500) {
        for (i, subtask) in subtasks.iter().enumerate() {
            subtask_write(subtask, &format!("subtasks.{i}"), c);
        }
    }
    c.integer(map, "", "totalSteps", 0, 2000);
    c.string(map, "", "startUrl", 0, 8192);
    if let Some(models) = map.get("models") {
        match models.as_object() {
            Some(models) if models.len() > 16 => c.err("models", "must have at most 16 entries"),
            Some(models) => {
                for (role, model) in models {
                    if !model.is_null() {
                        c.string_value(model, &join("models", role), 0, 200);
                    }
                }
            }
            None => c.err("models", "must be an object"),
        }
    }
    c.usage(map, "", "usage");
    c.number(map, "", "cost", Some(0.0));
    let mut tags = None;
    if let Some(items) = c.array(map, "", "tags", 32) {
        let mut seen: Vec<String> = Vec::new();
        for (i, tag) in items.iter().enumerate() {
            let path = format!("tags.{i}");
            if let Some(tag) = c.shaped_value(tag, &path, is_tag, "a lowercase tag") {
                if seen.iter().any(|t| t == tag) {
                    c.err(&path, "is repeated");
                }
                seen.push(tag.to_owned());
            }
        }
        tags = Some(seen);
    }
    let annotator = c.shaped(map, "", "annotator", is_user_id, "a user id").map(str::to_owned);
    if !c.ok() {
        return None;
    }
    let mut content = Map::new();
    for key in RUN_CONTENT {
        content.insert(key.into(), map.get(key).cloned().unwrap_or(Value::Null));
    }
    Some(RunWrite { content, tags, annotator })
}

fn subtask_write(value: &Value, path: &str, c: &mut Check) {
    let fields = ["id", "title", "description", "stepRange", "status"];
    let Some(map) = c.object(value, path, &fields, &fields) else { return };
    c.string(map, path, "id", 0, 200);
    c.string(map, path, "title", 0, 500);
    c.string(map, path, "description", 0, 5000);
    c.enumeration(map, path, "status", &["pending", "annotated", "reviewed"]);
    if let Some(range) = map.get("stepRange") {
        let range_path = join(path, "stepRange");
        match range.as_array() {
            Some(pair) if pair.len() == 2 => {
                let first = c.integer_value(&pair[0], &join(&range_path, "0"), 0, 1999);
                let last = c.integer_value(&pair[1], &join(&range_path, "1"), 0, 1999);
                if let (Some(first), Some(last)) = (first, last)
                    && first > last
                {
                    c.err(&range_path, "the first step must not come after the last");
                }
            }
            _ => c.err(&range_path, "must be [first, last]"),
        }
    }
}

// ------------------------------------------------------------------------------ steps

/// Step fields an update may change.
pub const STEP_EDITABLE: [&str; 5] =
    ["action", "thoughts", "extendedThoughts", "verified", "issues"];

/// Step fields fixed at capture.
pub const STEP_FIXED: [&str; 9] = [
    "runId",
    "index",
    "url",
    "title",
    "screenshot",
    "actions",
    "outcome",
    "traceIds",
    "durationMs",
];

/// Checks a `StepWrite` body and returns the record without the server fields.
pub fn step_write(body: &Value, c: &mut Check) -> Option<Map<String, Value>> {
    c.no_nul(body, "");
    let record = [
        "runId",
        "index",
        "url",
        "title",
        "screenshot",
        "action",
        "actions",
        "thoughts",
        "extendedThoughts",
        "verified",
        "issues",
        "lastEditedBy",
        "lastEditedAt",
        "outcome",
        "traceIds",
        "durationMs",
    ];
    let known: Vec<&str> = record
        .iter()
        .chain(&["version", "etag", "openThreads", "pendingSuggestions"])
        .copied()
        .collect();
    let required: Vec<&str> = record.iter().copied().filter(|k| *k != "screenshot").collect();
    let map = c.object(body, "", &known, &required)?;
    c.shaped(map, "", "runId", is_id, "an id");
    c.integer(map, "", "index", 0, 1999);
    c.string(map, "", "url", 0, 8192);
    c.string(map, "", "title", 0, 1000);
    if let Some(shot) = map.get("screenshot").filter(|v| !v.is_null()) {
        let fields = ["key", "timestamp", "mime", "bytes"];
        if let Some(shot) = c.object(shot, "screenshot", &fields, &fields) {
            c.shaped(shot, "screenshot", "key", is_sha256, "a lowercase hex SHA-256");
            c.timestamp(shot, "screenshot", "timestamp");
            c.enumeration(shot, "screenshot", "mime", &["image/jpeg"]);
            c.integer(shot, "screenshot", "bytes", 1, 5 * 1024 * 1024);
        }
    }
    if let Some(action) = map.get("action") {
        step_action(action, "action", c);
    }
    if let Some(actions) = c.array(map, "", "actions", 20) {
        for (i, executed) in actions.iter().enumerate() {
            let path = format!("actions.{i}");
            let fields = ["action", "target", "ok", "message"];
            if let Some(executed) = c.object(executed, &path, &fields, &fields) {
                if let Some(action) = executed.get("action") {
                    engine_action(action, &join(&path, "action"), c);
                }
                c.string(executed, &path, "target", 0, 2000);
                c.boolean(executed, &path, "ok");
                c.string(executed, &path, "message", 0, 5000);
            }
        }
    }
    if let Some(thoughts) = map.get("thoughts") {
        let fields = ["thought1", "thought2", "thought3"];
        if let Some(thoughts) = c.object(thoughts, "thoughts", &fields, &fields) {
            for field in fields {
                c.string(thoughts, "thoughts", field, 0, 20_000);
            }
        }
    }
    c.strings(map, "", "extendedThoughts", 50, 20_000);
    c.boolean(map, "", "verified");
    if let Some(issues) = c.array(map, "", "issues", 100) {
        for (i, issue) in issues.iter().enumerate() {
            let path = format!("issues.{i}");
            let fields = ["type", "severity", "description", "suggestion"];
            if let Some(issue) = c.object(issue, &path, &fields, &fields[..3]) {
                let kinds =
                    ["grammatical", "formatting", "logic", "missing-context", "contradiction"];
                c.enumeration(issue, &path, "type", &kinds);
                c.enumeration(issue, &path, "severity", &["minor", "major"]);
                c.string(issue, &path, "description", 1, 5000);
                c.opt_string(issue, &path, "suggestion", 5000);
            }
        }
    }
    c.string(map, "", "lastEditedBy", 0, 200);
    c.timestamp(map, "", "lastEditedAt");
    c.enumeration(map, "", "outcome", &["ok", "failed", "cancelled"]);
    if let Some(ids) = c.array(map, "", "traceIds", 50) {
        for (i, id) in ids.iter().enumerate() {
            c.shaped_value(id, &format!("traceIds.{i}"), is_id, "an id");
        }
    }
    c.number(map, "", "durationMs", Some(0.0));
    if !c.ok() {
        return None;
    }
    let mut out = Map::new();
    for key in record {
        out.insert(key.into(), map.get(key).cloned().unwrap_or(Value::Null));
    }
    Some(out)
}

/// `run::StepAction`.
pub fn step_action(value: &Value, path: &str, c: &mut Check) {
    let fields = ["type", "target", "value"];
    if let Some(action) = c.object(value, path, &fields, &fields[..2]) {
        c.string(action, path, "type", 1, 64);
        c.string(action, path, "target", 0, 2000);
        c.opt_string(action, path, "value", 20_000);
    }
}

/// An engine `Action`, tagged by `action`: the variants, their fields and limits are the
/// shared contract's `action::SHAPES`, which a test there holds to the Rust type.
pub fn engine_action(value: &Value, path: &str, c: &mut Check) {
    use run_contract::action::{FieldKind, SHAPES};
    let Some(map) = value.as_object() else {
        c.err(path, "must be an object");
        return;
    };
    let Some(tag) = map.get("action").and_then(Value::as_str) else {
        c.err(&join(path, "action"), "is required: the action's name");
        return;
    };
    let Some(shape) = run_contract::action::shape(tag) else {
        let names: Vec<&str> = SHAPES.iter().map(|s| s.tag).collect();
        c.err(&join(path, "action"), format!("must be one of {}", names.join(", ")));
        return;
    };
    let mut known = vec!["action"];
    known.extend(shape.fields.iter().map(|f| f.name));
    let required: Vec<&str> = shape.fields.iter().filter(|f| f.required).map(|f| f.name).collect();
    let Some(map) = c.object(value, path, &known, &required) else { return };
    for field in shape.fields {
        let name = field.name;
        match field.kind {
            FieldKind::Text { max_chars } => {
                c.string(map, path, name, 0, max_chars);
            }
            FieldKind::U32 => {
                c.integer(map, path, name, 0, i64::from(u32::MAX));
            }
            FieldKind::I32 => {
                c.integer(map, path, name, i64::from(i32::MIN), i64::from(i32::MAX));
            }
            FieldKind::Number => c.number(map, path, name, None),
            FieldKind::NonNegative => c.number(map, path, name, Some(0.0)),
            FieldKind::Bool => {
                c.boolean(map, path, name);
            }
        }
    }
}

// ----------------------------------------------------------------------------- traces

/// Checks an `LlmTrace` body.
pub fn trace(body: &Value, c: &mut Check) {
    c.no_nul(body, "");
    let fields = [
        "id",
        "runId",
        "step",
        "role",
        "promptId",
        "variant",
        "promptHash",
        "revisionHash",
        "params",
        "redacted",
        "provider",
        "model",
        "usage",
        "cost",
        "startedAt",
        "durationMs",
        "attempts",
        "error",
        "chars",
    ];
    let required: Vec<&str> = fields.iter().copied().filter(|f| *f != "error").collect();
    let Some(map) = c.object(body, "", &fields, &required) else { return };
    c.shaped(map, "", "id", is_id, "an id");
    c.shaped(map, "", "runId", is_id, "an id");
    c.integer(map, "", "step", 0, 1999);
    c.enumeration(map, "", "role", &["system", "user", "planner", "navigator", "thinking"]);
    c.string(map, "", "promptId", 0, 200);
    c.string(map, "", "variant", 0, 64);
    c.string(map, "", "promptHash", 0, 128);
    c.string(map, "", "revisionHash", 0, 128);
    match map.get("params") {
        Some(params) if !params.is_object() => c.err("params", "must be an object"),
        Some(params) if params.to_string().len() > 2 * 1024 * 1024 => {
            c.err("params", "must be at most 2 MiB serialized");
        }
        _ => {}
    }
    c.strings(map, "", "redacted", 100, 200);
    c.string(map, "", "provider", 0, 100);
    c.string(map, "", "model", 0, 200);
    c.usage(map, "", "usage");
    c.number(map, "", "cost", Some(0.0));
    c.timestamp(map, "", "startedAt");
    c.number(map, "", "durationMs", Some(0.0));
    if let Some(attempts) = c.array(map, "", "attempts", 20) {
        for (i, attempt) in attempts.iter().enumerate() {
            let path = format!("attempts.{i}");
            let fields = ["model", "raw", "problems"];
            if let Some(attempt) = c.object(attempt, &path, &fields, &fields) {
                c.string(attempt, &path, "model", 0, 200);
                c.string(attempt, &path, "raw", 0, 500_000);
                c.strings(attempt, &path, "problems", 50, 2000);
            }
        }
    }
    c.opt_string(map, "", "error", 20_000);
    if let Some(chars) = map.get("chars") {
        let fields = ["system", "state", "history", "total"];
        if let Some(chars) = c.object(chars, "chars", &fields, &fields) {
            for field in fields {
                c.count(chars, "chars", field);
            }
        }
    }
}

// --------------------------------------------------------------------------- comments

/// Where a `FieldPath` may anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Step,
    Run,
}

/// The anchor level of a `FieldPath`, or `None` if it is not one.
pub fn field_path_level(path: &str) -> Option<Level> {
    let parts: Vec<&str> = path.split('.').collect();
    let digits = |s: &str, max: usize| {
        !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit())
    };
    match parts.as_slice() {
        ["thoughts", "thought1" | "thought2" | "thought3"]
        | ["action"]
        | ["action", "type" | "target" | "value"]
        | ["extendedThoughts"]
        | ["issues"]
        | ["screenshot"]
        | ["verified"] => Some(Level::Step),
        ["extendedThoughts" | "issues", n] if digits(n, 2) => Some(Level::Step),
        ["taskPrompt"] | ["finalAnswer"] | ["followUps"] | ["subtasks"] => Some(Level::Run),
        ["followUps" | "subtasks", n] if digits(n, 3) => Some(Level::Run),
        ["subtasks", n, "title" | "description"] if digits(n, 3) => Some(Level::Run),
        _ => None,
    }
}

/// Checks an `Anchor`.
pub fn anchor(value: &Value, path: &str, c: &mut Check) {
    let fields = ["stepIndex", "field", "range", "quote"];
    let Some(map) = c.object(value, path, &fields, &["stepIndex"]) else { return };
    let step = match map.get("stepIndex") {
        Some(Value::Null) | None => None,
        Some(v) => c.integer_value(v, &join(path, "stepIndex"), 0, 1999),
    };
    if let Some(field) = map.get("field").filter(|v| !v.is_null()) {
        let field_path = join(path, "field");
        match field.as_str().map(|f| (f, field_path_level(f))) {
            Some((_, Some(Level::Step)))
                if step.is_none() && map.get("stepIndex").is_some_and(Value::is_null) =>
            {
                c.err(&field_path, "names a step field, so stepIndex must be set");
            }
            Some((_, Some(Level::Run))) if step.is_some() => {
                c.err(&field_path, "names a run field, so stepIndex must be null");
            }
            Some((_, Some(_))) => {}
            _ => c.err(&field_path, "must be a field path such as thoughts.thought2 or taskPrompt"),
        }
    }
    if let Some(range) = map.get("range").filter(|v| !v.is_null()) {
        let range_path = join(path, "range");
        let fields = ["start", "end"];
        if let Some(range) = c.object(range, &range_path, &fields, &fields) {
            let start = c.integer(range, &range_path, "start", 0, i64::MAX);
            let end = c.integer(range, &range_path, "end", 0, i64::MAX);
            if let (Some(start), Some(end)) = (start, end)
                && start > end
            {
                c.err(&range_path, "start must not come after end");
            }
        }
    }
    c.opt_string(map, path, "quote", 1000);
}

// ------------------------------------------------------------------------ suggestions

/// Whether `field` is a `SuggestionField`: an editable step field holding text (or the
/// step's action), `^(thoughts\.thought[123]|action(\.(type|target|value))?|extendedThoughts(\.[0-9]{1,2})?)$`.
pub fn is_suggestion_field(field: &str) -> bool {
    let parts: Vec<&str> = field.split('.').collect();
    match parts.as_slice() {
        ["thoughts", "thought1" | "thought2" | "thought3"]
        | ["action"]
        | ["action", "type" | "target" | "value"]
        | ["extendedThoughts"] => true,
        ["extendedThoughts", n] => {
            (1..=2).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// Checks a proposed value against the schema and limits of the step field it targets.
pub fn suggestion_value(field: &str, value: &Value, path: &str, c: &mut Check) {
    match field.split('.').collect::<Vec<_>>().as_slice() {
        ["thoughts", _] | ["extendedThoughts", _] => {
            c.string_value(value, path, 0, 20_000);
        }
        ["action"] => step_action(value, path, c),
        ["action", "type"] => {
            c.string_value(value, path, 1, 64);
        }
        ["action", "target"] => {
            c.string_value(value, path, 0, 2000);
        }
        ["action", "value"] if !value.is_null() => {
            c.string_value(value, path, 0, 20_000);
        }
        ["extendedThoughts"] => match value.as_array() {
            Some(items) if items.len() > 50 => {
                c.err(path, format!("must have at most 50 items (has {})", items.len()));
            }
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    c.string_value(item, &join(path, &i.to_string()), 0, 20_000);
                }
            }
            None => c.err(path, "must be an array"),
        },
        _ => {}
    }
}

/// A validated `SuggestionCreate`.
#[derive(Debug)]
pub struct SuggestionCreate {
    pub step_index: i64,
    pub field: String,
    pub base_version: i64,
    pub proposed: Value,
    pub note: Option<String>,
}

/// Checks a `SuggestionCreate` body; every problem has its path.
pub fn suggestion_create(body: &Value, c: &mut Check) -> Option<SuggestionCreate> {
    c.no_nul(body, "");
    let fields = ["stepIndex", "field", "baseVersion", "proposed", "note"];
    let map = c.object(body, "", &fields, &fields[..4])?;
    let step_index = c.integer(map, "", "stepIndex", 0, 1999);
    let field = c.shaped(
        map,
        "",
        "field",
        is_suggestion_field,
        "a suggestable step field: thoughts.thought1..3, action, action.type, action.target, \
         action.value, extendedThoughts or extendedThoughts.<n>",
    );
    let base_version = c.integer(map, "", "baseVersion", 1, i64::MAX);
    if let (Some(field), Some(proposed)) = (field, map.get("proposed")) {
        suggestion_value(field, proposed, "proposed", c);
    }
    let note = c.opt_string(map, "", "note", 5000).map(str::to_owned);
    if !c.ok() {
        return None;
    }
    Some(SuggestionCreate {
        step_index: step_index?,
        field: field?.to_owned(),
        base_version: base_version?,
        proposed: map.get("proposed")?.clone(),
        note,
    })
}

/// Checks an optional `SuggestionDecision` body and returns its note.
pub fn suggestion_decision(body: Option<&Value>, c: &mut Check) -> Option<String> {
    let body = body?;
    c.no_nul(body, "");
    let map = c.object(body, "", &["note"], &[])?;
    c.opt_string(map, "", "note", 5000).map(str::to_owned)
}

/// The value at a dot path of a record (`thoughts.thought2`, `extendedThoughts.1`).
pub fn value_at<'a>(record: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = record.get(parts.next()?)?;
    for part in parts {
        value = match value {
            Value::Object(map) => map.get(part)?,
            Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Sets the value at a dot path whose parent exists (an array index must be in range).
pub fn set_value_at(record: &mut Map<String, Value>, path: &str, new: Value) -> bool {
    let (parent, last) = match path.rsplit_once('.') {
        Some((parent, last)) => (Some(parent), last),
        None => (None, path),
    };
    let target = match parent {
        None => {
            record.insert(last.to_owned(), new);
            return true;
        }
        Some(parent) => {
            let mut parts = parent.split('.');
            let Some(mut value) = parts.next().and_then(|first| record.get_mut(first)) else {
                return false;
            };
            for part in parts {
                value = match value {
                    Value::Object(map) => match map.get_mut(part) {
                        Some(v) => v,
                        None => return false,
                    },
                    Value::Array(items) => match part.parse::<usize>().ok() {
                        Some(i) if i < items.len() => &mut items[i],
                        _ => return false,
                    },
                    _ => return false,
                };
            }
            value
        }
    };
    match target {
        Value::Object(map) => {
            map.insert(last.to_owned(), new);
            true
        }
        Value::Array(items) => match last.parse::<usize>().ok() {
            Some(i) if i < items.len() => {
                items[i] = new;
                true
            }
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert!(is_id("a1-b.c_d") && !is_id("-a") && !is_id("") && !is_id(&"a".repeat(129)));
        assert!(is_user_id("alice") && !is_user_id("Alice"));
        assert!(is_sha256(&"a".repeat(64)) && !is_sha256(&"A".repeat(64)));
        assert_eq!(field_path_level("thoughts.thought2"), Some(Level::Step));
        assert_eq!(field_path_level("subtasks.1.title"), Some(Level::Run));
        assert_eq!(field_path_level("subtasks.1.status"), None);
        assert_eq!(field_path_level("issues.123"), None);
        assert!(is_suggestion_field("thoughts.thought3") && is_suggestion_field("action.value"));
        assert!(is_suggestion_field("extendedThoughts.12") && !is_suggestion_field("verified"));
        assert!(!is_suggestion_field("extendedThoughts.123") && !is_suggestion_field("issues.0"));
    }

    #[test]
    fn values_at_paths() {
        let mut record = json!({"thoughts": {"thought1": "a"}, "extendedThoughts": ["x"],
            "action": {"type": "click", "target": "b"}});
        let record = record.as_object_mut().unwrap();
        assert_eq!(value_at(record, "thoughts.thought1"), Some(&json!("a")));
        assert_eq!(value_at(record, "extendedThoughts.0"), Some(&json!("x")));
        assert_eq!(value_at(record, "action.value"), None);
        assert!(set_value_at(record, "action.value", json!("v")));
        assert!(set_value_at(record, "extendedThoughts.0", json!("y")));
        assert!(!set_value_at(record, "extendedThoughts.1", json!("z")));
        assert_eq!(value_at(record, "action.value"), Some(&json!("v")));
        assert_eq!(value_at(record, "extendedThoughts"), Some(&json!(["y"])));
    }

    #[test]
    fn every_problem_has_a_path() {
        let mut c = Check::default();
        let body =
            json!({"runId": "r", "index": 5000, "url": 3, "thoughts": {"thought1": "x"}, "zzz": 1});
        assert!(step_write(&body, &mut c).is_none());
        let paths: Vec<&str> = c.errors.iter().map(|e| e.path.as_str()).collect();
        for expected in ["zzz", "index", "url", "thoughts.thought2", "title", "actions"] {
            assert!(paths.contains(&expected), "{expected} in {paths:?}");
        }
    }
}
