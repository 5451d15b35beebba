//! Version history (seed §7.C): every save that changes something is a version holding the
//! whole run, what changed since the one before, and who saved it when. Rolling back adds a
//! new version with an old content, so nothing is ever lost. Two versions compare field by
//! field, strings word by word.
//!
//! Paths are dot paths into `{"run": Run, "steps": [Step]}` as the records serialize
//! (camelCase): `run.tags`, `steps.3.thoughts.thought1`. A step is named by its `index`, not by
//! its position, so a missing step does not shift the rest. People read steps numbered from 1
//! ("Step 4" is index 3).

use lean::SortedMap;

use serde::Serialize;
use serde_json::{Map, Value};
use text_diff::{Edit, edit_script, tokens};

use crate::record::{Run, Step};

/// One saved state of a run.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    pub run_id: String,
    /// 1, 2, … in save order.
    pub number: u32,
    pub author: String,
    /// ISO 8601.
    pub at: String,
    /// For a person: "Step 3: thought 1, thought 2; run: tags".
    pub summary: String,
    /// Dot paths that changed against the previous version.
    pub paths: Vec<String>,
    /// The run as saved, its `version` set to `number`.
    pub run: Run,
    pub steps: Vec<Step>,
}

/// Fields that change on every save or are derived; a difference in them alone is no change.
const VOLATILE: [&str; 6] = [
    "run.updatedAt",
    "run.version",
    "run.serverVersion",
    "run.quality",
    "steps.*.lastEditedAt",
    "steps.*.lastEditedBy",
];

fn volatile(path: &[String]) -> bool {
    VOLATILE.iter().any(|pattern| {
        let parts: Vec<&str> = pattern.split('.').collect();
        parts.len() == path.len() && parts.iter().zip(path).all(|(p, s)| *p == "*" || p == s)
    })
}

/// One differing leaf: its path and the values on each side (`None` where absent).
struct Change<'a> {
    path: Vec<String>,
    before: Option<&'a Value>,
    after: Option<&'a Value>,
}

/// Walks both trees in step. With `expand`, a subtree present on one side only is reported
/// leaf by leaf (for showing values); without, as one path (for summaries).
fn walk<'a>(
    before: Option<&'a Value>,
    after: Option<&'a Value>,
    path: &mut Vec<String>,
    expand: bool,
    out: &mut Vec<Change<'a>>,
) {
    if volatile(path) {
        return;
    }
    let absent = |v: Option<&Value>| v.is_none_or(Value::is_null);
    if absent(before) && absent(after) {
        return;
    }
    match (before, after) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            walk_objects(Some(a), Some(b), path, expand, out)
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if nested(a) || nested(b) => {
            walk_arrays(a, b, path, expand, out)
        }
        (Some(Value::Object(a)), None) if expand && !a.is_empty() => {
            walk_objects(Some(a), None, path, expand, out)
        }
        (None, Some(Value::Object(b))) if expand && !b.is_empty() => {
            walk_objects(None, Some(b), path, expand, out)
        }
        _ if before == after => {}
        _ => out.push(Change { path: path.clone(), before, after }),
    }
}

fn walk_objects<'a>(
    a: Option<&'a Map<String, Value>>,
    b: Option<&'a Map<String, Value>>,
    path: &mut Vec<String>,
    expand: bool,
    out: &mut Vec<Change<'a>>,
) {
    let mut keys: Vec<&String> = a.into_iter().chain(b).flat_map(|m| m.keys()).collect();
    lean::sort(&mut keys);
    keys.dedup();
    for key in keys {
        path.push(key.clone());
        walk(a.and_then(|m| m.get(key)), b.and_then(|m| m.get(key)), path, expand, out);
        path.pop();
    }
}

/// Arrays holding objects are compared element by element; arrays of plain values (tags,
/// extended thoughts) as one value, which reads better than "tags.2".
fn nested(items: &[Value]) -> bool {
    items.iter().any(|v| v.is_object() || v.is_array())
}

/// The element keys of an array: each object's `index` when all have distinct ones (steps),
/// else the position.
fn keyed(items: &[Value]) -> Vec<(u64, &Value)> {
    let indexes: Option<Vec<u64>> =
        items.iter().map(|v| v.get("index").and_then(Value::as_u64)).collect();
    if let Some(indexes) = indexes {
        let mut sorted = indexes.clone();
        lean::sort(&mut sorted);
        sorted.dedup();
        if sorted.len() == indexes.len() {
            return indexes.into_iter().zip(items).collect();
        }
    }
    items.iter().enumerate().map(|(i, v)| (i as u64, v)).collect()
}

fn walk_arrays<'a>(
    a: &'a [Value],
    b: &'a [Value],
    path: &mut Vec<String>,
    expand: bool,
    out: &mut Vec<Change<'a>>,
) {
    let mut pairs: SortedMap<u64, (Option<&Value>, Option<&Value>)> = SortedMap::new();
    for (k, v) in keyed(a) {
        pairs.entry_or_default(k).0 = Some(v);
    }
    for (k, v) in keyed(b) {
        pairs.entry_or_default(k).1 = Some(v);
    }
    for (k, (x, y)) in pairs {
        path.push(k.to_string());
        walk(x, y, path, expand, out);
        path.pop();
    }
}

