//! Request bodies checked against `openapi.yaml` itself, by the `boon` JSON Schema
//! (draft 2020-12) validator, so each shape and limit of the contract is written once. The
//! document is embedded, read once and its component schemas compiled (`spec`; `router`
//! forces it at start-up, so a bad `$ref` or pattern fails there). boon reports every
//! problem with the JSON Pointer of where it is (`/steps/0/thoughts/thought1`), and that
//! is the path a `422` names.
//!
//! Before compiling, the schemas are read as OpenAPI reads a request:
//! - a `readOnly` property is neither required nor checked, since writes may echo it back
//!   and the server ignores it;
//! - an `integer` must be written as one and fit in 64 bits (`format: int64`, added where no
//!   format is given): JSON Schema counts `1.0` as an integer and boon compares bounds as
//!   floats, so `2^63` would pass `maximum: 2^63 - 1`, and the routes read both as `i64`;
//! - `if`/`then`/`else` are left out: the routes check them, with a message for each field
//!   (`CommentCreate`'s reply or thread start).
//!
//! boon's findings are then read in the contract's terms: `required` and
//! `additionalProperties` name each field; a `oneOf` that nothing matched speaks of the one
//! alternative that applies (the value is not null, so a null alternative does not; a
//! union told apart by `discriminator`, or by a property each variant fixes with `const`,
//! is held to the variant its tag names); and `unevaluatedProperties: false` names only
//! fields no part of the schema declares (boon, as the specification says, forgets what a
//! failed `allOf` part looked at). What a schema says only in prose is checked in
//! `validate` and the routes.

use std::collections::HashMap;
use std::error::Error;
use std::sync::OnceLock;

use boon::{Compiler, Draft, ErrorKind, Format, SchemaIndex, Schemas, Type, Types};
use serde_json::{Value, json};

use crate::validate::{Check, pointer};

/// The document's name for boon: it is added, never fetched.
const URL: &str = "urn:alphascout:sync-server:openapi.yaml";

/// The parsed contract.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| {
        Spec::parse(include_str!("../openapi.yaml")).unwrap_or_else(|e| panic!("openapi.yaml: {e}"))
    })
}

type Problems = Vec<(String, String)>;

