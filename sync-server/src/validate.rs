//! What the request schemas cannot say, around `schema`'s check of each body against
//! `openapi.yaml`: no U+0000 anywhere (PostgreSQL cannot store it), rules across fields (a
//! subtask's step range in order, an anchor's field at its level, a suggestion's value held
//! to the schema of the field it targets), the 2 MiB bound on trace params, and the dot
//! path reads and writes that suggestions use. Every problem keeps its JSON Pointer into the
//! body, so a `422` lists them all at once.

use serde_json::{Map, Value};

use crate::problem::{FieldError, Problem, Result};
use crate::schema::spec;

/// The contract's `Id` shape (path and query parameters).
pub fn is_id(text: &str) -> bool {
    spec().matches("Id", text)
}

pub fn is_user_id(text: &str) -> bool {
    spec().matches("UserId", text)
}

pub fn is_tag(text: &str) -> bool {
    spec().matches("Tag", text)
}

pub fn is_sha256(text: &str) -> bool {
    spec().matches("Sha256", text)
}

pub use run_contract::problem::{dot_pointer, pointer, under};

/// Collects problems, one entry for each place.
#[derive(Debug, Default)]
pub struct Check {
    pub errors: Vec<FieldError>,
}

impl Check {
    /// Notes a problem at the JSON Pointer `path`; a second one there joins the first's
    /// message.
    pub fn err(&mut self, path: &str, message: impl Into<String>) {
        let message = message.into();
        match self.errors.iter_mut().find(|e| e.path == path) {
            Some(known) if known.message.split("; ").any(|m| m == message) => {}
            Some(known) => known.message = format!("{}; {message}", known.message),
            None => self.errors.push(FieldError::new(path, message)),
        }
    }

    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// `422` listing the problems, if there are any.
    pub fn finish(self) -> Result<()> {
        self.finish_with(Some(()))
    }

    /// What was read from a body that has no problems; `422` listing them otherwise.
    pub fn finish_with<T>(self, read: Option<T>) -> Result<T> {
        match read {
            Some(read) if self.ok() => Ok(read),
            _ => Err(Problem::validation(self.errors)),
        }
    }

    /// Rejects U+0000 anywhere (PostgreSQL cannot store it), keys included.
    pub fn no_nul(&mut self, value: &Value, path: &str) {
        match value {
            Value::String(s) if s.contains('\0') => self.err(path, "must not contain U+0000"),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.no_nul(item, &format!("{path}/{i}"));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    if key.contains('\0') {
                        self.err(path, "keys must not contain U+0000");
                    }
                    self.no_nul(item, &pointer(path, key));
                }
            }
            _ => {}
        }
    }

    /// Checks a request body against the contract's schema `name`.
    pub fn body(&mut self, name: &str, body: &Value) {
        self.no_nul(body, "");
        spec().check(name, body, "", self);
    }
}

/// Checks a request body that has no checks of its own beyond schema `name`'s.
pub fn check_body(name: &str, body: &Value) -> Result<()> {
    let mut c = Check::default();
    c.body(name, body);
    c.finish()
}

