//! `openapi.yaml` and the server's validation agree with the shared contract
//! (`run_contract`): the review statuses, the roles, and the `Action` union with each
//! variant's fields, kinds, limits and defaults.

use run_contract::action::{Action, FieldKind, SHAPES};
use run_contract::{ReviewStatus, Role};
use serde_json::{Map, Value, json};
use sync_server::schema::spec;
use sync_server::validate::Check;

fn openapi() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
        .expect("openapi.yaml is readable");
    serde_norway::from_str(&text).expect("openapi.yaml is YAML")
}

fn schema(api: &Value, name: &str) -> Value {
    api["components"]["schemas"][name].clone()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().expect("a list").iter().map(|v| v.as_str().expect("a string")).collect()
}

#[test]
fn statuses_and_roles_are_the_contracts() {
    let api = openapi();
    let statuses: Vec<&str> = ReviewStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(strings(&schema(&api, "ReviewStatus")["enum"]), statuses);
    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(strings(&schema(&api, "Role")["enum"]), roles);
    // The Rust names are serde's, so what the YAML lists is what the server reads.
    for status in ReviewStatus::ALL {
        assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
    }
    for role in Role::ALL {
        assert_eq!(serde_json::to_value(role).unwrap(), role.as_str());
    }
}

/// What the YAML must say of a field of `kind`.
fn expected_schema(kind: FieldKind) -> Value {
    match kind {
        FieldKind::Text { max_chars } => json!({"type": "string", "maxLength": max_chars}),
        FieldKind::U32 => json!({"type": "integer", "minimum": 0, "maximum": u32::MAX}),
        FieldKind::I32 => json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX}),
        FieldKind::Number => json!({"type": "number"}),
        FieldKind::NonNegative => json!({"type": "number", "minimum": 0}),
        FieldKind::Bool => json!({"type": "boolean"}),
    }
}

#[test]
fn the_action_union_is_the_contracts() {
    let api = openapi();
    let variants = schema(&api, "Action")["oneOf"].as_array().expect("Action is a oneOf").clone();
    let tags: Vec<&str> =
        variants.iter().map(|v| v["properties"]["action"]["const"].as_str().unwrap()).collect();
    let shapes: Vec<&str> = SHAPES.iter().map(|s| s.tag).collect();
    assert_eq!(tags, shapes, "the YAML's variants, in order");

    for (variant, example) in variants.iter().zip(Action::examples()) {
        let shape = &SHAPES[example.ordinal()];
        let tag = shape.tag;
        assert_eq!(variant["type"], "object", "{tag}");
        assert_eq!(variant["additionalProperties"], false, "{tag}: unknown fields are refused");
        let mut required = strings(&variant["required"]);
        required.sort_unstable();
        let mut want: Vec<&str> =
            shape.fields.iter().filter(|f| f.required).map(|f| f.name).chain(["action"]).collect();
        want.sort_unstable();
        assert_eq!(required, want, "{tag}: required fields");

        let properties = variant["properties"].as_object().unwrap();
        let mut names: Vec<&str> =
            properties.keys().map(String::as_str).filter(|k| *k != "action").collect();
        names.sort_unstable();
        let mut fields: Vec<&str> = shape.fields.iter().map(|f| f.name).collect();
        fields.sort_unstable();
        assert_eq!(names, fields, "{tag}: fields");

        // What serde fills in for a field left out is the YAML's default.
        let written = serde_json::to_value(&example).unwrap();
        for field in shape.fields {
            let mut property = properties[field.name].as_object().unwrap().clone();
            let default = property.remove("default");
            let expected = expected_schema(field.kind);
            assert_eq!(Value::Object(property), expected, "{tag}.{}", field.name);
            if field.required {
                assert_eq!(default, None, "{tag}.{}: a required field has no default", field.name);
                continue;
            }
            let mut without = written.as_object().unwrap().clone();
            without.remove(field.name);
            let read: Action = serde_json::from_value(Value::Object(without.clone())).unwrap();
            match default {
                // Leaving the field out reads as giving the YAML's default.
                Some(default) => {
                    without.insert(field.name.into(), default);
                    let given: Action = serde_json::from_value(Value::Object(without)).unwrap();
                    assert_eq!(read, given, "{tag}.{}: default", field.name);
                }
                // No default: left out, it stays out.
                None => {
                    let filled = serde_json::to_value(&read).unwrap();
                    assert!(filled.get(field.name).is_none(), "{tag}.{} has a default", field.name);
                }
            }
        }
    }
}

fn problems(action: Value) -> Vec<String> {
    let mut c = Check::default();
    spec().check("Action", &action, "action", &mut c);
    c.errors.iter().map(|e| e.path.clone()).collect()
}

#[test]
fn the_server_accepts_every_action_the_engine_writes_and_no_other() {
    for example in Action::examples() {
        let written = serde_json::to_value(&example).unwrap();
        assert_eq!(problems(written.clone()), Vec::<String>::new(), "{written}");
        // Every optional field left out, as a model may leave it.
        let shape = &SHAPES[example.ordinal()];
        let mut bare: Map<String, Value> = written.as_object().unwrap().clone();
        for field in shape.fields.iter().filter(|f| !f.required) {
            bare.remove(field.name);
        }
        assert_eq!(problems(Value::Object(bare.clone())), Vec::<String>::new(), "{bare:?}");
        // Every required field is required by the server too.
        for field in shape.fields.iter().filter(|f| f.required) {
            let mut missing = bare.clone();
            missing.remove(field.name);
            assert_eq!(problems(Value::Object(missing)), [format!("action.{}", field.name)]);
        }
        let mut extra = written.as_object().unwrap().clone();
        extra.insert("teleport".into(), json!(true));
        assert_eq!(problems(Value::Object(extra)), ["action.teleport"]);
    }
    assert_eq!(problems(json!({"action": "teleport"})), ["action.action"]);
    assert!(serde_json::from_value::<Action>(json!({"action": "teleport"})).is_err());
    assert_eq!(problems(json!({"action": "click", "id": -3})), ["action.id"]);
    assert_eq!(problems(json!({"action": "close_tab", "tab_id": -3})), Vec::<String>::new());
}
