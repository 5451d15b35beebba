//! Request bodies checked against `openapi.yaml` itself, so each shape and limit of the
//! contract is written once. The spec is embedded, parsed and its patterns compiled on
//! first use (`router` forces that at start-up); a body is walked against its schema and
//! every problem is collected with its dot path, in the schema's order: unknown fields,
//! then missing ones in `required` order, then each property in `properties` order.
//!
//! OpenAPI's request reading applies: a `readOnly` property is neither required nor
//! checked, since writes may echo it back and the server ignores it. The keywords read are
//! `$ref` (any local pointer), `allOf` (objects merged into one), `oneOf` (a null
//! alternative; a union told apart by a property every variant fixes with `const`, or by
//! `discriminator`), `type` (one or a list), `enum`, `const`, `minimum`, `maximum`,
//! `minLength`, `maxLength` (in Unicode scalar values), `pattern`, `format: date-time`,
//! `minItems`, `maxItems`, `items`, `uniqueItems`, `properties`, `required`,
//! `additionalProperties`, `unevaluatedProperties: false` and `maxProperties`. What a
//! schema says only in prose or with `if`/`then`/`else` is checked in `validate` and the
//! routes.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use serde_norway::Value as Yaml;

use crate::validate::{Check, join};

static SPEC: LazyLock<Spec> = LazyLock::new(|| {
    Spec::parse(include_str!("../openapi.yaml")).unwrap_or_else(|e| panic!("openapi.yaml: {e}"))
});

/// The parsed contract.
pub fn spec() -> &'static Spec {
    &SPEC
}

pub struct Spec {
    root: Yaml,
    patterns: HashMap<String, Regex>,
    /// The schema `true`, for parts of a body another check owns.
    any: Yaml,
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self, String> {
        let root: Yaml = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        let mut patterns = HashMap::new();
        collect_patterns(&root, &mut patterns)?;
        let spec = Self { root, patterns, any: Yaml::Bool(true) };
        spec.resolve_all(&spec.root)?;
        Ok(spec)
    }

    /// Every `$ref` must lead somewhere, so a typo fails at start-up, not on a request.
    fn resolve_all(&self, node: &Yaml) -> Result<(), String> {
        match node {
            Yaml::Mapping(map) => {
                if let Some(reference) = node.get("$ref").and_then(Yaml::as_str) {
                    self.pointer(reference).ok_or_else(|| format!("no {reference}"))?;
                }
                map.values().try_for_each(|v| self.resolve_all(v))
            }
            Yaml::Sequence(items) => items.iter().try_for_each(|v| self.resolve_all(v)),
            _ => Ok(()),
        }
    }

    /// The component schema `name`.
    pub fn schema(&self, name: &str) -> &Yaml {
        self.root["components"]["schemas"]
            .get(name)
            .unwrap_or_else(|| panic!("openapi.yaml has no schema {name}"))
    }

    /// Checks `value` against the component schema `name`, its paths under `path`.
    pub fn check(&self, name: &str, value: &Value, path: &str, c: &mut Check) {
        self.check_with(name, value, path, c, &|_| None);
    }

