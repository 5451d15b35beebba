use std::collections::BTreeMap;

use prompt_files::structured::Problem;
use protocol::settings::Settings;
use protocol::studio::StudioAttempt;
use serde_json::json;

use studio_core::versions::PromptVersion;

use super::*;

fn connected() -> Studio {
    let mut studio = Studio::default();
    studio.apply(Action::Connected);
    let settings: Settings = serde_json::from_value(json!({"models": {
        "planner": model(), "navigator": model(), "thinking": model()}}))
    .unwrap();
    // As the worker writes it, read as the page reads it.
    let sent = protocol::WorkerEvent::Settings {
        id: 1,
        settings: Some(Box::new(settings)),
        problems: vec![],
        variants: Default::default(),
    };
    let read = serde_json::from_value(serde_json::to_value(sent).unwrap()).unwrap();
    studio.apply(Action::Worker(read));
    studio
}

fn model() -> Value {
    json!({"provider": "open_ai", "base_url": "", "api_key": "***", "model": "m",
        "timeout_ms": 1000, "max_retries": 0})
}

fn sent(studio: &Studio) -> Vec<StudioRequest> {
    studio
        .effects
        .iter()
        .filter_map(|(_, e)| match e {
            Effect::Send(request) => Some(request.clone()),
            _ => None,
        })
        .collect()
}

fn trace(id: &str, prompt: &str, started: &str) -> LlmTrace {
    serde_json::from_value(json!({
        "id": id, "runId": "r1", "step": 2, "role": "navigator", "promptId": prompt,
        "variant": "A", "promptHash": "h", "revisionHash": "r",
        "params": {"task": format!("task of {id}")}, "redacted": [], "provider": "OpenAi",
        "model": "m", "usage": {"input_tokens": 1, "output_tokens": 1}, "cost": 0.0,
        "startedAt": started, "durationMs": 5.0, "attempts": [], "error": null,
        "chars": {"system": 1, "state": 0, "history": 0, "total": 1}
    }))
    .unwrap()
}

#[test]
fn editing_a_variant_keeps_a_draft_checks_it_and_saves_it_as_an_override() {
    let mut studio = connected();
    assert_eq!(studio.overrides, Some(BTreeMap::new()));
    assert_eq!(studio.file.as_deref(), Some("navigator/A.md"));
    studio.apply(Action::Edit("Task: {{task}} {{> no_such_rule}}".into()));
    let error = studio.check().unwrap_err();
    assert!(error.contains("no_such_rule"), "{error}");
    // A broken file is not sent.
    studio.apply(Action::Save);
    assert!(studio.notice().unwrap().starts_with("Not saved"));
    assert!(!sent(&studio).iter().any(|r| matches!(r, StudioRequest::SavePrompts { .. })));

    // A variable the Navigator is never given: it loads, but it is not saved.
    studio.effects.clear();
    studio.apply(Action::Edit("Task: {{task}} {{nope}} {{> json_only}}".into()));
    assert!(studio.check().is_ok());
    studio.apply(Action::Save);
    let notice = studio.notice().unwrap().to_owned();
    assert!(notice.starts_with("Not saved: navigator/A.md reads {{nope}}"), "{notice}");
    assert!(!sent(&studio).iter().any(|r| matches!(r, StudioRequest::SavePrompts { .. })));

    studio.apply(Action::Edit("Task: {{task}} {{> json_only}}".into()));
    assert!(studio.check().is_ok());
    assert_eq!(studio.save_problem(), None);
    studio.apply(Action::Save);
    let Some(StudioRequest::SavePrompts { id, edits }) = sent(&studio).pop() else { panic!() };
    assert_eq!(edits["navigator/A.md"].as_deref(), Some("Task: {{task}} {{> json_only}}"));
    assert!(studio.saving());
    let mut stored = BTreeMap::new();
    stored.insert("navigator/A.md".to_owned(), "Task: {{task}} {{> json_only}}".to_owned());
    studio.apply(Action::Worker(StudioEvent::PromptOverrides { id, overrides: stored }));
    assert!(studio.drafts.is_empty() && studio.is_overridden("navigator/A.md"));

    // Revert is one request that drops the override.
    studio.apply(Action::Revert("navigator/A.md".into()));
    let Some(StudioRequest::SavePrompts { edits, .. }) = sent(&studio).pop() else { panic!() };
    assert_eq!(edits["navigator/A.md"], None);
}

#[test]
fn typing_back_the_stored_text_is_no_draft() {
    let mut studio = connected();
    let bundled = studio.entry().unwrap().files[1].current().to_owned();
    studio.apply(Action::OpenFile(studio.entry().unwrap().files[1].path.clone()));
    studio.apply(Action::Edit(format!("{bundled} more")));
    assert_eq!(studio.drafts.len(), 1);
    studio.apply(Action::Edit(bundled));
    assert!(studio.drafts.is_empty());
}

