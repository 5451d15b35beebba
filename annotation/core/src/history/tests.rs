use serde_json::json;

use super::*;
use crate::record::{ScreenshotRef, StepAction, Thoughts};

fn run() -> Run {
    Run {
        id: "r1".into(),
        task_id: "t1".into(),
        task_prompt: "Find the kettle".into(),
        created_at: "2026-11-22T10:00:00Z".into(),
        updated_at: "2026-11-22T10:00:00Z".into(),
        total_steps: 3,
        ..Run::default()
    }
}

fn step(index: u32) -> Step {
    Step {
        run_id: "r1".into(),
        index,
        url: "http://shop.test/".into(),
        screenshot: Some(ScreenshotRef { key: format!("k{index}"), ..ScreenshotRef::default() }),
        action: StepAction { kind: "click".into(), target: "Kettles".into(), value: None },
        thoughts: Thoughts {
            thought1: format!("Step {index} starts."),
            thought2: "I can see the shop.".into(),
            thought3: "I should click Kettles.".into(),
        },
        ..Step::default()
    }
}

fn steps() -> Vec<Step> {
    (0..3).map(step).collect()
}

fn rebuild(ops: &[DiffOp], keep: fn(&DiffOp) -> bool) -> String {
    ops.iter().filter(|op| keep(op)).map(DiffOp::text).collect()
}

#[test]
fn changed_paths_follow_objects_to_leaves_and_skip_volatile_fields() {
    let before = json!({
        "run": {"tags": ["a"], "updatedAt": "1", "version": 1, "quality": 50, "taskPrompt": "x"},
        "steps": [{"index": 0, "thoughts": {"thought1": "a", "thought2": "b"}, "lastEditedAt": "1"}]
    });
    let after = json!({
        "run": {"tags": ["a", "b"], "updatedAt": "2", "version": 2, "quality": 60, "taskPrompt": "x"},
        "steps": [{"index": 0, "thoughts": {"thought1": "A", "thought2": "b"}, "lastEditedAt": "2"}]
    });
    assert_eq!(changed_paths(&before, &after), ["run.tags", "steps.0.thoughts.thought1"]);
    assert!(changed_paths(&before, &before).is_empty());
}

#[test]
fn lists_of_objects_are_followed_by_position() {
    let mut r = run();
    r.subtasks = vec![crate::record::Subtask {
        title: "Open".into(),
        step_range: [0, 1],
        ..Default::default()
    }];
    let mut next = r.clone();
    next.subtasks[0].title = "Open the shop".into();
    let mut s = steps();
    s[1].issues.push(json!({"type": "logic", "description": "why?"}));
    let paths = snapshot_paths((&r, &steps()), (&next, &s));
    assert_eq!(paths, ["run.subtasks.0.title", "steps.1.issues.0"]);
    assert_eq!(summarize(&paths), "Step 2: flags; run: subtasks");
}

#[test]
fn missing_and_null_are_the_same() {
    let before = json!({"run": {"annotator": null}});
    let after = json!({"run": {}});
    assert!(changed_paths(&before, &after).is_empty());
}

#[test]
fn steps_are_matched_by_their_index_not_position() {
    let mut next = steps();
    next.remove(0); // step 0 deleted: steps 1 and 2 are unchanged
    let paths = snapshot_paths((&run(), &steps()), (&run(), &next));
    assert_eq!(paths, ["steps.0"]);
    assert_eq!(summarize(&paths), "Step 1: whole step");
}

#[test]
fn snapshot_paths_name_run_and_step_fields() {
    let mut r = run();
    r.tags = vec!["shop".into()];
    r.updated_at = "later".into();
    r.version = 7;
    let mut s = steps();
    s[2].thoughts.thought2 = "Changed.".into();
    s[2].thoughts.thought1 = "Changed too.".into();
    s[2].last_edited_by = "ann".into();
    s[1].action.target = "Teapots".into();
    let paths = snapshot_paths((&run(), &steps()), (&r, &s));
    assert_eq!(
        paths,
        [
            "run.tags",
            "steps.1.action.target",
            "steps.2.thoughts.thought1",
            "steps.2.thoughts.thought2"
        ]
    );
    assert_eq!(summarize(&paths), "Step 2: action; Step 3: thought 1, thought 2; run: tags");
    assert_eq!(summarize(&[]), "No changes");
}