    /// As `check`, with the schema at some paths replaced by `at`'s: `Spec::any` for a
    /// part checked on its own, or a schema chosen by another field.
    pub fn check_with<'s>(
        &'s self,
        name: &str,
        value: &Value,
        path: &str,
        c: &mut Check,
        at: &dyn Fn(&str) -> Option<&'s Yaml>,
    ) {
        Walk { spec: self, at }.value(self.schema(name), value, path, c);
    }

    /// The schema `true`: anything.
    pub fn any(&self) -> &Yaml {
        &self.any
    }

    /// The schema of the field at dot path `field` (`thoughts.thought2`,
    /// `extendedThoughts.1`) in the component schema `name`.
    pub fn field(&self, name: &str, field: &str) -> Option<&Yaml> {
        field.split('.').try_fold(self.schema(name), |schema, part| {
            let schema = self.resolve(schema);
            if part.bytes().all(|b| b.is_ascii_digit()) {
                schema.get("items")
            } else {
                self.parts(schema).into_iter().find_map(|p| p.get("properties")?.get(part))
            }
        })
    }

    /// The names of the properties of schema `name` a write carries (its `readOnly` ones
    /// left out), in order: what the server stores of a record.
    pub fn writable(&self, name: &str) -> Vec<&str> {
        let parts = self.parts(self.schema(name));
        let properties = parts.iter().filter_map(|p| p.get("properties")?.as_mapping()).flatten();
        properties.filter(|(_, s)| !read_only(s)).filter_map(|(k, _)| k.as_str()).collect()
    }

    /// Whether `text` matches the `pattern` of the string schema `name` (ids in paths and
    /// queries).
    pub fn matches(&self, name: &str, text: &str) -> bool {
        let pattern = self.resolve(self.schema(name)).get("pattern").and_then(Yaml::as_str);
        pattern.is_some_and(|p| self.patterns[p].is_match(text))
    }

    fn pointer(&self, reference: &str) -> Option<&Yaml> {
        let mut node = &self.root;
        for token in reference.strip_prefix("#/")?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Yaml::Sequence(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => node.get(token.as_str())?,
            };
        }
        Some(node)
    }

    fn resolve<'a>(&'a self, mut schema: &'a Yaml) -> &'a Yaml {
        while let Some(reference) = schema.get("$ref").and_then(Yaml::as_str) {
            schema = self.pointer(reference).expect("checked at parse");
        }
        schema
    }

    /// The schema and, through `allOf`, every schema it is made of.
    fn parts<'a>(&'a self, schema: &'a Yaml) -> Vec<&'a Yaml> {
        let schema = self.resolve(schema);
        let mut parts = vec![schema];
        for part in schema.get("allOf").and_then(Yaml::as_sequence).into_iter().flatten() {
            parts.extend(self.parts(part));
        }
        parts
    }
}

fn collect_patterns(node: &Yaml, out: &mut HashMap<String, Regex>) -> Result<(), String> {
    match node {
        Yaml::Mapping(map) => {
            if let Some(pattern) = node.get("pattern").and_then(Yaml::as_str) {
                let regex = Regex::new(pattern).map_err(|e| format!("pattern {pattern}: {e}"))?;
                out.insert(pattern.to_owned(), regex);
            }
            map.values().try_for_each(|v| collect_patterns(v, out))
        }
        Yaml::Sequence(items) => items.iter().try_for_each(|v| collect_patterns(v, out)),
        _ => Ok(()),
    }
}

struct Walk<'s, 'f> {
    spec: &'s Spec,
    at: &'f dyn Fn(&str) -> Option<&'s Yaml>,
}

