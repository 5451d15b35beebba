//! AI drafts: asked one at a time, decided a thought at a time, never saved by themselves.

use annotation_core::record::{ReviewStatus, Run, Step, Thought};
use annotation_core::roles::{Role, User};
use protocol::drafting::DraftedThoughts;

use super::*;
use crate::state::editor::{Loaded, RunData};
use crate::state::{Action, Effect, Studio};

/// A run of four steps: 0 and 2 without thoughts, 1 and 3 with.
fn opened(role: Role) -> Studio {
    let steps = (0..4)
        .map(|index| {
            let mut step = Step { run_id: "r".into(), index, ..Step::default() };
            step.action.target = format!("button {index}");
            step.outcome = "ok".into();
            if index % 2 == 1 {
                step.thoughts.thought1 = format!("I see step {index}.");
            }
            step
        })
        .collect();
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(Loaded {
        data: RunData::new(
            Run {
                id: "r".into(),
                task_prompt: "Buy a kettle".into(),
                status: ReviewStatus::Draft,
                ..Run::default()
            },
            steps,
        ),
        qa: false,
        user: User { name: "ann".into(), role },
        draft: None,
    })));
    studio
}

fn asked(studio: &Studio) -> Vec<u32> {
    studio
        .effects
        .iter()
        .filter_map(|(_, e)| match e {
            Effect::DraftThoughts { input, .. } => Some(input.step_index),
            _ => None,
        })
        .collect()
}

fn answer(studio: &mut Studio, step_index: u32, result: Result<DraftedThoughts, String>) {
    studio.apply(Action::Draft(DraftAction::Answered { run_id: "r".into(), step_index, result }));
}

fn drafted(prefix: &str) -> DraftedThoughts {
    DraftedThoughts {
        thought1: format!("{prefix}: I start on the shop."),
        thought2: format!("{prefix}: I can see the 'Buy' button."),
        thought3: format!("{prefix}: I should click 'Buy'."),
    }
}

fn editor(studio: &Studio) -> &crate::state::editor::EditorState {
    studio.editor.as_ref().unwrap()
}

#[test]
fn a_draft_is_asked_with_the_step_and_task_and_accepted_with_an_edit_as_an_unsaved_edit() {
    let mut studio = opened(Role::Annotator);
    studio.apply(Action::Draft(DraftAction::Ask));
    assert_eq!(asked(&studio), [0]);
    let Some((_, Effect::DraftThoughts { input, .. })) = studio.effects.last() else { panic!() };
    assert_eq!((input.task.as_str(), input.step_count), ("Buy a kettle", 4));
    assert_eq!(input.action, "none on 'button 0'");
    studio.apply(Action::Draft(DraftAction::Ask));
    assert_eq!(asked(&studio), [0], "one draft at a time");

    answer(&mut studio, 0, Ok(drafted("d")));
    assert!(!editor(&studio).dirty(), "a draft changes nothing by itself");
    studio.apply(Action::Draft(DraftAction::Edit {
        step_index: 0,
        which: Thought::Two,
        text: "I can see the 'Buy now' button.".into(),
    }));
    studio.apply(Action::Draft(DraftAction::Accept { step_index: 0, which: Thought::Two }));
    let step = editor(&studio).current().unwrap().clone();
    assert_eq!(step.thoughts.thought2, "I can see the 'Buy now' button.");
    assert_eq!(step.drafted_thoughts, [Thought::Two]);
    assert!(editor(&studio).dirty(), "accepted: an unsaved edit the person saves");
    assert!(
        studio.effects.iter().any(|(_, e)| matches!(e, Effect::PutDraft(_))),
        "kept as the run's unsaved edits"
    );
    assert!(
        !studio.effects.iter().any(|(_, e)| matches!(e, Effect::Save { .. })),
        "never saved silently"
    );
    assert_eq!(editor(&studio).drafting.pending[&0].thoughts.len(), 2, "the others still wait");
}

#[test]
fn a_rejected_draft_leaves_the_step_unchanged() {
    let mut studio = opened(Role::Annotator);
    studio.apply(Action::Draft(DraftAction::Ask));
    answer(&mut studio, 0, Ok(drafted("d")));
    studio.apply(Action::Draft(DraftAction::RejectAll { step_index: 0 }));
    let editor = editor(&studio);
    assert!(editor.drafting.pending.is_empty() && !editor.dirty());
    assert_eq!(editor.current(), editor.steps.first());
}

#[test]
fn a_batch_drafts_the_steps_without_thoughts_one_at_a_time_and_stops_when_asked() {
    let mut studio = opened(Role::Annotator);
    studio.apply(Action::Draft(DraftAction::Batch));
    assert_eq!(asked(&studio), [0]);
    assert_eq!(editor(&studio).drafting.batch, Some(Batch { done: 0, total: 2, stopped: false }));
    answer(&mut studio, 0, Ok(drafted("a")));
    assert_eq!(asked(&studio), [0, 2]);
    studio.apply(Action::Draft(DraftAction::Stop));
    assert!(editor(&studio).drafting.batch.is_some_and(|b| b.stopped), "the draft under way comes");
    answer(&mut studio, 2, Ok(drafted("b")));
    assert_eq!(editor(&studio).drafting.batch, None);
    assert!(studio.notice.as_ref().unwrap().text.contains("stopped: 2 of 2"));

    // Stopped partway: steps left are not asked.
    let mut studio = opened(Role::Annotator);
    studio.apply(Action::Draft(DraftAction::Batch));
    studio.apply(Action::Draft(DraftAction::Stop));
    answer(&mut studio, 0, Ok(drafted("a")));
    assert_eq!(asked(&studio), [0]);
    assert_eq!(studio.notice.as_ref().unwrap().text, "Drafting stopped: 1 of 2 steps drafted.");
    assert_eq!(editor(&studio).drafting.pending.keys().copied().collect::<Vec<_>>(), [0]);
}

#[test]
fn a_failed_draft_says_why_in_a_line_and_stops_the_batch_losing_nothing() {
    let mut studio = opened(Role::Annotator);
    studio.apply(Action::Draft(DraftAction::Ask));
    answer(&mut studio, 0, Ok(drafted("kept")));
    studio.apply(Action::Select(2));
    studio.apply(Action::Draft(DraftAction::Batch));
    assert_eq!(asked(&studio), [0, 2], "step 0 has a draft waiting already");
    answer(&mut studio, 2, Err("No draft: the provider refused the key.".into()));
    let notice = studio.notice.clone().unwrap();
    assert!(!notice.ok);
    assert_eq!(notice.text, "Step 3: No draft: the provider refused the key. (0 of 1 answered)");
    let editor = editor(&studio);
    assert_eq!(editor.drafting.batch, None);
    assert!(editor.drafting.pending.contains_key(&0), "the earlier draft is still there");
    // An answer for another run or step than asked is ignored.
    let mut studio = opened(Role::Annotator);
    answer(&mut studio, 0, Ok(drafted("x")));
    assert!(studio.editor.as_ref().unwrap().drafting.pending.is_empty());
}

#[test]
fn a_reviewer_in_review_mode_drafts_nothing() {
    let mut studio = opened(Role::Annotator);
    studio.editor.as_mut().unwrap().qa = true;
    studio.apply(Action::Draft(DraftAction::Ask));
    assert!(asked(&studio).is_empty());
}
