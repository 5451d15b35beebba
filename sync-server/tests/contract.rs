//! `openapi.yaml` and the server's validation agree with the shared contract
//! (`run_contract`): the review statuses, the roles, and the `Action` union with each
//! variant's fields, kinds, limits and defaults; and the server refuses what
//! `openapi.yaml`'s request schemas refuse, at the same places (JSON Pointers), and accepts
//! what they accept.

mod support;

use run_contract::action::{Action, FieldKind, SHAPES};
use run_contract::{ReviewStatus, Role};
use serde_json::{Map, Value, json};
use support::{run_record, step_record, trace_record};
use sync_server::schema::spec;
use sync_server::validate::{self, Check};

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
    spec().check("Action", &action, "/action", &mut c);
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
            assert_eq!(problems(Value::Object(missing)), [format!("/action/{}", field.name)]);
        }
        let mut extra = written.as_object().unwrap().clone();
        extra.insert("teleport".into(), json!(true));
        assert_eq!(problems(Value::Object(extra)), ["/action/teleport"]);
    }
    assert_eq!(problems(json!({"action": "teleport"})), ["/action/action"]);
    assert!(serde_json::from_value::<Action>(json!({"action": "teleport"})).is_err());
    assert_eq!(problems(json!({"action": "click", "id": -3})), ["/action/id"]);
    assert_eq!(problems(json!({"action": "close_tab", "tab_id": -3})), Vec::<String>::new());
}

// ------------------------------------------------------------- request schemas vs server

/// The problem paths the server's validation of a `schema` body reports.
fn server(schema: &str, body: &Value) -> Vec<String> {
    let mut c = Check::default();
    match schema {
        "RunWrite" => drop(validate::run_write(body, &mut c)),
        "StepWrite" => drop(validate::step_write(body, &mut c)),
        "LlmTrace" => validate::trace(body, &mut c),
        "SuggestionCreate" => drop(validate::suggestion_create(body, &mut c)),
        "SuggestionDecision" => drop(validate::suggestion_decision(Some(body), &mut c)),
        _ => unreachable!("{schema}"),
    }
    c.errors.into_iter().map(|e| e.path).collect()
}

/// Follows `$ref`s, read here with nothing of the server's code.
fn resolve<'a>(api: &'a Value, mut schema: &'a Value) -> &'a Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        schema = api.pointer(&reference[1..]).unwrap_or_else(|| panic!("{reference}"));
    }
    schema
}

/// An object schema's properties, required names and whether unknown fields are refused,
/// `allOf` parts merged.
fn object_schema<'a>(api: &'a Value, schema: &'a Value) -> (Map<String, Value>, Vec<String>, bool) {
    let schema = resolve(api, schema);
    let mut properties = schema["properties"].as_object().cloned().unwrap_or_default();
    let mut required: Vec<String> =
        schema["required"].as_array().into_iter().flatten().map(|r| r.to_string()).collect();
    let mut closed =
        schema["additionalProperties"] == false || schema["unevaluatedProperties"] == false;
    for part in schema["allOf"].as_array().into_iter().flatten() {
        let (more, also, shut) = object_schema(api, part);
        properties.extend(more);
        required.extend(also);
        closed |= shut;
    }
    let required = required.into_iter().map(|r| r.trim_matches('"').to_owned()).collect();
    (properties, required, closed)
}

/// One body changed from a valid one, and the path the server must refuse it at (`None`:
/// it must accept it).
struct Case {
    body: Value,
    refused_at: Option<String>,
    why: String,
}