pub struct Spec {
    /// `openapi.yaml` as read for requests (see the module doc).
    doc: Value,
    schemas: Schemas,
    /// Every component schema and every schema inside one, by its JSON Pointer in `doc`,
    /// so a part (a step field a suggestion targets) is checked on its own.
    compiled: HashMap<String, SchemaIndex>,
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut doc: Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        if let Some(reference) = dangling_ref(&doc, &doc) {
            return Err(format!("no {reference}"));
        }
        let mut places = Vec::new();
        for_each_component(&doc, &mut places);
        for place in &places {
            if let Some(Value::Object(schema)) = doc.pointer_mut(place) {
                for_requests(schema);
            }
        }
        // Read again: `then` and `else` are gone.
        places.clear();
        for_each_component(&doc, &mut places);

        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        compiler.enable_format_assertions();
        compiler.register_format(Format { name: "date-time", func: date_time });
        compiler.register_format(Format { name: "int64", func: int64 });
        compiler.add_resource(URL, doc.clone()).map_err(|e| format!("{e:#}"))?;
        let mut schemas = Schemas::new();
        let mut compiled = HashMap::new();
        for place in places {
            let index = compiler
                .compile(&format!("{URL}#{place}"), &mut schemas)
                .map_err(|e| format!("{e:#}"))?;
            compiled.insert(place, index);
        }
        Ok(Self { doc, schemas, compiled })
    }

    /// Checks `value` against the component schema `name`, its paths under `at`.
    pub fn check(&self, name: &str, value: &Value, at: &str, c: &mut Check) {
        self.check_except(name, value, at, c, &|_| false);
    }

    /// As `check`, passing over the problems at the paths (relative to `value`) `skip`
    /// names: parts checked on their own.
    pub fn check_except(
        &self,
        name: &str,
        value: &Value,
        at: &str,
        c: &mut Check,
        skip: &dyn Fn(&str) -> bool,
    ) {
        for (path, message) in self.problems(&component(name), value) {
            if !skip(&path) {
                c.err(&format!("{at}{path}"), message);
            }
        }
    }

    /// Checks `value` against the schema of `field`, a dot path (`thoughts.thought2`,
    /// `extendedThoughts.1`), in the component schema `name`; false if it has no such field.
    pub fn check_field(
        &self,
        name: &str,
        field: &str,
        value: &Value,
        at: &str,
        c: &mut Check,
    ) -> bool {
        let Some(place) = self.field(name, field) else { return false };
        for (path, message) in self.problems(&place, value) {
            c.err(&format!("{at}{path}"), message);
        }
        true
    }

    /// The names of the properties of schema `name` a write carries (its `readOnly` ones
    /// left out): what the server stores of a record.
    pub fn writable(&self, name: &str) -> Vec<&str> {
        let parts = self.parts(&component(name));
        let properties = parts.iter().filter_map(|p| self.at(p)?.get("properties")?.as_object());
        properties.flatten().filter(|(_, s)| !read_only(s)).map(|(k, _)| k.as_str()).collect()
    }

    /// Whether `text` is a valid string schema `name` (ids in paths and queries).
    pub fn matches(&self, name: &str, text: &str) -> bool {
        let index = self.index(&component(name));
        self.schemas.validate(&Value::String(text.to_owned()), index).is_ok()
    }

    fn index(&self, place: &str) -> SchemaIndex {
        *self.compiled.get(place).unwrap_or_else(|| panic!("openapi.yaml has no schema {place}"))
    }

    /// What is wrong with `value` under the schema at `place`, in boon's order, each with
    /// the JSON Pointer of where it is.
    fn problems(&self, place: &str, value: &Value) -> Problems {
        let mut found = Vec::new();
        if let Err(error) = self.schemas.validate(value, self.index(place)) {
            self.read(&error, value, &mut found);
        }
        found
    }

    /// The schema at a JSON Pointer into the document.
    fn at(&self, place: &str) -> Option<&Value> {
        self.doc.pointer(place)
    }

    /// The place of the schema boon names by URL, if it is in the document.
    fn place_of(url: &str) -> Option<String> {
        let fragment = url.strip_prefix(URL)?.strip_prefix('#')?;
        percent_encoding::percent_decode_str(fragment).decode_utf8().ok().map(|f| f.into_owned())
    }

    /// Follows `$ref`s from `place`.
    fn resolve(&self, mut place: String) -> String {
        while let Some(target) = self.at(&place).and_then(|s| s.get("$ref")?.as_str()) {
            match target.strip_prefix('#') {
                Some(next) => place = next.to_owned(),
                None => break,
            }
        }
        place
    }

    /// The schema at `place` and, through `allOf`, every schema it is made of.
    fn parts(&self, place: &str) -> Vec<String> {
        let place = self.resolve(place.to_owned());
        let count = self.at(&place).and_then(|s| s.get("allOf")?.as_array().map(Vec::len));
        let mut parts = vec![place.clone()];
        for i in 0..count.unwrap_or(0) {
            parts.extend(self.parts(&format!("{place}/allOf/{i}")));
        }
        parts
    }

    /// The place of the schema of `field` (a dot path) in the component schema `name`.
    fn field(&self, name: &str, field: &str) -> Option<String> {
        field.split('.').try_fold(component(name), |place, part| {
            let place = self.resolve(place);
            if part.bytes().all(|b| b.is_ascii_digit()) {
                self.at(&place)?.get("items")?;
                Some(format!("{place}/items"))
            } else {
                let declares = |p: &String| self.at(p).and_then(|s| s.get("properties")?.get(part));
                let owner = self.parts(&place).into_iter().find(|p| declares(p).is_some())?;
                Some(pointer(&format!("{owner}/properties"), part))
            }
        })
    }

    /// Reads boon's findings under `error` into `out`.
    fn read(&self, error: &boon::ValidationError, value: &Value, out: &mut Problems) {
        let at = error.instance_location.to_string();
        let schema = Self::place_of(error.schema_url).and_then(|p| self.at(&p));
        let mut say = |path: String, message: String| out.push((path, message));
        match &error.kind {
            ErrorKind::Group
            | ErrorKind::Schema { .. }
            | ErrorKind::Reference { .. }
            | ErrorKind::AllOf
            | ErrorKind::AnyOf => {
                for cause in &error.causes {
                    self.read(cause, value, out);
                }
            }
            ErrorKind::OneOf(None) => self.one_of(error, value, out),
            ErrorKind::OneOf(Some(_)) => {
                say(at, "must match exactly one of its alternatives".into());
            }
            ErrorKind::Required { want } => {
                for name in want {
                    say(pointer(&at, name), "is required".into());
                }
            }
            ErrorKind::AdditionalProperties { got } => {
                for name in got {
                    say(pointer(&at, name), "unknown field".into());
                }
            }
            ErrorKind::FalseSchema => match error.schema_url.strip_suffix("/unevaluatedProperties")
            {
                Some(owner) => {
                    let name = error.instance_location.tokens.last();
                    let declared = |name: &str| {
                        let owner = Self::place_of(owner).unwrap_or_default();
                        self.parts(&owner).iter().any(|p| {
                            self.at(p).and_then(|s| s.get("properties")?.get(name)).is_some()
                        })
                    };
                    if let Some(boon::InstanceToken::Prop(name)) = name
                        && declared(name)
                    {
                        return;
                    }
                    say(at, "unknown field".into());
                }
                None => say(at, "is not allowed".into()),
            },
            ErrorKind::Type { want, .. } => say(at, type_message(*want)),
            // An enum says what is allowed more helpfully than its type would.
            ErrorKind::Enum { want } => {
                let names: Vec<String> = want.iter().map(shown).collect();
                say(at, format!("must be one of {}", names.join(", ")));
            }
            ErrorKind::Const { want } => say(at, format!("must be {}", shown(want))),
            ErrorKind::Format { want: "date-time", .. } => {
                say(at, "must be an RFC 3339 date-time".into());
            }
            ErrorKind::Format { want: "int64", got, .. } => match got.as_u64() {
                // Above i64::MAX: the schema's own bounds say it best.
                Some(_) => say(at, bounds(schema).unwrap_or("must fit in 64 bits".into())),
                None => say(at, "must be an integer".into()),
            },
            ErrorKind::MinLength { got, want } => say(at, count(*got, *want, true, "characters")),
            ErrorKind::MaxLength { got, want } => say(at, count(*got, *want, false, "characters")),
            ErrorKind::MinItems { got, want } => say(at, count(*got, *want, true, "items")),
            ErrorKind::MaxItems { got, want } => say(at, count(*got, *want, false, "items")),
            ErrorKind::MaxProperties { want, .. } => {
                say(at, format!("must have at most {want} entries"));
            }
            ErrorKind::UniqueItems { got: [_, repeat] } => {
                say(format!("{at}/{repeat}"), "is repeated".into());
            }
            // The schema's title names the shape for a person; the pattern is the fallback.
            ErrorKind::Pattern { want, .. } => {
                let title = schema.and_then(|s| s.get("title")?.as_str());
                say(at, format!("must be {}", title.unwrap_or(want)));
            }
            ErrorKind::Minimum { .. } | ErrorKind::Maximum { .. } => {
                say(at, bounds(schema).unwrap_or_else(|| error.kind.to_string()));
            }
            // boon's own words for what the contract's schemas do not use.
            kind => say(at, kind.to_string()),
        }
    }

    /// A `oneOf` that no alternative matched: the problems of the one that applies.
    fn one_of(&self, error: &boon::ValidationError, value: &Value, out: &mut Problems) {
        let at = error.instance_location.to_string();
        let place = Self::place_of(error.schema_url).unwrap_or_default();
        let count = self.at(&place).and_then(|s| s.get("oneOf")?.as_array().map(Vec::len));
        let branches: Vec<String> =
            (0..count.unwrap_or(0)).map(|i| self.resolve(format!("{place}/oneOf/{i}"))).collect();
        if branches.len() != error.causes.len() {
            return out.push((at, "must match one of its alternatives".into()));
        }
        // The value is not null (a null alternative would have matched it).
        let others: Vec<(usize, &Value)> = branches
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i, self.at(b)?)))
            .filter(|(_, b)| b.get("type") != Some(&json!("null")))
            .collect();
        let schema = self.at(&place);
        if let Some(tag) = schema.and_then(|s| discriminator(s, &others)) {
            let tag_at = pointer(&at, tag);
            let Some(given) = value.pointer(&at).and_then(Value::as_object) else {
                return out.push((at, "must be an object".into()));
            };
            let variants: Vec<(&str, usize)> =
                others.iter().filter_map(|(i, b)| Some((fixed(b, tag)?, *i))).collect();
            let chosen = given.get(tag).map(|g| variants.iter().find(|(n, _)| g == *n));
            match chosen {
                Some(Some((_, i))) => self.read(&error.causes[*i], value, out),
                Some(None) => {
                    let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
                    out.push((tag_at, format!("must be one of {}", names.join(", "))));
                }
                None => out.push((tag_at, "is required".into())),
            }
            return;
        }
        match others.as_slice() {
            [(only, _)] => self.read(&error.causes[*only], value, out),
            _ => out.push((at, "must match one of its alternatives".into())),
        }
    }
}

