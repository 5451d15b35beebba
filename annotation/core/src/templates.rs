//! CoT templates (seed §5.C, §7.F): the repo's `templates/*.md` files, their `<placeholder>`
//! fields, filling them in, and starring a well-written past step into the library.
//!
//! The file format is described in `templates/README.md`: a front matter block (`name`,
//! `family`, optional `action`, optional starred-step origin) and three sections
//! `## Thought 1` … `## Thought 3`. [`render`] writes a template back in that format, so a
//! starred step can be shared as a file.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::{ActionKind, Step, Thought, Thoughts};

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/bundled_templates.rs"));
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Template {
    pub id: String,
    pub name: String,
    pub family: String,
    pub action_type: Option<String>,
    pub thoughts: Thoughts,
    #[serde(default)]
    pub starred_from: Option<StarredFrom>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct StarredFrom {
    pub run_id: String,
    pub step_index: u32,
    pub starred_by: String,
    pub starred_at: String,
}

const KEYS: &[&str] = &["name", "family", "action", "run", "step", "starred-by", "starred-at"];

/// The file name without its folders and its `.md`.
fn stem(file_name: &str) -> &str {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    base.strip_suffix(".md").unwrap_or(base)
}

/// Reads one template file; the id is the file's stem. Errors name the file, the line and what
/// is wrong.
pub fn parse(file_name: &str, text: &str) -> Result<Template, String> {
    let id = stem(file_name);
    if id.trim().is_empty() {
        return Err(format!("{file_name}: the file name gives the template no id"));
    }
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).peekable();
    while lines.peek().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.next();
    }
    if lines.next().is_none_or(|(_, l)| l.trim() != "---") {
        return Err(format!(
            "{file_name}: must start with a front matter block between `---` lines"
        ));
    }
    let mut meta: lean::SortedMap<&str, (usize, String)> = lean::SortedMap::new();
    let mut closed = false;
    for (n, line) in lines.by_ref() {
        let line = line.trim();
        if line == "---" {
            closed = true;
            break;
        }
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("{file_name}, line {n}: expected `key: value`, found “{line}”"));
        };
        let key = key.trim();
        let Some(&known) = KEYS.iter().find(|k| **k == key) else {
            return Err(format!(
                "{file_name}, line {n}: unknown key “{key}” (known: {})",
                KEYS.join(", ")
            ));
        };
        if meta.insert(known, (n, value.trim().to_string())).is_some() {
            return Err(format!("{file_name}, line {n}: “{key}” is given twice"));
        }
    }
    if !closed {
        return Err(format!("{file_name}: the front matter is not closed by a `---` line"));
    }
    let required = |key: &str| -> Result<String, String> {
        match meta.get(key) {
            Some((_, v)) if !v.is_empty() => Ok(v.clone()),
            Some((n, _)) => Err(format!("{file_name}, line {n}: “{key}” is empty")),
            None => Err(format!("{file_name}: the front matter has no “{key}”")),
        }
    };
    let name = required("name")?;
    let family = required("family")?;
    let action_type = meta.get("action").map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let starred = ["run", "step", "starred-by", "starred-at"];
    let starred_from = if starred.iter().any(|k| meta.contains_key(k)) {
        let step = required("step")?;
        let step_index = step
            .parse::<u32>()
            .map_err(|_| format!("{file_name}: “step” must be a step number, found “{step}”"))?;
        Some(StarredFrom {
            run_id: required("run")?,
            step_index,
            starred_by: required("starred-by")?,
            starred_at: required("starred-at")?,
        })
    } else {
        None
    };

    let mut bodies: Vec<Vec<&str>> = Vec::new();
    for (n, line) in lines {
        let trimmed = line.trim();
        // A heading starts the line; an indented `#` is text (see `render`).
        if line.starts_with('#') {
            let expected = format!("## Thought {}", bodies.len() + 1);
            if trimmed != expected {
                return Err(format!(
                    "{file_name}, line {n}: expected “{expected}”, found “{trimmed}”"
                ));
            }
            bodies.push(Vec::new());
        } else if let Some(body) = bodies.last_mut() {
            body.push(trimmed);
        } else if !trimmed.is_empty() {
            return Err(format!(
                "{file_name}, line {n}: text outside the thought sections: “{trimmed}”"
            ));
        }
    }
    if bodies.len() < 3 {
        return Err(format!("{file_name}: has no “## Thought {}” section", bodies.len() + 1));
    }
    let mut thoughts = Thoughts::default();
    for (which, body) in Thought::ALL.into_iter().zip(&bodies) {
        let text = paragraphs(body);
        if text.is_empty() {
            return Err(format!("{file_name}: “## Thought {}” is empty", which.number()));
        }
        *thoughts.get_mut(which) = text;
    }
    Ok(Template { id: id.to_string(), name, family, action_type, thoughts, starred_from })
}

