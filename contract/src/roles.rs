//! Who a person is on a team (seed §6, §11) and which status moves each may make. The sync
//! server enforces this table; the annotation page reads the same one to decide which
//! buttons to show.

use serde::Serialize;

use crate::status::ReviewStatus;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    Annotator,
    Reviewer,
    QaManager,
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Annotator, Role::Reviewer, Role::QaManager, Role::Admin];

    /// The serde name, as stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Annotator => "annotator",
            Role::Reviewer => "reviewer",
            Role::QaManager => "qa_manager",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Role::Annotator => "Annotator",
            Role::Reviewer => "Reviewer",
            Role::QaManager => "QA manager",
            Role::Admin => "Admin",
        }
    }

    /// qa_manager or admin: edit any run, assign annotators.
    pub fn is_manager(self) -> bool {
        matches!(self, Role::QaManager | Role::Admin)
    }
}

/// Whether someone with `role` may move a run from `from` to `to`; `None` if that pair is no
/// transition at all. `owns_run` says the run is theirs: each side decides that from what it
/// knows (the server from the run's annotator, the page also from an unassigned run).
pub fn permitted(role: Role, owns_run: bool, from: ReviewStatus, to: ReviewStatus) -> Option<bool> {
    use ReviewStatus::*;
    let owner = role == Role::Annotator && owns_run;
    let manager = role.is_manager();
    let reviewer = role == Role::Reviewer;
    Some(match (from, to) {
        (Draft, InReview) => owner || manager,
        (InReview, Draft) => owner || reviewer || manager,
        (InReview, Approved) | (InReview, Rejected) => reviewer || manager,
        (Rejected, Draft) => owner || manager,
        (Approved, InReview) => manager,
        (Approved, Archived) | (Rejected, Archived) => manager,
        (Archived, Draft) => role == Role::Admin,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for role in Role::ALL {
            assert_eq!(serde_json::to_value(role).unwrap(), role.as_str());
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
    }

    #[test]
    fn only_an_admin_restores_an_archived_run_and_nobody_skips_review() {
        use ReviewStatus::*;
        for role in Role::ALL {
            let restore = permitted(role, true, Archived, Draft);
            assert_eq!(restore, Some(role == Role::Admin), "{role:?}");
            assert_eq!(permitted(role, true, Draft, Approved), None, "{role:?}");
        }
        // An annotator moves only their own run.
        assert_eq!(permitted(Role::Annotator, false, Draft, InReview), Some(false));
        assert_eq!(permitted(Role::Annotator, true, Draft, InReview), Some(true));
    }
}
