//! Review: threaded comments (seed §7.A) and suggestions, the tracked changes a reviewer
//! proposes and the run's author accepts or rejects (seed §6 Mode B).

use serde::Serialize;

use run_contract::passage::{Passage, reanchor, replace, slice};

use crate::record::{Step, Thought};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum CommentKind {
    #[default]
    Question,
    Suggestion,
    Correction,
    Approval,
}

impl CommentKind {
    pub const ALL: [CommentKind; 4] = [
        CommentKind::Question,
        CommentKind::Suggestion,
        CommentKind::Correction,
        CommentKind::Approval,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CommentKind::Question => "question",
            CommentKind::Suggestion => "suggestion",
            CommentKind::Correction => "correction",
            CommentKind::Approval => "approval",
        }
    }

    pub fn parse(text: &str) -> Option<CommentKind> {
        CommentKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// One comment; replies name their thread's first comment in `parent_id`.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: String,
    pub run_id: String,
    /// The step it is about; `None` for the run as a whole.
    pub step_index: Option<u32>,
    #[serde(default)]
    pub parent_id: Option<String>,
    pub author: String,
    pub text: String,
    #[serde(rename = "type")]
    pub kind: CommentKind,
    #[serde(default)]
    pub resolved: bool,
    pub created_at: String,
    /// The server's id once synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// The passage of a thought the comment is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<PassageRef>,
}

/// A passage of a step's thought that a comment or a suggestion points at: its range
/// (characters, start inclusive, end exclusive), its quote and a little context either
/// side, so it is found again after edits (`run_contract::passage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassageRef {
    pub field: Thought,
    pub start: usize,
    pub end: usize,
    pub quote: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
    /// The server found the quote gone from the thought.
    #[serde(default)]
    pub outdated: bool,
}

impl PassageRef {
    /// The characters `start..end` of `text`, the thought `field`'s; `None` for an empty
    /// or out-of-range selection.
    pub fn capture(field: Thought, text: &str, start: usize, end: usize) -> Option<PassageRef> {
        let p = Passage::capture(text, start, end)?;
        Some(PassageRef {
            field,
            start: p.start,
            end: p.end,
            quote: p.quote,
            prefix: p.prefix,
            suffix: p.suffix,
            outdated: false,
        })
    }

    fn passage(&self) -> Passage {
        Passage {
            start: self.start,
            end: self.end,
            quote: self.quote.clone(),
            prefix: self.prefix.clone(),
            suffix: self.suffix.clone(),
        }
    }

    /// Where the passage is in `text` now (the thought as it reads, unsaved edits
    /// included): its range, moved with the quote; `None` when the quote is gone, so the
    /// comment is outdated.
    pub fn locate(&self, text: &str) -> Option<(usize, usize)> {
        let passage = self.passage();
        if passage.holds(text) {
            return Some((self.start, self.end));
        }
        reanchor(&passage, text).map(|p| (p.start, p.end))
    }

    /// `text` cut around the passage: before, the passage, after; `None` when it is gone.
    pub fn split(&self, text: &str) -> Option<(String, String, String)> {
        let (start, end) = self.locate(text)?;
        let len = text.chars().count();
        Some((slice(text, 0, start)?, slice(text, start, end)?, slice(text, end, len)?))
    }
}

/// A thread: its first comment and the replies in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread<'a> {
    pub root: &'a Comment,
    pub replies: Vec<&'a Comment>,
}

/// The threads about `step` (or the run, for `None`), oldest first; a thread is resolved when
/// its first comment is.
pub fn threads(comments: &[Comment], step: Option<u32>) -> Vec<Thread<'_>> {
    let mut roots: Vec<&Comment> =
        comments.iter().filter(|c| c.parent_id.is_none() && c.step_index == step).collect();
    lean::sort_by(&mut roots, |a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    roots
        .into_iter()
        .map(|root| {
            let mut replies: Vec<&Comment> =
                comments.iter().filter(|c| c.parent_id.as_deref() == Some(&root.id)).collect();
            lean::sort_by(&mut replies, |a, b| {
                a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id))
            });
            Thread { root, replies }
        })
        .collect()
}

