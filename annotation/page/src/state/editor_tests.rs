use annotation_core::record::{Run, Step, Thought};
use annotation_core::roles::{Role, User};

use super::*;

fn editor(verified: &[bool]) -> EditorState {
    EditorState::new(Loaded {
        run: Run { id: "r".into(), ..Run::default() },
        steps: verified
            .iter()
            .enumerate()
            .map(|(i, v)| Step {
                run_id: "r".into(),
                index: i as u32,
                verified: *v,
                ..Step::default()
            })
            .collect(),
        versions: vec![],
        comments: vec![],
        suggestions: vec![],
        qa: false,
        user: User { name: "ann".into(), role: Role::Annotator },
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
fn flagging_records_why_and_who() {
    let mut e = editor(&[false, false]);
    e.flag("thought 2 contradicts the screenshot", "2026-11-22T10:00:00Z");
    let Some((_, Command::Save { steps, .. })) = &e.command else { panic!() };
    assert_eq!(steps[0].issues[0]["description"], "thought 2 contradicts the screenshot");
    assert_eq!(steps[0].issues[0]["flaggedBy"], "ann");
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