/// Changes `base` at `path` (an object) in every way its schema speaks of: each required
/// field left out, an unknown field added, and each field's type, enum, bounds, lengths,
/// pattern, format, item counts and nullability tried on both sides of the line.
fn cases(api: &Value, schema: &Value, root: &Value, path: &[String], out: &mut Vec<Case>) {
    let (properties, required, closed) = object_schema(api, schema);
    let base = pointer(root, path).as_object().expect("an object").clone();
    let at = |key: &str| [path, &[key.to_owned()]].concat();
    let case = |key: &str, value: Option<Value>, refused: bool, why: &str| {
        let mut body = root.clone();
        let object = pointer_mut(&mut body, path).as_object_mut().unwrap();
        match value {
            Some(value) => drop(object.insert(key.to_owned(), value)),
            None => drop(object.remove(key)),
        }
        let refused_at = refused.then(|| json_pointer(&at(key)));
        Case { body, refused_at, why: format!("{}: {why}", json_pointer(&at(key))) }
    };
    let read_only = |name: &str| properties.get(name).is_some_and(|p| p["readOnly"] == true);
    for name in required.iter().filter(|r| !read_only(r)) {
        out.push(case(name, None, true, "required"));
    }
    let extra = resolve(api, schema)["additionalProperties"].clone();
    if closed {
        out.push(case("zzUnknown", Some(json!(1)), true, "unknown"));
    }
    for (name, value) in &base {
        let property = match properties.get(name) {
            Some(property) => property,
            None if extra.is_object() => &extra,
            None => continue,
        };
        if property["readOnly"] == true {
            out.push(case(name, Some(json!({"ignored": true})), false, "read-only, ignored"));
            continue;
        }
        let s = resolve(api, property);
        if let Some(branches) = s["oneOf"].as_array() {
            // Nullable, or a tagged union (held to the contract by the tests above).
            let nullable = branches.iter().any(|b| b["type"] == "null");
            out.push(case(name, Some(Value::Null), !nullable, "null"));
            out.push(case(name, Some(json!(true)), true, "type"));
            let others: Vec<&Value> = branches.iter().filter(|b| b["type"] != "null").collect();
            if let [only] = others.as_slice()
                && value.is_object()
            {
                cases(api, only, root, &at(name), out);
            }
            continue;
        }
        let types: Vec<&str> = match &s["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if types.is_empty() && s.get("enum").is_none() && s.get("const").is_none() {
            continue;
        }
        let wrong = if types.contains(&"boolean") { json!("yes") } else { json!(true) };
        out.push(case(name, Some(wrong), true, "type"));
        out.push(case(name, Some(Value::Null), !types.contains(&"null"), "null"));
        for allowed in s["enum"].as_array().into_iter().flatten() {
            out.push(case(name, Some(allowed.clone()), false, "listed"));
        }
        if s.get("enum").is_some() || s.get("const").is_some() {
            out.push(case(name, Some(json!("zz-not-listed")), true, "not listed"));
        }
        let plain = s.get("pattern").is_none() && s.get("format").is_none();
        if let Some(max) = s["maxLength"].as_u64() {
            let max = max as usize;
            out.push(case(name, Some(json!("é".repeat(max + 1))), true, "too long"));
            if plain {
                out.push(case(name, Some(json!("é".repeat(max))), false, "longest"));
            }
        }
        if s["minLength"] == 1 {
            out.push(case(name, Some(json!("")), true, "empty"));
        }
        if s.get("pattern").is_some() {
            out.push(case(name, Some(json!("!")), true, "pattern"));
        }
        if s["format"] == "date-time" {
            out.push(case(name, Some(json!("yesterday")), true, "format"));
        }
        let int = types.contains(&"integer");
        if let Some(min) = s.get("minimum") {
            out.push(case(name, Some(min.clone()), false, "minimum"));
            let below = if int { json!(min.as_i64().unwrap() - 1) } else { json!(-0.5) };
            out.push(case(name, Some(below), true, "below the minimum"));
        }
        if let Some(max) = s.get("maximum") {
            out.push(case(name, Some(max.clone()), false, "maximum"));
            let above =
                max.as_u64().map_or_else(|| json!(max.as_i64().unwrap() + 1), |m| json!(m + 1));
            out.push(case(name, Some(above), true, "above the maximum"));
        }
        if let Some(items) = value.as_array().filter(|items| !items.is_empty()) {
            if let Some(max) = s["maxItems"].as_u64() {
                // Each problem is reported, so items that must be unique stay unique here.
                let nth = |i: usize| match (&items[0], s["uniqueItems"] == true) {
                    (Value::String(text), true) => json!(format!("{text}{i}")),
                    (first, _) => first.clone(),
                };
                let many: Vec<Value> = (0..=max as usize).map(nth).collect();
                out.push(case(name, Some(json!(many)), true, "too many items"));
            }
            if let Some(min) = s["minItems"].as_u64().filter(|m| *m > 0) {
                let few = vec![items[0].clone(); min as usize - 1];
                out.push(case(name, Some(json!(few)), true, "too few items"));
            }
            if items[0].is_object() {
                cases(api, &s["items"], root, &[at(name), vec!["0".into()]].concat(), out);
            }
        }
        if value.is_object() && s.get("properties").is_some() {
            cases(api, s, root, &at(name), out);
        }
    }
}

