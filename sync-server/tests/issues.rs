//! Issues on steps (`run_contract::Issue`): `openapi.yaml`'s `Issue` names the same types,
//! severities and statuses, and the server takes a step carrying a full issue (who flagged
//! and resolved it, and when) and refuses an issue field the contract does not have.

mod support;

use run_contract::issue::{Issue, IssueKind, IssueStatus, Severity};
use serde_json::{Value, json};
use support::step_record;
use sync_server::validate::{self, Check};

fn issue_schema() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
        .expect("openapi.yaml is readable");
    let api: Value = serde_norway::from_str(&text).expect("openapi.yaml is YAML");
    api["components"]["schemas"]["Issue"].clone()
}

fn listed(schema: &Value, field: &str) -> Vec<String> {
    schema["properties"][field]["enum"]
        .as_array()
        .expect("an enum")
        .iter()
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect()
}

fn refused(step: &Value) -> Vec<String> {
    let mut check = Check::default();
    let _ = validate::step_write(step, &mut check);
    check.errors.into_iter().map(|e| e.path).collect()
}

#[test]
fn the_issue_schema_is_the_contracts() {
    let schema = issue_schema();
    let kinds: Vec<&str> = IssueKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(listed(&schema, "type"), kinds);
    let severities: Vec<&str> = Severity::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(listed(&schema, "severity"), severities);
    let statuses: Vec<&str> = IssueStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(listed(&schema, "status"), statuses);
    let issue = Issue {
        id: "issue-1".into(),
        kind: IssueKind::MissingContext,
        severity: Severity::Minor,
        description: "Say which search bar.".into(),
        suggestion: Some("The one in the header.".into()),
        status: IssueStatus::Resolved,
        flagged_by: Some("rev".into()),
        flagged_at: Some("2026-11-20T10:00:00.000Z".into()),
        resolved_by: Some("ann".into()),
        resolved_at: Some("2026-11-20T11:00:00.000Z".into()),
    };
    let written = serde_json::to_value(&issue).unwrap();
    let fields: Vec<&String> = written.as_object().unwrap().keys().collect();
    for field in fields {
        assert!(schema["properties"].get(field).is_some(), "{field} is not in openapi's Issue");
    }

    let mut step = step_record("run-1", 0, None);
    step["issues"] = json!([written]);
    assert_eq!(refused(&step), Vec::<String>::new(), "a full issue is taken");
    step["issues"][0]["note"] = json!("not in the contract");
    assert_eq!(refused(&step), ["/issues/0/note"]);
}
