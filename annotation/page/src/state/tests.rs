use annotation_core::record::{Run, Step, Thought};
use annotation_core::roles::{Role, User};

use super::editor::{Loaded, RunData};
use super::*;

fn loaded(qa: bool, role: Role) -> Loaded {
    let steps = (0..3)
        .map(|index| Step { run_id: "r".into(), index, verified: index == 0, ..Step::default() })
        .collect();
    Loaded {
        data: RunData::new(Run { id: "r".into(), ..Run::default() }, steps),
        qa,
        user: User { name: "ann".into(), role },
        draft: None,
    }
}

/// The page with run `r` open for an annotator.
fn editing() -> Studio {
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio
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
fn a_run_link_carries_any_id_intact() {
    // An imported id is anyone's text. Resolved by the browser from the page, the link must
    // open this page with that id as the one value of agentRunId: no other path, parameter
    // or fragment, and the page reads the same id back.
    let page = url::Url::parse("chrome-extension://abcdefghijklmnop/annotation.html").unwrap();
    for id in [
        "x\"><script>alert(1)</script>",
        "../../",
        "..",
        "?a=b#c",
        "a&qa=true",
        "50% off #1",
        "run/../../x?y",
        "%2e%2e%2f",
        "naïve id+1",
        "javascript:alert(1)",
    ] {
        let link = Route::link(id);
        let opened = page.join(&link).unwrap();
        assert_eq!(opened.path(), "/annotation.html", "{link}");
        assert_eq!(opened.fragment(), None, "{link}");
        let pairs: Vec<(String, String)> = opened.query_pairs().into_owned().collect();
        let expected = [("agentRunId".to_owned(), id.to_owned()), ("qa".into(), "false".into())];
        assert_eq!(pairs, expected, "{link}");
        let route = Route::parse(&format!("?{}", opened.query().unwrap()));
        assert_eq!(route.run_id.as_deref(), Some(id), "{link}");
        assert!(!route.qa, "{link}");
    }
}

#[test]
fn only_web_pages_are_linked_from_a_step() {
    for url in ["https://shop.test/a?b=c", "http://10.0.0.1:8080/", " HTTPS://x.test/"] {
        assert_eq!(web_link(url), Some(url));
    }
    for url in [
        "javascript:alert(1)",
        " JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "\u{1}javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "chrome-extension://abcdefghijklmnop/annotation.html",
        "annotation.html?agentRunId=x",
        "",
    ] {
        assert_eq!(web_link(url), None, "{url:?}");
    }
}

#[test]
fn opening_a_run_selects_its_first_incomplete_step() {
    let studio = editing();
    assert_eq!(studio.screen, Screen::Run);
    assert_eq!(studio.editor.as_ref().unwrap().at, 1);
}

#[test]
fn a_link_that_names_a_step_opens_the_run_on_that_step() {
    let route = Route::parse("?agentRunId=r&step=2");
    assert_eq!(route.step, Some(2));
    assert_eq!(Route::parse(&route.query()), route);
    let mut studio = Studio::default();
    studio.apply(Action::OpenRoute(route));
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    assert_eq!(studio.editor.as_ref().unwrap().at, 2, "stored index 2, not the first to do");
    // Only for the run the link named, and only once.
    studio.apply(Action::BackToList);
    studio.apply(Action::OpenRoute(Route::parse("?agentRunId=other&step=0")));
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    assert_eq!(studio.editor.as_ref().unwrap().at, 1);
}

#[test]
fn edits_survive_switching_steps_and_save_as_one_command() {
    let mut studio = editing();
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
    let mut studio = editing();
    studio.apply(Action::SetThought(Thought::One, "x".into()));
    studio.apply(Action::SetThought(Thought::One, String::new()));
    assert!(!studio.editor.as_ref().unwrap().dirty());
}

#[test]
fn review_mode_reads_and_suggests_but_never_edits() {
    let mut studio = Studio::default();
    let mut run = loaded(true, Role::Reviewer);
    run.data.run.status = annotation_core::record::ReviewStatus::InReview;
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
    let mut studio = editing();
    studio.apply(Action::SetThought(Thought::Three, "I should click Buy.".into()));
    studio.apply(Action::MarkComplete);
    studio.apply(Action::SaveFailed("disk full".into()));
    let editor = studio.editor.as_ref().unwrap();
    assert!(editor.dirty() && !editor.saving);
    assert_eq!(studio.notice.as_ref().unwrap().text, "disk full");
}

#[test]
fn a_run_reopened_after_a_save_still_gets_its_saves_carried_out() {
    let mut studio = editing();
    studio.apply(Action::SetThought(Thought::One, "I start.".into()));
    studio.apply(Action::Save);
    let first = studio.editor.as_ref().unwrap().command.as_ref().unwrap().0;
    // A sync pull reloads the open run; its next save must get a new number.
    studio.apply(Action::RunLoaded(Box::new(loaded(false, Role::Annotator))));
    studio.apply(Action::Transition(annotation_core::record::ReviewStatus::InReview));
    let next = studio.editor.as_ref().unwrap().command.as_ref().unwrap().0;
    assert!(next > first, "{next} after {first}");
}

/// A picked file as the reducer gets it. Natively a stand-in: the reducer only hands it on.
fn picked_file() -> web_sys::File {
    use wasm_bindgen::JsCast;
    wasm_bindgen::JsValue::NULL.unchecked_into()
}

#[test]
fn a_file_over_the_import_cap_is_refused_before_it_is_read() {
    use annotation_core::import::MAX_IMPORT_BYTES;
    let mut studio = Studio::default();
    let stored = Run { id: "stored".into(), ..Run::default() };
    studio.apply(Action::ListLoaded(vec![annotation_core::query::summarize(&stored, &[])]));
    studio.copyable = Some(("earlier.json".into(), "[]".into()));
    let (list, queued) = (studio.list.clone(), studio.queued);

    let bytes = MAX_IMPORT_BYTES + 1;
    studio.apply(Action::ImportFile { name: "huge.json".into(), bytes, file: picked_file() });
    assert_eq!(studio.queued, queued, "no IO: the file is not read and nothing is stored");
    assert_eq!(studio.list, list, "the runs stored stay listed");
    let notice = studio.notice.clone().unwrap();
    assert!(!notice.ok);
    assert_eq!(
        notice.text,
        "Nothing was imported from huge.json: the file is 100.1 MB; imports take at most \
         100 MB, so export fewer runs at a time."
    );
    assert_eq!(studio.rejections.len(), 1);
    assert_eq!(studio.copyable, None, "the earlier file is no longer offered as copies");

    studio.apply(Action::ImportFile {
        name: "big.json".into(),
        bytes: MAX_IMPORT_BYTES,
        file: picked_file(),
    });
    assert!(matches!(studio.effects.last(), Some((_, Effect::ImportFile { .. }))));
}

#[test]
fn a_run_scored_as_it_opens_shows_its_score_unless_a_save_scored_it_since() {
    let mut studio = editing();
    studio.apply(Action::SetTags(vec!["shop".into()]));
    studio.apply(Action::Scored { run_id: "other".into(), quality: 50 });
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.run.quality, None, "another run's score is not this one's");
    studio.apply(Action::Scored { run_id: "r".into(), quality: 61 });
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.run.quality, Some(61));
    assert_eq!(editor.merged_run().quality, Some(61), "the header shows it beside the edits");
    assert!(editor.dirty(), "the edits stay");
    studio.editor.as_mut().unwrap().run.quality = Some(70);
    studio.apply(Action::Scored { run_id: "r".into(), quality: 61 });
    assert_eq!(studio.editor.as_ref().unwrap().run.quality, Some(70), "a save's score is newer");
}

