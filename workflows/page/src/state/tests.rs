use protocol::jobs::JobStatus;
use protocol::workflow::ReplayControl;
use workflow_format::schema::{
    ActionKind, FORMAT_VERSION, Param, StepAction, WorkflowStep, WorkflowSubtask,
};

use super::*;

fn step(
    subtask: &str,
    kind: ActionKind,
    value: Option<&str>,
    variable: Option<&str>,
) -> WorkflowStep {
    WorkflowStep {
        subtask: subtask.into(),
        intent: format!("{kind:?}"),
        expected_current_state: "the shop".into(),
        target: String::new(),
        post_action: "it changes".into(),
        action: StepAction { variable: variable.map(Into::into), ..StepAction::new(kind, value) },
        url: None,
        screenshot: Some("abc".into()),
        details: None,
    }
}

fn subtask(id: &str, text: &str) -> WorkflowSubtask {
    WorkflowSubtask {
        id: id.into(),
        text: text.into(),
        expected_outcome: format!("{id} done"),
        depends_on: vec![],
    }
}

/// Search `{query}`, read the cheapest (extract), open it.
fn shop(version: u32) -> Workflow {
    Workflow {
        format_version: FORMAT_VERSION,
        id: "wf".into(),
        name: "Cheapest product".into(),
        description: "Search {query} and open the cheapest".into(),
        version,
        updated_at: "t".into(),
        start_url: "http://shop.test/".into(),
        recording_id: Some("rec".into()),
        params: vec![Param {
            name: "query".into(),
            description: "what to search".into(),
            example: "coffee".into(),
            secret: false,
        }],
        subtasks: vec![
            subtask("search", "Search for {query}"),
            subtask("read", "Read the cheapest"),
            subtask("open", "Open it"),
        ],
        steps: vec![
            step("search", ActionKind::Type, Some("{query}"), None),
            step("read", ActionKind::Extract, Some("the cheapest"), Some("cheapest")),
            step("open", ActionKind::Click, None, None),
        ],
    }
}

fn loaded(workflows: Vec<Workflow>) -> Page {
    let mut page = Page::new(None);
    page.apply(Action::Loaded { recordings: vec![], workflows });
    page
}

fn effects(page: &Page) -> Vec<Effect> {
    page.effects.iter().map(|(_, e)| e.clone()).collect()
}

/// The page with workflow `wf` (one version) open in the editor.
fn opened() -> Page {
    let mut page = loaded(vec![shop(1)]);
    page.apply(Action::Open("wf".into()));
    page
}

