//! Every prompt file, bundled and overridden side by side, with hashes; the edits that
//! create a variant or a prompt; checking a set of edits the way the worker will.

use std::collections::BTreeMap;

use prompt_files::prompts::{BUNDLED, PromptSet};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a file is to its prompt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    Manifest,
    Variant(String),
    Schema,
    /// A shared rule (`rules/<name>.md`).
    Rule(String),
    Other,
}

/// One file: its bundled text, its override, or both.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptFile {
    pub path: String,
    pub kind: FileKind,
    pub bundled: Option<String>,
    pub edited: Option<String>,
}

impl PromptFile {
    /// The text in force: the override, else the bundled file.
    pub fn current(&self) -> &str {
        self.edited.as_deref().or(self.bundled.as_deref()).unwrap_or_default()
    }
}

/// One prompt (a folder with a `prompt.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptEntry {
    pub id: String,
    pub folder: String,
    pub description: String,
    /// Whether no bundled file names it (a prompt made in the Studio).
    pub user_made: bool,
    pub files: Vec<PromptFile>,
}

impl PromptEntry {
    pub fn variants(&self) -> Vec<String> {
        self.files
            .iter()
            .filter_map(|f| match &f.kind {
                FileKind::Variant(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn variant_path(&self, variant: &str) -> Option<&str> {
        self.files.iter().find_map(|f| match &f.kind {
            FileKind::Variant(name) if name == variant => Some(f.path.as_str()),
            _ => None,
        })
    }
}

/// The prompts and the shared rules.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalogue {
    pub prompts: Vec<PromptEntry>,
    pub rules: Vec<PromptFile>,
}

/// `sha256:` and the first 12 hex digits: enough to tell versions apart on screen.
pub fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The bundled files with `overrides` on top.
pub fn merged(overrides: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> =
        BUNDLED.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect();
    files.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    files
}

/// Lists every prompt and rule, reading each manifest leniently (a broken manifest still
/// lists its folder, so it can be fixed here).
pub fn catalogue(overrides: &BTreeMap<String, String>) -> Catalogue {
    let bundled: BTreeMap<&str, &str> = BUNDLED.iter().copied().collect();
    let file = |path: &str, kind: FileKind| PromptFile {
        path: path.to_owned(),
        kind,
        bundled: bundled.get(path).map(|t| (*t).to_owned()),
        edited: overrides.get(path).cloned(),
    };
    let all = merged(overrides);
    let mut catalogue = Catalogue::default();
    for (path, text) in &all {
        if let Some(name) = path.strip_prefix("rules/").and_then(|p| p.strip_suffix(".md")) {
            catalogue.rules.push(file(path, FileKind::Rule(name.to_owned())));
            continue;
        }
        let Some(folder) = path.strip_suffix("/prompt.json") else { continue };
        let manifest: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let id = manifest["id"].as_str().unwrap_or(folder).to_owned();
        let mut files = vec![file(path, FileKind::Manifest)];
        if let Some(variants) = manifest["variants"].as_object() {
            for (name, file_name) in variants {
                if let Some(file_name) = file_name.as_str() {
                    let path = format!("{folder}/{file_name}");
                    files.push(file(&path, FileKind::Variant(name.clone())));
                }
            }
        }
        if let Some(schema) = manifest["schema"].as_str() {
            files.push(file(&format!("{folder}/{schema}"), FileKind::Schema));
        }
        catalogue.prompts.push(PromptEntry {
            id,
            folder: folder.to_owned(),
            description: manifest["description"].as_str().unwrap_or_default().to_owned(),
            user_made: !bundled.contains_key(path.as_str()),
            files,
        });
    }
    catalogue
}

/// Loads the prompts as the worker will with `overrides`; the error names the file.
pub fn check(overrides: &BTreeMap<String, String>) -> Result<PromptSet, String> {
    PromptSet::with_overrides(overrides)
}

/// The path a problem message names, if it names one of `paths` (errors from the loader
/// start with or mention the file).
pub fn error_path<'a>(error: &str, paths: impl IntoIterator<Item = &'a str>) -> Option<String> {
    paths.into_iter().filter(|p| error.contains(*p)).max_by_key(|p| p.len()).map(str::to_owned)
}

/// The edits that add variant `name` to `prompt` as a copy of `from`: the manifest with the
/// new entry and the new file.
pub fn new_variant(
    prompt: &PromptEntry,
    from: &str,
    name: &str,
) -> Result<BTreeMap<String, String>, String> {
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("A variant name is letters, digits and _.".into());
    }
    if prompt.variants().iter().any(|v| v == name) {
        return Err(format!("{} already has a variant {name}.", prompt.id));
    }
    let manifest_file = prompt.files.iter().find(|f| f.kind == FileKind::Manifest);
    let manifest_text = manifest_file.map(PromptFile::current).unwrap_or_default();
    let mut manifest: Value = serde_json::from_str(manifest_text)
        .map_err(|e| format!("Fix {}/prompt.json first: {e}", prompt.folder))?;
    let source = prompt
        .variant_path(from)
        .and_then(|p| prompt.files.iter().find(|f| f.path == p))
        .map(|f| f.current().to_owned())
        .unwrap_or_default();
    let file_name = format!("{name}.md");
    manifest["variants"][name] = Value::String(file_name.clone());
    let mut edits = BTreeMap::new();
    let pretty = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    edits.insert(format!("{}/prompt.json", prompt.folder), pretty + "\n");
    edits.insert(format!("{}/{file_name}", prompt.folder), source);
    Ok(edits)
}

/// The files of a new prompt `id`: a manifest, variant A and a schema asking for one
/// `answer` string.
pub fn new_prompt(id: &str, existing: &Catalogue) -> Result<BTreeMap<String, String>, String> {
    let id = id.trim();
    let ok = id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(
            "A prompt id is lowercase letters, digits and _, starting with a letter.".into()
        );
    }
    if existing.prompts.iter().any(|p| p.id == id || p.folder == id) || id == "rules" {
        return Err(format!("A prompt {id} already exists."));
    }
    let manifest = serde_json::json!({
        "id": id, "description": "Made in the Prompt Studio.",
        "variants": {"A": "A.md"}, "schema": "schema.json", "strict": false
    });
    let schema = serde_json::json!({
        "type": "object", "required": ["answer"], "additionalProperties": false,
        "properties": {"answer": {"type": "string"}}
    });
    let mut files = BTreeMap::new();
    files.insert(format!("{id}/prompt.json"), serde_json::to_string_pretty(&manifest).unwrap());
    files.insert(
        format!("{id}/A.md"),
        "Answer the question below.\n\nQuestion: {{question}}\n\n{{> json_only}}\n".into(),
    );
    files.insert(format!("{id}/schema.json"), serde_json::to_string_pretty(&schema).unwrap());
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_lists_the_agents_with_their_files_and_the_shared_rules() {
        let catalogue = catalogue(&BTreeMap::new());
        let navigator = catalogue.prompts.iter().find(|p| p.id == "navigator").unwrap();
        assert!(navigator.variants().contains(&"A".to_owned()));
        assert!(navigator.files.iter().any(|f| f.kind == FileKind::Schema));
        assert!(navigator.files.iter().all(|f| f.bundled.is_some() && f.edited.is_none()));
        for id in ["planner", "thinking", "product_facts"] {
            assert!(catalogue.prompts.iter().any(|p| p.id == id), "{id}");
        }
        assert!(catalogue.rules.iter().any(|r| r.kind == FileKind::Rule("json_only".into())));
    }

