use std::collections::BTreeMap;

use prompt_files::structured::Problem;
use protocol::settings::Settings;
use protocol::studio::StudioAttempt;
use serde_json::json;

use super::*;

fn connected() -> Studio {
    let mut studio = Studio::default();
    studio.apply(Action::Connected);
    let settings: Settings = serde_json::from_value(json!({"models": {
        "planner": model(), "navigator": model(), "thinking": model()}}))
    .unwrap();
    studio.apply(Action::Worker(WorkerEvent::Settings {
        id: 1,
        settings: Some(Box::new(settings)),
        problems: vec![],
        variants: Default::default(),
    }));
    studio
}

fn model() -> Value {
    json!({"provider": "open_ai", "base_url": "", "api_key": "***", "model": "m",
        "timeout_ms": 1000, "max_retries": 0})
}

fn sent(studio: &Studio) -> Vec<PanelRequest> {
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
    assert!(studio.notice.as_deref().unwrap().starts_with("Not saved"));
    assert!(!sent(&studio).iter().any(|r| matches!(r, PanelRequest::SavePrompts { .. })));

    // A variable the Navigator is never given: it loads, but it is not saved.
    studio.effects.clear();
    studio.apply(Action::Edit("Task: {{task}} {{nope}} {{> json_only}}".into()));
    assert!(studio.check().is_ok());
    studio.apply(Action::Save);
    let notice = studio.notice.clone().unwrap();
    assert!(notice.starts_with("Not saved: navigator/A.md reads {{nope}}"), "{notice}");
    assert!(!sent(&studio).iter().any(|r| matches!(r, PanelRequest::SavePrompts { .. })));

    studio.apply(Action::Edit("Task: {{task}} {{> json_only}}".into()));
    assert!(studio.check().is_ok());
    assert_eq!(studio.save_problem(), None);
    studio.apply(Action::Save);
    let Some(PanelRequest::SavePrompts { id, edits }) = sent(&studio).pop() else { panic!() };
    assert_eq!(edits["navigator/A.md"].as_deref(), Some("Task: {{task}} {{> json_only}}"));
    assert!(studio.saving());
    let mut stored = BTreeMap::new();
    stored.insert("navigator/A.md".to_owned(), "Task: {{task}} {{> json_only}}".to_owned());
    studio.apply(Action::Worker(WorkerEvent::PromptOverrides { id, overrides: stored }));
    assert!(studio.drafts.is_empty() && studio.is_overridden("navigator/A.md"));

    // Revert is one request that drops the override.
    studio.apply(Action::Revert("navigator/A.md".into()));
    let Some(PanelRequest::SavePrompts { edits, .. }) = sent(&studio).pop() else { panic!() };
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
    let Some(PanelRequest::StudioRun { id, run }) = sent(&studio).pop() else { panic!() };
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
    studio.apply(Action::Worker(WorkerEvent::StudioResult { id, result: Box::new(result) }));
    assert!(matches!(&studio.run, RunState::Done(r) if r.attempts.len() == 1));
    assert!(studio.effects.iter().any(|(_, e)| *e == Effect::LoadTraces), "the new trace");
}

#[test]
fn bad_sample_json_is_said_and_nothing_is_sent() {
    let mut studio = connected();
    studio.apply(Action::VarsText("{\"task\": ".into()));
    studio.apply(Action::Run);
    assert!(matches!(&studio.run, RunState::Failed(m) if m.contains("not JSON")));
    assert!(!sent(&studio).iter().any(|r| matches!(r, PanelRequest::StudioRun { .. })));
}

#[test]
fn compare_runs_each_variant_on_the_newest_captured_steps() {
    let mut studio = connected();
    studio.apply(Action::NewVariant("B".into()));
    assert!(studio.notice.take().unwrap().contains("already has a variant B"));
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
            PanelRequest::StudioRun { run, .. } => Some(run.variant.clone()),
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
            PanelRequest::StudioRun { run, .. } => Some((run.variant.clone(), run.role)),
            _ => None,
        })
        .collect();
    assert_eq!(runs, [("A".into(), ModelRole::Navigator), ("A".into(), ModelRole::Planner)]);
    assert!(matches!(&studio.compare[2].state, RunState::Failed(m) if m.contains("critic")));
}
