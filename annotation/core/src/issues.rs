//! The Issue Tracker (seed §2, §1 `Issue`): problems flagged on a step with a type, a
//! severity, a description and a suggested fix, listed per step, resolved (or reopened) by
//! annotators and reviewers, and counted per run.
//!
//! Steps keep their issues as JSON values (`Step::issues`), so an issue written by an older
//! page (without an id or a status) still reads: it is open until someone resolves it.

use serde_json::Value;

pub use run_contract::issue::{Issue, IssueKind, IssueStatus, Severity};

use crate::record::Step;

/// What the flag form holds until "Save & flag for review".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub kind: IssueKind,
    pub severity: Severity,
    pub description: String,
    pub suggestion: String,
}

impl Default for Draft {
    fn default() -> Self {
        Draft {
            kind: IssueKind::Logic,
            severity: Severity::Major,
            description: String::new(),
            suggestion: String::new(),
        }
    }
}

/// What an issue says when its description was left empty.
pub const NO_DESCRIPTION: &str = "Flagged for review";

/// Whether a stored issue is still open (anything but `"status": "resolved"`).
pub fn value_is_open(issue: &Value) -> bool {
    issue.get("status").and_then(Value::as_str) != Some(IssueStatus::Resolved.as_str())
}

/// A stored issue as the tracker shows it; a value it cannot read shows as an open logic
/// issue quoting what it holds, rather than disappearing.
pub fn read(issue: &Value) -> Issue {
    serde_json::from_value(issue.clone()).unwrap_or_else(|_| Issue {
        id: String::new(),
        kind: issue
            .get("type")
            .and_then(Value::as_str)
            .and_then(IssueKind::parse)
            .unwrap_or(IssueKind::Logic),
        severity: issue
            .get("severity")
            .and_then(Value::as_str)
            .and_then(Severity::parse)
            .unwrap_or(Severity::Major),
        description: issue
            .get("description")
            .and_then(Value::as_str)
            .map_or_else(|| issue.to_string(), str::to_owned),
        suggestion: None,
        status: if value_is_open(issue) { IssueStatus::Open } else { IssueStatus::Resolved },
        flagged_by: None,
        flagged_at: None,
        resolved_by: None,
        resolved_at: None,
    })
}

/// The step's issues, in the order they were raised.
pub fn of_step(step: &Step) -> Vec<Issue> {
    step.issues.iter().map(read).collect()
}

pub fn open_count(step: &Step) -> usize {
    step.issues.iter().filter(|i| value_is_open(i)).count()
}

/// A new open issue from the flag form, with an id not used on the step yet.
pub fn raise(step: &Step, draft: &Draft, by: &str, at: &str) -> Value {
    let taken: Vec<String> = of_step(step).into_iter().map(|i| i.id).collect();
    let id = (step.issues.len() + 1..)
        .map(|n| format!("issue-{n}"))
        .find(|id| !taken.contains(id))
        .unwrap_or_default();
    let description = draft.description.trim();
    let suggestion = draft.suggestion.trim();
    let issue = Issue {
        id,
        kind: draft.kind,
        severity: draft.severity,
        description: if description.is_empty() { NO_DESCRIPTION } else { description }.to_owned(),
        suggestion: (!suggestion.is_empty()).then(|| suggestion.to_owned()),
        status: IssueStatus::Open,
        flagged_by: Some(by.to_owned()),
        flagged_at: Some(at.to_owned()),
        resolved_by: None,
        resolved_at: None,
    };
    serde_json::to_value(issue).unwrap_or(Value::Null)
}

/// Resolves (or, with `resolved` false, reopens) the step's issue at `position`. Returns
/// whether anything changed.
pub fn set_resolved(step: &mut Step, position: usize, resolved: bool, by: &str, at: &str) -> bool {
    let Some(value) = step.issues.get_mut(position) else { return false };
    if value_is_open(value) != resolved {
        return false;
    }
    let mut issue = read(value);
    if resolved {
        issue.status = IssueStatus::Resolved;
        issue.resolved_by = Some(by.to_owned());
        issue.resolved_at = Some(at.to_owned());
    } else {
        issue.status = IssueStatus::Open;
        issue.resolved_by = None;
        issue.resolved_at = None;
    }
    *value = serde_json::to_value(issue).unwrap_or(Value::Null);
    true
}

/// A run's issues at a glance: open and resolved, and the kinds still open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    pub open: u32,
    pub resolved: u32,
    /// Kinds of the open issues, sorted, each once.
    pub open_kinds: Vec<IssueKind>,
}

pub fn tally(steps: &[Step]) -> Tally {
    let mut out = Tally::default();
    for issue in steps.iter().flat_map(|s| s.issues.iter()) {
        if value_is_open(issue) {
            out.open += 1;
            let kind = read(issue).kind;
            if !out.open_kinds.contains(&kind) {
                out.open_kinds.push(kind);
            }
        } else {
            out.resolved += 1;
        }
    }
    lean::sort(&mut out.open_kinds);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::StepState;

    #[test]
    fn a_flag_keeps_what_was_chosen_and_resolving_unflags_the_step() {
        let mut step = Step::default();
        let draft = Draft {
            kind: IssueKind::MissingContext,
            severity: Severity::Minor,
            description: "  Which search bar?  ".into(),
            suggestion: "Say it is the one in the header.".into(),
        };
        step.issues.push(raise(&step, &draft, "rev", "2026-11-20T10:00:00.000Z"));
        assert_eq!(step.state(), StepState::Flagged);
        let issue = &of_step(&step)[0];
        assert_eq!(issue.kind, IssueKind::MissingContext);
        assert_eq!(issue.severity, Severity::Minor);
        assert_eq!(issue.description, "Which search bar?");
        assert_eq!(issue.suggestion.as_deref(), Some("Say it is the one in the header."));
        assert_eq!(issue.flagged_by.as_deref(), Some("rev"));

        assert!(set_resolved(&mut step, 0, true, "ann", "2026-11-20T11:00:00.000Z"));
        assert!(!set_resolved(&mut step, 0, true, "ann", "later"), "already resolved");
        assert_eq!(step.state(), StepState::NeedsAnnotation);
        assert_eq!(step.issues.len(), 1, "a resolved issue stays on the step");
        assert_eq!(
            tally(std::slice::from_ref(&step)),
            Tally { open: 0, resolved: 1, open_kinds: vec![] }
        );
        assert!(set_resolved(&mut step, 0, false, "rev", "x"));
        assert_eq!(step.state(), StepState::Flagged);
        assert_eq!(of_step(&step)[0].resolved_by, None);
    }

    #[test]
    fn an_empty_description_says_it_was_flagged_and_ids_stay_unique() {
        let mut step = Step::default();
        step.issues.push(
            json!({"type": "logic", "severity": "major", "description": "old", "flaggedBy": "me"}),
        );
        let issue = raise(&step, &Draft::default(), "me", "t");
        assert_eq!(issue["description"], NO_DESCRIPTION);
        assert_eq!(issue["id"], "issue-2");
        assert!(issue.get("suggestion").is_none());
        step.issues.push(issue);
        let kinds = tally(&[step]).open_kinds;
        assert_eq!(kinds, vec![IssueKind::Logic]);
    }

    #[test]
    fn an_unreadable_issue_still_shows_and_counts_as_open() {
        let odd = json!({"type": "typo", "note": "x"});
        let issue = read(&odd);
        assert!(issue.is_open());
        assert_eq!(issue.kind, IssueKind::Logic);
        assert!(issue.description.contains("typo"));
    }
}
