//! A problem flagged on a step (seed `000_…` §1 `Issue`, §2 "Issue Tracker"): its type,
//! severity, description and suggested fix, who raised it and when, and whether it is
//! resolved. Steps carry a list of these; the annotation page writes them, the sync server
//! checks them against `openapi.yaml`'s `Issue`, which a server test holds to this file.

use serde::Serialize;

/// What kind of problem it is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum IssueKind {
    Grammatical,
    Formatting,
    Logic,
    MissingContext,
    Contradiction,
}

impl IssueKind {
    pub const ALL: [IssueKind; 5] = [
        IssueKind::Grammatical,
        IssueKind::Formatting,
        IssueKind::Logic,
        IssueKind::MissingContext,
        IssueKind::Contradiction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            IssueKind::Grammatical => "grammatical",
            IssueKind::Formatting => "formatting",
            IssueKind::Logic => "logic",
            IssueKind::MissingContext => "missing-context",
            IssueKind::Contradiction => "contradiction",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            IssueKind::Grammatical => "Grammar",
            IssueKind::Formatting => "Formatting",
            IssueKind::Logic => "Logic",
            IssueKind::MissingContext => "Missing context",
            IssueKind::Contradiction => "Contradiction",
        }
    }

    pub fn parse(text: &str) -> Option<IssueKind> {
        IssueKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// How much it matters.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    Minor,
    Major,
}

impl Severity {
    pub const ALL: [Severity; 2] = [Severity::Minor, Severity::Major];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Minor => "minor",
            Severity::Major => "major",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Open until someone resolves it; a step with an open issue is flagged for review.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum IssueStatus {
    #[default]
    Open,
    Resolved,
}

impl IssueStatus {
    pub const ALL: [IssueStatus; 2] = [IssueStatus::Open, IssueStatus::Resolved];

    pub fn as_str(self) -> &'static str {
        match self {
            IssueStatus::Open => "open",
            IssueStatus::Resolved => "resolved",
        }
    }
}

/// One flagged problem, camelCase on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// Unique within the step, so a resolution names the issue it closes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: IssueKind,
    pub severity: Severity,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    #[serde(default)]
    pub status: IssueStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagged_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagged_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl Issue {
    pub fn is_open(&self) -> bool {
        self.status == IssueStatus::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_read_the_seeds_shape_and_write_it_back() {
        let seed: Issue = serde_json::from_str(
            r#"{"type": "missing-context", "severity": "minor", "description": "Say which link"}"#,
        )
        .unwrap();
        assert_eq!(seed.kind, IssueKind::MissingContext);
        assert!(seed.is_open(), "an issue without a status is open");
        let written = serde_json::to_value(&seed).unwrap();
        assert_eq!(written["type"], "missing-context");
        assert_eq!(written["status"], "open");
        assert!(written.get("suggestion").is_none() && written.get("resolvedBy").is_none());
        for kind in IssueKind::ALL {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
            assert_eq!(IssueKind::parse(kind.as_str()), Some(kind));
        }
        for severity in Severity::ALL {
            assert_eq!(serde_json::to_value(severity).unwrap(), severity.as_str());
        }
        for status in IssueStatus::ALL {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}
