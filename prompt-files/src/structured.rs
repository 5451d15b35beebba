//! Structured output: getting JSON out of a model's reply, and checking it against the
//! agent's JSON Schema.
//!
//! [`extract_json`] is lenient about what models wrap around JSON: code fences, prose before
//! and after, trailing commas. [`Schema`] validates the subset of JSON Schema the agents'
//! schemas use — `type`, `properties`, `required`, `additionalProperties` (boolean), `items`,
//! `minItems`, `maxItems`, `enum`, `const`, `minLength`, `maxLength`, `minimum`, `maximum`,
//! `oneOf`, `anyOf`, `$ref` into `#/$defs`, and the annotations `description`, `title`,
//! `default`, `$schema`, `$defs`. Any other keyword is refused when the schema is compiled,
//! so nothing is silently not checked.

pub use run_contract::Problem;
use run_contract::problem::pointer;
use serde_json::{Map, Value};

/// Why no JSON could be read from a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractError {
    pub message: String,
}

/// Reads the JSON value in a model's reply.
pub fn extract_json(reply: &str) -> Result<Value, ExtractError> {
    let text = reply.trim();
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let fenced = fenced_block(text).unwrap_or(text);
    let candidate = outermost_json(fenced).unwrap_or(fenced);
    let cleaned = without_trailing_commas(candidate);
    serde_json::from_str(&cleaned).map_err(|error| ExtractError {
        message: if candidate.trim_start().starts_with(['{', '[']) {
            format!("the JSON does not parse: {error}")
        } else {
            "the reply contains no JSON object".to_owned()
        },
    })
}

/// The body of the first ``` fenced block, if any.
fn fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n').map_or(0, |i| i + 1); // skip a language tag
    let body = &after[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(&body[..end])
}

/// Tracks whether a scan over JSON text is inside a string literal.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Feeds `c`; true when `c` belongs to a string literal (its quotes included).
    fn step(&mut self, c: char) -> bool {
        if self.inside {
            match (self.escaped, c) {
                (true, _) => self.escaped = false,
                (false, '\\') => self.escaped = true,
                (false, '"') => self.inside = false,
                _ => {}
            }
            true
        } else {
            self.inside = c == '"';
            self.inside
        }
    }
}

