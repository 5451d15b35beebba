//! The decisions moved out of components, and the IO each one asks for.

use annotation_core::export::{Format, Options};
use annotation_core::query::summarize;
use annotation_core::record::{ReviewStatus, Run, Step, Thought};
use annotation_core::review::{CommentKind, Suggestion, SuggestionState};
use annotation_core::roles::{Role, User};
use annotation_core::sync::{SyncSettings, SyncState};

use super::editor::{Loaded, RunData};
use super::*;

fn user(role: Role) -> User {
    User { name: "ann".into(), role }
}

fn opened(role: Role, status: ReviewStatus) -> Studio {
    let steps = (0..3)
        .map(|index| {
            let mut step = Step { run_id: "r".into(), index, ..Step::default() };
            step.thoughts.thought1 = format!("I see step {index}.");
            step
        })
        .collect();
    let mut studio = Studio::default();
    studio.apply(Action::RunLoaded(Box::new(Loaded {
        data: RunData::new(Run { id: "r".into(), status, ..Run::default() }, steps),
        qa: false,
        user: user(role),
        draft: None,
    })));
    studio
}

/// The effects queued and not yet taken, without their numbers, leaving out the drafts
/// stored as edits are typed (`drafts` has those).
fn queued(studio: &Studio) -> Vec<&Effect> {
    studio
        .effects
        .iter()
        .map(|(_, e)| e)
        .filter(|e| !matches!(e, Effect::PutDraft(_) | Effect::DeleteDraft(_)))
        .collect()
}

/// The drafts stored or dropped, in order.
fn drafts(studio: &Studio) -> Vec<&Effect> {
    studio
        .effects
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, Effect::PutDraft(_) | Effect::DeleteDraft(_)))
        .collect()
}

fn suggestion(server_id: Option<&str>) -> Suggestion {
    Suggestion {
        id: "s".into(),
        run_id: "r".into(),
        step_index: 2,
        field: Thought::One,
        before: "I see step 2.".into(),
        after: "I see the cart.".into(),
        author: "rev".into(),
        note: String::new(),
        state: SuggestionState::Pending,
        created_at: "t0".into(),
        resolved_by: None,
        resolved_at: None,
        server_id: server_id.map(Into::into),
        passage: None,
    }
}

fn syncing(studio: &mut Studio) {
    let settings = SyncSettings { endpoint: "http://127.0.0.1:8787".into(), token: "t".into() };
    studio.apply(Action::SyncSettings(settings));
    studio.effects.clear();
}

#[test]
fn extended_thoughts_are_saved_a_line_each_and_only_where_editing_is_allowed() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    let typed = ["  The cheapest kettle is first. ", "", "The filter may hide others."];
    studio.apply(Action::SetExtended(typed.map(String::from).to_vec()));
    studio.apply(Action::Save);
    let [Effect::Save { steps, .. }] = queued(&studio)[..] else { panic!("{:?}", studio.effects) };
    assert_eq!(
        steps[0].extended_thoughts,
        ["The cheapest kettle is first.", "The filter may hide others."],
        "trimmed, blank lines gone"
    );
    let mut approved = opened(Role::Annotator, ReviewStatus::Approved);
    approved.apply(Action::SetExtended(vec!["late".into()]));
    assert!(!approved.editor.unwrap().dirty(), "an approved run is not the annotator's to edit");
}

#[test]
fn a_save_is_queued_once_and_gone_once_taken() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::SetThought(Thought::One, "I opened the shop.".into()));
    studio.apply(Action::Save);
    let [Effect::Save { steps, latest: None, author, .. }] = queued(&studio)[..] else {
        panic!("one save expected, got {:?}", studio.effects)
    };
    assert_eq!(steps[0].thoughts.thought1, "I opened the shop.");
    assert_eq!(author, "ann");
    // Actions after it do not queue it again.
    studio.apply(Action::Select(2));
    assert_eq!(queued(&studio).len(), 1);
    let up_to = studio.effects.last().unwrap().0;
    studio.apply(Action::EffectsTaken { up_to });
    assert!(studio.effects.is_empty());
}