#[test]
fn a_sample_from_a_captured_step_previews_and_runs_with_the_drafts() {
    let mut studio = connected();
    studio.apply(Action::TracesLoaded(Ok(vec![
        trace("t1", "navigator", "2026-11-20T10:00:00Z"),
        trace("t2", "planner", "2026-11-20T11:00:00Z"),
    ])));
    assert_eq!(studio.samples().len(), 1);
    studio.apply(Action::UseTrace("t1".into()));
    assert_eq!(studio.sample_trace.as_deref(), Some("t1"));
    studio.apply(Action::Edit("Do: {{task}} then {{plan}} {{> json_only}}".into()));
    let preview = studio.preview().unwrap();
    assert_eq!(preview.unresolved, ["plan"]);
    assert!(preview.segments.contains(&studio_core::preview::Segment::Value("task of t1".into())));

    studio.apply(Action::Run);
    let Some(StudioRequest::StudioRun { id, run }) = sent(&studio).pop() else { panic!() };
    assert_eq!(run.vars, json!({"task": "task of t1"}));
    assert!(run.overrides.contains_key("navigator/A.md"));
    assert_eq!(studio.run, RunState::Running(id));
    let result = StudioRunResult {
        run_id: "studio:1".into(),
        trace_id: "x".into(),
        prompt_id: "navigator".into(),
        variant: "A".into(),
        prompt_hash: "h".into(),
        revision_hash: "r".into(),
        model: "m".into(),
        exchanges: vec![],
        attempts: vec![StudioAttempt {
            model: "m".into(),
            raw: "{}".into(),
            problems: vec!["at /: missing".into()],
            output: Some(json!({})),
            violations: vec![Problem { path: String::new(), message: "missing".into() }],
            input_tokens: 1,
            output_tokens: 1,
        }],
        output: None,
        error: Some("repairs did not fix it".into()),
        input_tokens: 1,
        output_tokens: 1,
        cost: 0.0,
        latency_ms: 3.0,
    };
    studio.apply(Action::Worker(StudioEvent::StudioResult { id, result: Box::new(result) }));
    assert!(matches!(&studio.run, RunState::Done(r) if r.attempts.len() == 1));
    assert!(studio.effects.iter().any(|(_, e)| *e == Effect::LoadTraces), "the new trace");
}

#[test]
fn bad_sample_json_is_said_and_nothing_is_sent() {
    let mut studio = connected();
    studio.apply(Action::VarsText("{\"task\": ".into()));
    studio.apply(Action::Run);
    assert!(matches!(&studio.run, RunState::Failed(m) if m.contains("not JSON")));
    assert!(!sent(&studio).iter().any(|r| matches!(r, StudioRequest::StudioRun { .. })));
}