/// Unresolved threads per step, for the step list's badges.
pub fn open_threads(comments: &[Comment], step: Option<u32>) -> usize {
    comments.iter().filter(|c| c.parent_id.is_none() && c.step_index == step && !c.resolved).count()
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, tagged_de::UnitDeserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum SuggestionState {
    #[default]
    Pending,
    Accepted,
    Rejected,
}

/// A reviewer's proposed replacement for one thought of one step.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    pub id: String,
    pub run_id: String,
    pub step_index: u32,
    pub field: Thought,
    /// The text the reviewer saw; accepting fails if the thought has changed since.
    pub before: String,
    pub after: String,
    pub author: String,
    #[serde(default)]
    pub note: String,
    pub state: SuggestionState,
    pub created_at: String,
    #[serde(default)]
    pub resolved_by: Option<String>,
    #[serde(default)]
    pub resolved_at: Option<String>,
    /// The server's id once synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// A passage suggestion: `after` replaces this range of the thought only, and `before`
    /// is the quote it replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<PassageRef>,
}

/// A suggestion as a tracked change on the thought's current text: the text before, what
/// is struck out, what is put in, the text after. A whole-thought suggestion strikes the
/// whole thought; a passage suggestion only its range. `None` when its passage is gone.
pub fn tracked(suggestion: &Suggestion, current: &str) -> Option<[String; 4]> {
    match &suggestion.passage {
        Some(passage) => {
            let (before, removed, after) = passage.split(current)?;
            Some([before, removed, suggestion.after.clone(), after])
        }
        None => Some([
            String::new(),
            suggestion.before.clone(),
            suggestion.after.clone(),
            String::new(),
        ]),
    }
}

/// The thought `current` with `suggestion` applied: a passage suggestion changes its range
/// only (the rest may have been edited since), any other replaces the thought. `None` when
/// the passage is gone.
pub fn applied(suggestion: &Suggestion, current: &str) -> Option<String> {
    match &suggestion.passage {
        Some(passage) => passage
            .locate(current)
            .and_then(|(start, end)| replace(current, start, end, &suggestion.after)),
        None => Some(suggestion.after.clone()),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    NotPending,
    /// The thought was edited after the suggestion was made.
    Stale {
        current: String,
    },
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveError::NotPending => {
                write!(f, "This suggestion was already accepted or rejected.")
            }
            ResolveError::Stale { .. } => write!(
                f,
                "The thought changed after this suggestion was made; compare and apply it by hand."
            ),
        }
    }
}

/// Accepts `suggestion` into `step`: the thought becomes the suggested text.
pub fn accept(
    suggestion: &mut Suggestion,
    step: &mut Step,
    who: &str,
    at: &str,
) -> Result<(), ResolveError> {
    if suggestion.state != SuggestionState::Pending {
        return Err(ResolveError::NotPending);
    }
    let current = step.thoughts.get(suggestion.field).to_owned();
    let changed = match &suggestion.passage {
        Some(_) => applied(suggestion, &current),
        None => (current == suggestion.before).then(|| suggestion.after.clone()),
    };
    let Some(changed) = changed else {
        return Err(ResolveError::Stale { current });
    };
    *step.thoughts.get_mut(suggestion.field) = changed;
    step.last_edited_by = who.to_owned();
    step.last_edited_at = at.to_owned();
    resolve(suggestion, SuggestionState::Accepted, who, at);
    Ok(())
}

pub fn reject(suggestion: &mut Suggestion, who: &str, at: &str) -> Result<(), ResolveError> {
    if suggestion.state != SuggestionState::Pending {
        return Err(ResolveError::NotPending);
    }
    resolve(suggestion, SuggestionState::Rejected, who, at);
    Ok(())
}