#[test]
fn a_suggestion_the_server_holds_is_decided_there_while_syncing() {
    let mut studio = opened(Role::Annotator, ReviewStatus::InReview);
    syncing(&mut studio);
    let held = Box::new(suggestion(Some("srv-1")));
    studio.apply(Action::Resolve { suggestion: held, accept: true, at: "t1".into() });
    let [Effect::DecideOnServer { accept: true, .. }] = queued(&studio)[..] else {
        panic!("{:?}", studio.effects)
    };
    assert!(!studio.editor.as_ref().unwrap().dirty(), "the text changes once the server says so");
    // The server's answer goes in like a local decision.
    let mut decided = suggestion(Some("srv-1"));
    decided.state = SuggestionState::Accepted;
    studio.effects.clear();
    studio.apply(Action::Decided { decided: Box::new(decided), accept: true, at: "t2".into() });
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.merged_steps()[2].thoughts.thought1, "I see the cart.");
    assert!(matches!(queued(&studio)[..], [Effect::PutSuggestion { .. }, Effect::Save { .. }]));
}

#[test]
fn a_suggestion_is_decided_here_when_not_synced_and_the_accepted_text_is_saved() {
    let mut studio = opened(Role::Annotator, ReviewStatus::InReview);
    // On the server once, but sync is off now: decided here.
    let held = Box::new(suggestion(Some("srv-1")));
    studio.apply(Action::Resolve { suggestion: held, accept: true, at: "t1".into() });
    let effects = queued(&studio);
    let [Effect::PutSuggestion { suggestion, notice, sent: false }, Effect::Save { steps, .. }] =
        &effects[..]
    else {
        panic!("{:?}", studio.effects)
    };
    assert_eq!(suggestion.state, SuggestionState::Accepted);
    assert_eq!(suggestion.resolved_by.as_deref(), Some("ann"));
    assert_eq!(notice, "Suggestion accepted.");
    assert_eq!(
        steps[2].thoughts.thought1, "I see the cart.",
        "the step it is about, not the one shown"
    );
    assert_eq!(steps[2].last_edited_by, "ann");
}

