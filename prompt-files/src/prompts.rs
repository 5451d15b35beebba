//! The agents' prompt files (`prompts/`): manifests with variants, shared rules and schemas,
//! bundled at build time, overridable file by file, and checked as a whole when loaded.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::structured::Schema;
use crate::template::{Library, Template, render};

/// The turn every model call sends after its prompt (exports of training data reuse it).
pub const USER_TURN: &str = "Answer with the JSON object described above.";

include!(concat!(env!("OUT_DIR"), "/bundled_prompts.rs"));

#[derive(Debug, tagged_de::FieldsDeserialize)]
struct Manifest {
    id: String,
    #[serde(default)]
    description: String,
    variants: BTreeMap<String, String>,
    schema: String,
    #[serde(default)]
    strict: bool,
}

/// One agent's prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub id: String,
    pub description: String,
    pub variants: lean::SortedMap<String, Template>,
    pub schema: Schema,
    pub strict: bool,
}

/// A prompt rendered for one call, with what a trace needs to identify it.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub prompt_id: String,
    pub variant: String,
    pub text: String,
    /// sha256 of `text`.
    pub prompt_hash: String,
    /// sha256 over the variant's template and every shared rule.
    pub revision_hash: String,
    pub warnings: Vec<String>,
}

/// Every prompt and shared rule, checked.
#[derive(Debug, Clone)]
pub struct PromptSet {
    library: Library,
    prompts: lean::SortedMap<String, Prompt>,
}

/// The default variant, per seed `002_…`.
pub const DEFAULT_VARIANT: &str = "A";

impl PromptSet {
    /// The prompts shipped in `prompts/`.
    pub fn bundled() -> PromptSet {
        PromptSet::load(&files(&BTreeMap::new())).expect("the bundled prompts are checked by tests")
    }

    /// The bundled prompts with some files replaced (a user's edits from Settings), checked
    /// exactly as the bundled ones are.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<PromptSet, String> {
        PromptSet::load(&files(overrides))
    }

    /// Loads prompts from `files` (path relative to `prompts/` → contents).
    pub fn load(files: &BTreeMap<String, String>) -> Result<PromptSet, String> {
        let rules = files.iter().filter_map(|(path, text)| {
            let name = path.strip_prefix("rules/")?.strip_suffix(".md")?;
            Some((name, text.as_str()))
        });
        let library = Library::new(rules).map_err(|e| e.to_string())?;
        let mut prompts = lean::SortedMap::new();
        for (path, text) in files {
            let Some(folder) = path.strip_suffix("/prompt.json") else { continue };
            let manifest: Manifest =
                serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
            let file = |name: &str| {
                files
                    .get(&format!("{folder}/{name}"))
                    .ok_or_else(|| format!("{path} names {folder}/{name}, which does not exist"))
            };
            if !manifest.variants.contains_key(DEFAULT_VARIANT) {
                return Err(format!("{path}: variant {DEFAULT_VARIANT} (the default) is missing"));
            }
            let mut variants = lean::SortedMap::new();
            for (variant, name) in &manifest.variants {
                let where_ = format!("{folder}/{name}");
                let template =
                    Template::parse(file(name)?).map_err(|e| format!("{where_}: {e}"))?;
                library.check(&template, &where_).map_err(|e| e.to_string())?;
                variants.insert(variant.clone(), template);
            }
            let schema: Value = serde_json::from_str(file(&manifest.schema)?)
                .map_err(|e| format!("{folder}/{}: {e}", manifest.schema))?;
            let schema =
                Schema::compile(schema).map_err(|e| format!("{folder}/{}{e}", manifest.schema))?;
            let prompt = Prompt {
                id: manifest.id.clone(),
                description: manifest.description,
                variants,
                schema,
                strict: manifest.strict,
            };
            prompts.insert(manifest.id, prompt);
        }
        Ok(PromptSet { library, prompts })
    }

    pub fn prompt(&self, id: &str) -> Option<&Prompt> {
        self.prompts.get(id)
    }

    /// Every prompt's variant names (A first), so Settings offers only the ones that exist.
    pub fn variant_names(&self) -> lean::StrMap<Vec<String>> {
        self.prompts
            .iter()
            .map(|(id, prompt)| (id.clone(), prompt.variants.keys().cloned().collect()))
            .collect()
    }

    /// Settings' chosen variants that no prompt has, as (field path, message), so the form
    /// says so instead of a task pausing on it.
    pub fn variant_problems(
        &self,
        chosen: &BTreeMap<String, String>,
    ) -> Vec<run_contract::Problem> {
        chosen
            .iter()
            .filter(|(_, variant)| !variant.trim().is_empty())
            .filter_map(|(id, variant)| {
                let prompt = self.prompts.get(id)?;
                if prompt.variants.contains_key(variant.trim()) {
                    return None;
                }
                let known: Vec<&str> = prompt.variants.keys().map(String::as_str).collect();
                let message =
                    format!("No variant {:?}: choose one of {}.", variant.trim(), known.join(", "));
                Some(run_contract::Problem::new(
                    run_contract::problem::pointer("/variants", id),
                    message,
                ))
            })
            .collect()
    }

    /// Renders prompt `id` (variant `variant`, or A) with `vars`.
    pub fn render(
        &self,
        id: &str,
        variant: Option<&str>,
        vars: &Value,
    ) -> Result<RenderedPrompt, String> {
        let prompt = self.prompts.get(id).ok_or_else(|| format!("no prompt {id:?}"))?;
        let variant = variant.unwrap_or(DEFAULT_VARIANT);
        let template = prompt
            .variants
            .get(variant)
            .ok_or_else(|| format!("prompt {id:?} has no variant {variant:?}"))?;
        let rendered = render(template, vars, &self.library, prompt.strict)
            .map_err(|e| format!("{id}/{variant}: {e}"))?;
        Ok(RenderedPrompt {
            prompt_id: id.to_owned(),
            variant: variant.to_owned(),
            prompt_hash: rendered.hash,
            revision_hash: self.library.revision_hash(&[template]),
            text: rendered.text,
            warnings: rendered.warnings,
        })
    }
}