impl<'s> Walk<'s, '_> {
    fn value(&self, schema: &'s Yaml, value: &Value, path: &str, c: &mut Check) {
        let schema = self.spec.resolve((self.at)(path).unwrap_or(schema));
        match schema {
            Yaml::Bool(true) => return,
            Yaml::Bool(false) => return c.err(path, "is not allowed"),
            _ => {}
        }
        if let Some(branches) = schema.get("oneOf").and_then(Yaml::as_sequence) {
            return self.one_of(schema, branches, value, path, c);
        }
        if let Some(fixed) = schema.get("const") {
            if json(fixed) != *value {
                c.err(path, format!("must be {}", shown(fixed)));
            }
            return;
        }
        // An enum says what is allowed more helpfully than its type would.
        if let Some(allowed) = schema.get("enum").and_then(Yaml::as_sequence) {
            if !allowed.iter().any(|a| json(a) == *value) {
                let names: Vec<String> = allowed.iter().map(shown).collect();
                c.err(path, format!("must be one of {}", names.join(", ")));
            }
            return;
        }
        let types = self.types(schema);
        if value.is_null() && types.contains(&"null") {
            return;
        }
        if !types.is_empty() && !types.iter().any(|t| is_type(value, t)) {
            return c.err(path, type_message(&types));
        }
        match value {
            Value::String(text) => self.string(schema, text, path, c),
            Value::Number(_) => bounds(schema, value, path, c),
            Value::Array(items) => self.array(schema, items, path, c),
            Value::Object(map) => self.object(schema, map, path, c),
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// The allowed types, from the schema or, for an `allOf`, from its parts.
    fn types(&self, schema: &'s Yaml) -> Vec<&'s str> {
        self.spec
            .parts(schema)
            .into_iter()
            .find_map(|part| match part.get("type")? {
                Yaml::String(one) => Some(vec![one.as_str()]),
                Yaml::Sequence(list) => Some(list.iter().filter_map(Yaml::as_str).collect()),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn one_of(
        &self,
        schema: &'s Yaml,
        branches: &'s [Yaml],
        value: &Value,
        path: &str,
        c: &mut Check,
    ) {
        let branches: Vec<&'s Yaml> = branches.iter().map(|b| self.spec.resolve(b)).collect();
        let (nulls, others): (Vec<&'s Yaml>, Vec<&'s Yaml>) = branches
            .into_iter()
            .partition(|b| b.get("type").and_then(Yaml::as_str) == Some("null"));
        if value.is_null() && !nulls.is_empty() {
            return;
        }
        if let Some(tag) = discriminator(schema, &others) {
            let Some(map) = value.as_object() else { return c.err(path, "must be an object") };
            let variants: Vec<(&str, &Yaml)> =
                others.iter().filter_map(|b| Some((fixed(b, tag)?, *b))).collect();
            let given = map.get(tag);
            match variants.iter().find(|(name, _)| given.and_then(Value::as_str) == Some(*name)) {
                Some((_, variant)) => self.value(variant, value, path, c),
                None if given.is_none() => c.err(&join(path, tag), "is required"),
                None => {
                    let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
                    c.err(&join(path, tag), format!("must be one of {}", names.join(", ")));
                }
            }
            return;
        }
        match others.as_slice() {
            [only] => self.value(only, value, path, c),
            _ => {
                let fits = |branch: &&'s Yaml| {
                    let mut trial = Check::default();
                    self.value(branch, value, path, &mut trial);
                    trial.ok()
                };
                if !others.iter().any(fits) {
                    c.err(path, "must match one of its alternatives");
                }
            }
        }
    }

    fn string(&self, schema: &Yaml, text: &str, path: &str, c: &mut Check) {
        let len = text.chars().count() as u64;
        if !count(schema, ["minLength", "maxLength"], len, "characters", path, c) {
            return;
        }
        if let Some(pattern) = schema.get("pattern").and_then(Yaml::as_str)
            && !self.spec.patterns[pattern].is_match(text)
        {
            // The schema's title names the shape for a person; the pattern is the fallback.
            let what = schema.get("title").and_then(Yaml::as_str).unwrap_or(pattern);
            return c.err(path, format!("must be {what}"));
        }
        if schema.get("format").and_then(Yaml::as_str) == Some("date-time")
            && crate::time::parse_ms(text).is_none()
        {
            c.err(path, "must be an RFC 3339 date-time");
        }
    }

    fn array(&self, schema: &'s Yaml, items: &[Value], path: &str, c: &mut Check) {
        if !count(schema, ["minItems", "maxItems"], items.len() as u64, "items", path, c) {
            return;
        }
        if let Some(item) = schema.get("items") {
            for (i, value) in items.iter().enumerate() {
                self.value(item, value, &join(path, &i.to_string()), c);
            }
        }
        if schema.get("uniqueItems").and_then(Yaml::as_bool) == Some(true) {
            for (i, value) in items.iter().enumerate() {
                if items[..i].contains(value) {
                    c.err(&join(path, &i.to_string()), "is repeated");
                }
            }
        }
    }

    fn object(
        &self,
        schema: &'s Yaml,
        map: &serde_json::Map<String, Value>,
        path: &str,
        c: &mut Check,
    ) {
        let mut properties: Vec<(&str, &Yaml)> = Vec::new();
        let mut required: Vec<&str> = Vec::new();
        let (mut closed, mut others, mut most) = (false, None, None);
        for part in self.spec.parts(schema) {
            let declared = part.get("properties").and_then(Yaml::as_mapping).into_iter().flatten();
            for (name, property) in declared {
                if let Some(name) = name.as_str()
                    && !properties.iter().any(|(known, _)| *known == name)
                {
                    properties.push((name, property));
                }
            }
            let listed = part.get("required").and_then(Yaml::as_sequence).into_iter().flatten();
            required.extend(listed.filter_map(Yaml::as_str));
            match part.get("additionalProperties") {
                Some(Yaml::Bool(false)) => closed = true,
                Some(extra @ Yaml::Mapping(_)) => others = Some(extra),
                _ => {}
            }
            closed |= part.get("unevaluatedProperties").and_then(Yaml::as_bool) == Some(false);
            most = most.or(part.get("maxProperties").and_then(Yaml::as_u64));
        }
        let declared = |key: &str| properties.iter().find(|(name, _)| *name == key).map(|p| p.1);
        if closed && others.is_none() {
            for key in map.keys().filter(|k| declared(k).is_none()) {
                c.err(&join(path, key), "unknown field");
            }
        }
        let mut missing: Vec<&str> = Vec::new();
        for key in required {
            let read_only = declared(key).is_some_and(read_only);
            if !map.contains_key(key) && !read_only && !missing.contains(&key) {
                c.err(&join(path, key), "is required");
                missing.push(key);
            }
        }
        if let Some(most) = most
            && map.len() as u64 > most
        {
            return c.err(path, format!("must have at most {most} entries"));
        }
        for (name, property) in &properties {
            if let Some(value) = map.get(*name)
                && !read_only(property)
            {
                self.value(property, value, &join(path, name), c);
            }
        }
        if let Some(others) = others {
            for (key, value) in map.iter().filter(|(k, _)| declared(k).is_none()) {
                self.value(others, value, &join(path, key), c);
            }
        }
    }
}

/// A string's length or an array's size within the schema's `[min, max]` keywords;
/// false when it is not (the one problem is reported).
fn count(schema: &Yaml, keys: [&str; 2], n: u64, unit: &str, path: &str, c: &mut Check) -> bool {
    let [min, max] = keys.map(|k| schema.get(k).and_then(Yaml::as_u64));
    let message = match (min, max) {
        (Some(1), _) if n == 0 => "must not be empty".to_owned(),
        (Some(min), _) if n < min => format!("must have at least {min} {unit} (has {n})"),
        (_, Some(max)) if n > max => format!("must have at most {max} {unit} (has {n})"),
        _ => return true,
    };
    c.err(path, message);
    false
}

/// The property a `oneOf`'s variants are told apart by: `discriminator.propertyName`, or
/// the one every variant fixes with `const` (`Action`'s `action`).
fn discriminator<'a>(schema: &'a Yaml, variants: &[&'a Yaml]) -> Option<&'a str> {
    if let Some(name) = schema.get("discriminator").and_then(|d| d.get("propertyName")) {
        return name.as_str();
    }
    // One variant is not a union: a `const` there is just a fixed value (`mime`).
    if variants.len() < 2 {
        return None;
    }
    let first = variants.first()?.get("properties")?.as_mapping()?;
    first
        .keys()
        .filter_map(Yaml::as_str)
        .find(|name| variants.iter().all(|v| fixed(v, name).is_some()))
}

/// The `const` a variant gives its property `name`.
fn fixed<'a>(variant: &'a Yaml, name: &str) -> Option<&'a str> {
    variant.get("properties")?.get(name)?.get("const")?.as_str()
}

fn read_only(schema: &Yaml) -> bool {
    schema.get("readOnly").and_then(Yaml::as_bool) == Some(true)
}

fn json(value: &Yaml) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn shown(value: &Yaml) -> String {
    match value.as_str() {
        Some(text) => text.to_owned(),
        None => json(value).to_string(),
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn type_message(types: &[&str]) -> String {
    let names: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "string" => "a string",
            "integer" => "an integer",
            "number" => "a number",
            "boolean" => "true or false",
            "object" => "an object",
            "array" => "an array",
            other => other,
        })
        .collect();
    format!("must be {}", names.join(" or "))
}

/// A JSON or YAML number, integers kept exact (ids up to `u32::MAX`, versions to
/// `i64::MAX`).
#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn of_json(value: &Value) -> Option<Self> {
        let int = value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from));
        int.map(Num::Int).or_else(|| value.as_f64().map(Num::Float))
    }

    fn of_yaml(value: &Yaml) -> Option<Self> {
        let int = value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from));
        int.map(Num::Int).or_else(|| value.as_f64().map(Num::Float))
    }

    fn cmp(self, other: Self) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.float().partial_cmp(&b.float()),
        }
    }

    fn float(self) -> f64 {
        match self {
            Num::Int(n) => n as f64,
            Num::Float(x) => x,
        }
    }
}