#[test]
fn saves_make_versions_only_when_something_changed() {
    let first = next_version(None, &run(), &steps(), "ann", "t1").unwrap();
    assert_eq!(first.number, 1);
    assert_eq!(first.run.version, 1);
    assert_eq!(first.summary, "First version");
    // Saving again unchanged (the page bumps updatedAt and version) makes nothing.
    let mut same = run();
    same.updated_at = "t2".into();
    same.version = 1;
    assert!(next_version(Some(&first), &same, &steps(), "ann", "t2").is_none());

    let mut s = steps();
    s[0].thoughts.thought3 = "I should search instead.".into();
    let second = next_version(Some(&first), &run(), &s, "rev", "t3").unwrap();
    assert_eq!(second.number, 2);
    assert_eq!(second.run.version, 2);
    assert_eq!(second.author, "rev");
    assert_eq!(second.at, "t3");
    assert_eq!(second.paths, ["steps.0.thoughts.thought3"]);
    assert_eq!(second.summary, "Step 1: thought 3");
    assert_eq!(second.steps, s);
}

#[test]
fn rollback_adds_a_version_with_the_old_content() {
    let v1 = next_version(None, &run(), &steps(), "ann", "t1").unwrap();
    let mut s = steps();
    s[1].thoughts.thought1 = "Edited.".into();
    let mut r = run();
    r.server_version = Some(4);
    let v2 = next_version(Some(&v1), &r, &s, "ann", "t2").unwrap();
    let v3 = rollback(&v1, &v2, "lead", "t3");
    assert_eq!(v3.number, 3);
    assert_eq!(v3.summary, "Rolled back to version 1");
    assert_eq!(v3.steps, v1.steps);
    assert_eq!(v3.run.version, 3);
    assert_eq!(v3.run.server_version, Some(4), "sync state is the latest's");
    assert_eq!(v3.paths, ["steps.1.thoughts.thought1"]);
    // Nothing is lost: v2 is still there to roll forward to.
    let v4 = rollback(&v2, &v3, "lead", "t4");
    assert_eq!(v4.steps, v2.steps);
    assert_eq!(v4.number, 4);
}

#[test]
fn word_diff_marks_words_and_rebuilds_both_sides() {
    let before = "I can see the search bar, but it is empty.";
    let after = "I can see the red search bar; it is empty now.";
    let ops = word_diff(before, after);
    assert_eq!(rebuild(&ops, |op| !matches!(op, DiffOp::Added(_))), before);
    assert_eq!(rebuild(&ops, |op| !matches!(op, DiffOp::Removed(_))), after);
    assert!(ops.contains(&DiffOp::Added("red ".into())), "{ops:?}");
    // Which neighbouring space or comma goes with "but" is a tie between equally short
    // edits; that the word shows as removed, and nowhere as kept, is what matters.
    assert!(ops.iter().any(|op| matches!(op, DiffOp::Removed(t) if t.contains("but"))), "{ops:?}");
    assert!(!ops.iter().any(|op| matches!(op, DiffOp::Same(t) if t.contains("but"))), "{ops:?}");
    assert!(ops.contains(&DiffOp::Added(";".into())), "{ops:?}");
    assert_eq!(ops.first(), Some(&DiffOp::Same("I can see the ".into())));
    // No two neighbours of one kind.
    for pair in ops.windows(2) {
        assert_ne!(std::mem::discriminant(&pair[0]), std::mem::discriminant(&pair[1]));
    }
}

#[test]
fn word_diff_edge_cases() {
    assert_eq!(word_diff("", ""), []);
    assert_eq!(word_diff("", "new"), [DiffOp::Added("new".into())]);
    assert_eq!(word_diff("old", ""), [DiffOp::Removed("old".into())]);
    assert_eq!(word_diff("same text", "same text"), [DiffOp::Same("same text".into())]);
    assert_eq!(
        word_diff("ça coûte 20 €", "ça coûte 25 €"),
        [
            DiffOp::Same("ça coûte ".into()),
            DiffOp::Removed("20".into()),
            DiffOp::Added("25".into()),
            DiffOp::Same(" €".into()),
        ]
    );
}