#[test]
fn a_stale_suggestion_is_refused_with_why_and_nothing_stored() {
    let mut studio = opened(Role::Annotator, ReviewStatus::InReview);
    let mut stale = suggestion(None);
    stale.before = "What the step said before an edit.".into();
    studio.apply(Action::Resolve { suggestion: Box::new(stale), accept: true, at: "t1".into() });
    assert!(studio.effects.is_empty());
    assert!(!studio.notice.as_ref().unwrap().ok);
    // Rejecting needs no matching text.
    studio.apply(Action::Resolve {
        suggestion: Box::new(suggestion(None)),
        accept: false,
        at: "t".into(),
    });
    let [Effect::PutSuggestion { suggestion, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(suggestion.state, SuggestionState::Rejected);
}

#[test]
fn a_suggestion_that_changes_nothing_is_refused_and_one_that_does_is_sent() {
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    studio.apply(Action::StartSuggest(Thought::One));
    let at = studio.editor.as_ref().unwrap().current().unwrap().thoughts.thought1.clone();
    studio.apply(Action::SubmitSuggestion { id: "s1".into(), text: at, at: "t".into() });
    assert!(studio.effects.is_empty());
    assert!(studio.notice.as_ref().unwrap().text.contains("same as the current text"));
    studio.apply(Action::SubmitSuggestion {
        id: "s1".into(),
        text: "Better.".into(),
        at: "t".into(),
    });
    let [Effect::PutSuggestion { suggestion, sent: true, .. }] = queued(&studio)[..] else {
        panic!("{:?}", studio.effects)
    };
    assert_eq!((suggestion.id.as_str(), suggestion.after.as_str()), ("s1", "Better."));
    assert_eq!(suggestion.author, "ann");
    assert_eq!(suggestion.state, SuggestionState::Pending);
}

#[test]
fn comments_are_trimmed_blank_ones_dropped_and_resolve_toggles() {
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    let post = |text: &str| Action::PostComment {
        id: "c1".into(),
        text: text.into(),
        kind: CommentKind::Question,
        reply_to: None,
        at: "t".into(),
    };
    studio.apply(post("  "));
    assert!(studio.effects.is_empty());
    studio.apply(post("  Why this button? "));
    let [Effect::PutComment(comment)] = queued(&studio)[..] else { panic!() };
    assert_eq!(comment.text, "Why this button?");
    assert_eq!(comment.step_index, Some(0));
    let comment = comment.clone();
    studio.apply(Action::ToggleResolved(Box::new(comment)));
    let Effect::PutComment(toggled) = &studio.effects[1].1 else { panic!() };
    assert!(toggled.resolved);
}

#[test]
fn export_takes_the_picked_runs_or_else_those_shown() {
    let mut studio = Studio::default();
    let runs = ["a", "b", "c"].map(|id| Run { id: id.into(), ..Run::default() });
    studio.apply(Action::ListLoaded(runs.iter().map(|r| summarize(r, &[])).collect()));
    studio.apply(Action::ExportList(Format::Json, Options::default()));
    let [Effect::Export { ids, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(ids.len(), 3);
    studio.effects.clear();
    studio.apply(Action::List(list::ListAction::Pick("b".into(), true)));
    studio.apply(Action::ExportList(Format::Json, Options::default()));
    let [Effect::Export { ids, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(ids, &["b"]);
}

#[test]
fn alt_a_approves_only_when_the_buttons_would() {
    let mut studio = opened(Role::Annotator, ReviewStatus::InReview);
    studio.apply(Action::Approve);
    assert!(studio.effects.is_empty());
    assert!(!studio.notice.as_ref().unwrap().ok);

    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    studio.editor.as_mut().unwrap().suggestions = vec![suggestion(None)];
    studio.apply(Action::Approve);
    assert!(studio.effects.is_empty(), "a suggestion is still pending");

    // Steps not marked complete: Approve asks, and only a yes approves.
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    studio.apply(Action::Approve);
    assert!(studio.effects.is_empty(), "it asks first");
    let asked = studio.editor.as_ref().unwrap().approving.clone().expect("a question");
    assert!(asked.contains("steps not complete"), "{asked}");
    studio.apply(Action::ConfirmApproval(false));
    assert!(studio.effects.is_empty() && studio.editor.as_ref().unwrap().approving.is_none());
    studio.apply(Action::Approve);
    studio.apply(Action::ConfirmApproval(true));
    let [Effect::Save { run, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(run.status, ReviewStatus::Approved);
    assert_eq!(run.reviewed_by.as_deref(), Some("ann"));

    // Every step complete and no open issue: it approves at once.
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    for step in &mut studio.editor.as_mut().unwrap().steps {
        step.verified = true;
    }
    studio.apply(Action::Approve);
    let [Effect::Save { run, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(run.status, ReviewStatus::Approved);
}

#[test]
fn a_copy_is_a_draft_of_whoever_makes_it_with_the_edits() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Approved);
    studio.editor.as_mut().unwrap().run.task_prompt = "Buy milk".into();
    studio.apply(Action::Duplicate { id: "copy".into() });
    let [Effect::Duplicate { run, steps, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!((run.id.as_str(), run.status), ("copy", ReviewStatus::Draft));
    assert_eq!(run.task_prompt, "Buy milk (copy)");
    assert_eq!(run.annotator.as_deref(), Some("ann"));
    assert!(steps.iter().all(|s| s.run_id == "copy"));
}

#[test]
fn leaving_a_run_by_its_link_clears_the_url_and_the_back_button_does_not() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::LeaveRun);
    assert_eq!(queued(&studio), [&Effect::ClearQuery, &Effect::LoadList]);
    assert!(studio.editor.is_none());
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::BackToList);
    assert_eq!(queued(&studio), [&Effect::LoadList]);
}

#[test]
fn edits_are_stored_as_drafts_while_typed_and_dropped_once_saved() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::SetThought(Thought::One, "I typed this.".into()));
    let [Effect::PutDraft(draft)] = drafts(&studio)[..] else { panic!("{:?}", studio.effects) };
    assert_eq!(draft.steps[0].thoughts.thought1, "I typed this.");
    studio.effects.clear();
    studio.apply(Action::Select(1));
    assert!(studio.effects.is_empty(), "moving between steps stores nothing");
    studio.apply(Action::Save);
    let Some(Effect::Save { run, steps, .. }) = queued(&studio).last().cloned().cloned() else {
        panic!()
    };
    studio.effects.clear();
    studio.apply(Action::Saved { run, steps, versions: vec![], then_select: None });
    assert_eq!(drafts(&studio), [&Effect::DeleteDraft("r".into())]);
}

#[test]
fn leaving_with_unsaved_edits_asks_and_each_answer_does_what_it_says() {
    let edited = || {
        let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
        studio.apply(Action::SetThought(Thought::Two, "I can see the cart.".into()));
        studio.effects.clear();
        studio
    };
    let mut studio = edited();
    studio.apply(Action::LeaveRun);
    assert_eq!(studio.leaving, Some(Leave::List));
    assert!(studio.editor.is_some() && studio.effects.is_empty(), "nothing happens yet");
    studio.apply(Action::ConfirmLeave(LeaveChoice::Stay));
    assert!(studio.leaving.is_none() && studio.editor.is_some());

    // Back: the URL went to the list already, so the run's URL is put back meanwhile.
    studio.apply(Action::BackToList);
    assert!(matches!(queued(&studio)[..], [Effect::SetQuery(q)] if q.contains("agentRunId=r")));
    studio.effects.clear();
    studio.apply(Action::ConfirmLeave(LeaveChoice::Keep));
    assert_eq!(queued(&studio), [&Effect::ClearQuery, &Effect::LoadList], "the draft stays stored");
    assert!(studio.editor.is_none());

    let mut studio = edited();
    studio.apply(Action::LeaveRun);
    studio.apply(Action::ConfirmLeave(LeaveChoice::Discard));
    assert_eq!(drafts(&studio), [&Effect::DeleteDraft("r".into())]);

    let mut studio = edited();
    studio.apply(Action::LeaveRun);
    studio.apply(Action::ConfirmLeave(LeaveChoice::Save));
    assert!(studio.editor.is_some(), "still here until it is stored");
    let Some(Effect::Save { run, steps, .. }) = queued(&studio).last().cloned().cloned() else {
        panic!()
    };
    studio.effects.clear();
    studio.apply(Action::Saved { run, steps, versions: vec![], then_select: None });
    assert!(studio.editor.is_none() && studio.screen == Screen::List);
    assert_eq!(drafts(&studio), [&Effect::DeleteDraft("r".into())], "the saved draft goes");
}

#[test]
fn a_task_id_alone_lists_its_runs_and_a_run_of_another_task_says_so() {
    let mut studio = Studio::default();
    studio.apply(Action::OpenRoute(Route::parse("?taskId=session-9")));
    assert_eq!(studio.list.filter.text, "session-9");
    assert_eq!(queued(&studio), [&Effect::LoadList]);

    let mut studio = Studio::default();
    studio.apply(Action::OpenRoute(Route::parse("?agentRunId=r&taskId=other&qa=false")));
    let steps = vec![Step { run_id: "r".into(), index: 0, ..Step::default() }];
    studio.apply(Action::RunLoaded(Box::new(Loaded {
        data: RunData::new(
            Run { id: "r".into(), task_id: "session-1".into(), ..Run::default() },
            steps,
        ),
        qa: false,
        user: user(Role::Annotator),
        draft: None,
    })));
    assert!(studio.notice.as_ref().is_some_and(|n| n.text.contains("task session-1")));
}

#[test]
fn a_missing_run_opens_when_a_sync_round_brings_it() {
    let mut studio = Studio::default();
    studio.apply(Action::OpenRoute(Route::parse("?agentRunId=far&qa=true")));
    studio.apply(Action::RunMissing("far".into()));
    studio.effects.clear();
    studio.apply(Action::RoundDone(Box::new(RoundDone {
        pulled: vec!["far".into()],
        ..RoundDone::default()
    })));
    assert!(
        queued(&studio)
            .iter()
            .any(|e| matches!(e, Effect::OpenRun { run_id, qa: true, .. } if run_id == "far")),
        "{:?}",
        studio.effects
    );
}

#[test]
fn one_round_at_a_time_and_a_kick_meanwhile_starts_another() {
    let mut studio = Studio::default();
    syncing(&mut studio);
    // `syncing` kicked: the first round is under way.
    assert!(studio.sync.running);
    studio.apply(Action::SyncKick);
    studio.apply(Action::SyncKick);
    assert!(studio.effects.is_empty(), "no second round while one runs");
    studio.apply(Action::RoundDone(Box::new(RoundDone {
        state: SyncState::Offline { queued: 1, retry_in_s: 30 },
        ..RoundDone::default()
    })));
    assert_eq!(studio.sync.failures, 1);
    let [Effect::SyncRound { failures: 1, .. }] = queued(&studio)[..] else {
        panic!("{:?}", studio.effects)
    };
    studio.effects.clear();
    studio.apply(Action::RoundDone(Box::default()));
    assert!(studio.effects.is_empty() && !studio.sync.running, "nothing new since");
}

/// The header shows a move to "In review" at once, while the version is still being
/// written: a "Sync now" then waits for the write, says "syncing" meanwhile, and its round
/// starts when the version is stored, so "synced" never comes before the move is sent.
#[test]
fn a_sync_asked_while_a_version_is_written_waits_for_it() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    syncing(&mut studio);
    studio.apply(Action::RoundDone(Box::default()));
    studio.effects.clear();
    studio.apply(Action::Transition(ReviewStatus::InReview));
    let [Effect::Save { run, steps, .. }] = queued(&studio)[..] else {
        panic!("{:?}", studio.effects)
    };
    let (run, steps) = (run.clone(), steps.clone());
    studio.effects.clear();
    studio.apply(Action::SyncKick);
    assert_eq!(studio.sync.state, SyncState::Syncing);
    assert!(queued(&studio).is_empty(), "no round while the version is written");
    studio.apply(Action::Saved { run, steps, versions: vec![], then_select: None });
    let [Effect::SyncRound { .. }] = queued(&studio)[..] else { panic!("{:?}", studio.effects) };
    assert!(studio.sync.running);
}

#[test]
fn a_round_reloads_the_open_run_only_when_it_holds_no_edits() {
    let pulled = || {
        Action::RoundDone(Box::new(RoundDone {
            open_run: Some("r".into()),
            pulled: vec!["r".into()],
            ..RoundDone::default()
        }))
    };
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(pulled());
    assert!(
        matches!(queued(&studio)[..], [Effect::OpenRun { run_id, qa: false, .. }] if run_id == "r")
    );

    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::SetThought(Thought::Two, "typing".into()));
    studio.apply(pulled());
    assert!(queued(&studio).is_empty(), "a reload would drop what is being typed");

    let mut studio = Studio::default();
    studio.apply(Action::ListLoaded(Vec::new()));
    studio.apply(pulled());
    assert_eq!(queued(&studio), [&Effect::LoadList]);
}

#[test]
fn the_server_naming_another_user_changes_and_stores_the_user() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    let me = User { name: "rita".into(), role: Role::Reviewer };
    studio.apply(Action::RoundDone(Box::new(RoundDone {
        user: Some(me.clone()),
        ..RoundDone::default()
    })));
    assert_eq!(studio.user, me);
    assert_eq!(studio.editor.as_ref().unwrap().user, me);
    assert_eq!(queued(&studio), [&Effect::PutUser(me)]);
}

#[test]
fn an_empty_token_field_keeps_the_stored_token_for_the_same_server_only() {
    let mut studio = Studio::default();
    syncing(&mut studio);
    studio.apply(Action::SaveSyncSettings {
        endpoint: " http://127.0.0.1:8787/ ".into(),
        token: String::new(),
        grammar: " http://localhost:8081 ".into(),
    });
    let [Effect::SaveSettings { settings, grammar }] = queued(&studio)[..] else { panic!() };
    assert_eq!(
        (settings.endpoint.as_str(), settings.token.as_str()),
        ("http://127.0.0.1:8787/", "t")
    );
    assert_eq!(grammar, "http://localhost:8081");

    // Another server does not get the stored token: it asks for its own.
    let mut studio = Studio::default();
    syncing(&mut studio);
    studio.apply(Action::SaveSyncSettings {
        endpoint: " http://example.test ".into(),
        token: String::new(),
        grammar: String::new(),
    });
    let [Effect::SaveSettings { settings, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!((settings.endpoint.as_str(), settings.token.as_str()), ("http://example.test", ""));
}

#[test]
fn a_grammar_check_runs_one_at_a_time_and_reports_its_count() {
    let mut studio = opened(Role::Annotator, ReviewStatus::Draft);
    studio.apply(Action::CheckGrammar);
    assert!(studio.effects.is_empty(), "no grammar server set");
    studio.apply(Action::Grammar("http://localhost:8081".into()));
    studio.apply(Action::CheckGrammar);
    studio.apply(Action::CheckGrammar);
    let [Effect::CheckGrammar { step_index: 0, thoughts, .. }] = queued(&studio)[..] else {
        panic!("{:?}", studio.effects)
    };
    assert_eq!(thoughts.len(), 3);
    assert!(studio.grammar_check.checking);
    studio.apply(Action::GrammarChecked {
        run_id: "r".into(),
        step_index: 0,
        result: Ok(vec![(Thought::One, "I see step 0.".into(), Vec::new())]),
    });
    assert!(!studio.grammar_check.checking);
    assert_eq!(studio.notice.as_ref().unwrap().text, "Grammar: 0 issues found.");
    assert_eq!(studio.grammar_check.found.len(), 1);
}

#[test]
fn only_starred_templates_are_edited_or_deleted_and_collections_keep_a_description() {
    use annotation_core::templates::{self, Template};
    let mut studio = Studio::default();
    let bundled: Template = templates::bundled().remove(0);
    studio.apply(Action::SaveTemplate(Box::new(bundled.clone())));
    studio.apply(Action::DeleteTemplate(bundled.id.clone()));
    assert!(queued(&studio).is_empty(), "the bundled files are not the library's to change");
    let step = Step { run_id: "r".into(), index: 1, ..Step::default() };
    let mut starred = templates::star(&step, "Mine", "ann", "t");
    studio.apply(Action::Starred(vec![starred.clone()]));
    starred.name = "Renamed".into();
    studio.apply(Action::SaveTemplate(Box::new(starred.clone())));
    studio.apply(Action::DeleteTemplate(starred.id.clone()));
    assert!(
        matches!(queued(&studio)[..], [Effect::SaveTemplate(t), Effect::DeleteTemplate(id)] if t.name == "Renamed" && *id == starred.id)
    );

    let mut studio = Studio::default();
    studio.apply(Action::DescribeCollection {
        name: "batch".into(),
        description: " For the shop model. ".into(),
    });
    let [Effect::PutCollection(c)] = queued(&studio)[..] else { panic!() };
    assert_eq!((c.name.as_str(), c.description.as_str()), ("batch", "For the shop model."));
    let mut studio = Studio::default();
    studio.list.filter.collection = Some("batch".into());
    studio.apply(Action::ExportList(Format::Jsonl, Options::default()));
    assert!(
        matches!(queued(&studio)[..], [Effect::Export { .. }, Effect::CollectionExported(n)] if n == "batch")
    );
}

#[test]
fn approve_picked_asks_about_runs_with_open_work_and_can_leave_them_out() {
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    let finished = Step { verified: true, ..Step::default() };
    let unfinished = Step::default();
    let summaries = vec![
        summarize(&Run { id: "done".into(), ..Run::default() }, std::slice::from_ref(&finished)),
        summarize(&Run { id: "half".into(), ..Run::default() }, &[finished, unfinished]),
    ];
    studio.apply(Action::ListLoaded(summaries));
    studio.apply(Action::List(list::ListAction::PickShown(true)));
    studio.apply(Action::MovePicked(ReviewStatus::Approved));
    assert!(studio.effects.is_empty(), "it asks first");
    let asked = studio.list.approving.clone().expect("a question");
    assert_eq!(asked.doubtful, ["half"]);
    studio.apply(Action::ConfirmBatchApproval(list::BatchAnswer::Finished));
    let [Effect::MoveRuns { ids, to, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!((ids.as_slice(), *to), (["done".to_owned()].as_slice(), ReviewStatus::Approved));
    // Submitting for review asks nothing.
    studio.effects.clear();
    studio.apply(Action::MovePicked(ReviewStatus::InReview));
    assert_eq!(queued(&studio).len(), 1);
}

/// A sync round pulled a teammate's change to the open run while the reviewer was asked
/// whether to approve: the run is read again, and the reviewer keeps their step, their tool
/// and the question (the flake `annotation_sync::two_profiles_sync…` hit under load).
#[test]
fn the_open_run_read_again_keeps_the_persons_place_and_question() {
    let mut studio = opened(Role::Reviewer, ReviewStatus::InReview);
    studio.apply(Action::Select(2));
    studio.apply(Action::Approve);
    assert!(studio.editor.as_ref().unwrap().approving.is_some(), "it asks first");
    let again = opened(Role::Reviewer, ReviewStatus::InReview).editor.unwrap();
    let mut steps = again.steps.clone();
    steps[0].thoughts.thought1 = "A teammate's fix.".into();
    studio.apply(Action::RunLoaded(Box::new(Loaded {
        data: RunData::new(again.run.clone(), steps),
        qa: false,
        user: user(Role::Reviewer),
        draft: None,
    })));
    let editor = studio.editor.as_ref().unwrap();
    assert_eq!(editor.steps[0].thoughts.thought1, "A teammate's fix.");
    assert_eq!(editor.at, 2, "still on the step they were reading");
    assert!(editor.approving.is_some(), "the question is still open");
    studio.apply(Action::ConfirmApproval(true));
    let [Effect::Save { run, .. }] = queued(&studio)[..] else { panic!() };
    assert_eq!(run.status, ReviewStatus::Approved);
}