/// The JSON Pointer of a path's keys.
fn json_pointer(path: &[String]) -> String {
    path.iter().map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1"))).collect()
}

fn pointer<'a>(value: &'a Value, path: &[String]) -> &'a Value {
    path.iter().fold(value, |v, key| match v {
        Value::Array(items) => &items[key.parse::<usize>().unwrap()],
        _ => &v[key.as_str()],
    })
}

fn pointer_mut<'a>(value: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(value, |v, key| match v {
        Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
        _ => &mut v[key.as_str()],
    })
}

/// Every case drawn from `schema` around `base`, checked against the server.
fn agree(api: &Value, schema: &str, base: Value) -> usize {
    assert_eq!(server(schema, &base), Vec::<String>::new(), "{schema}: the base is valid");
    let mut all = Vec::new();
    cases(api, &schema_ref(schema), &base, &[], &mut all);
    for case in &all {
        let got = server(schema, &case.body);
        let want: Vec<String> = case.refused_at.iter().cloned().collect();
        assert_eq!(got, want, "{schema} {}", case.why);
    }
    all.len()
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

#[test]
fn the_server_refuses_what_the_request_schemas_refuse_and_no_more() {
    let api = openapi();
    let mut run = run_record("r1");
    run["tags"] = json!(["kitchen", "prices"]);
    run["annotator"] = json!("alice");
    run["version"] = json!(3);
    let mut step = step_record("r1", 0, Some((&"a".repeat(64), 2048)));
    step["extendedThoughts"] = json!(["The price includes VAT."]);
    step["issues"] = json!([{"type": "logic", "severity": "minor", "description": "Skips a step.", "suggestion": null}]);
    let suggestion = json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "The kettles are under Home.", "note": "Renamed."});
    let counts = [
        agree(&api, "RunWrite", run),
        agree(&api, "StepWrite", step),
        agree(&api, "LlmTrace", trace_record("r1", "trace-0", 0)),
        agree(&api, "SuggestionCreate", suggestion.clone()),
        agree(&api, "SuggestionDecision", json!({"note": "Thanks."})),
    ];
    // Enough cases that a schema or validation change cannot slip between them.
    assert!(counts.iter().all(|n| *n >= 5), "{counts:?}");

    // A suggestion's value is held to its step field's schema in the YAML.
    let proposing = |field: &str, proposed: Value| {
        let mut body = suggestion.clone();
        body["field"] = json!(field);
        body["proposed"] = proposed;
        server("SuggestionCreate", &body)
    };
    let longest = api["components"]["schemas"]["Thoughts"]["properties"]["thought1"]["maxLength"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(proposing("thoughts.thought1", json!("x".repeat(longest))), Vec::<String>::new());
    assert_eq!(proposing("thoughts.thought1", json!("x".repeat(longest + 1))), ["/proposed"]);
    assert_eq!(proposing("action", json!({"type": "click"})), ["/proposed/target"]);
    assert_eq!(proposing("action.value", Value::Null), Vec::<String>::new());
    assert_eq!(proposing("extendedThoughts", json!(["a", 1])), ["/proposed/1"]);
    // The mark of AI-drafted thoughts names thoughts only; the Navigator's notes are text.
    let mut drafted = step_record("r1", 0, Some((&"a".repeat(64), 2048)));
    drafted["draftedThoughts"] = json!(["thought2", "thought4"]);
    assert_eq!(server("StepWrite", &drafted), ["/draftedThoughts/1"]);
    drafted["draftedThoughts"] = Value::Null;
    drafted["navigator"] = json!({"evaluationPreviousGoal": "", "memory": 3, "nextGoal": ""});
    assert_eq!(server("StepWrite", &drafted), ["/navigator/memory"]);
    // Tags are unique items.
    let mut run = run_record("r1");
    run["tags"] = json!(["kitchen", "kitchen"]);
    assert_eq!(server("RunWrite", &run), ["/tags/1"]);
}

