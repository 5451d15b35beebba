//! Prompt templates with the semantics of seed `002_…` ("Prompt Parameterization",
//! "Prompt Composition"):
//!
//! | syntax | meaning |
//! |---|---|
//! | `{{a.b.c}}` | the value at that dot-path as a string: strings as they are, numbers and booleans printed, `null` empty, objects and arrays as compact JSON; array elements by index (`{{items.0}}`) |
//! | `{{{a.b}}}`, `{{a.b \| json}}` | the value as JSON (a string comes out quoted) |
//! | `{{a \| default:"x"}}` | `x` when the variable is missing or `null` |
//! | `{{> rule}}` | shared rule `rule`, rendered with the same variables, as `<sharedRule name="rule">…</sharedRule>` |
//!
//! A missing variable renders empty and adds a warning (lenient, the default); with
//! `strict` it is an error. A template that names a missing partial, or partials that
//! include each other in a cycle, fail when the [`Library`] is built, not at render time.
//! Every rendering carries the sha256 of its text (the prompt hash); a library has a
//! revision hash over all its sources.

use std::fmt;

use run_contract::digest::hex;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(String),
    Var { path: String, json: bool, default: Option<String> },
    Partial(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The template text is malformed.
    Syntax { at: usize, message: String },
    /// `{{> name}}` names no shared rule.
    MissingPartial { name: String, in_template: String },
    /// Shared rules include each other in a circle.
    CyclicPartial { chain: Vec<String> },
    /// A variable is missing and rendering is strict.
    MissingVariable { path: String },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Syntax { at, message } => {
                write!(f, "template syntax at byte {at}: {message}")
            }
            TemplateError::MissingPartial { name, in_template } => {
                write!(f, "{in_template} includes shared rule {name:?}, which does not exist")
            }
            TemplateError::CyclicPartial { chain } => {
                write!(f, "shared rules include each other in a cycle: {}", chain.join(" → "))
            }
            TemplateError::MissingVariable { path } => write!(f, "missing variable {path:?}"),
        }
    }
}

impl std::error::Error for TemplateError {}

impl Template {
    /// Parses `source`.
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        let mut nodes = Vec::new();
        let mut rest = source;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                nodes.push(Node::Text(rest[..open].to_owned()));
            }
            let at = offset + open;
            let triple = rest[open..].starts_with("{{{");
            let (start, closing) = if triple { (open + 3, "}}}") } else { (open + 2, "}}") };
            let Some(length) = rest[start..].find(closing) else {
                return Err(TemplateError::Syntax { at, message: format!("no closing {closing}") });
            };
            let inner = rest[start..start + length].trim();
            nodes.push(parse_tag(inner, triple, at)?);
            let consumed = start + length + closing.len();
            offset += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            nodes.push(Node::Text(rest.to_owned()));
        }
        Ok(Template { source: source.to_owned(), nodes })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variables this template reads, each with whether it has a default: what a
    /// pipeline's loader checks against the steps that exist.
    pub fn variables(&self) -> impl Iterator<Item = (&str, bool)> {
        self.nodes.iter().filter_map(|n| match n {
            Node::Var { path, default, .. } => Some((path.as_str(), default.is_some())),
            _ => None,
        })
    }

    /// The names of the shared rules this template includes.
    fn partials(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().filter_map(|n| match n {
            Node::Partial(name) => Some(name.as_str()),
            _ => None,
        })
    }
}

fn is_path(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        })
}

fn parse_tag(inner: &str, triple: bool, at: usize) -> Result<Node, TemplateError> {
    let syntax = |message: String| TemplateError::Syntax { at, message };
    if let Some(name) = inner.strip_prefix('>') {
        let name = name.trim();
        if triple || !is_path(name) {
            return Err(syntax(format!("bad shared-rule include {inner:?}")));
        }
        return Ok(Node::Partial(name.to_owned()));
    }
    let mut parts = split_filters(inner).into_iter();
    let path = parts.next().unwrap_or_default();
    if !is_path(&path) {
        return Err(syntax(format!("{path:?} is not a variable path")));
    }
    let mut json = triple;
    let mut default = None;
    for filter in parts {
        if filter == "json" {
            json = true;
        } else if let Some(value) = filter.strip_prefix("default:") {
            let value = value.trim();
            let quoted: Result<String, _> = serde_json::from_str(value);
            default = Some(quoted.map_err(|_| {
                syntax(format!("default needs a double-quoted string, got {value}"))
            })?);
        } else {
            return Err(syntax(format!("unknown filter {filter:?} (json, default:\"…\")")));
        }
    }
    Ok(Node::Var { path, json, default })
}

