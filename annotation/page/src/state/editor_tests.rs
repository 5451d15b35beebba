use annotation_core::record::{Run, Step, Thought};
use annotation_core::roles::{Role, User};

use super::*;

fn editor(verified: &[bool]) -> EditorState {
    let steps = verified
        .iter()
        .enumerate()
        .map(|(i, v)| Step { run_id: "r".into(), index: i as u32, verified: *v, ..Step::default() })
        .collect();
    EditorState::new(Loaded {
        data: RunData::new(Run { id: "r".into(), ..Run::default() }, steps),
        qa: false,
        user: User { name: "ann".into(), role: Role::Annotator },
        draft: None,
    })
}

#[test]
fn mark_complete_saves_and_moves_to_the_next_incomplete_step() {
    let mut e = editor(&[false, true, false, false]);
    assert_eq!(e.at, 0);
    e.mark_complete();
    let Some((_, Command::Save { steps, then_select, .. })) = &e.command else { panic!() };
    assert!(steps[0].verified);
    assert_eq!(*then_select, Some(2), "step 1 is already done");
}

#[test]
fn flagging_records_the_issue_as_chosen_and_who_raised_it() {
    use annotation_core::issues::{Draft, IssueKind, Severity};
    let mut e = editor(&[false, false]);
    e.flag = Draft {
        kind: IssueKind::Contradiction,
        severity: Severity::Minor,
        description: "thought 2 contradicts the screenshot".into(),
        suggestion: "Say the cart is empty.".into(),
    };
    e.flag("2026-11-22T10:00:00Z");
    let Some((_, Command::Save { steps, .. })) = &e.command else { panic!() };
    let issue = &steps[0].issues[0];
    assert_eq!(issue["description"], "thought 2 contradicts the screenshot");
    assert_eq!(
        (issue["type"].as_str(), issue["severity"].as_str()),
        (Some("contradiction"), Some("minor"))
    );
    assert_eq!(issue["suggestion"], "Say the cart is empty.");
    assert_eq!(issue["flaggedBy"], "ann");
    assert_eq!(e.flag.kind, IssueKind::Contradiction, "the type stays for the next flag");
    assert!(e.flag.description.is_empty(), "the description is used up");
}

#[test]
fn marking_complete_keeps_issues_and_resolving_one_saves() {
    let mut e = editor(&[false, false]);
    e.flag.description = "unclear".into();
    e.flag("t1");
    let Some((_, Command::Save { run, steps, .. })) = e.command.clone() else { panic!() };
    e.saved(run, steps, Vec::new(), None);
    e.mark_complete();
    let Some((_, Command::Save { run, steps, then_select })) = e.command.clone() else { panic!() };
    assert_eq!(steps[0].issues.len(), 1, "Mark complete does not erase issues");
    assert!(steps[0].verified);
    assert_eq!(then_select, Some(1));
    e.saved(run, steps, Vec::new(), None);
    e.select(0);
    let before = e.command.as_ref().map(|(n, _)| *n);
    e.resolve_issue(0, true, "t2");
    let Some((n, Command::Save { steps, .. })) = &e.command else { panic!() };
    assert!(Some(*n) > before, "resolving saves at once");
    assert_eq!(steps[0].issues[0]["status"], "resolved");
    assert_eq!(steps[0].issues[0]["resolvedBy"], "ann");
}

#[test]
fn a_save_with_placeholders_left_waits_for_save_anyway() {
    let mut e = editor(&[false]);
    e.set_thought(Thought::Three, "I should click the <element> button.".into());
    e.save_now();
    assert!(e.command.is_none(), "held back");
    let Some((_, unfilled)) = &e.blocked else { panic!() };
    assert_eq!(unfilled, &[(1, vec!["element".to_owned()])]);
    e.save_anyway();
    assert!(e.command.is_some() && e.blocked.is_none());
}

#[test]
fn a_stored_draft_comes_back_as_unsaved_edits_on_its_step() {
    let steps: Vec<Step> =
        (0..3).map(|index| Step { run_id: "r".into(), index, ..Step::default() }).collect();
    let mut edited = steps[2].clone();
    edited.thoughts.thought1 = "typed before the reload".into();
    let run = Run { id: "r".into(), ..Run::default() };
    let draft = super::super::drafts::to_store(&run, &[(2, edited)].into(), &None);
    let e = EditorState::new(Loaded {
        data: RunData::new(run, steps),
        qa: false,
        user: User { name: "ann".into(), role: Role::Annotator },
        draft,
    });
    assert!(e.dirty());
    assert_eq!(e.at, 2, "opens where the edits are");
    assert_eq!(e.current().unwrap().thoughts.thought1, "typed before the reload");
    assert_eq!(e.restored.as_ref().map(|r| r.steps.clone()), Some(vec![3]));
}

#[test]
fn a_fix_across_all_steps_drafts_only_the_steps_it_changed() {
    let mut e = editor(&[false, false, false]);
    e.steps[1].thoughts.thought2 = "I see teh cart.".into();
    e.edit_all(|steps| {
        for s in steps {
            let t = s.thoughts.get(Thought::Two).replace("teh", "the");
            *s.thoughts.get_mut(Thought::Two) = t;
        }
    });
    assert_eq!(e.drafts.keys().copied().collect::<Vec<_>>(), [1]);
}

#[test]
fn saved_state_replaces_drafts_and_selects_as_asked() {
    let mut e = editor(&[false, false]);
    e.set_thought(Thought::One, "I start here.".into());
    let steps = e.merged_steps();
    e.saved(e.run.clone(), steps, Vec::new(), Some(1));
    assert!(!e.dirty());
    assert_eq!(e.at, 1);
    assert_eq!(e.steps[0].thoughts.thought1, "I start here.");
}