#[test]
fn compare_runs_each_variant_on_the_newest_captured_steps() {
    let mut studio = connected();
    studio.apply(Action::NewVariant("B".into()));
    assert!(studio.notice().unwrap().contains("already has a variant B"));
    studio.apply(Action::NewVariant("C".into()));
    assert_eq!(studio.variant, "C");
    assert!(studio.drafts.contains_key("navigator/C.md"));
    studio.apply(Action::TracesLoaded(Ok(vec![
        trace("t1", "navigator", "2026-11-20T10:00:00Z"),
        trace("t2", "navigator", "2026-11-20T11:00:00Z"),
        trace("t3", "navigator", "2026-11-20T12:00:00Z"),
        trace("t4", "navigator", "2026-11-20T13:00:00Z"),
    ])));
    studio.apply(Action::Compare { variants: vec!["A".into(), "C".into()], samples: 3 });
    assert_eq!(studio.compare.len(), 6);
    let samples: Vec<&str> = studio.compare.iter().take(3).map(|c| c.sample.as_str()).collect();
    assert_eq!(samples, ["t4", "t3", "t2"]);
    let runs: Vec<_> = sent(&studio)
        .into_iter()
        .filter_map(|r| match r {
            StudioRequest::StudioRun { run, .. } => Some(run.variant.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(runs, ["A", "A", "A", "C", "C", "C"]);
    assert_eq!(studio.baseline.as_deref(), Some("A"));
}

#[test]
fn a_trace_link_opens_the_traces_view_on_that_trace() {
    let mut studio = connected();
    studio.apply(Action::Route(Route::parse("#run=r1&step=2")));
    assert_eq!(studio.tab, Tab::Traces);
    studio.apply(Action::TracesLoaded(Ok(vec![
        trace("t1", "navigator", "2026-11-20T10:00:00Z"),
        LlmTrace { step: 3, ..trace("t9", "navigator", "2026-11-20T10:00:00Z") },
    ])));
    assert_eq!(studio.listed().len(), 1);
    studio.apply(Action::Route(Route::parse("#trace=t1")));
    assert_eq!(studio.open_trace.as_deref(), Some("t1"));
}

#[test]
fn an_arm_can_use_another_roles_model() {
    let mut studio = connected();
    studio.apply(Action::TracesLoaded(Ok(vec![trace("t1", "navigator", "2026-11-20T10:00:00Z")])));
    studio.apply(Action::Compare {
        variants: vec!["A".into(), "A@planner".into(), "B@critic".into()],
        samples: 1,
    });
    let runs: Vec<(String, ModelRole)> = sent(&studio)
        .into_iter()
        .filter_map(|r| match r {
            StudioRequest::StudioRun { run, .. } => Some((run.variant.clone(), run.role)),
            _ => None,
        })
        .collect();
    assert_eq!(runs, [("A".into(), ModelRole::Navigator), ("A".into(), ModelRole::Planner)]);
    assert!(matches!(&studio.compare[2].state, RunState::Failed(m) if m.contains("critic")));
}

fn version(number: u32, text: &str) -> PromptVersion {
    PromptVersion {
        path: "navigator/A.md".into(),
        number,
        text: text.into(),
        saved_at: format!("2026-11-2{number}T10:00:00.000Z"),
    }
}

/// Types `text` into the open file and saves it, answered: the page says it saved.
fn save_edit(studio: &mut Studio, text: &str) {
    studio.apply(Action::Edit(text.into()));
    studio.apply(Action::Save);
    answer_save(studio);
    assert!(studio.notice().is_some());
}

fn answer_save(studio: &mut Studio) {
    let Some(StudioRequest::SavePrompts { id, edits }) = sent(studio).pop() else { panic!() };
    let mut stored = studio.overrides.clone().unwrap_or_default();
    for (path, text) in edits {
        match text {
            Some(text) => stored.insert(path, text),
            None => stored.remove(&path),
        };
    }
    studio.apply(Action::Worker(StudioEvent::PromptOverrides { id, overrides: stored }));
}

#[test]
fn a_files_saved_versions_list_newest_first_and_one_is_restored_as_a_new_save() {
    let mut studio = connected();
    assert!(studio.effects.iter().any(|(_, e)| *e == Effect::LoadVersions));
    let one = "V1 {{task}} {{> json_only}}";
    let two = "V2 {{task}} {{> json_only}}";
    studio.apply(Action::VersionsLoaded(Ok(vec![
        version(1, one),
        version(2, two),
        PromptVersion { path: "planner/A.md".into(), ..version(3, "other file") },
    ])));
    let listed: Vec<u32> = studio.file_versions().iter().map(|v| v.number).collect();
    assert_eq!(listed, [2, 1], "this file's versions, newest first");
    studio.apply(Action::ShowDiff(Some(1)));
    assert_eq!(studio.diff_version, Some(("navigator/A.md".into(), 1)));

    // No unsaved edits: restoring saves version 1's text again.
    studio.effects.clear();
    studio.apply(Action::Restore(1));
    let Some(StudioRequest::SavePrompts { edits, .. }) = sent(&studio).pop() else { panic!() };
    assert_eq!(edits.len(), 1);
    assert_eq!(edits["navigator/A.md"].as_deref(), Some(one));
    answer_save(&mut studio);
    assert_eq!(
        studio.notice(),
        Some(
            "Restored version 1 of navigator/A.md, saved as its newest version. New tasks use it."
        )
    );
    assert!(studio.effects.iter().any(|(_, e)| *e == Effect::LoadVersions), "the new version");
    assert_eq!(studio.current_text("navigator/A.md").as_deref(), Some(one));

    // Unsaved edits are not thrown away without asking.
    studio.apply(Action::Edit("Mine {{task}} {{> json_only}}".into()));
    studio.effects.clear();
    studio.apply(Action::Restore(2));
    assert_eq!(studio.confirm_restore, Some(("navigator/A.md".into(), 2)));
    assert!(sent(&studio).is_empty(), "nothing saved before the answer");
    studio.apply(Action::ConfirmRestore(false));
    assert_eq!(studio.confirm_restore, None);
    assert_eq!(studio.drafts["navigator/A.md"], "Mine {{task}} {{> json_only}}");
    assert!(sent(&studio).is_empty());
    studio.apply(Action::Restore(2));
    studio.apply(Action::ConfirmRestore(true));
    let Some(StudioRequest::SavePrompts { edits, .. }) = sent(&studio).pop() else { panic!() };
    assert_eq!(edits["navigator/A.md"].as_deref(), Some(two));
    assert!(!studio.drafts.contains_key("navigator/A.md"));

    // The text in force already: nothing to save.
    answer_save(&mut studio);
    studio.effects.clear();
    studio.apply(Action::Restore(2));
    assert!(sent(&studio).is_empty());
    assert!(studio.notice().unwrap().contains("already the text"));
}

#[test]
fn the_saved_notice_shows_on_its_file_only_and_goes_when_the_person_moves_or_edits() {
    let mut studio = connected();
    studio.apply(Action::Edit("Task: {{task}} {{> json_only}}".into()));
    studio.apply(Action::Save);
    answer_save(&mut studio);
    assert_eq!(studio.notice(), Some("Saved. New tasks use these prompt files."));
    // Another view: not shown there, and gone when the person comes back.
    studio.apply(Action::Tab(Tab::Pipelines));
    assert_eq!(studio.notice(), None);
    studio.apply(Action::Tab(Tab::Prompts));
    assert_eq!(studio.notice(), None);

    // Another file of the prompt.
    save_edit(&mut studio, "Task: {{task}} again {{> json_only}}");
    studio.apply(Action::OpenFile("navigator/schema.json".into()));
    assert_eq!(studio.notice(), None);

    // Editing again.
    studio.apply(Action::OpenFile("navigator/A.md".into()));
    save_edit(&mut studio, "Task: {{task}} once more {{> json_only}}");
    studio.apply(Action::Edit("Task: {{task}} and more {{> json_only}}".into()));
    assert_eq!(studio.notice(), None);

    // A save answered while the person is elsewhere shows when they are back on its file.
    studio.apply(Action::Save);
    studio.apply(Action::Tab(Tab::Traces));
    answer_save(&mut studio);
    assert_eq!(studio.notice(), None);
    studio.apply(Action::Tab(Tab::Prompts));
    assert_eq!(studio.notice(), Some("Saved. New tasks use these prompt files."));

    // The page's own trouble stays on every view until dismissed.
    studio.apply(Action::TracesLoaded(Err("IndexedDB: could not read the traces".into())));
    studio.apply(Action::Tab(Tab::Telemetry));
    assert_eq!(studio.notice(), Some("IndexedDB: could not read the traces"));
    studio.apply(Action::DismissNotice);
    assert_eq!(studio.notice(), None);
}

fn done(variant: &str, output: Value, tokens: u64, ms: f64) -> StudioRunResult {
    StudioRunResult {
        run_id: "studio:1".into(),
        trace_id: "x".into(),
        prompt_id: "navigator".into(),
        variant: variant.into(),
        prompt_hash: "h".into(),
        revision_hash: "r".into(),
        model: "m".into(),
        exchanges: vec![],
        attempts: vec![],
        output: Some(output),
        error: None,
        input_tokens: tokens,
        output_tokens: 0,
        cost: 0.0,
        latency_ms: ms,
    }
}

#[test]
fn compare_rows_name_the_run_and_step_and_a_chosen_baseline_changes_what_cells_say() {
    let mut studio = connected();
    studio.apply(Action::TracesLoaded(Ok(vec![trace("t1", "navigator", "2026-11-20T10:00:00Z")])));
    studio.apply(Action::Compare { variants: vec!["A".into(), "B".into()], samples: 1 });
    assert_eq!(studio.compare[0].label, "“task of t1” · run r1 · step 3");
    let ids: Vec<u32> = studio
        .compare
        .iter()
        .map(|c| match c.state {
            RunState::Running(id) => id,
            _ => panic!(),
        })
        .collect();
    let answers = [
        done("A", json!({"actions": [{"action": "done"}]}), 100, 200.0),
        done("B", json!({"actions": [{"action": "click", "id": 3}]}), 130, 150.0),
    ];
    for (id, result) in ids.into_iter().zip(answers) {
        studio.apply(Action::Worker(StudioEvent::StudioResult { id, result: Box::new(result) }));
    }
    let (a, b) = (studio.compare[0].clone(), studio.compare[1].clone());
    assert_eq!(studio.baseline.as_deref(), Some("A"));
    assert_eq!(studio.against_baseline(&a), None, "the baseline's own cell");
    let versus = studio.against_baseline(&b).unwrap();
    assert_eq!((versus.tokens, versus.answer_differs), (30, true));
    assert_eq!(versus.phrases(), ["action differs", "+30 tokens", "−50 ms"]);
    studio.apply(Action::Baseline("B".into()));
    assert_eq!(studio.against_baseline(&b), None);
    assert_eq!(
        studio.against_baseline(&a).unwrap().phrases(),
        ["action differs", "−30 tokens", "+50 ms"]
    );
}