fn files(overrides: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> =
        lean::map_of(BUNDLED.iter().map(|(path, text)| ((*path).to_owned(), (*text).to_owned())));
    files.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use run_contract::action::Action;
    use serde_json::json;

    fn sample_vars() -> Value {
        json!({
            "task": "Find the price of the steel kettle", "follow_ups": "", "progress": "",
            "reviewer_notes": "", "page_summary": "Fixture Shop — Home",
            "plan": "1. Open the kettle", "last_action": "", "last_outcome": "",
            "dom_comparison": "", "successes": 0, "failures": 0, "history": "",
            "page_state": "[1]<a href=/x>Steel kettle", "max_actions": 5,
            "step": 1, "step_limit": 40,
            "reason": "the Planner says done", "planner": {"done": true},
            "navigator_summary": "visited 127.0.0.1; opened the kettle page"
        })
    }

    #[test]
    fn every_bundled_variant_renders_strictly_with_the_variables_the_engine_supplies() {
        let set = PromptSet::bundled();
        for id in ["planner", "navigator", "thinking"] {
            let prompt = set.prompt(id).unwrap_or_else(|| panic!("{id} is bundled"));
            for variant in prompt.variants.keys() {
                let rendered = set.render(id, Some(variant), &sample_vars()).unwrap();
                assert!(
                    rendered.text.contains("<sharedRule name=\"untrusted_page\">"),
                    "{id}/{variant}"
                );
                assert!(rendered.text.contains("Find the price of the steel kettle"));
                assert!(!rendered.text.contains("{{"), "{id}/{variant} left a tag");
                assert_eq!(rendered.prompt_hash.len(), 64);
            }
        }
    }

    #[test]
    fn an_override_is_checked_like_a_bundled_file_and_changes_the_hashes() {
        let mut edits = BTreeMap::new();
        edits.insert("navigator/A.md".to_owned(), "Task: {{task}} {{> json_only}}".to_owned());
        let edited = PromptSet::with_overrides(&edits).unwrap();
        let before = PromptSet::bundled().render("navigator", None, &sample_vars()).unwrap();
        let after = edited.render("navigator", None, &sample_vars()).unwrap();
        assert_ne!(before.revision_hash, after.revision_hash);
        assert_ne!(before.prompt_hash, after.prompt_hash);

        edits.insert("navigator/A.md".to_owned(), "{{> no_such_rule}}".to_owned());
        let error = PromptSet::with_overrides(&edits).unwrap_err();
        assert!(error.contains("no_such_rule") && error.contains("navigator/A.md"), "{error}");
    }

    #[test]
    fn a_missing_variable_fails_a_strict_prompt() {
        let error =
            PromptSet::bundled().render("planner", None, &json!({"task": "x"})).unwrap_err();
        assert!(error.contains("missing variable"), "{error}");
    }

    /// Every action the engine performs, one per variant (the contract's examples, which its
    /// tests hold to every variant), plus a scroll of the page rather than a container.
    fn every_action() -> Vec<Action> {
        let mut all = Action::examples();
        all.push(Action::Scroll { id: None, screens: -1.0 });
        all
    }

    #[test]
    fn the_navigator_schema_accepts_exactly_the_actions_the_engine_performs() {
        let set = PromptSet::bundled();
        let schema = &set.prompt("navigator").unwrap().schema;
        let branches =
            schema.as_value().pointer("/$defs/action/oneOf").unwrap().as_array().unwrap();
        let actions = every_action();
        assert_eq!(branches.len(), actions.len() - 1, "one schema branch per action");
        for action in actions {
            let json = serde_json::to_value(&action).unwrap();
            let reply = json!({"current_state": {"evaluation_previous_goal": "",
                               "thought_changed": "", "thought_state": "", "thought_next": "",
                               "extended_thoughts": [], "decision": "proceed", "memory": "",
                               "next_goal": ""}, "ask_user": "", "actions": [json]});
            assert_eq!(schema.validate(&reply), [], "{json}");
            let back: Action = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(back, action);
        }
    }
}