/// The text at `key`, when it is one.
pub fn text(body: &Value, key: &str) -> Option<String> {
    body.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The texts of an array (its other items passed over); `None` when it is not one.
pub fn texts(value: Option<&Value>) -> Option<Vec<String>> {
    let items = value?.as_array()?;
    Some(items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

// ------------------------------------------------------------------------------- runs

/// A validated run write.
#[derive(Debug)]
pub struct RunWrite {
    /// The content fields only (`AgentRun`'s writable ones, `finalAnswer` defaulting to null).
    pub content: Map<String, Value>,
    pub tags: Option<Vec<String>>,
    pub annotator: Option<String>,
}

/// Checks a `RunWrite` body. Its read-only fields may be there and are ignored.
pub fn run_write(body: &Value, c: &mut Check) -> Option<RunWrite> {
    c.body("RunWrite", body);
    let subtasks = body.get("subtasks").and_then(Value::as_array).into_iter().flatten();
    for (i, subtask) in subtasks.enumerate() {
        let range = subtask.get("stepRange").and_then(Value::as_array).map(Vec::as_slice);
        if let Some([first, last]) = range
            && let (Some(first), Some(last)) = (first.as_u64(), last.as_u64())
            && first > last
        {
            let path = format!("/subtasks/{i}/stepRange");
            c.err(&path, "the first step must not come after the last");
        }
    }
    if !c.ok() {
        return None;
    }
    let tags = texts(body.get("tags"));
    Some(RunWrite { content: record(body, "AgentRun"), tags, annotator: text(body, "annotator") })
}

/// The writable fields of schema `name` from `body`, a missing one as null.
fn record(body: &Value, name: &str) -> Map<String, Value> {
    let fields = spec().writable(name);
    fields
        .into_iter()
        .map(|k| (k.to_owned(), body.get(k).cloned().unwrap_or(Value::Null)))
        .collect()
}

// ------------------------------------------------------------------------------ steps

/// Step fields an update may change.
pub const STEP_EDITABLE: [&str; 7] = [
    "action",
    "thoughts",
    "extendedThoughts",
    "verified",
    "issues",
    "navigator",
    "draftedThoughts",
];

/// The fields of a step an update may change, a missing one as null.
pub fn step_editable(step: &Map<String, Value>) -> Map<String, Value> {
    let value = |key: &str| step.get(key).cloned().unwrap_or(Value::Null);
    STEP_EDITABLE.iter().map(|key| (key.to_string(), value(key))).collect()
}

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
    c.body("StepWrite", body);
    c.ok().then(|| record(body, "StepRecord"))
}

// ----------------------------------------------------------------------------- traces

/// Checks an `LlmTrace` body.
pub fn trace(body: &Value, c: &mut Check) {
    c.body("LlmTrace", body);
    // The schema says it in prose: a capture's params stay small enough to store and page.
    if let Some(params) = body.get("params").filter(|p| p.is_object())
        && params.to_string().len() > 2 * 1024 * 1024
    {
        c.err("/params", "must be at most 2 MiB serialized");
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

/// What an `Anchor` says across its fields: a field at the anchor's level, a range in
/// order. Its shape is `CommentCreate`'s schema check.
pub fn anchor(value: &Value, path: &str, c: &mut Check) {
    let Some(map) = value.as_object() else { return };
    let step = map.get("stepIndex");
    if let Some(field) = map.get("field").and_then(Value::as_str) {
        let field_path = pointer(path, "field");
        match field_path_level(field) {
            Some(Level::Step) if step.is_some_and(Value::is_null) => {
                c.err(&field_path, "names a step field, so stepIndex must be set");
            }
            Some(Level::Run) if step.is_some_and(|s| !s.is_null()) => {
                c.err(&field_path, "names a run field, so stepIndex must be null");
            }
            _ => {}
        }
    }
    let range = map.get("range");
    let end = |key| range.and_then(|r| r.get(key)).and_then(Value::as_u64);
    if let (Some(start), Some(end)) = (end("start"), end("end"))
        && start > end
    {
        c.err(&pointer(path, "range"), "start must not come after end");
    }
}

// ------------------------------------------------------------------------ suggestions

/// A validated `SuggestionCreate`.
#[derive(Debug)]
pub struct SuggestionCreate {
    pub step_index: i64,
    pub field: String,
    pub base_version: i64,
    pub proposed: Value,
    pub note: Option<String>,
    /// A passage suggestion's range (characters) and the quote it must hold.
    pub range: Option<(usize, usize, String)>,
}

/// Checks a `SuggestionCreate` body; `proposed` is held to the schema of the step field it
/// targets.
pub fn suggestion_create(body: &Value, c: &mut Check) -> Option<SuggestionCreate> {
    let spec = spec();
    c.body("SuggestionCreate", body);
    let field = body.get("field").and_then(Value::as_str);
    let field = field.filter(|f| spec.matches("SuggestionField", f));
    if let (Some(field), Some(proposed)) = (field, body.get("proposed")) {
        spec.check_field("StepRecord", field, proposed, "/proposed", c);
    }
    let range = body.get("range").filter(|r| r.is_object());
    let quote = body.get("quote").and_then(Value::as_str);
    let passage = match (range, quote) {
        (Some(range), Some(quote)) => {
            let (start, end) = (range["start"].as_u64(), range["end"].as_u64());
            if field.is_some_and(|f| !f.starts_with("thoughts.")) {
                c.err("/range", "passages are suggested on thoughts only");
            }
            match (start, end) {
                (Some(start), Some(end)) if start < end => {
                    Some((start as usize, end as usize, quote.to_owned()))
                }
                _ => {
                    c.err("/range", "start must come before end");
                    None
                }
            }
        }
        (Some(_), None) => {
            c.err("/quote", "is required with range");
            None
        }
        (None, Some(_)) => {
            c.err("/range", "is required with quote");
            None
        }
        (None, None) => None,
    };
    if !c.ok() {
        return None;
    }
    Some(SuggestionCreate {
        step_index: body.get("stepIndex")?.as_i64()?,
        field: field?.to_owned(),
        base_version: body.get("baseVersion")?.as_i64()?,
        proposed: body.get("proposed")?.clone(),
        note: text(body, "note"),
        range: passage,
    })
}

/// Checks an optional `SuggestionDecision` body and returns its note.
pub fn suggestion_decision(body: Option<&Value>, c: &mut Check) -> Option<String> {
    let body = body?;
    c.body("SuggestionDecision", body);
    text(body, "note")
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
        let is_suggestion_field = |f| spec().matches("SuggestionField", f);
        assert!(is_suggestion_field("thoughts.thought3") && is_suggestion_field("action.value"));
        assert!(is_suggestion_field("extendedThoughts.12") && !is_suggestion_field("verified"));
        assert!(!is_suggestion_field("extendedThoughts.123") && !is_suggestion_field("issues.0"));
    }

    #[test]
    fn one_entry_for_each_place() {
        let mut c = Check::default();
        c.err("/a", "is wrong");
        c.err("/b", "is bad");
        c.err("/a", "is long");
        c.err("/a", "is wrong");
        let found: Vec<(&str, &str)> =
            c.errors.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
        assert_eq!(found, [("/a", "is wrong; is long"), ("/b", "is bad")]);
        assert_eq!(pointer("/items/0", "a/b~c"), "/items/0/a~1b~0c");
        assert_eq!(dot_pointer("thoughts.thought2"), "/thoughts/thought2");
        assert!(under("/items/2/run/id", "/items/2/run") && under("/items/2/run", "/items/2/run"));
        assert!(!under("/items/2/runId", "/items/2/run"));
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
        for expected in ["/zzz", "/index", "/url", "/thoughts/thought2", "/title", "/actions"] {
            assert!(paths.contains(&expected), "{expected} in {paths:?}");
        }
    }
}