/// The first balanced `{…}` or `[…]`, skipping brackets inside strings.
fn outermost_json(text: &str) -> Option<&str> {
    let start = text.find(['{', '['])?;
    let mut depth = 0usize;
    let mut strings = Strings::default();
    for (i, c) in text[start..].char_indices() {
        if strings.step(c) {
            continue;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Drops commas that directly precede `}` or `]`, outside strings.
fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut strings = Strings::default();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !strings.step(c) && c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// A JSON Schema, checked for supported keywords.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Value,
}

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "const",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "oneOf",
    "anyOf",
    "$ref",
    "description",
    "title",
    "default",
    "$schema",
    "$defs",
];

impl Schema {
    pub fn compile(root: Value) -> Result<Schema, String> {
        check_keywords(&root, "")?;
        Ok(Schema { root })
    }

    pub fn as_value(&self) -> &Value {
        &self.root
    }

    /// Every violation of the schema by `value`; empty when it conforms.
    pub fn validate(&self, value: &Value) -> Vec<Problem> {
        let mut found = Vec::new();
        self.check(&self.root, value, "", &mut found);
        found
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => reference
                .strip_prefix("#/$defs/")
                .and_then(|name| self.root.pointer(&format!("/$defs/{name}")))
                .unwrap_or(schema),
            None => schema,
        }
    }

    fn check(&self, schema: &Value, value: &Value, path: &str, found: &mut Vec<Problem>) {
        let schema = self.resolve(schema);
        let mut fail = |message: String| found.push(Problem::new(path, message));
        if let Some(kind) = schema.get("type") {
            let kinds: Vec<&str> = match kind {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            if !kinds.iter().any(|k| has_type(value, k)) {
                fail(format!("expected {}, got {}", kinds.join(" or "), type_name(value)));
                return;
            }
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            fail(format!("{value} is not one of {}", Value::from(allowed.clone())));
        }
        if let Some(expected) = schema.get("const")
            && expected != value
        {
            fail(format!("must be {expected}, got {value}"));
        }
        if let Value::String(text) = value {
            let length = text.chars().count() as f64;
            bounds(schema, ("minLength", "maxLength"), length, " characters", &mut fail);
        }
        if let Some(number) = value.as_f64() {
            bounds(schema, ("minimum", "maximum"), number, "", &mut fail);
        }
        if let Value::Object(object) = value {
            self.check_object(schema, object, path, found);
        }
        if let Value::Array(items) = value {
            self.check_array(schema, items, path, found);
        }
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            self.check_one_of(branches, value, path, found);
        }
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            let fits = branches.iter().any(|b| {
                let mut inner = Vec::new();
                self.check(b, value, path, &mut inner);
                inner.is_empty()
            });
            if !fits {
                found.push(Problem {
                    path: path.to_owned(),
                    message: "matches none of the allowed shapes".into(),
                });
            }
        }
    }

    fn check_object(
        &self,
        schema: &Value,
        object: &Map<String, Value>,
        path: &str,
        found: &mut Vec<Problem>,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if let Some(name) = name.as_str()
                && !object.contains_key(name)
            {
                found.push(Problem {
                    path: path.to_owned(),
                    message: format!("missing required field {name:?}"),
                });
            }
        }
        for (key, item) in object {
            let child = pointer(path, key);
            match properties.and_then(|p| p.get(key)) {
                Some(property) => self.check(property, item, &child, found),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    let known: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    found.push(Problem {
                        path: child,
                        message: format!(
                            "unexpected field {key:?} (allowed: {})",
                            known.join(", ")
                        ),
                    });
                }
                None => {}
            }
        }
    }

    fn check_array(&self, schema: &Value, items: &[Value], path: &str, found: &mut Vec<Problem>) {
        let mut fail = |message: String| found.push(Problem::new(path, message));
        bounds(schema, ("minItems", "maxItems"), items.len() as f64, " items", &mut fail);
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.check(item_schema, item, &format!("{path}/{i}"), found);
            }
        }
    }

    /// `oneOf`: exactly one branch must fit. When the branches are told apart by a `const`
    /// property (a discriminated union like `{"action": "click", …}`), the errors are those
    /// of the branch the value names, which is what a model can act on.
    fn check_one_of(
        &self,
        branches: &[Value],
        value: &Value,
        path: &str,
        found: &mut Vec<Problem>,
    ) {
        let results: Vec<Vec<Problem>> = branches
            .iter()
            .map(|b| {
                let mut inner = Vec::new();
                self.check(b, value, path, &mut inner);
                inner
            })
            .collect();
        let fitting = results.iter().filter(|r| r.is_empty()).count();
        if fitting == 1 {
            return;
        }
        if fitting > 1 {
            found.push(Problem {
                path: path.to_owned(),
                message: "matches more than one allowed shape".into(),
            });
            return;
        }
        if let Some((key, tags)) = self.discriminator(branches) {
            let named = value.get(&key);
            if let Some(at) = named.and_then(|n| tags.iter().position(|t| t == n)) {
                found.extend(results[at].iter().cloned());
            } else {
                let options: Vec<String> = tags.iter().map(Value::to_string).collect();
                found.push(Problem {
                    path: format!("{path}/{key}"),
                    message: format!(
                        "must be one of {}, got {}",
                        options.join(", "),
                        named.unwrap_or(&Value::Null)
                    ),
                });
            }
            return;
        }
        found.push(Problem {
            path: path.to_owned(),
            message: "matches none of the allowed shapes".into(),
        });
    }

    /// The property every branch pins with `const`, and each branch's value for it.
    fn discriminator(&self, branches: &[Value]) -> Option<(String, Vec<Value>)> {
        let first = self.resolve(branches.first()?).get("properties")?.as_object()?;
        for (key, property) in first {
            if property.get("const").is_none() {
                continue;
            }
            let tags: Option<Vec<Value>> = branches
                .iter()
                .map(|b| self.resolve(b).pointer(&format!("/properties/{key}/const")).cloned())
                .collect();
            if let Some(tags) = tags {
                return Some((key.clone(), tags));
            }
        }
        None
    }
}

/// Checks `actual` against the lower and upper bound keywords `keys` of `schema`. A count
/// of `unit`s (characters, items) reads "must have"; a plain number (`unit` "") "must be".
fn bounds(
    schema: &Value,
    keys: (&str, &str),
    actual: f64,
    unit: &str,
    fail: &mut impl FnMut(String),
) {
    let verb = if unit.is_empty() { "be" } else { "have" };
    if let Some(min) = schema.get(keys.0).and_then(Value::as_f64)
        && actual < min
    {
        fail(format!("must {verb} at least {min}{unit}"));
    }
    if let Some(max) = schema.get(keys.1).and_then(Value::as_f64)
        && actual > max
    {
        let has = if unit.is_empty() { String::new() } else { format!(", has {actual}") };
        fail(format!("must {verb} at most {max}{unit}{has}"));
    }
}