/// Markdown-like paragraphs: lines joined with spaces, paragraphs with a blank line.
fn paragraphs(lines: &[&str]) -> String {
    lines
        .split(|l| l.is_empty())
        .filter(|p| !p.is_empty())
        .map(|p| p.join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `t` in the file format [`parse`] reads (its id is the file name's business).
pub fn render(t: &Template) -> String {
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    let mut out = format!("---\nname: {}\nfamily: {}\n", one_line(&t.name), one_line(&t.family));
    if let Some(action) = &t.action_type {
        out.push_str(&format!("action: {}\n", one_line(action)));
    }
    if let Some(s) = &t.starred_from {
        out.push_str(&format!(
            "run: {}\nstep: {}\nstarred-by: {}\nstarred-at: {}\n",
            one_line(&s.run_id),
            s.step_index,
            one_line(&s.starred_by),
            one_line(&s.starred_at)
        ));
    }
    out.push_str("---\n");
    for which in Thought::ALL {
        out.push_str(&format!("\n## Thought {}\n\n", which.number()));
        // A line that starts with `#` would read as a heading; indenting keeps it text.
        for line in t.thoughts.get(which).lines() {
            let line = line.trim();
            if line.starts_with('#') {
                out.push(' ');
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The repo's `templates/*.md`, embedded at compile time, in file name order. A broken file is
/// left out here and fails `templates::tests`.
pub fn bundled() -> Vec<Template> {
    bundle::BUNDLED.iter().filter_map(|(name, text)| parse(name, text).ok()).collect()
}

/// Tags that are HTML, not placeholders (`<div>`, `<a>`).
const HTML_TAGS: &[&str] = &[
    "a", "b", "i", "u", "p", "s", "q", "br", "hr", "div", "span", "ul", "ol", "li", "img", "em",
    "strong", "html", "body", "head", "script", "style", "iframe", "svg", "nav", "table", "tr",
    "td", "th", "code", "pre", "small", "sup", "sub",
];

const MAX_NAME: usize = 40;

/// The placeholders of `text`: (byte start of `<`, byte end after `>`, name). A name is
/// lowercase letters with single inner spaces or hyphens, at most 40 bytes, and not an HTML tag.
pub fn placeholder_spans(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find('<').map(|i| from + i) {
        let rest = &text[open + 1..];
        let Some(close) = rest.find(['>', '<']) else { break };
        if rest.as_bytes()[close] == b'<' {
            from = open + 1 + close;
            continue;
        }
        let name = &rest[..close];
        if is_name(name) {
            out.push((open, open + 1 + close + 1, name));
        }
        from = open + 1 + close + 1;
    }
    out
}

fn is_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name.chars().next().is_some_and(char::is_lowercase)
        && name.chars().next_back().is_some_and(char::is_lowercase)
        && name.chars().all(|c| c.is_lowercase() || c == ' ' || c == '-')
        && !name.contains("  ")
        && !HTML_TAGS.contains(&name)
}

/// The placeholder names in `text`, in order of first appearance.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, _, name) in placeholder_spans(text) {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The placeholder names across the three thoughts of `t`, in order, deduplicated.
pub fn placeholders_of(t: &Template) -> Vec<String> {
    unfilled(&t.thoughts)
}

/// `text` with each placeholder that has a non-blank value replaced by it; the rest stay as
/// `<name>`.
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, name) in placeholder_spans(text) {
        if let Some(value) = values.get(name).filter(|v| !v.trim().is_empty()) {
            out.push_str(&text[copied..start]);
            out.push_str(value);
            copied = end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The thoughts with every placeholder filled from `values`.
pub fn fill_thoughts(thoughts: &Thoughts, values: &BTreeMap<String, String>) -> Thoughts {
    Thoughts {
        thought1: fill(&thoughts.thought1, values),
        thought2: fill(&thoughts.thought2, values),
        thought3: fill(&thoughts.thought3, values),
    }
}

/// The placeholders still in the thoughts, in order, deduplicated.
pub fn unfilled(thoughts: &Thoughts) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for which in Thought::ALL {
        for name in placeholders(thoughts.get(which)) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// A past step as a template of the library ("star"): its thoughts as they are, family
/// "starred", the step's action type.
pub fn star(step: &Step, name: &str, by: &str, at: &str) -> Template {
    let raw = format!("starred-{}-{}", step.run_id, step.index);
    let mut id = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if !(c == '-' && id.ends_with('-')) {
            id.push(c);
        }
    }
    let name = name.trim();
    let kind = step.action.kind.as_str();
    Template {
        id,
        name: if name.is_empty() {
            format!("Step {} of {}", step.index, step.run_id)
        } else {
            name.to_string()
        },
        family: "starred".into(),
        action_type: (step.action.kind != ActionKind::None).then(|| kind.to_string()),
        thoughts: step.thoughts.clone(),
        starred_from: Some(StarredFrom {
            run_id: step.run_id.clone(),
            step_index: step.index,
            starred_by: by.to_string(),
            starred_at: at.to_string(),
        }),
    }
}

/// The templates for a step with `action_type`: those of that action first, then the rest,
/// each group in its original order.
pub fn suggest<'a>(templates: &'a [Template], action_type: &ActionKind) -> Vec<&'a Template> {
    // A template names its kind as written when it was made; read it in today's vocabulary.
    let fits = |t: &&Template| {
        *action_type != ActionKind::None
            && t.action_type
                .as_deref()
                .is_some_and(|a| ActionKind::parse(&a.to_ascii_lowercase()) == *action_type)
    };
    let (mut first, rest): (Vec<&Template>, Vec<&Template>) = templates.iter().partition(fits);
    first.extend(rest);
    first
}

#[cfg(test)]
mod tests;