/// Splits `a | json | default:"x|y"` on the pipes outside quotes.
fn split_filters(inner: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            '|' if !quoted => parts.push(String::new()),
            _ => {
                if c == '"' && !escaped {
                    quoted = !quoted;
                }
                escaped = c == '\\' && !escaped;
                parts.last_mut().expect("never empty").push(c);
            }
        }
    }
    parts.into_iter().map(|p| p.trim().to_owned()).collect()
}

/// Shared rules, checked for missing and cyclic includes when built.
#[derive(Debug, Clone, Default)]
pub struct Library {
    rules: lean::SortedMap<String, Template>,
}

impl Library {
    /// Builds a library from `(name, source)` pairs and checks every include.
    pub fn new<'a>(
        rules: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Library, TemplateError> {
        let mut library = Library::default();
        for (name, source) in rules {
            library.rules.insert(name.to_owned(), Template::parse(source)?);
        }
        for name in library.rules.keys() {
            library.check_from(name, &mut vec![name.clone()])?;
        }
        Ok(library)
    }

    fn check_from(&self, name: &str, chain: &mut Vec<String>) -> Result<(), TemplateError> {
        let template = &self.rules[name];
        for include in template.partials() {
            if chain.iter().any(|n| n == include) {
                let mut cycle = chain.clone();
                cycle.push(include.to_owned());
                return Err(TemplateError::CyclicPartial { chain: cycle });
            }
            if !self.rules.contains_key(include) {
                return Err(TemplateError::MissingPartial {
                    name: include.to_owned(),
                    in_template: format!("shared rule {name:?}"),
                });
            }
            chain.push(include.to_owned());
            self.check_from(include, chain)?;
            chain.pop();
        }
        Ok(())
    }