#[test]
fn the_list_counts_the_unscored_runs_a_quality_bound_holds_back() {
    use annotation_core::query::{Filter, summarize};
    use list::ListAction;
    let mut studio = Studio::default();
    let run = |id: &str, quality| Run { id: id.into(), quality, ..Run::default() };
    let runs = [run("a", Some(80)), run("b", None), run("c", None)];
    studio.apply(Action::ListLoaded(runs.iter().map(|r| summarize(r, &[])).collect()));
    assert_eq!((studio.list.shown.len(), studio.list.unscored_hidden), (3, 0));
    let bound = Filter { min_quality: Some(0), ..Filter::default() };
    studio.apply(Action::List(ListAction::Filter(bound)));
    assert_eq!((studio.list.shown.len(), studio.list.unscored_hidden), (1, 2));
    studio.apply(Action::List(ListAction::Text("b".into())));
    assert_eq!((studio.list.shown.len(), studio.list.unscored_hidden), (0, 1), "searched too");
    studio.apply(Action::List(ListAction::Filter(Filter::default())));
    assert_eq!((studio.list.shown.len(), studio.list.unscored_hidden), (3, 0));
}

/// A run `id` with three steps, none complete, for an annotator named ann.
fn queued_run(id: &str) -> Loaded {
    let mut loaded = loaded(false, Role::Annotator);
    loaded.data.run.id = id.into();
    for step in &mut loaded.data.steps {
        step.run_id = id.into();
        step.verified = false;
    }
    loaded
}

