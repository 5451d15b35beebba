//! Code the e2e test files share that the `e2e` library should not carry.

pub mod sync_server;

/// A `run_pipeline` or `save_pipeline` request for a YAML file, as the Prompt Studio sends it:
/// the text as written and its parsed form (the worker reads no YAML). `fields` adds the rest.
pub fn pipeline_request(kind: &str, yaml: &str, fields: serde_json::Value) -> serde_json::Value {
    let parsed: serde_json::Value =
        serde_norway::from_str(yaml).unwrap_or_else(|e| panic!("a test pipeline is YAML: {e}"));
    let mut request = serde_json::json!({"type": kind, "text": yaml, "pipeline": parsed});
    for (key, value) in fields.as_object().expect("fields are an object") {
        request[key] = value.clone();
    }
    request
}
