//! One thing wrong with a document, and where: every checker (structured output against its
//! schema, a pipeline file, a workflow, the settings, an import) reports [`Problem`]s at
//! JSON Pointers (RFC 6901), so a page files each under the field it belongs to by prefix.

use std::fmt;

use serde::Serialize;

/// A problem at the JSON Pointer `path` (`/subtasks/1/dependsOn/0`; `""` is the whole
/// document).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, tagged_de::FieldsDeserialize,
)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }

    /// A problem with the document as a whole (it is not JSON, not YAML, …).
    pub fn whole(message: impl Into<String>) -> Self {
        Self::new("", message)
    }

    /// Whether the problem is at `base` or inside it.
    pub fn is_under(&self, base: &str) -> bool {
        under(&self.path, base)
    }
}

/// Said the way the repair loop tells the model and the pages show a list:
/// `at /actions/0/id: expected integer, got string`.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() { "the top level" } else { &self.path };
        write!(f, "at {at}: {}", self.message)
    }
}

/// The JSON Pointer to `key` under `path`, with `~` and `/` in the key escaped.
pub fn pointer(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The JSON Pointer of a dot path whose keys hold no dots (`thoughts.thought2` →
/// `/thoughts/thought2`; `""` stays the whole document).
pub fn dot_pointer(path: &str) -> String {
    if path.is_empty() {
        return String::new();
    }
    path.split('.').fold(String::new(), |at, key| pointer(&at, key))
}

/// Whether the JSON Pointer `path` is `base` or inside it (`/subtasks/1` holds
/// `/subtasks/1/text`, not `/subtasks/10`).
pub fn under(path: &str, base: &str) -> bool {
    path.strip_prefix(base).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_escaped_and_prefixes_end_at_a_slash() {
        assert_eq!(pointer("/items/0", "a/b~c"), "/items/0/a~1b~0c");
        assert_eq!(pointer("", "name"), "/name");
        assert_eq!(dot_pointer("steps.1.url"), "/steps/1/url");
        assert_eq!(dot_pointer(""), "");
        let problem = Problem::new("/subtasks/1/text", "empty");
        assert!(problem.is_under("/subtasks/1"));
        assert!(problem.is_under(""));
        assert!(!problem.is_under("/subtasks/10"));
        assert!(!Problem::new("/subtasks/10", "x").is_under("/subtasks/1"));
    }

    #[test]
    fn a_problem_names_its_place_or_the_top_level() {
        assert_eq!(
            Problem::new("/done", "expected boolean").to_string(),
            "at /done: expected boolean"
        );
        assert_eq!(Problem::whole("not JSON").to_string(), "at the top level: not JSON");
        let wire = serde_json::to_value(Problem::new("/a", "b")).unwrap();
        assert_eq!(wire, serde_json::json!({"path": "/a", "message": "b"}));
    }
}
