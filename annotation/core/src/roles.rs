//! Who may do what (seed §6, §11). The sync server enforces these rules; the page uses them
//! only to decide which buttons to show. The roles and the transition table are the shared
//! contract's (`run_contract::roles`), so the two cannot disagree.

use serde::Serialize;

use crate::record::{ReviewStatus, Run};

pub use run_contract::Role;

/// The person using the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
pub struct User {
    pub name: String,
    pub role: Role,
}

impl Default for User {
    fn default() -> Self {
        User { name: "me".into(), role: Role::Annotator }
    }
}

/// The permissions of seed §11 for one user on one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Permissions {
    /// Change thoughts, actions, subtasks and tags directly.
    pub edit: bool,
    /// Mark steps complete or flagged (reviewers may while in review).
    pub mark: bool,
    /// Propose a tracked change instead of editing.
    pub suggest: bool,
    /// Accept or reject a pending suggestion.
    pub resolve_suggestions: bool,
    pub comment: bool,
    /// Read comments (an annotator sees them once the run is in review or back from it).
    pub see_comments: bool,
    pub approve: bool,
    pub export: bool,
    pub analytics: bool,
    pub rollback: bool,
}

/// Whose run this is: the annotator named on it, or anyone while nobody is.
pub fn owns(user: &User, annotator: Option<&str>) -> bool {
    annotator.is_none_or(|a| a == user.name)
}

pub fn permissions(user: &User, status: ReviewStatus, annotator: Option<&str>) -> Permissions {
    let editable = matches!(status, ReviewStatus::Draft | ReviewStatus::InReview);
    let owner = user.role == Role::Annotator && owns(user, annotator);
    let manager = user.role.is_manager();
    let reviewer = user.role == Role::Reviewer;
    let full = editable && (manager || owner);
    Permissions {
        edit: full,
        mark: full || (reviewer && status == ReviewStatus::InReview),
        suggest: (reviewer || manager) && editable,
        resolve_suggestions: full,
        comment: reviewer || manager || owner,
        see_comments: !owner || status != ReviewStatus::Draft || annotator.is_none(),
        approve: (reviewer || manager) && status == ReviewStatus::InReview,
        export: manager || reviewer || owner,
        analytics: manager,
        rollback: full,
    }
}

/// Whether `user` may move a run from `from` to `to`; `None` if that is no transition.
pub fn permitted(
    user: &User,
    annotator: Option<&str>,
    from: ReviewStatus,
    to: ReviewStatus,
) -> Option<bool> {
    run_contract::roles::permitted(user.role, owns(user, annotator), from, to)
}

/// The statuses `user` may move the run to now, in flow order.
pub fn allowed_targets(
    user: &User,
    annotator: Option<&str>,
    from: ReviewStatus,
) -> Vec<ReviewStatus> {
    ReviewStatus::ALL
        .into_iter()
        .filter(|to| permitted(user, annotator, from, *to) == Some(true))
        .collect()
}

/// Moves `run` to `to` on `user`'s behalf: a decision names its reviewer, and submitting an
/// unassigned run makes it the submitter's, so comments and suggestions come back to them.
/// Whether the move is permitted is [`permitted`]'s question.
pub fn move_run(run: &mut Run, to: ReviewStatus, user: &User) {
    run.status = to;
    if matches!(to, ReviewStatus::Approved | ReviewStatus::Rejected) {
        run.reviewed_by = Some(user.name.clone());
    }
    if to == ReviewStatus::InReview && run.annotator.is_none() {
        run.annotator = Some(user.name.clone());
    }
    if to == ReviewStatus::InReview {
        run.review_rounds += 1;
    }
}

/// The button text for moving to `to`.
pub fn transition_label(to: ReviewStatus) -> &'static str {
    match to {
        ReviewStatus::Draft => "Back to draft",
        ReviewStatus::InReview => "Submit for review",
        ReviewStatus::Approved => "Approve",
        ReviewStatus::Rejected => "Reject",
        ReviewStatus::Archived => "Archive",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role) -> User {
        User { name: "u".into(), role }
    }

    #[test]
    fn annotators_submit_but_never_approve() {
        let ann = user(Role::Annotator);
        assert_eq!(
            allowed_targets(&ann, Some("u"), ReviewStatus::Draft),
            vec![ReviewStatus::InReview]
        );
        assert!(!permissions(&ann, ReviewStatus::InReview, Some("u")).approve);
        assert!(permissions(&ann, ReviewStatus::Draft, Some("u")).edit);
        // Someone else's run is not theirs to edit.
        assert!(!permissions(&ann, ReviewStatus::Draft, Some("other")).edit);
    }

    #[test]
    fn reviewers_suggest_and_approve_but_do_not_edit() {
        let rev = user(Role::Reviewer);
        let p = permissions(&rev, ReviewStatus::InReview, Some("ann"));
        assert!(p.suggest && p.comment && p.approve && p.mark);
        assert!(!p.edit && !p.rollback);
        assert_eq!(
            allowed_targets(&rev, Some("ann"), ReviewStatus::InReview),
            vec![ReviewStatus::Draft, ReviewStatus::Approved, ReviewStatus::Rejected]
        );
    }

    #[test]
    fn approved_runs_are_read_only_and_only_managers_archive() {
        for role in Role::ALL {
            assert!(!permissions(&user(role), ReviewStatus::Approved, Some("u")).edit);
        }
        assert_eq!(
            allowed_targets(&user(Role::QaManager), None, ReviewStatus::Approved),
            vec![ReviewStatus::InReview, ReviewStatus::Archived]
        );
        assert!(allowed_targets(&user(Role::Reviewer), None, ReviewStatus::Approved).is_empty());
        assert_eq!(
            permitted(&user(Role::Admin), None, ReviewStatus::Draft, ReviewStatus::Approved),
            None
        );
    }
}