    /// Checks that `template` only includes rules this library has.
    pub fn check(&self, template: &Template, name: &str) -> Result<(), TemplateError> {
        for include in template.partials() {
            if !self.rules.contains_key(include) {
                return Err(TemplateError::MissingPartial {
                    name: include.to_owned(),
                    in_template: name.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// sha256 over every rule's name and source: changes whenever any rule does.
    pub fn revision_hash(&self, templates: &[&Template]) -> String {
        let mut hasher = Sha256::new();
        for template in templates {
            hasher.update(template.source.as_bytes());
            hasher.update([0]);
        }
        for (name, rule) in &self.rules {
            hasher.update(name.as_bytes());
            hasher.update([0]);
            hasher.update(rule.source.as_bytes());
            hasher.update([0]);
        }
        hex(&hasher.finalize())
    }
}

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    /// Missing variables, in lenient mode.
    pub warnings: Vec<String>,
    /// sha256 of `text`, hex.
    pub hash: String,
}

/// Renders `template` with `vars`; `strict` turns missing variables into errors.
pub fn render(
    template: &Template,
    vars: &Value,
    library: &Library,
    strict: bool,
) -> Result<Rendered, TemplateError> {
    let mut out = String::with_capacity(template.source.len() * 2);
    let mut warnings = Vec::new();
    render_into(
        template,
        vars,
        library,
        strict,
        &mut out,
        &mut warnings,
        &mut lean::SortedSet::new(),
    )?;
    let hash = hex(&Sha256::digest(out.as_bytes()));
    Ok(Rendered { text: out, warnings, hash })
}

/// Renders `template` in JSON mode, for pipelines that build JSON: a template that is one
/// variable and nothing else yields that variable's value as it is (an object stays an
/// object, a number a number); any other template renders as text, into a string. A missing
/// lone variable is `null` with a warning (lenient) or an error (`strict`).
pub fn render_value(
    template: &Template,
    vars: &Value,
    library: &Library,
    strict: bool,
) -> Result<(Value, Vec<String>), TemplateError> {
    if let [Node::Var { path, default, .. }] = template.nodes.as_slice() {
        return match (lookup(vars, path), default) {
            (Some(value), _) if !value.is_null() || default.is_none() => {
                Ok((value.clone(), Vec::new()))
            }
            (_, Some(default)) => Ok((Value::String(default.clone()), Vec::new())),
            (None, None) if strict => Err(TemplateError::MissingVariable { path: path.clone() }),
            _ => Ok((Value::Null, vec![format!("missing variable {path:?}, rendered null")])),
        };
    }
    let rendered = render(template, vars, library, strict)?;
    Ok((Value::String(rendered.text), rendered.warnings))
}

fn render_into(
    template: &Template,
    vars: &Value,
    library: &Library,
    strict: bool,
    out: &mut String,
    warnings: &mut Vec<String>,
    active: &mut lean::SortedSet<String>,
) -> Result<(), TemplateError> {
    for node in &template.nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Var { path, json, default } => match (lookup(vars, path), default) {
                (Some(value), _) if !value.is_null() || default.is_none() => {
                    if *json {
                        out.push_str(&value.to_string());
                    } else {
                        out.push_str(&as_text(value));
                    }
                }
                (_, Some(default)) => {
                    if *json {
                        out.push_str(&Value::from(default.as_str()).to_string());
                    } else {
                        out.push_str(default);
                    }
                }
                (None, None) if strict => {
                    return Err(TemplateError::MissingVariable { path: path.clone() });
                }
                (None, None) => warnings.push(format!("missing variable {path:?}, rendered empty")),
                (Some(_), None) => unreachable!("covered by the first arm"),
            },
            Node::Partial(name) => {
                let Some(rule) = library.rules.get(name) else {
                    return Err(TemplateError::MissingPartial {
                        name: name.clone(),
                        in_template: "the prompt".into(),
                    });
                };
                if !active.insert(name.clone()) {
                    return Err(TemplateError::CyclicPartial { chain: vec![name.clone()] });
                }
                out.push_str(&format!("<sharedRule name=\"{name}\">\n"));
                render_into(rule, vars, library, strict, out, warnings, active)?;
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("</sharedRule>");
                active.remove(name);
            }
        }
    }
    Ok(())
}

fn lookup<'a>(vars: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(vars, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod conformance {
    //! One test per rule of the template semantics.

    use super::*;
    use serde_json::json;

    fn vars() -> Value {
        json!({
            "input": {"user_text": "find a kettle", "count": 3, "ok": true, "none": null,
                      "tags": ["a", "b"], "user": {"name": "Ada", "tz": "Europe/London"}},
            "quote": "say \"hi\""
        })
    }

    fn text(source: &str) -> String {
        render(&Template::parse(source).unwrap(), &vars(), &Library::default(), false).unwrap().text
    }

    #[test]
    fn double_braces_inject_strings_at_dot_paths() {
        assert_eq!(text("Task: {{input.user_text}}."), "Task: find a kettle.");
        assert_eq!(text("{{input.user.name}} in {{ input.user.tz }}"), "Ada in Europe/London");
        assert_eq!(text("{{quote}}"), "say \"hi\"", "strings are not escaped");
    }

    #[test]
    fn non_strings_print_naturally_and_null_is_empty() {
        assert_eq!(text("{{input.count}} {{input.ok}} [{{input.none}}]"), "3 true []");
        assert_eq!(text("{{input.tags}}"), "[\"a\",\"b\"]", "containers as compact JSON");
        assert_eq!(text("{{input.tags.1}}"), "b", "array elements by index");
    }

    #[test]
    fn triple_braces_and_the_json_filter_insert_json() {
        assert_eq!(text("{{{input.user}}}"), r#"{"name":"Ada","tz":"Europe/London"}"#);
        assert_eq!(text("{{input.user_text|json}}"), "\"find a kettle\"");
        assert_eq!(text("{{ input.tags | json }}"), "[\"a\",\"b\"]");
    }

    #[test]
    fn defaults_fill_missing_and_null_variables() {
        assert_eq!(text("{{input.missing | default:\"none\"}}"), "none");
        assert_eq!(text("{{input.none|default:\"n/a\"}}"), "n/a");
        assert_eq!(text("{{input.count | default:\"0\"}}"), "3", "present values win");
        assert_eq!(
            text("{{x | default:\"a|b \\\"c\\\"\"}}"),
            "a|b \"c\"",
            "pipes and quotes inside"
        );
        assert_eq!(text("{{x | default:\"[]\" | json}}"), "\"[]\"");
    }

    #[test]
    fn lenient_rendering_warns_and_renders_missing_variables_empty() {
        let template = Template::parse("a{{input.nope}}b").unwrap();
        let rendered = render(&template, &vars(), &Library::default(), false).unwrap();
        assert_eq!(rendered.text, "ab");
        assert_eq!(rendered.warnings, ["missing variable \"input.nope\", rendered empty"]);
    }

    #[test]
    fn strict_rendering_fails_on_missing_variables() {
        let template = Template::parse("a{{input.nope}}b").unwrap();
        let error = render(&template, &vars(), &Library::default(), true).unwrap_err();
        assert_eq!(error, TemplateError::MissingVariable { path: "input.nope".into() });
    }

    #[test]
    fn shared_rules_render_as_tagged_blocks_with_the_same_variables() {
        let library =
            Library::new([("json_only", "Return JSON only, {{input.user.name}}.")]).unwrap();
        let template = Template::parse("Rules:\n{{> json_only}}\nGo.").unwrap();
        let rendered = render(&template, &vars(), &library, true).unwrap();
        assert_eq!(
            rendered.text,
            "Rules:\n<sharedRule name=\"json_only\">\nReturn JSON only, Ada.\n</sharedRule>\nGo."
        );
    }

    #[test]
    fn rules_may_include_rules() {
        let library = Library::new([("outer", "O {{> inner}}"), ("inner", "I")]).unwrap();
        let rendered = render(&Template::parse("{{> outer}}").unwrap(), &vars(), &library, true);
        assert_eq!(
            rendered.unwrap().text,
            "<sharedRule name=\"outer\">\nO <sharedRule name=\"inner\">\nI\n</sharedRule>\n</sharedRule>"
        );
    }

    #[test]
    fn missing_and_cyclic_partials_fail_when_the_library_loads() {
        let missing = Library::new([("a", "{{> ghost}}")]).unwrap_err();
        assert!(
            matches!(missing, TemplateError::MissingPartial { ref name, .. } if name == "ghost")
        );
        let cycle = Library::new([("a", "{{> b}}"), ("b", "{{> a}}")]).unwrap_err();
        assert!(matches!(cycle, TemplateError::CyclicPartial { .. }), "{cycle}");
        assert!(cycle.to_string().contains("a → b → a"), "{cycle}");
        let library = Library::default();
        let prompt = Template::parse("{{> nowhere}}").unwrap();
        assert!(
            library.check(&prompt, "navigator/A").unwrap_err().to_string().contains("navigator/A")
        );
    }

    #[test]
    fn malformed_tags_are_syntax_errors_with_a_position() {
        for bad in
            ["x {{input", "{{}}", "{{a..b}}", "{{a | shout}}", "{{a | default:x}}", "{{{> r}}}"]
        {
            let error = Template::parse(bad).unwrap_err();
            assert!(matches!(error, TemplateError::Syntax { .. }), "{bad}: {error}");
        }
        let TemplateError::Syntax { at, .. } = Template::parse("hello {{oops").unwrap_err() else {
            panic!()
        };
        assert_eq!(at, 6);
    }

    #[test]
    fn text_without_tags_and_lone_braces_pass_through() {
        assert_eq!(text("plain { text } here"), "plain { text } here");
        assert_eq!(text(""), "");
    }

    #[test]
    fn the_prompt_hash_follows_the_rendered_text() {
        let template = Template::parse("Task: {{input.user_text}}").unwrap();
        let a = render(&template, &vars(), &Library::default(), false).unwrap();
        let b = render(
            &template,
            &json!({"input": {"user_text": "other"}}),
            &Library::default(),
            false,
        )
        .unwrap();
        assert_eq!(a.hash.len(), 64);
        assert_ne!(a.hash, b.hash);
        let again = render(&template, &vars(), &Library::default(), false).unwrap();
        assert_eq!(a.hash, again.hash, "same text, same hash");
    }

    #[test]
    fn json_mode_keeps_a_lone_variable_s_value_and_renders_anything_else_as_text() {
        let value = |source: &str, strict: bool| {
            render_value(&Template::parse(source).unwrap(), &vars(), &Library::default(), strict)
        };
        assert_eq!(value("{{input.user}}", false).unwrap().0, vars()["input"]["user"]);
        assert_eq!(value(" {{{input.count}}} ", false).unwrap().0, json!(" 3 "), "not alone");
        assert_eq!(value("{{input.count}}", false).unwrap().0, json!(3));
        assert_eq!(value("{{input.none}}", false).unwrap().0, Value::Null);
        assert_eq!(value("n={{input.count}}", false).unwrap().0, json!("n=3"));
        assert_eq!(value("{{input.x | default:\"-\"}}", true).unwrap().0, json!("-"));
        let (missing, warnings) = value("{{input.x}}", false).unwrap();
        assert_eq!((missing, warnings.len()), (Value::Null, 1));
        assert!(value("{{input.x}}", true).is_err(), "strict");
    }

    #[test]
    fn a_template_lists_the_variables_it_reads() {
        let template = Template::parse("{{a.b}} {{{c}}} {{d | default:\"\"}} {{> r}}").unwrap();
        let read: Vec<_> = template.variables().collect();
        assert_eq!(read, [("a.b", false), ("c", false), ("d", true)]);
    }

    #[test]
    fn the_revision_hash_changes_with_any_source() {
        let template = Template::parse("{{> r}}").unwrap();
        let one = Library::new([("r", "one")]).unwrap();
        let two = Library::new([("r", "two")]).unwrap();
        assert_ne!(one.revision_hash(&[&template]), two.revision_hash(&[&template]));
        let other = Template::parse("{{> r}}!").unwrap();
        assert_ne!(one.revision_hash(&[&template]), one.revision_hash(&[&other]));
    }
}