fn resolve(suggestion: &mut Suggestion, state: SuggestionState, who: &str, at: &str) {
    suggestion.state = state;
    suggestion.resolved_by = Some(who.to_owned());
    suggestion.resolved_at = Some(at.to_owned());
}

/// Whether a decision on `suggestion` belongs to the server: one it holds is decided there,
/// where the author's decision counts, while sync is on; any other is decided here.
pub fn decided_on_server(suggestion: &Suggestion, syncing: bool) -> bool {
    suggestion.server_id.is_some() && syncing
}

pub fn pending(suggestions: &[Suggestion]) -> usize {
    suggestions.iter().filter(|s| s.state == SuggestionState::Pending).count()
}

/// What stands between a run and approval: the one rule for Approve on a run, Alt+A and
/// "Approve picked". A pending suggestion refuses it (the run's author decides each first,
/// as the server insists); open issues and steps not marked complete make the approver say
/// yes to them, since the run would go into training data as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApprovalCheck {
    pub pending_suggestions: usize,
    pub open_issues: usize,
    /// Steps not marked complete, of `steps`.
    pub incomplete: usize,
    pub steps: usize,
}

impl ApprovalCheck {
    pub fn of(steps: &[Step], suggestions: &[Suggestion]) -> Self {
        ApprovalCheck {
            pending_suggestions: pending(suggestions),
            open_issues: steps.iter().map(crate::issues::open_count).sum(),
            incomplete: steps.iter().filter(|s| !s.verified).count(),
            steps: steps.len(),
        }
    }

    /// From a runs-list row, which knows everything but the suggestions.
    pub fn of_summary(summary: &crate::query::RunSummary, pending_suggestions: usize) -> Self {
        ApprovalCheck {
            pending_suggestions,
            open_issues: summary.open_issues as usize,
            incomplete: summary.steps.saturating_sub(summary.done) as usize,
            steps: summary.steps as usize,
        }
    }

    /// Why the run cannot be approved now, if it cannot.
    pub fn refusal(&self) -> Option<String> {
        let n = self.pending_suggestions;
        (n > 0).then(|| format!("{n} suggestion{} still to be decided by the author", plural(n)))
    }