#[test]
fn the_list_groups_versions_and_opens_the_latest() {
    let page = loaded(vec![shop(2), shop(1)]);
    assert_eq!(page.workflows["wf"].iter().map(|w| w.version).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(effects(&page), [Effect::Load]);
    let mut page = page;
    page.apply(Action::Open("wf".into()));
    assert_eq!(page.editor.as_ref().unwrap().draft.version, 2);
    page.apply(Action::Open("nope".into()));
    assert!(page.notice.as_ref().unwrap().contains("nope"));
}

#[test]
fn renaming_a_parameter_rewrites_its_uses_and_problems_show_live_where_they_are() {
    let mut page = opened();
    let product =
        Param { name: "product".into(), example: "tea".into(), ..shop(1).params[0].clone() };
    page.apply(Action::Edit(Edit::UpdateParam { index: 0, param: product }));
    let editor = page.editor.as_ref().unwrap();
    assert_eq!(editor.draft.steps[0].action.value.as_deref(), Some("{product}"));
    assert_eq!(editor.draft.subtasks[0].text, "Search for {product}");
    assert!(editor.problems.is_empty(), "{:?}", editor.problems);
    assert!(editor.can_save());

    // An unused parameter, and a placeholder that names none: both shown at their path.
    let spare = Param { name: "spare".into(), ..shop(1).params[0].clone() };
    page.apply(Action::Edit(Edit::AddParam { param: spare }));
    page.apply(Action::Edit(Edit::UpdateSubtask {
        index: 2,
        text: "Open it for {who}".into(),
        expected_outcome: "open done".into(),
    }));
    let editor = page.editor.as_ref().unwrap();
    assert_eq!(editor.problems_at("/params/1").len(), 1);
    assert!(editor.problems_at("/params/1")[0].message.contains("not used"));
    assert!(editor.problems_at("/subtasks/2")[0].message.contains("{who} is not a parameter"));
    assert!(!editor.can_save());
    page.apply(Action::Save);
    assert_eq!(effects(&page), [Effect::Load], "a workflow with problems is not saved");
    page.apply(Action::Edit(Edit::DeleteParam { index: 1 }));
    page.apply(Action::Edit(Edit::UpdateSubtask {
        index: 2,
        text: "Open it".into(),
        expected_outcome: "open done".into(),
    }));
    assert!(page.editor.as_ref().unwrap().problems.is_empty());
}

#[test]
fn a_dependency_must_name_an_upstream_extract() {
    let mut page = opened();
    let editor = page.editor.as_ref().unwrap();
    assert_eq!(editor.upstream_variables(2), ["cheapest"]);
    assert!(editor.upstream_variables(1).is_empty());
    // Downstream: refused live.
    page.apply(Action::Edit(Edit::SetDependencies {
        index: 0,
        depends_on: vec!["cheapest".into()],
    }));
    let problems = page.editor.as_ref().unwrap().problems_at("/subtasks/0/dependsOn");
    assert!(problems[0].message.contains("not upstream"), "{problems:?}");
    page.apply(Action::Edit(Edit::SetDependencies { index: 0, depends_on: vec![] }));
    page.apply(Action::Edit(Edit::SetDependencies {
        index: 2,
        depends_on: vec!["cheapest".into()],
    }));
    assert!(page.editor.as_ref().unwrap().problems.is_empty());
    // Subtasks move, and a move that puts the extract after its user is a problem again.
    page.apply(Action::Edit(Edit::MoveSubtask { from: 2, to: 0 }));
    let editor = page.editor.as_ref().unwrap();
    assert_eq!(editor.draft.subtasks[0].id, "open");
    assert_eq!(editor.draft.steps[0].subtask, "open", "steps follow their subtask");
    assert!(!editor.problems_at("/subtasks/0/dependsOn/0").is_empty());
}

#[test]
fn every_save_is_a_new_version_and_rollback_saves_an_old_one_again() {
    let mut page = loaded(vec![shop(1), shop(2)]);
    page.apply(Action::Open("wf".into()));
    page.apply(Action::SetName("Cheapest item".into()));
    page.apply(Action::Save);
    let Some(Effect::Save(saved)) = effects(&page).last().cloned() else { panic!() };
    assert_eq!((saved.version, saved.name.as_str()), (3, "Cheapest item"));
    page.apply(Action::Saved(saved));
    // The worker hears of it, for MCP clients' list of tools.
    let told = effects(&page).last().cloned();
    let Some(Effect::Tell(WorkflowsRequest::WorkflowSaved { workflow_id, .. })) = told else {
        panic!("{told:?}")
    };
    assert_eq!(workflow_id, "wf");
    let editor = page.editor.as_ref().unwrap();
    assert!(!editor.dirty());
    assert_eq!(page.workflows["wf"].len(), 3);
    page.apply(Action::Rollback(1));
    let Some(Effect::Save(rolled)) = effects(&page).last().cloned() else { panic!() };
    assert_eq!((rolled.version, rolled.name.as_str()), (4, "Cheapest product"));
    page.apply(Action::Saved(rolled));
    assert_eq!(page.editor.as_ref().unwrap().draft.version, 4);
}

#[test]
fn export_and_import_go_through_the_published_format() {
    let mut page = opened();
    page.apply(Action::Export);
    let Some(Effect::Download { name, text }) = effects(&page).last().cloned() else { panic!() };
    assert_eq!(name, "cheapest-product.v1.workflow.json");
    page.apply(Action::Import(text));
    let Some(Effect::Save(imported)) = effects(&page).last().cloned() else { panic!() };
    assert_eq!(imported.version, 2, "an import of a known workflow is its next version");
    page.apply(Action::Import("{\"id\": 3}".into()));
    assert!(page.notice.as_ref().unwrap().starts_with("The file was not imported"));
}

#[test]
fn the_replay_form_prefills_examples_and_starts_the_saved_version() {
    let mut page = opened();
    page.apply(Action::ReplayOpen);
    let form = page.replay_form.clone().unwrap();
    assert_eq!(form.values()["query"], "coffee");
    let Some(Effect::Send(WorkflowsRequest::ListTabs { id })) = effects(&page).last().cloned()
    else {
        panic!("the open tabs are asked for")
    };
    // Tabs come with their titles and URLs; pages that are not web pages are not offered.
    page.apply(Action::Worker(WorkflowsEvent::Tabs {
        id,
        tabs: vec![
            protocol::TabInfo {
                id: 7,
                title: "Fixture Shop".into(),
                url: "http://shop.test/".into(),
            },
            protocol::TabInfo { id: 8, title: "Settings".into(), url: "chrome://settings".into() },
        ],
    }));
    assert_eq!(page.tabs.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["Fixture Shop"]);
    page.apply(Action::ReplayParam("query".into(), "".into()));
    page.apply(Action::ReplayStart);
    assert!(page.notice.as_ref().unwrap().contains("query"));
    page.apply(Action::ReplayParam("query".into(), "tea".into()));
    page.apply(Action::ReplayTab(Some(7)));
    page.apply(Action::ReplayStart);
    let Some(Effect::StartReplay { workflow_id, version, tab, params, fast_path, .. }) =
        effects(&page).last().cloned()
    else {
        panic!()
    };
    assert_eq!((workflow_id.as_str(), version, tab), ("wf", 1, Some(7)));
    assert_eq!(params["query"], "tea");
    assert!(fast_path, "the fast path is on unless the person turns it off");
    assert!(page.replay_form.is_none());

    // Turned off for this replay only: the next form starts with it on again.
    page.apply(Action::ReplayOpen);
    page.apply(Action::ReplayFastPath(false));
    page.apply(Action::ReplayStart);
    let Some(Effect::StartReplay { fast_path, .. }) = effects(&page).last().cloned() else {
        panic!()
    };
    assert!(!fast_path);
    page.apply(Action::ReplayOpen);
    assert!(page.replay_form.clone().unwrap().fast_path);

    // Opened from the side panel for its tab: the form starts on that tab.
    let mut page = Page::new(Some(42));
    page.apply(Action::Loaded { recordings: vec![], workflows: vec![shop(1)] });
    page.apply(Action::Open("wf".into()));
    page.apply(Action::ReplayOpen);
    assert_eq!(page.replay_form.unwrap().tab, Some(42));
}

#[test]
fn reflection_progress_and_replay_status_come_from_the_worker() {
    let mut page = loaded(vec![]);
    page.apply(Action::Reflect("rec".into()));
    let Some(Effect::Send(WorkflowsRequest::ReflectRecording { id, .. })) =
        effects(&page).last().cloned()
    else {
        panic!()
    };
    page.apply(Action::Worker(WorkflowsEvent::Failed { id, message: "No model".into() }));
    assert_eq!(
        page.reflections["rec"].stage,
        ReflectStage::Failed { why: "No model".into(), details: None }
    );
    assert!(page.notice.is_none());
    page.apply(Action::Worker(WorkflowsEvent::Reflection {
        progress: ReflectProgress {
            recording_id: "rec".into(),
            stage: ReflectStage::Done { workflow_id: "wf".into() },
        },
    }));
    assert_eq!(effects(&page).last(), Some(&Effect::Load));
    page.apply(Action::Loaded { recordings: vec![], workflows: vec![shop(1)] });
    assert_eq!(page.editor.as_ref().unwrap().draft.id, "wf", "the new workflow opens");

    let progress = ReplayProgress {
        run_id: "run".into(),
        workflow_id: "wf".into(),
        version: 1,
        workflow_name: "Cheapest".into(),
        tab_id: 3,
        subtask: 1,
        subtasks: 3,
        step: 2,
        model_calls: 1,
        calls_saved: 2,
        fast_path: true,
        status: JobStatus::Running,
        why: None,
        extracts: BTreeMap::new(),
        question: None,
    };
    page.apply(Action::Worker(WorkflowsEvent::Replay {
        id: None,
        replay: Some(Box::new(progress)),
    }));
    page.apply(Action::ReplayControl(ReplayControl::Pause));
    assert!(matches!(
        effects(&page).last(),
        Some(Effect::Send(WorkflowsRequest::ReplayControl { action: ReplayControl::Pause, .. }))
    ));
    // Steering goes to the live replay; a blank one is not sent.
    let sent = effects(&page).len();
    page.apply(Action::ReplayMessage("  ".into()));
    assert_eq!(effects(&page).len(), sent);
    page.apply(Action::ReplayMessage(" Pick the cheapest ".into()));
    assert!(matches!(
        effects(&page).last(),
        Some(Effect::Send(WorkflowsRequest::ReplayMessage { text, .. })) if text == "Pick the cheapest"
    ));
}

#[test]
fn a_reflected_workflow_does_not_replace_unsaved_edits() {
    let mut page = opened();
    page.apply(Action::SetName("Edited".into()));
    page.apply(Action::Worker(WorkflowsEvent::Reflection {
        progress: ReflectProgress {
            recording_id: "rec2".into(),
            stage: ReflectStage::Done { workflow_id: "wf2".into() },
        },
    }));
    let other = Workflow { id: "wf2".into(), name: "Other".into(), ..shop(1) };
    page.apply(Action::Loaded { recordings: vec![], workflows: vec![shop(1), other] });
    assert_eq!(page.editor.as_ref().unwrap().draft.name, "Edited");
    assert!(page.notice.as_ref().unwrap().starts_with("Other is ready"));
}

#[test]
fn a_recording_is_renamed_through_the_worker_and_the_list_read_again() {
    let mut page = Page::new(None);
    let row = RecordingRow {
        id: "rec-1".into(),
        name: "Shop home".into(),
        created_at: "2026-11-27T08:00:00.000Z".into(),
        status: "stopped".into(),
        steps: 4,
    };
    page.apply(Action::Loaded { recordings: vec![row], workflows: vec![] });
    page.apply(Action::RenameRecording("rec-1".into()));
    assert_eq!(page.renaming.as_ref().unwrap().text, "Shop home", "starts from its name");
    page.apply(Action::RecordingName(" ".into()));
    page.apply(Action::SaveRecordingName);
    assert!(page.renaming.as_ref().unwrap().problem.is_some());
    page.apply(Action::RecordingName(" Buy socks ".into()));
    page.apply(Action::SaveRecordingName);
    let sent = effects(&page).into_iter().rev().find_map(|e| match e {
        Effect::Send(WorkflowsRequest::NameRecording { id, recording_id, name }) => {
            Some((id, recording_id, name))
        }
        _ => None,
    });
    let (id, recording_id, name) = sent.expect("asked the worker");
    assert_eq!((recording_id.as_str(), name.as_str()), ("rec-1", "Buy socks"));
    page.apply(Action::Worker(WorkflowsEvent::Failed { id, message: "Not stored".into() }));
    assert_eq!(page.renaming.as_ref().unwrap().problem.as_deref(), Some("Not stored"));
    assert!(page.notice.is_none(), "said beside the name, not as a page notice");
    page.apply(Action::SaveRecordingName);
    let id = id + 1;
    page.apply(Action::Worker(WorkflowsEvent::Done { id }));
    assert!(page.renaming.is_none());
    assert_eq!(effects(&page).last(), Some(&Effect::Load), "the list is read again");
}