fn opened(studio: &Studio) -> Option<String> {
    studio.effects.iter().rev().find_map(|(_, e)| match e {
        Effect::OpenRun { run_id, .. } => Some(run_id.clone()),
        _ => None,
    })
}

#[test]
fn a_queue_is_walked_step_by_step_then_run_by_run_in_the_lists_order() {
    use annotation_core::query::summarize;
    let mut studio = Studio::default();
    let runs: Vec<Run> =
        ["a", "b", "c"].iter().map(|id| Run { id: (*id).into(), ..Run::default() }).collect();
    studio.apply(Action::ListLoaded(runs.iter().map(|r| summarize(r, &[])).collect()));
    let order: Vec<String> = studio.list.shown().map(|s| s.run_id.clone()).collect();
    studio.apply(Action::RunLoaded(Box::new(queued_run(&order[0]))));
    assert_eq!(studio.run_queue, order, "the list's order is kept as the run opens");

    // Alt+N from step 1 goes to the next step not complete; marking steps complete moves on.
    studio.apply(Action::NextNeedingWork);
    assert_eq!(studio.editor.as_ref().unwrap().at, 1);
    studio.apply(Action::Select(0));
    studio.apply(Action::CycleFlagKind);
    studio.apply(Action::CycleFlagSeverity);
    let flag = &studio.editor.as_ref().unwrap().flag;
    assert_ne!(
        (flag.kind, flag.severity),
        (IssueDraft::default().kind, IssueDraft::default().severity)
    );

    // Submit & next: once the submit is stored, the next run in the list opens.
    studio.apply(Action::SubmitAndNext);
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.merged_run().status, ReviewStatus::InReview);
    assert!(opened(&studio).is_none(), "not before the save is stored");
    let run = Box::new(editor.merged_run().clone());
    let steps = editor.merged_steps();
    studio.apply(Action::Saved { run, steps, versions: vec![], then_select: None });
    assert_eq!(opened(&studio).as_deref(), Some(order[1].as_str()));

    // Alt+R on the last run of the list says so and stays.
    studio.apply(Action::RunLoaded(Box::new(queued_run(&order[2]))));
    studio.apply(Action::NextRun);
    assert_eq!(opened(&studio).as_deref(), Some(order[1].as_str()), "nothing new opened");
    assert_eq!(studio.notice.as_ref().unwrap().text, "That was the last run in the list.");
}

#[test]
fn next_run_with_unsaved_edits_asks_first_and_a_run_opened_by_url_reads_the_list() {
    use annotation_core::query::summarize;
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(queued_run("a"))));
    studio.apply(Action::NextRun);
    assert!(studio.effects.iter().any(|(_, e)| matches!(e, Effect::LoadList)));
    let runs: Vec<Run> =
        ["a", "b"].iter().map(|id| Run { id: (*id).into(), ..Run::default() }).collect();
    studio.apply(Action::ListLoaded(runs.iter().map(|r| summarize(r, &[])).collect()));
    let next = studio.run_queue.iter().find(|id| *id != "a").cloned();
    assert_eq!(opened(&studio), next, "the next run opened once the list was read");

    let mut studio = Studio::default();
    studio.apply(Action::ListLoaded(runs.iter().map(|r| summarize(r, &[])).collect()));
    studio.apply(Action::RunLoaded(Box::new(queued_run("a"))));
    studio.apply(Action::SetThought(Thought::One, "I start.".into()));
    studio.apply(Action::NextRun);
    assert!(matches!(studio.leaving, Some(Leave::Run { .. })), "the leave dialog asks");
}
