//! The fully rendered prompt for the Studio's preview: shared rules expanded, each inserted
//! variable marked, and each variable the sample does not supply flagged in place (rendered
//! as a placeholder rather than failing a strict prompt).

use std::collections::{BTreeMap, BTreeSet};

use prompt_files::prompts::PromptSet;
use prompt_files::template::Template;
use serde_json::{Map, Value};

const VALUE_START: char = '\u{E000}';
const VALUE_END: char = '\u{E001}';
const HOLE_START: char = '\u{E002}';
const HOLE_END: char = '\u{E003}';

/// A piece of the preview.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Text(String),
    /// A variable's value as inserted.
    Value(String),
    /// A variable the sample lacks: its path.
    Unresolved(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub segments: Vec<Segment>,
    /// Paths the sample does not supply (and that have no default).
    pub unresolved: Vec<String>,
    /// The prompt hash of the text as it would be sent, when it renders with the sample.
    pub prompt_hash: Option<String>,
    pub revision_hash: Option<String>,
    pub chars: usize,
}

/// Renders `prompt_id`'s `variant` from `files` (every prompt file, overrides applied) with
/// `vars`.
pub fn preview(
    prompts: &PromptSet,
    files: &BTreeMap<String, String>,
    variant_source: &str,
    prompt_id: &str,
    variant: &str,
    vars: &Value,
) -> Result<Preview, String> {
    let mut needed = BTreeSet::new();
    let mut seen_rules = BTreeSet::new();
    collect_variables(variant_source, files, &mut needed, &mut seen_rules)?;
    let unresolved: Vec<String> =
        needed.into_iter().filter(|path| lookup(vars, path).is_none()).collect();
    let mut marked = mark(vars);
    for path in &unresolved {
        set_path(&mut marked, path, Value::String(format!("{HOLE_START}{path}{HOLE_END}")));
    }
    let rendered = prompts.render(prompt_id, Some(variant), &marked)?;
    let exact = prompts.render(prompt_id, Some(variant), vars).ok();
    let segments = split(&rendered.text);
    let chars = segments
        .iter()
        .map(|s| match s {
            Segment::Text(t) | Segment::Value(t) => t.chars().count(),
            Segment::Unresolved(_) => 0,
        })
        .sum();
    Ok(Preview {
        segments,
        unresolved,
        prompt_hash: exact.as_ref().map(|r| r.prompt_hash.clone()),
        revision_hash: exact.map(|r| r.revision_hash),
        chars,
    })
}

/// The variables a strict prompt's files read, as edited, that no bundled variant of it
/// reads: the agent never supplies them, so a task could not render the edit (it falls
/// back to the bundled prompt). Per variant file: the names it would need. Prompts made in
/// the Studio have no bundled variant to compare with and are left out.
pub fn unknown_variables(
    prompts: &PromptSet,
    entries: &[crate::catalogue::PromptEntry],
    overrides: &BTreeMap<String, String>,
) -> Vec<(String, Vec<String>)> {
    // Only a prompt whose files (or shared rules) were edited can need something new.
    let rules_edited = overrides.keys().any(|path| path.starts_with("rules/"));
    let bundled = crate::catalogue::merged(&BTreeMap::new());
    let edited = crate::catalogue::merged(overrides);
    let needs = |files: &BTreeMap<String, String>, path: &str| {
        let mut needed = BTreeSet::new();
        let source = files.get(path).map(String::as_str).unwrap_or_default();
        let _ = collect_variables(source, files, &mut needed, &mut BTreeSet::new());
        needed
    };
    let mut out = Vec::new();
    for entry in entries.iter().filter(|e| !e.user_made) {
        if !prompts.prompt(&entry.id).is_some_and(|p| p.strict) {
            continue;
        }
        let paths: Vec<&str> =
            entry.variants().iter().filter_map(|v| entry.variant_path(v)).collect();
        if !rules_edited && !paths.iter().any(|p| overrides.contains_key(*p)) {
            continue;
        }
        let given: BTreeSet<String> = paths
            .iter()
            .filter(|p| bundled.contains_key(**p))
            .flat_map(|p| needs(&bundled, p))
            .collect();
        for path in paths {
            let unknown: Vec<String> =
                needs(&edited, path).into_iter().filter(|v| !given.contains(v)).collect();
            if !unknown.is_empty() {
                out.push((path.to_owned(), unknown));
            }
        }
    }
    out
}

/// Variables without a default read by `source` and by the shared rules it includes.
fn collect_variables(
    source: &str,
    files: &BTreeMap<String, String>,
    needed: &mut BTreeSet<String>,
    seen_rules: &mut BTreeSet<String>,
) -> Result<(), String> {
    let template = Template::parse(source).map_err(|e| e.to_string())?;
    for (path, has_default) in template.variables() {
        if !has_default {
            needed.insert(path.to_owned());
        }
    }
    for rule in partials(source) {
        if seen_rules.insert(rule.clone())
            && let Some(text) = files.get(&format!("rules/{rule}.md"))
        {
            collect_variables(text, files, needed, seen_rules)?;
        }
    }
    Ok(())
}