/// A `$ref` in `node` that leads nowhere in `doc`. boon finds those of the schemas it
/// compiles; this finds the responses' and parameters' too, so a typo fails at start-up.
fn dangling_ref<'a>(node: &'a Value, doc: &Value) -> Option<&'a str> {
    match node {
        Value::Object(map) => {
            let reference = map.get("$ref").and_then(Value::as_str);
            let lost = |r: &&str| r.strip_prefix('#').is_none_or(|p| doc.pointer(p).is_none());
            reference.filter(lost).or_else(|| map.values().find_map(|v| dangling_ref(v, doc)))
        }
        Value::Array(items) => items.iter().find_map(|v| dangling_ref(v, doc)),
        _ => None,
    }
}

/// The place of the component schema `name`.
fn component(name: &str) -> String {
    pointer("/components/schemas", name)
}

/// The places of every component schema and of every schema inside one.
fn for_each_component(doc: &Value, out: &mut Vec<String>) {
    let components = doc.pointer("/components/schemas").and_then(Value::as_object);
    for (name, schema) in components.into_iter().flatten() {
        subschemas(schema, component(name), out);
    }
}

/// `place` and the places of the schemas inside it (not through `$ref`).
fn subschemas(schema: &Value, place: String, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        let here = pointer(&place, key);
        match (key.as_str(), value) {
            (
                "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "not"
                | "contains"
                | "propertyNames"
                | "if"
                | "then"
                | "else",
                _,
            ) => subschemas(value, here, out),
            (
                "properties" | "patternProperties" | "$defs" | "dependentSchemas",
                Value::Object(m),
            ) => {
                for (name, inner) in m {
                    subschemas(inner, pointer(&here, name), out);
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(list)) => {
                for (i, inner) in list.iter().enumerate() {
                    subschemas(inner, format!("{here}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    out.push(place);
}

/// One schema read as OpenAPI reads a request (see the module doc).
fn for_requests(schema: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        let ignored: Vec<String> =
            properties.iter().filter(|(_, s)| read_only(s)).map(|(k, _)| k.clone()).collect();
        for name in &ignored {
            properties.insert(name.clone(), json!({"readOnly": true}));
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|r| !ignored.iter().any(|name| r == name));
        }
    }
    for key in ["if", "then", "else"] {
        schema.remove(key);
    }
    let integer = match schema.get("type") {
        Some(Value::String(one)) => one == "integer",
        Some(Value::Array(list)) => list.iter().any(|t| t == "integer"),
        _ => false,
    };
    if integer && !schema.contains_key("format") {
        schema.insert("format".into(), json!("int64"));
    }
}

fn read_only(schema: &Value) -> bool {
    schema.get("readOnly") == Some(&Value::Bool(true))
}

fn date_time(value: &Value) -> Result<(), Box<dyn Error>> {
    match value.as_str() {
        Some(text) if crate::time::parse_ms(text).is_none() => Err("not RFC 3339".into()),
        _ => Ok(()),
    }
}

fn int64(value: &Value) -> Result<(), Box<dyn Error>> {
    match value {
        Value::Number(n) if !n.is_i64() => Err("not a 64-bit integer".into()),
        _ => Ok(()),
    }
}

/// The property a `oneOf`'s variants are told apart by: `discriminator.propertyName`, or
/// the one every variant fixes with `const` (`Action`'s `action`).
fn discriminator<'a>(schema: &'a Value, variants: &[(usize, &'a Value)]) -> Option<&'a str> {
    if let Some(name) = schema.pointer("/discriminator/propertyName") {
        return name.as_str();
    }
    // One variant is not a union: a `const` there is just a fixed value (`mime`).
    if variants.len() < 2 {
        return None;
    }
    let (_, first) = variants.first()?;
    let names = first.get("properties")?.as_object()?.keys();
    names.map(String::as_str).find(|name| variants.iter().all(|(_, v)| fixed(v, name).is_some()))
}

/// The `const` a variant gives its property `name`.
fn fixed<'a>(variant: &'a Value, name: &str) -> Option<&'a str> {
    variant.get("properties")?.get(name)?.get("const")?.as_str()
}

fn shown(value: &Value) -> String {
    match value.as_str() {
        Some(text) => text.to_owned(),
        None => value.to_string(),
    }
}

fn type_message(types: Types) -> String {
    // "a string or null": null last, as the schemas write it.
    let (nulls, others): (Vec<Type>, Vec<Type>) = types.iter().partition(|t| *t == Type::Null);
    let names: Vec<&str> = others
        .into_iter()
        .chain(nulls)
        .map(|t| match t {
            Type::String => "a string",
            Type::Integer => "an integer",
            Type::Number => "a number",
            Type::Boolean => "true or false",
            Type::Object => "an object",
            Type::Array => "an array",
            Type::Null => "null",
        })
        .collect();
    format!("must be {}", names.join(" or "))
}

/// A length or size out of its bounds.
fn count(got: usize, want: usize, at_least: bool, unit: &str) -> String {
    match (at_least, want) {
        (true, 1) => "must not be empty".into(),
        (true, _) => format!("must have at least {want} {unit} (has {got})"),
        (false, _) => format!("must have at most {want} {unit} (has {got})"),
    }
}

/// `minimum` and `maximum` in one message, when the schema has them.
fn bounds(schema: Option<&Value>) -> Option<String> {
    let schema = schema?;
    match (schema.get("minimum"), schema.get("maximum")) {
        (Some(min), Some(max)) => Some(format!("must be between {min} and {max}")),
        (Some(min), None) => Some(format!("must be at least {min}")),
        (None, Some(max)) => Some(format!("must be at most {max}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(name: &str, value: Value) -> Vec<String> {
        let mut c = Check::default();
        spec().check(name, &value, "", &mut c);
        c.errors.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn every_ref_resolves_and_every_pattern_compiles() {
        assert!(spec().matches("Id", "a1-b.c_d") && !spec().matches("Id", "-a"));
        assert!(!spec().matches("Id", &"a".repeat(129)));
        let broken =
            include_str!("../openapi.yaml").replace("schemas/Thoughts'", "schemas/Thought'");
        assert_eq!(Spec::parse(&broken).err().as_deref(), Some("no #/components/schemas/Thought"));
    }

    #[test]
    fn each_problem_has_its_pointer() {
        // Missing fields, then each given one, then unknown ones.
        assert_eq!(paths("RollbackRequest", json!({"x": 1})), ["/toVersion", "/x"]);
        assert_eq!(
            paths("SuggestionCreate", json!({"note": 3, "stepIndex": -1})),
            ["/field", "/baseVersion", "/proposed", "/note", "/stepIndex"]
        );
        assert_eq!(paths("BaseVersion", json!(null)), Vec::<String>::new());
        assert_eq!(paths("BaseVersion", json!(0)), [""]);
        let mut c = Check::default();
        spec().check("Thoughts", &json!({"thought1": "", "thought2": 1}), "/thoughts", &mut c);
        let found: Vec<(&str, &str)> =
            c.errors.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
        assert_eq!(
            found,
            [("/thoughts/thought3", "is required"), ("/thoughts/thought2", "must be a string")]
        );
    }

    #[test]
    fn integers_are_written_as_integers_within_64_bits() {
        assert_eq!(paths("RollbackRequest", json!({"toVersion": 2})), Vec::<String>::new());
        assert_eq!(paths("RollbackRequest", json!({"toVersion": 2.0})), ["/toVersion"]);
        let above = json!({"toVersion": 9_223_372_036_854_775_808_u64});
        assert_eq!(paths("RollbackRequest", above), ["/toVersion"]);
    }

    #[test]
    fn read_only_fields_are_ignored() {
        let mut c = Check::default();
        spec().check("StepServerFields", &json!({"version": "any"}), "", &mut c);
        assert!(c.ok(), "{:?}", c.errors);
        assert!(!spec().writable("AgentRun").contains(&"status"));
        assert!(spec().writable("AgentRun").contains(&"taskPrompt"));
    }

    #[test]
    fn unions_are_told_apart_by_their_const() {
        assert_eq!(paths("Action", json!({"action": "click"})), ["/id"]);
        assert_eq!(paths("Action", json!({"id": 1})), ["/action"]);
        assert_eq!(paths("Action", json!({"action": "fly"})), ["/action"]);
        assert_eq!(paths("Action", json!(null)), [""]);
    }

    #[test]
    fn fields_have_their_schemas() {
        let spec = spec();
        let problems = |field, value: Value| {
            let mut c = Check::default();
            let known = spec.check_field("StepRecord", field, &value, "/proposed", &mut c);
            known.then(|| c.errors.into_iter().map(|e| e.path).collect::<Vec<_>>())
        };
        let long = json!("x".repeat(20_001));
        assert_eq!(problems("thoughts.thought2", long.clone()), Some(vec!["/proposed".into()]));
        assert_eq!(problems("action.type", json!("")), Some(vec!["/proposed".into()]));
        assert_eq!(problems("extendedThoughts.3", long), Some(vec!["/proposed".into()]));
        assert_eq!(problems("extendedThoughts.3", json!("fine")), Some(vec![]));
        assert_eq!(problems("nothing", json!(1)), None);
    }
}