fn check_keywords(schema: &Value, path: &str) -> Result<(), String> {
    let Value::Object(object) = schema else {
        return if schema.is_boolean() {
            Ok(())
        } else {
            Err(format!("{path}: a schema must be an object"))
        };
    };
    for (key, inner) in object {
        if !KEYWORDS.contains(&key.as_str()) {
            return Err(format!("{path}: unsupported schema keyword {key:?}"));
        }
        match key.as_str() {
            "properties" | "$defs" => {
                for (name, sub) in inner.as_object().into_iter().flatten() {
                    check_keywords(sub, &format!("{path}/{key}/{name}"))?;
                }
            }
            "items" => check_keywords(inner, &format!("{path}/items"))?,
            "oneOf" | "anyOf" => {
                for (i, sub) in inner.as_array().into_iter().flatten().enumerate() {
                    check_keywords(sub, &format!("{path}/{key}/{i}"))?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON in `raw` and its violations of `schema` (a parse failure is one violation at
/// the top level).
pub fn check_answer(raw: &str, schema: &Schema) -> (Option<Value>, Vec<Problem>) {
    match extract_json(raw) {
        Ok(value) => {
            let problems = schema.validate(&value);
            (Some(value), problems)
        }
        Err(error) => (None, vec![Problem::whole(error.message)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_json_is_read_as_is() {
        assert_eq!(extract_json(" {\"done\": true} ").unwrap(), json!({"done": true}));
    }

    #[test]
    fn code_fences_and_prose_around_the_json_are_dropped() {
        let reply = "Sure! Here is my plan:\n```json\n{\"next\": \"click\", \"note\": \"a } in text\"}\n```\nHope it helps.";
        assert_eq!(extract_json(reply).unwrap(), json!({"next": "click", "note": "a } in text"}));
        let prose = "I think {\"a\": [1, 2]} is right, because {reasons}.";
        assert_eq!(extract_json(prose).unwrap(), json!({"a": [1, 2]}));
    }

    #[test]
    fn trailing_commas_are_forgiven_outside_strings() {
        let reply = "{\"a\": [1, 2,], \"b\": \"x,}\",\n}";
        assert_eq!(extract_json(reply).unwrap(), json!({"a": [1, 2], "b": "x,}"}));
    }

    #[test]
    fn a_reply_without_json_says_so() {
        assert_eq!(
            extract_json("I cannot do that.").unwrap_err().message,
            "the reply contains no JSON object"
        );
        assert!(extract_json("{\"a\": tru}").unwrap_err().message.contains("does not parse"));
    }

    fn navigator() -> Schema {
        Schema::compile(json!({
            "type": "object",
            "required": ["current_state", "actions"],
            "additionalProperties": false,
            "properties": {
                "current_state": {"type": "object", "required": ["next_goal"],
                                  "properties": {"next_goal": {"type": "string", "minLength": 1}}},
                "actions": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"$ref": "#/$defs/action"}}
            },
            "$defs": {"action": {"oneOf": [
                {"type": "object", "required": ["action", "id"], "additionalProperties": false,
                 "properties": {"action": {"const": "click"}, "id": {"type": "integer", "minimum": 1}}},
                {"type": "object", "required": ["action", "url"], "additionalProperties": false,
                 "properties": {"action": {"const": "go_to_url"}, "url": {"type": "string"}}}
            ]}}
        }))
        .unwrap()
    }

    #[test]
    fn a_conforming_reply_has_no_violations() {
        let reply = json!({"current_state": {"next_goal": "open it"},
                           "actions": [{"action": "click", "id": 3}, {"action": "go_to_url", "url": "https://x"}]});
        assert_eq!(navigator().validate(&reply), []);
    }

    #[test]
    fn violations_point_at_the_value_and_say_what_is_wrong() {
        let reply = json!({"current_state": {"next_goal": ""}, "actions": [], "extra": 1});
        let found: Vec<String> =
            navigator().validate(&reply).iter().map(ToString::to_string).collect();
        assert!(
            found.contains(
                &"at /current_state/next_goal: must have at least 1 characters".to_string()
            ),
            "{found:?}"
        );
        assert!(
            found.contains(&"at /actions: must have at least 1 items".to_string()),
            "{found:?}"
        );
        assert!(
            found.iter().any(|f| f.starts_with("at /extra: unexpected field \"extra\"")),
            "{found:?}"
        );
        let missing = navigator().validate(&json!({"actions": [{"action": "click", "id": 1}]}));
        assert_eq!(
            missing[0].to_string(),
            "at the top level: missing required field \"current_state\""
        );
    }

    #[test]
    fn a_union_member_is_judged_by_the_branch_its_tag_names() {
        let reply = json!({"current_state": {"next_goal": "x"}, "actions": [{"action": "click", "id": "7"}]});
        let found = navigator().validate(&reply);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].to_string(), "at /actions/0/id: expected integer, got string");
        let unknown = json!({"current_state": {"next_goal": "x"}, "actions": [{"action": "fly"}]});
        let found = navigator().validate(&unknown);
        assert_eq!(
            found[0].to_string(),
            "at /actions/0/action: must be one of \"click\", \"go_to_url\", got \"fly\""
        );
    }

    #[test]
    fn enums_types_and_bounds_are_checked() {
        let schema = Schema::compile(json!({"type": "object", "properties": {
            "level": {"enum": ["low", "high"]}, "n": {"type": "number", "maximum": 5},
            "maybe": {"type": ["string", "null"]}}}))
        .unwrap();
        let found = schema.validate(&json!({"level": "mid", "n": 6, "maybe": null}));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(schema.validate(&json!({"level": "low", "n": 5, "maybe": "x"})).is_empty());
    }

    #[test]
    fn unsupported_keywords_are_refused_at_compile_time() {
        let error =
            Schema::compile(json!({"type": "object", "properties": {"a": {"pattern": "^x"}}}))
                .unwrap_err();
        assert_eq!(error, "/properties/a: unsupported schema keyword \"pattern\"");
    }
}