/// The names in `{{> name}}` tags.
fn partials(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("{{>") {
        rest = &rest[at + 3..];
        if let Some(end) = rest.find("}}") {
            out.push(rest[..end].trim().to_owned());
            rest = &rest[end..];
        }
    }
    out
}

/// The value at a dot path (array elements by index), as the template reads it.
pub fn lookup<'a>(vars: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(vars, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn mark(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(format!("{VALUE_START}{s}{VALUE_END}")),
        Value::Array(items) => Value::Array(items.iter().map(mark).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), mark(v))).collect())
        }
        other => other.clone(),
    }
}

fn set_path(root: &mut Value, path: &str, leaf: Value) {
    if !root.is_object() {
        *root = Value::Object(Map::new());
    }
    let mut here = root;
    let keys: Vec<&str> = path.split('.').collect();
    for (n, key) in keys.iter().enumerate() {
        let Value::Object(map) = here else { return };
        if n + 1 == keys.len() {
            map.insert((*key).to_owned(), leaf);
            return;
        }
        here = map.entry((*key).to_owned()).or_insert_with(|| Value::Object(Map::new()));
    }
}

fn split(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut mode: Option<char> = None;
    let flush = |out: &mut Vec<Segment>, current: &mut String, mode: Option<char>| {
        let piece = std::mem::take(current);
        match mode {
            Some(VALUE_START) => out.push(Segment::Value(piece)),
            Some(_) => out.push(Segment::Unresolved(piece)),
            None if !piece.is_empty() => out.push(Segment::Text(piece)),
            None => {}
        }
    };
    for c in text.chars() {
        match c {
            VALUE_START | HOLE_START => {
                flush(&mut out, &mut current, mode);
                mode = Some(c);
            }
            VALUE_END | HOLE_END => {
                flush(&mut out, &mut current, mode);
                mode = None;
            }
            _ => current.push(c),
        }
    }
    flush(&mut out, &mut current, mode);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_variable_the_agent_never_supplies_is_named_with_its_file() {
        let mut edits = BTreeMap::new();
        edits.insert(
            "navigator/A.md".to_owned(),
            "Task: {{task}} {{nope}} {{plan}} {{> json_only}}".to_owned(),
        );
        let prompts = crate::catalogue::check(&edits).unwrap();
        let entries = crate::catalogue::catalogue(&edits).prompts;
        assert_eq!(
            unknown_variables(&prompts, &entries, &edits),
            [("navigator/A.md".to_owned(), vec!["nope".to_owned()])]
        );
        // The bundled files as they are need nothing new.
        let none = BTreeMap::new();
        let bundled = crate::catalogue::check(&none).unwrap();
        let entries = crate::catalogue::catalogue(&none).prompts;
        assert!(unknown_variables(&bundled, &entries, &none).is_empty());
    }

    use super::*;
    use crate::catalogue::merged;
    use serde_json::json;

    #[test]
    fn variables_are_marked_rules_expanded_and_missing_ones_flagged() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "navigator/A.md".to_owned(),
            "Task: {{task}} at step {{step}}.\nPlan: {{plan}}\n{{> json_only}}".to_owned(),
        );
        let files = merged(&overrides);
        let set = PromptSet::load(&files).unwrap();
        let vars = json!({"task": "Find the kettle", "step": 3});
        let shown =
            preview(&set, &files, &files["navigator/A.md"], "navigator", "A", &vars).unwrap();
        assert!(shown.segments.contains(&Segment::Value("Find the kettle".into())));
        assert!(shown.segments.contains(&Segment::Unresolved("plan".into())));
        assert_eq!(shown.unresolved, ["plan"]);
        let text: String = shown
            .segments
            .iter()
            .filter_map(|s| match s {
                Segment::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(text.contains("at step 3."), "{text}");
        assert!(text.contains("<sharedRule name=\"json_only\">"), "{text}");
        // The navigator is strict: with a variable missing it would not render to send.
        assert_eq!(shown.prompt_hash, None);

        let full = json!({"task": "Find the kettle", "step": 3, "plan": "open it"});
        let full_preview =
            preview(&set, &files, &files["navigator/A.md"], "navigator", "A", &full).unwrap();
        assert!(full_preview.unresolved.is_empty());
        let sent = set.render("navigator", Some("A"), &full).unwrap();
        assert_eq!(full_preview.prompt_hash, Some(sent.prompt_hash));
        assert_eq!(full_preview.chars, sent.text.chars().count());
    }

    #[test]
    fn nested_and_indexed_paths_resolve_like_the_template() {
        let vars = json!({"a": {"b": [1, {"c": "x"}]}});
        assert_eq!(lookup(&vars, "a.b.1.c"), Some(&json!("x")));
        assert_eq!(lookup(&vars, "a.b.2"), None);
        let mut root = json!({});
        set_path(&mut root, "x.y", json!(1));
        assert_eq!(root, json!({"x": {"y": 1}}));
    }
}
