//! Traces leaving the browser (exports and sync): each stored `LlmTrace` with the values
//! at the configured redaction paths (`agent.trace_redactions`, dot-paths into its
//! `params`) replaced, and those values and every secret this browser holds (API keys,
//! the sync token) masked wherever else they appear, the rendered prompt included.

use serde_json::Value;

/// What replaces a redacted value, as the engine writes it at capture.
pub const REDACTED: &str = "[redacted]";
/// What replaces a secret.
pub const MASK: &str = "***";

/// `trace` ready to leave: redacted at `paths`, `secrets` masked. The shape stays the
/// stored one (strings stay strings), so the sync server's schema takes it.
pub fn outgoing(trace: &Value, paths: &[String], secrets: &[String]) -> Value {
    let mut out = trace.clone();
    let mut hidden: Vec<String> = Vec::new();
    if let Some(params) = out.get_mut("params") {
        for path in paths {
            if let Some(slot) = at_path(params, path) {
                collect_strings(slot, &mut hidden);
                *slot = Value::String(REDACTED.into());
            }
        }
    }
    // Short values would mask unrelated text; the path itself is still replaced.
    hidden.retain(|s| s.chars().count() >= 4);
    let secrets: Vec<&String> = secrets.iter().filter(|s| !s.trim().is_empty()).collect();
    replace_strings(&mut out, &|text: &str| {
        let mut text = text.to_owned();
        for value in &hidden {
            text = text.replace(value.as_str(), REDACTED);
        }
        for secret in &secrets {
            text = text.replace(secret.as_str(), MASK);
        }
        text
    });
    if let (Some(list), false) =
        (out.get_mut("redacted").and_then(Value::as_array_mut), paths.is_empty())
    {
        for path in paths {
            if !list.iter().any(|p| p == path) {
                list.push(Value::String(path.clone()));
            }
        }
    }
    out
}

fn at_path<'a>(value: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    path.split('.').try_fold(value, |here, key| match here {
        Value::Object(map) => map.get_mut(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    })
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

fn replace_strings(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::String(s) => *s = f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, f)),
        _ => {}
    }
}

/// The configured redaction paths in the agent's stored settings (`agent.trace_redactions`).
pub fn redaction_paths(agent_settings: &Value) -> Vec<String> {
    agent_settings["agent"]["trace_redactions"]
        .as_array()
        .map(|paths| paths.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// One `runs:batchUpsert` item for a trace (write-once: no base version; the mutation id
/// is the trace's, so a resend is the same write).
pub fn batch_item(trace: &Value) -> Option<Value> {
    let id = trace["id"].as_str()?;
    let run_id = trace["runId"].as_str()?;
    Some(serde_json::json!({
        "kind": "trace", "mutationId": format!("trace-{id}"), "runId": run_id, "trace": trace,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn trace() -> Value {
        json!({"id": "t1", "runId": "r1", "step": 1, "params": {"task": "Log in as ada@example.com",
            "user": {"email": "ada@example.com", "id": 7}, "page_state": "key sk-live-123456 here"},
            "redacted": [], "prompt": {"system": "Task: Log in as ada@example.com (sk-live-123456)"}})
    }

    #[test]
    fn configured_paths_are_redacted_everywhere_their_values_appear_and_secrets_masked() {
        let out =
            outgoing(&trace(), &["user.email".into(), "nope.x".into()], &["sk-live-123456".into()]);
        assert_eq!(out["params"]["user"]["email"], REDACTED);
        assert_eq!(out["params"]["user"]["id"], 7, "only the path is replaced");
        assert_eq!(out["params"]["task"], "Log in as [redacted]");
        assert_eq!(out["prompt"]["system"], "Task: Log in as [redacted] (***)");
        assert_eq!(out["params"]["page_state"], "key *** here");
        assert_eq!(out["redacted"], json!(["user.email", "nope.x"]));
        let text = out.to_string();
        assert!(!text.contains("ada@example.com") && !text.contains("sk-live-123456"));
    }

    #[test]
    fn nothing_configured_leaves_the_trace_as_stored() {
        assert_eq!(outgoing(&trace(), &[], &[]), trace());
        assert_eq!(redaction_paths(&json!({"agent": {"trace_redactions": ["a.b"]}})), ["a.b"]);
        assert!(redaction_paths(&Value::Null).is_empty());
    }

    #[test]
    fn a_trace_becomes_a_write_once_batch_item() {
        let item = batch_item(&trace()).unwrap();
        assert_eq!((item["kind"].as_str(), item["runId"].as_str()), (Some("trace"), Some("r1")));
        assert_eq!(item["mutationId"], "trace-t1");
        assert!(item.get("baseVersion").is_none());
        assert_eq!(batch_item(&json!({"id": "x"})), None);
    }

    #[test]
    fn json_and_zip_exports_carry_each_runs_traces_and_anonymized_ones_do_not() {
        use crate::export::{Export, Format, Options};
        use crate::record::Run;
        let run = Run { id: "r1".into(), ..Run::default() };
        let runs = [(&run, &[][..])];
        for (format, anonymize, carried) in [
            (Format::Json, false, true),
            (Format::Zip, false, true),
            (Format::Json, true, false),
            (Format::Jsonl, false, false),
        ] {
            let opts = Options { anonymize, ..Options::default() };
            let mut export = Export::new(format, &opts, runs);
            export.add_traces("r1", vec![outgoing(&trace(), &[], &[])]);
            let text = match format {
                Format::Zip => export.zip_run(&run, &[]).json,
                _ => export.run(&run, &[]),
            };
            assert_eq!(text.contains("\"traces\":[{"), carried, "{format:?} {anonymize}: {text}");
        }
    }
}