fn changes<'a>(before: &'a Value, after: &'a Value, expand: bool) -> Vec<Change<'a>> {
    let mut out = Vec::new();
    walk(Some(before), Some(after), &mut Vec::new(), expand, &mut out);
    out
}

/// The dot paths where `after` differs from `before`, in path order. Objects are followed to
/// their leaves; a subtree on one side only is one path; volatile fields are ignored.
pub fn changed_paths(before: &Value, after: &Value) -> Vec<String> {
    changes(before, after, false).into_iter().map(|c| c.path.join(".")).collect()
}

fn document(run: &Run, steps: &[Step]) -> Value {
    let steps = steps.iter().map(|s| serde_json::to_value(s).unwrap_or(Value::Null)).collect();
    let mut doc = Map::new();
    doc.insert("run".into(), serde_json::to_value(run).unwrap_or(Value::Null));
    doc.insert("steps".into(), Value::Array(steps));
    Value::Object(doc)
}

/// What changed between two states of a run, as `run.…` and `steps.N.…` paths.
pub fn snapshot_paths(prev: (&Run, &[Step]), next: (&Run, &[Step])) -> Vec<String> {
    changed_paths(&document(prev.0, prev.1), &document(next.0, next.1))
}

/// "followUps" → "follow ups".
fn words(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_uppercase() && !out.is_empty() {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// What a person calls the field at `rest` (the path inside a step or the run).
fn field_name(rest: &[&str]) -> String {
    match rest {
        [] => "whole step".into(),
        ["thoughts", t, ..] if t.starts_with("thought") => format!("thought {}", &t[7..]),
        ["action" | "actions", ..] => "action".into(),
        ["issues", ..] => "flags".into(),
        ["verified", ..] => "complete".into(),
        ["url", ..] => "URL".into(),
        [first, ..] => words(first),
    }
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// A person's line for a set of paths: "Step 4: thought 1, thought 2; run: tags".
pub fn summarize(paths: &[String]) -> String {
    let mut steps: SortedMap<u64, Vec<String>> = SortedMap::new();
    let mut run: Vec<String> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    for path in paths {
        let parts: Vec<&str> = path.split('.').collect();
        match parts.as_slice() {
            ["steps", n, rest @ ..] if n.parse::<u64>().is_ok() => {
                let n = n.parse::<u64>().unwrap_or(0);
                push_unique(steps.entry_or_default(n), field_name(rest));
            }
            ["steps"] => push_unique(&mut other, "steps".into()),
            ["run", rest @ ..] if !rest.is_empty() => push_unique(&mut run, field_name(rest)),
            _ => push_unique(&mut other, words(path)),
        }
    }
    let mut parts: Vec<String> = steps
        .into_iter()
        .map(|(n, fields)| format!("Step {}: {}", n + 1, fields.join(", ")))
        .collect();
    if !run.is_empty() {
        parts.push(format!("run: {}", run.join(", ")));
    }
    parts.extend(other);
    if parts.is_empty() { "No changes".into() } else { parts.join("; ") }
}

/// The version a save makes, or `None` when nothing changed since `prev` (a save without
/// changes makes no version).
pub fn next_version(
    prev: Option<&Version>,
    run: &Run,
    steps: &[Step],
    author: &str,
    at: &str,
) -> Option<Version> {
    let (number, paths, summary) = match prev {
        Some(prev) => {
            let paths = snapshot_paths((&prev.run, &prev.steps), (run, steps));
            if paths.is_empty() {
                return None;
            }
            let summary = summarize(&paths);
            (prev.number + 1, paths, summary)
        }
        None => (1, Vec::new(), "First version".to_owned()),
    };
    let mut run = run.clone();
    run.version = number;
    Some(Version {
        run_id: run.id.clone(),
        number,
        author: author.to_owned(),
        at: at.to_owned(),
        summary,
        paths,
        run,
        steps: steps.to_vec(),
    })
}

/// Rolls back to `target` by adding a version after `latest` with `target`'s content. The
/// sync state (`serverVersion`) stays `latest`'s: rolling back is a new edit on top of what
/// the server has, not a rewind of it.
pub fn rollback(target: &Version, latest: &Version, author: &str, at: &str) -> Version {
    let number = latest.number + 1;
    let mut run = target.run.clone();
    run.version = number;
    run.server_version = latest.run.server_version;
    run.updated_at = at.to_owned();
    Version {
        run_id: latest.run_id.clone(),
        number,
        author: author.to_owned(),
        at: at.to_owned(),
        summary: format!("Rolled back to version {}", target.number),
        paths: snapshot_paths((&latest.run, &latest.steps), (&run, &target.steps)),
        run,
        steps: target.steps.clone(),
    }
}

/// One piece of a word diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum DiffOp {
    Same(String),
    Added(String),
    Removed(String),
}

impl DiffOp {
    pub fn text(&self) -> &str {
        match self {
            DiffOp::Same(t) | DiffOp::Added(t) | DiffOp::Removed(t) => t,
        }
    }
}

/// Changed words, spaces and marks beyond which a diff is shown as one removal and one
/// addition.
const MAX_EDITS: usize = 1000;

fn push_op(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if op.text().is_empty() {
        return;
    }
    match (ops.last_mut(), &op) {
        (Some(DiffOp::Same(t)), DiffOp::Same(s))
        | (Some(DiffOp::Added(t)), DiffOp::Added(s))
        | (Some(DiffOp::Removed(t)), DiffOp::Removed(s)) => t.push_str(s),
        _ => ops.push(op),
    }
}

/// A word-level diff of `before` into `after`: the product's one diff (`text-diff`) over
/// words, whitespace runs and punctuation, with neighbouring pieces of one kind merged.
/// Concatenating the `Same` and `Removed` texts gives `before`; `Same` and `Added`, `after`.
pub fn word_diff(before: &str, after: &str) -> Vec<DiffOp> {
    let (a, b) = (tokens(before), tokens(after));
    let edits = edit_script(&a, &b);
    let mut ops = Vec::new();
    if edits.iter().filter(|(e, _)| *e != Edit::Same).count() <= MAX_EDITS {
        for (edit, text) in edits {
            let text = text.to_owned();
            push_op(
                &mut ops,
                match edit {
                    Edit::Same => DiffOp::Same(text),
                    Edit::Removed => DiffOp::Removed(text),
                    Edit::Added => DiffOp::Added(text),
                },
            );
        }
        return ops;
    }
    // Texts this different read better as one removal and one addition than as a patchwork
    // of the spaces they share: the common ends, and the changed middle as each side has it.
    let same = |e: &&(Edit, &str)| e.0 == Edit::Same;
    let prefix = edits.iter().take_while(same).count();
    let suffix = edits[prefix..].iter().rev().take_while(same).count();
    let (middle, end) = edits[prefix..].split_at(edits.len() - prefix - suffix);
    let join = |part: &[(Edit, &str)], skip: Edit| -> String {
        part.iter().filter(|(e, _)| *e != skip).map(|(_, t)| *t).collect()
    };
    push_op(&mut ops, DiffOp::Same(join(&edits[..prefix], Edit::Removed)));
    push_op(&mut ops, DiffOp::Removed(join(middle, Edit::Added)));
    push_op(&mut ops, DiffOp::Added(join(middle, Edit::Removed)));
    push_op(&mut ops, DiffOp::Same(join(end, Edit::Removed)));
    ops
}

/// One changed field between two versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDiff {
    pub path: String,
    /// "Step 4 · Thought 1".
    pub label: String,
    pub before: String,
    pub after: String,
    pub ops: Vec<DiffOp>,
}

/// A value as shown: strings as they are, nothing as "", the rest as compact JSON.
fn shown(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn capitalized(text: &str) -> String {
    text_case::upper_first(text)
}

/// "steps.3.thoughts.thought1" → "Step 4 · Thought 1".
pub fn label(path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    let (head, rest): (String, &[&str]) = match parts.as_slice() {
        ["steps", n, rest @ ..] if n.parse::<u64>().is_ok() => {
            (format!("Step {}", n.parse::<u64>().unwrap_or(0) + 1), rest)
        }
        ["run", rest @ ..] => ("Run".into(), rest),
        _ => (String::new(), &parts[..]),
    };
    let mut pieces = vec![head];
    let mut i = 0;
    while i < rest.len() {
        let piece = match &rest[i..] {
            ["thoughts", t, ..] if t.starts_with("thought") => {
                i += 1;
                format!("Thought {}", &t[7..])
            }
            [n, ..] if n.parse::<u64>().is_ok() => {
                format!("#{}", n.parse::<u64>().unwrap_or(0) + 1)
            }
            ["url", ..] => "URL".into(),
            [key, ..] => capitalized(&words(key)),
            [] => break,
        };
        pieces.push(piece);
        i += 1;
    }
    pieces.retain(|p| !p.is_empty());
    pieces.join(" · ")
}

/// Every changed leaf field from `a` to `b` (older first, usually), with word diffs.
pub fn compare(a: &Version, b: &Version) -> Vec<FieldDiff> {
    let before = document(&a.run, &a.steps);
    let after = document(&b.run, &b.steps);
    changes(&before, &after, true)
        .into_iter()
        .map(|change| {
            let path = change.path.join(".");
            let before = shown(change.before);
            let after = shown(change.after);
            FieldDiff { label: label(&path), ops: word_diff(&before, &after), path, before, after }
        })
        .collect()
}

#[cfg(test)]
mod tests;
