use run_contract::action::Action;
use run_records::Usage;
use run_records::{self as run, AgentRun, ExecutedAction, StepRecord};
use serde_json::json;

use super::*;

fn engine_run() -> AgentRun {
    AgentRun {
        id: "run-1".into(),
        task_id: "session-1".into(),
        task_prompt: "Find the kettle".into(),
        follow_ups: vec!["cheaper please".into()],
        status: run::ReviewStatus::Draft,
        agent_status: protocol::jobs::JobStatus::Done,
        final_answer: Some("It costs 20 €".into()),
        created_at: "2026-11-22T10:00:00.000Z".into(),
        updated_at: "2026-11-22T10:01:00.000Z".into(),
        created_by: "agent".into(),
        reviewed_by: None,
        subtasks: vec![run::Subtask {
            id: "plan-1".into(),
            title: "Open the shop".into(),
            description: "".into(),
            step_range: [0, 1],
            status: run::SubtaskStatus::Pending,
        }],
        total_steps: 2,
        start_url: "http://shop.test/".into(),
        models: json!({"navigator": "gpt-test"}),
        usage: Usage { input_tokens: 10, output_tokens: 5 },
        cost: 0.25,
        telemetry: run_contract::telemetry::Telemetry {
            log: vec![run_contract::telemetry::LogEntry {
                at: 1.0,
                step: 1,
                kind: run_contract::telemetry::LogKind::UserInput,
                message: "Which kettle?".into(),
            }],
            pauses: 1,
            ..Default::default()
        },
        replay: Some(run::ReplayOrigin {
            workflow_id: "wf".into(),
            version: 1,
            params: [("product".to_owned(), "kettle".to_owned())].into(),
            fast_path: true,
            steps: 2,
            fast_path_steps: 1,
        }),
        driven_by: None,
    }
}

fn engine_step() -> StepRecord {
    StepRecord {
        run_id: "run-1".into(),
        index: 1,
        url: "http://shop.test/".into(),
        title: "Shop".into(),
        screenshot: Some(run::ScreenshotRef {
            key: "ab".repeat(32),
            timestamp: "2026-11-22T10:00:30.000Z".into(),
            mime: "image/jpeg".into(),
            bytes: 2048,
        }),
        action: run::StepAction { kind: "click".into(), target: "Kettles".into(), value: None },
        actions: vec![ExecutedAction {
            action: Action::Click { id: 4 },
            target: "Kettles".into(),
            ok: true,
            message: "clicked".into(),
        }],
        thoughts: run::Thoughts {
            thought1: "I opened the shop.".into(),
            thought2: "I can see a Kettles link.".into(),
            thought3: "I should click Kettles to see the kettles.".into(),
        },
        extended_thoughts: vec![],
        verified: false,
        issues: vec![],
        last_edited_by: "agent".into(),
        last_edited_at: "2026-11-22T10:00:30.000Z".into(),
        outcome: run_records::StepOutcome::Ok,
        trace_ids: vec!["t1".into()],
        duration_ms: 812.0,
        navigator: Some(run::NavigatorNotes {
            evaluation_previous_goal: "Success: the shop is open".into(),
            memory: "Kettles are under Kitchen".into(),
            next_goal: "Open the kettles".into(),
        }),
        drafted_thoughts: vec![run::Thought::Two],
    }
}

#[test]
fn engine_records_round_trip_without_loss() {
    let run = serde_json::to_value(engine_run()).unwrap();
    let read: Run = serde_json::from_value(run.clone()).unwrap();
    assert_eq!(read.task_prompt, "Find the kettle");
    assert_eq!(read.subtasks[0].step_range, [0, 1]);
    let mut written = serde_json::to_value(&read).unwrap();
    // The page adds its version counter; everything else is as the worker wrote it.
    written.as_object_mut().unwrap().remove("version");
    assert_eq!(written, run);

    let step = serde_json::to_value(engine_step()).unwrap();
    let read: Step = serde_json::from_value(step.clone()).unwrap();
    assert_eq!(read.thoughts.get(Thought::Three), "I should click Kettles to see the kettles.");
    assert_eq!(read.state(), StepState::NeedsAnnotation);
    assert_eq!(serde_json::to_value(&read).unwrap(), step);
    // And the engine can read back what the page writes.
    let back: StepRecord = serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
    assert_eq!(back, engine_step());
}

#[test]
fn unknown_fields_survive_a_save() {
    let mut value = serde_json::to_value(engine_step()).unwrap();
    value["futureField"] = json!({"x": 1});
    let mut step: Step = serde_json::from_value(value).unwrap();
    step.thoughts.thought1 = "edited".into();
    let written = serde_json::to_value(&step).unwrap();
    assert_eq!(written["futureField"], json!({"x": 1}));
}

#[test]
fn first_incomplete_step_and_progress() {
    let mut steps: Vec<Step> =
        (0..4).map(|index| Step { run_id: "r".into(), index, ..Step::default() }).collect();
    assert_eq!(first_incomplete(&steps), Some(0));
    steps[0].verified = true;
    steps[1].verified = true;
    let draft = crate::issues::Draft { description: "unclear".into(), ..Default::default() };
    let issue = crate::issues::raise(&steps[2], &draft, "ann", "now");
    steps[2].issues.push(issue);
    assert_eq!(steps[2].state(), StepState::Flagged);
    steps[2].verified = true;
    assert_eq!(steps[2].state(), StepState::Flagged, "complete, but an issue is still open");
    assert_eq!(first_incomplete(&steps), Some(2));
    steps[2].verified = false;
    assert_eq!(first_incomplete(&steps), Some(2));
    assert_eq!(progress(&steps), 50);
    for step in &mut steps {
        step.verified = true;
    }
    assert!(crate::issues::set_resolved(&mut steps[2], 0, true, "rev", "later"));
    assert_eq!(first_incomplete(&steps), Some(0));
    assert_eq!(progress(&steps), 100);
}

#[test]
fn a_server_run_without_telemetry_reads_and_writes_none() {
    let run: Run = serde_json::from_value(json!({"id": "r1", "telemetry": null})).unwrap();
    assert!(run.telemetry.is_empty());
    assert!(serde_json::to_value(&run).unwrap().get("telemetry").is_none());
    let engine: Run = serde_json::from_value(serde_json::to_value(engine_run()).unwrap()).unwrap();
    assert_eq!(engine.telemetry.pauses, 1, "the captured telemetry is kept");
}

#[test]
fn subtasks_go_from_pending_to_annotated_to_reviewed() {
    let mut steps: Vec<Step> =
        (0..4).map(|index| Step { run_id: "r".into(), index, ..Step::default() }).collect();
    let mut run = Run {
        subtasks: vec![
            Subtask { step_range: [0, 1], ..Subtask::default() },
            Subtask { step_range: [2, 3], ..Subtask::default() },
        ],
        ..Run::default()
    };
    steps[0].verified = true;
    steps[1].verified = true;
    update_subtasks(&mut run, &steps);
    assert_eq!(run.subtasks[0].status, SUBTASK_ANNOTATED);
    assert_eq!(run.subtasks[1].status, SUBTASK_PENDING);
    run.status = ReviewStatus::Approved;
    update_subtasks(&mut run, &steps);
    assert_eq!(run.subtasks[0].status, SUBTASK_REVIEWED);
    let draft = crate::issues::Draft::default();
    let issue = crate::issues::raise(&steps[1], &draft, "rev", "t");
    steps[1].issues.push(issue);
    update_subtasks(&mut run, &steps);
    assert_eq!(run.subtasks[0].status, SUBTASK_PENDING, "an open issue reopens it");
}
