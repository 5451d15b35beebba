//! The review workflow's status of a captured run.

use serde::{Deserialize, Serialize};

/// draft → in-review → approved | rejected → archived. Every captured run starts as a draft.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewStatus {
    #[default]
    Draft,
    InReview,
    Approved,
    Rejected,
    Archived,
}

impl ReviewStatus {
    /// In flow order, which is also the order pages list them in.
    pub const ALL: [ReviewStatus; 5] = [
        ReviewStatus::Draft,
        ReviewStatus::InReview,
        ReviewStatus::Approved,
        ReviewStatus::Rejected,
        ReviewStatus::Archived,
    ];

    /// The serde name, as stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Draft => "draft",
            ReviewStatus::InReview => "in-review",
            ReviewStatus::Approved => "approved",
            ReviewStatus::Rejected => "rejected",
            ReviewStatus::Archived => "archived",
        }
    }

    pub fn parse(text: &str) -> Option<ReviewStatus> {
        ReviewStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// What a person reads on the badge.
    pub fn label(self) -> &'static str {
        match self {
            ReviewStatus::Draft => "Draft",
            ReviewStatus::InReview => "In review",
            ReviewStatus::Approved => "Approved",
            ReviewStatus::Rejected => "Rejected",
            ReviewStatus::Archived => "Archived",
        }
    }

    /// Draft and in-review runs can be edited; the rest are read only.
    pub fn editable(self) -> bool {
        matches!(self, ReviewStatus::Draft | ReviewStatus::InReview)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for status in ReviewStatus::ALL {
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.as_str());
            assert_eq!(ReviewStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(ReviewStatus::parse("in_review"), None);
    }
}