    /// What the approver should know first, if anything.
    pub fn doubts(&self) -> Option<String> {
        let mut doubts = Vec::new();
        if self.open_issues > 0 {
            let n = self.open_issues;
            doubts.push(format!("{n} open issue{}", plural(n)));
        }
        if self.incomplete > 0 {
            doubts.push(format!("{} of {} steps not complete", self.incomplete, self.steps));
        }
        (!doubts.is_empty()).then(|| doubts.join(" and "))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn approval_is_refused_while_suggestions_wait_and_questioned_for_open_work() {
        let done = Step { verified: true, ..Step::default() };
        let mut flagged = done.clone();
        flagged.issues = vec![serde_json::json!({"id": "issue-1", "type": "logic",
            "severity": "major", "description": "wrong", "status": "open"})];
        let todo = Step::default();
        let clean = ApprovalCheck::of(&[done.clone(), done.clone()], &[]);
        assert_eq!((clean.refusal(), clean.doubts()), (None, None));
        let open = ApprovalCheck::of(&[done, flagged, todo], &[]);
        assert_eq!(open.doubts().as_deref(), Some("1 open issue and 1 of 3 steps not complete"));
        assert_eq!(open.refusal(), None);
        let waiting = ApprovalCheck { pending_suggestions: 2, ..clean };
        assert_eq!(
            waiting.refusal().as_deref(),
            Some("2 suggestions still to be decided by the author")
        );
    }

    fn comment(id: &str, parent: Option<&str>, at: &str) -> Comment {
        Comment {
            id: id.into(),
            run_id: "r".into(),
            step_index: Some(2),
            parent_id: parent.map(Into::into),
            author: "rev".into(),
            text: id.into(),
            kind: CommentKind::Question,
            resolved: false,
            created_at: at.into(),
            server_id: None,
            passage: None,
        }
    }

    /// A pending suggestion on step 0's thought 2, never sent.
    pub(crate) fn suggestion(before: &str, after: &str) -> Suggestion {
        Suggestion {
            id: "s".into(),
            run_id: "r".into(),
            step_index: 0,
            field: Thought::Two,
            before: before.into(),
            after: after.into(),
            author: "rev".into(),
            note: String::new(),
            state: SuggestionState::Pending,
            created_at: "t".into(),
            resolved_by: None,
            resolved_at: None,
            server_id: None,
            passage: None,
        }
    }

    #[test]
    fn replies_gather_under_their_thread() {
        let comments = vec![
            comment("b", None, "2"),
            comment("a", None, "1"),
            comment("a2", Some("a"), "4"),
            comment("a1", Some("a"), "3"),
        ];
        let threads = threads(&comments, Some(2));
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0].root.id, "a");
        let replies: Vec<&str> = threads[0].replies.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(replies, ["a1", "a2"]);
        assert_eq!(open_threads(&comments, Some(2)), 2);
        assert_eq!(open_threads(&comments, Some(3)), 0);
    }

    #[test]
    fn accepting_applies_the_text_once_and_refuses_stale_suggestions() {
        let mut step = Step::default();
        step.thoughts.thought2 = "I see the bar.".into();
        let mut s = suggestion("I see the bar.", "I can see the search bar, but it is empty.");
        let mut stale = s.clone();
        accept(&mut s, &mut step, "ann", "t2").unwrap();
        assert_eq!(step.thoughts.thought2, "I can see the search bar, but it is empty.");
        assert_eq!(s.state, SuggestionState::Accepted);
        assert_eq!(accept(&mut s, &mut step, "ann", "t3"), Err(ResolveError::NotPending));
        assert!(matches!(
            accept(&mut stale, &mut step, "ann", "t3"),
            Err(ResolveError::Stale { .. })
        ));
        assert_eq!(pending(&[stale]), 1);
    }

    #[test]
    fn a_passage_suggestion_changes_its_range_only_even_after_an_unrelated_edit() {
        let text = "I see the search box. I type kettle and press Enter.";
        let start = text.find("kettle").unwrap();
        let passage = PassageRef::capture(Thought::Two, text, start, start + 6).unwrap();
        let mut s = suggestion("kettle", "electric kettle");
        s.passage = Some(passage.clone());
        let mut step = Step::default();
        // Edited in front of the passage since: the range moves with its quote.
        step.thoughts.thought2 = format!("On the home page. {text}");
        let shown = tracked(&s, &step.thoughts.thought2).unwrap();
        assert_eq!(shown[0], "On the home page. I see the search box. I type ");
        assert_eq!((shown[1].as_str(), shown[2].as_str()), ("kettle", "electric kettle"));
        assert_eq!(shown[3], " and press Enter.");
        accept(&mut s, &mut step, "ann", "t").unwrap();
        assert_eq!(
            step.thoughts.thought2,
            "On the home page. I see the search box. I type electric kettle and press Enter."
        );
        // The quote gone: outdated, and accepting is refused.
        let gone = "I see the search box. I press Enter.";
        assert_eq!(passage.locate(gone), None);
        let mut again = suggestion("kettle", "teapot");
        again.passage = Some(passage);
        let mut step = Step::default();
        step.thoughts.thought2 = gone.into();
        assert!(tracked(&again, gone).is_none());
        assert!(matches!(
            accept(&mut again, &mut step, "ann", "t"),
            Err(ResolveError::Stale { .. })
        ));
    }

    #[test]
    fn only_a_suggestion_the_server_holds_is_decided_there_and_only_while_syncing() {
        let here = suggestion("", "x");
        let there = Suggestion { server_id: Some("srv-1".into()), ..here.clone() };
        assert!(decided_on_server(&there, true));
        assert!(!decided_on_server(&there, false), "sync turned off: decided here");
        assert!(!decided_on_server(&here, true), "never sent: the server cannot decide it");
    }
}