#[test]
fn word_diff_is_minimal_on_scattered_edits() {
    let before: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
    let mut after = before.clone();
    after[10] = "x".into();
    after.remove(100);
    after.insert(150, "y".into());
    let ops = word_diff(&before.join(" "), &after.join(" "));
    let changed: Vec<&DiffOp> = ops.iter().filter(|op| !matches!(op, DiffOp::Same(_))).collect();
    assert_eq!(changed.len(), 4, "{changed:?}"); // w10→x, -w100 (with a space), +y (with a space)
    assert_eq!(rebuild(&ops, |op| !matches!(op, DiffOp::Added(_))), before.join(" "));
    assert_eq!(rebuild(&ops, |op| !matches!(op, DiffOp::Removed(_))), after.join(" "));
}

#[test]
fn huge_rewrites_fall_back_to_remove_and_add() {
    let before: String = (0..3000).map(|i| format!("a{i} ")).collect();
    let after: String = (0..3000).map(|i| format!("b{i} ")).collect();
    let started = std::time::Instant::now();
    let ops = word_diff(&before, &after);
    eprintln!("diff of two 3000-word texts with nothing in common: {:?}", started.elapsed());
    let expected = [
        DiffOp::Removed(before.trim_end().into()),
        DiffOp::Added(after.trim_end().into()),
        DiffOp::Same(" ".into()),
    ];
    assert_eq!(ops, expected);
}

#[test]
fn compare_lists_every_changed_leaf_with_labels() {
    let v1 = next_version(None, &run(), &steps(), "ann", "t1").unwrap();
    let mut s = steps();
    s[0].thoughts.thought1 = "Step 0 starts slowly.".into();
    s[2].verified = true;
    s.push(step(3));
    let mut r = run();
    r.tags = vec!["shop".into()];
    let v2 = next_version(Some(&v1), &r, &s, "ann", "t2").unwrap();
    let diffs = compare(&v1, &v2);
    let labels: Vec<&str> = diffs.iter().map(|d| d.label.as_str()).collect();
    assert!(labels.contains(&"Run · Tags"), "{labels:?}");
    assert!(labels.contains(&"Step 1 · Thought 1"), "{labels:?}");
    assert!(labels.contains(&"Step 3 · Verified"), "{labels:?}");
    assert!(
        labels.contains(&"Step 4 · Thoughts · Thought 2") || labels.contains(&"Step 4 · Thought 2")
    );
    let thought = diffs.iter().find(|d| d.path == "steps.0.thoughts.thought1").unwrap();
    assert_eq!(thought.before, "Step 0 starts.");
    assert_eq!(thought.after, "Step 0 starts slowly.");
    assert!(thought.ops.contains(&DiffOp::Added(" slowly".into())));
    let tags = diffs.iter().find(|d| d.path == "run.tags").unwrap();
    assert_eq!((tags.before.as_str(), tags.after.as_str()), ("", r#"["shop"]"#));
    let verified = diffs.iter().find(|d| d.path == "steps.2.verified").unwrap();
    assert_eq!((verified.before.as_str(), verified.after.as_str()), ("false", "true"));
    // The new step shows leaf by leaf, not as one blob.
    assert!(diffs.iter().any(|d| d.path == "steps.3.screenshot.key" && d.after == "k3"));
    assert!(compare(&v2, &v2).is_empty());
}

#[test]
fn labels_read_well() {
    assert_eq!(label("steps.3.thoughts.thought1"), "Step 4 · Thought 1");
    assert_eq!(label("steps.0.action.target"), "Step 1 · Action · Target");
    assert_eq!(label("run.subtasks.1.title"), "Run · Subtasks · #2 · Title");
    assert_eq!(label("run.taskPrompt"), "Run · Task prompt");
    assert_eq!(label("steps.2.url"), "Step 3 · URL");
}

#[test]
fn versions_serialize_camel_case() {
    let v = next_version(None, &run(), &steps(), "ann", "t1").unwrap();
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["runId"], "r1");
    let back: Version = serde_json::from_value(json).unwrap();
    assert_eq!(back, v);
}