    #[test]
    fn an_override_shows_beside_the_bundled_text_with_another_hash() {
        let mut overrides = BTreeMap::new();
        overrides.insert("navigator/A.md".to_owned(), "Task: {{task}}".to_owned());
        let catalogue = catalogue(&overrides);
        let navigator = catalogue.prompts.iter().find(|p| p.id == "navigator").unwrap();
        let a = navigator.files.iter().find(|f| f.path == "navigator/A.md").unwrap();
        assert_eq!(a.current(), "Task: {{task}}");
        assert_ne!(short_hash(a.bundled.as_deref().unwrap()), short_hash(a.current()));
    }

    #[test]
    fn a_new_variant_and_a_new_prompt_load_and_bad_names_are_refused() {
        let base = catalogue(&BTreeMap::new());
        let navigator = base.prompts.iter().find(|p| p.id == "navigator").unwrap();
        let edits = new_variant(navigator, "A", "C").unwrap();
        let set = check(&edits).unwrap();
        assert!(set.prompt("navigator").unwrap().variants.contains_key("C"));
        assert!(new_variant(navigator, "A", "A").unwrap_err().contains("already"));
        assert!(new_variant(navigator, "A", "a b").is_err());

        let files = new_prompt("summarize", &base).unwrap();
        let set = check(&files).unwrap();
        let rendered =
            set.render("summarize", None, &serde_json::json!({"question": "Why?"})).unwrap();
        assert!(rendered.text.contains("Why?"));
        assert!(new_prompt("navigator", &base).is_err());
        assert!(new_prompt("Bad-Id", &base).is_err());
        let with_new = catalogue(&files);
        assert!(with_new.prompts.iter().any(|p| p.id == "summarize" && p.user_made));
    }

    #[test]
    fn a_broken_edit_is_refused_with_the_file_it_is_in() {
        let mut overrides = BTreeMap::new();
        overrides.insert("navigator/schema.json".to_owned(), "{\"type\": ".to_owned());
        let error = check(&overrides).unwrap_err();
        assert_eq!(
            error_path(&error, ["navigator/A.md", "navigator/schema.json"]).as_deref(),
            Some("navigator/schema.json")
        );
    }
}