/// `GET /runs` takes exactly the query parameters the YAML lists (the server refuses any
/// other as "not a parameter here"), and answers the `RunPage` the YAML describes: the pull
/// cursor the page keeps is in both or neither.
#[test]
fn the_runs_listing_takes_and_answers_what_the_yaml_says() {
    let api = openapi();
    let server = support::Server::start(support::Backend::Sqlite).expect("a SQLite server");
    server.create_run("alice", "r1");
    let params = api["paths"]["/runs"]["get"]["parameters"].as_array().unwrap();
    let names: Vec<String> = params
        .iter()
        .map(|p| match p["$ref"].as_str() {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap();
                api["components"]["parameters"][name]["name"].as_str().unwrap().to_owned()
            }
            None => p["name"].as_str().unwrap().to_owned(),
        })
        .collect();
    assert!(names.iter().any(|n| n == "pullCursor"), "{names:?}");
    let not_here = |name: &str| {
        let resp = server.req("alice", "GET", &format!("/runs?{name}=%21")).send();
        resp.status == 400
            && resp.json()["errors"][0]["message"].as_str() == Some("is not a parameter here")
    };
    for name in &names {
        assert!(!not_here(name), "{name} is in the YAML but the server does not take it");
    }
    assert!(not_here("updatedAfter"), "the server refuses a parameter the YAML lacks");

    let page = server.get_json("alice", "/runs");
    let run_page = &api["components"]["schemas"]["RunPage"];
    let mut declared: Vec<&str> =
        run_page["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    let mut answered: Vec<&str> = page.as_object().unwrap().keys().map(String::as_str).collect();
    declared.sort_unstable();
    answered.sort_unstable();
    assert_eq!(answered, declared);
    assert_eq!(strings(&run_page["required"]).len(), declared.len(), "all of them, always");
}

/// The limits the page splits its queue by are the ones the YAML states and the server
/// enforces.
#[test]
fn the_queue_limits_are_the_contracts() {
    let api = openapi();
    let items = &api["components"]["schemas"]["BatchUpsertRequest"]["properties"]["items"];
    assert_eq!(items["maxItems"].as_u64(), Some(run_contract::limits::BATCH_ITEMS as u64));
    let mib = run_contract::limits::JSON_BODY_BYTES / (1024 * 1024);
    let description = api["info"]["description"].as_str().unwrap();
    assert!(description.contains(&format!("| JSON request body | {mib} MiB (`413`) |")));
    assert_eq!(sync_server::http::JSON_LIMIT, run_contract::limits::JSON_BODY_BYTES);
}

/// Every operation `openapi.yaml` lists is routed: asked without a token (path parameters
/// filled in with anything), none is answered "no such route" or "method not allowed".
#[test]
fn every_operation_in_the_yaml_is_routed() {
    let api = openapi();
    let server = support::Server::start(support::Backend::Sqlite).expect("a SQLite server");
    let mut operations = 0;
    for (path, item) in api["paths"].as_object().expect("paths") {
        let mut concrete = String::new();
        for (i, part) in path.split(['{', '}']).enumerate() {
            // Odd parts are the parameters' names.
            concrete.push_str(if i % 2 == 1 { "x1" } else { part });
        }
        for (method, operation) in item.as_object().unwrap() {
            if operation.get("operationId").is_none() {
                continue;
            }
            let resp = server.anon(&method.to_uppercase(), &concrete).send();
            let unrouted = resp.status == 405 || resp.text().contains("No such route.");
            assert!(!unrouted, "{method} {path}: {} {}", resp.status, resp.text());
            operations += 1;
        }
    }
    assert!(operations > 30, "{operations}");
}