/// `minimum` and `maximum`, with one message naming both when both are set.
fn bounds(schema: &Yaml, value: &Value, path: &str, c: &mut Check) {
    let Some(n) = Num::of_json(value) else { return };
    let min = schema.get("minimum").and_then(|m| Some((Num::of_yaml(m)?, shown(m))));
    let max = schema.get("maximum").and_then(|m| Some((Num::of_yaml(m)?, shown(m))));
    let below = min.as_ref().is_some_and(|(m, _)| n.cmp(*m) == Some(Ordering::Less));
    let above = max.as_ref().is_some_and(|(m, _)| n.cmp(*m) == Some(Ordering::Greater));
    if !(below || above) {
        return;
    }
    let message = match (min, max) {
        (Some((_, min)), Some((_, max))) => format!("must be between {min} and {max}"),
        (Some((_, min)), None) => format!("must be at least {min}"),
        (None, Some((_, max))) => format!("must be at most {max}"),
        (None, None) => return,
    };
    c.err(path, message);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(name: &str, value: Value) -> Vec<String> {
        let mut c = Check::default();
        spec().check(name, &value, "", &mut c);
        c.errors.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn every_ref_resolves_and_every_pattern_compiles() {
        assert!(spec().matches("Id", "a1-b.c_d") && !spec().matches("Id", "-a"));
        assert!(!spec().matches("Id", &"a".repeat(129)));
    }

    #[test]
    fn problems_come_in_the_schemas_order() {
        // Unknown fields, then missing ones by `required`, then properties in order.
        assert_eq!(paths("RollbackRequest", json!({"x": 1})), ["x", "toVersion"]);
        assert_eq!(
            paths("SuggestionCreate", json!({"note": 3, "stepIndex": -1})),
            ["field", "baseVersion", "proposed", "stepIndex", "note"]
        );
        assert_eq!(paths("BaseVersion", json!(null)), Vec::<String>::new());
        assert_eq!(paths("BaseVersion", json!(0)), [""]);
    }

    #[test]
    fn unions_are_told_apart_by_their_const() {
        assert_eq!(paths("Action", json!({"action": "click"})), ["id"]);
        assert_eq!(paths("Action", json!({"id": 1})), ["action"]);
        assert_eq!(paths("Action", json!({"action": "fly"})), ["action"]);
        assert_eq!(paths("Action", json!(null)), [""]);
    }

    #[test]
    fn fields_have_their_schemas() {
        let spec = spec();
        let shape = |field| spec.field("StepRecord", field).map(|s| spec.resolve(s).clone());
        assert_eq!(shape("thoughts.thought2").and_then(|s| s["maxLength"].as_u64()), Some(20_000));
        assert_eq!(shape("action.type").and_then(|s| s["minLength"].as_u64()), Some(1));
        assert_eq!(shape("extendedThoughts.3").and_then(|s| s["maxLength"].as_u64()), Some(20_000));
        assert!(shape("nothing").is_none());
    }
}
