use annotation_core::record::{Run, Step, Thought};
use annotation_core::roles::{Role, User};

use super::editor::Loaded;
use super::*;

fn loaded(qa: bool, role: Role) -> Loaded {
    let steps = (0..3)
        .map(|index| Step { run_id: "r".into(), index, verified: index == 0, ..Step::default() })
        .collect();
    Loaded {
        run: Run { id: "r".into(), ..Run::default() },
        steps,
        versions: vec![],
        comments: vec![],
        suggestions: vec![],
        qa,
        user: User { name: "ann".into(), role },
        draft: None,
    }
}

#[test]
fn the_url_names_the_run_and_the_mode() {
    let route = Route::parse("?agentRunId=5412e928-9b96&taskId=7d09%2F25&qa=true");
    assert_eq!(route.run_id.as_deref(), Some("5412e928-9b96"));
    assert_eq!(route.task_id.as_deref(), Some("7d09/25"));
    assert!(route.qa);
    assert_eq!(Route::parse(&route.query()), route);
    assert_eq!(Route::parse(""), Route::default());
    assert_eq!(Route::parse("?qa=false&agentRunId=").run_id, None);
    assert_eq!(Route::parse("?agentRunId=%zz").run_id.as_deref(), Some("%zz"));
}

#[test]
fn opening_a_run_selects_its_first_incomplete_step() {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    assert_eq!(studio.screen, Screen::Run);
    assert_eq!(studio.editor.as_ref().unwrap().at, 1);
}

#[test]
fn edits_survive_switching_steps_and_save_as_one_command() {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::SetThought(Thought::One, "I opened the shop.".into()));
    studio.apply(Action::Next);
    studio.apply(Action::SetThought(Thought::Two, "I can see the cart.".into()));
    studio.apply(Action::Prev);
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.current().unwrap().thoughts.thought1, "I opened the shop.");
    assert_eq!(editor.drafts.len(), 2);
    studio.apply(Action::Save);
    let editor = studio.editor.as_ref().unwrap();
    let Some((1, editor::Command::Save { steps, .. })) = &editor.command else { panic!("no save") };
    assert_eq!(steps[2].thoughts.thought2, "I can see the cart.");
    assert!(editor.saving);
}

#[test]
fn typing_back_the_saved_text_leaves_nothing_to_save() {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::SetThought(Thought::One, "x".into()));
    studio.apply(Action::SetThought(Thought::One, String::new()));
    assert!(!studio.editor.as_ref().unwrap().dirty());
}

#[test]
fn review_mode_reads_and_suggests_but_never_edits() {
    let mut studio = Studio::default();
    let mut run = loaded(true, Role::Reviewer);
    run.run.status = annotation_core::record::ReviewStatus::InReview;
    studio.apply(Action::RunLoaded(Box::new(run)));
    studio.apply(Action::SetThought(Thought::One, "changed".into()));
    let editor = studio.editor.as_ref().unwrap();
    assert!(!editor.dirty(), "a reviewer's typing does not change the text");
    assert!(editor.permissions().suggest);
    studio.apply(Action::StartSuggest(Thought::One));
    studio.apply(Action::SuggestText("I opened it.".into()));
    assert_eq!(
        studio.editor.as_ref().unwrap().suggesting,
        Some((Thought::One, "I opened it.".into()))
    );
}

#[test]
fn a_failed_save_keeps_the_edits() {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::SetThought(Thought::Three, "I should click Buy.".into()));
    studio.apply(Action::MarkComplete);
    studio.apply(Action::SaveFailed("disk full".into()));
    let editor = studio.editor.as_ref().unwrap();
    assert!(editor.dirty() && !editor.saving);
    assert_eq!(studio.notice.as_ref().unwrap().text, "disk full");
}

#[test]
fn a_run_reopened_after_a_save_still_gets_its_saves_carried_out() {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::SetThought(Thought::One, "I start.".into()));
    studio.apply(Action::Save);
    let first = studio.editor.as_ref().unwrap().command.as_ref().unwrap().0;
    // A sync pull reloads the open run; its next save must get a new number.
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::Transition(annotation_core::record::ReviewStatus::InReview));
    let next = studio.editor.as_ref().unwrap().command.as_ref().unwrap().0;
    assert!(next > first, "{next} after {first}");
}
