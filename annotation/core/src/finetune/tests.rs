use prompt_files::prompts::PromptSet;
use serde_json::json;

use super::*;
use crate::record::Thought;

/// A Navigator trace as the engine stores it: `kept` adds the messages as sent and the
/// model's accepted answer (traces written before they were kept have neither).
fn trace(step: u32, params: Value, kept: Option<&str>) -> Value {
    let rendered = PromptSet::bundled().render("navigator", None, &params).unwrap();
    let mut trace = json!({
        "id": format!("t{step}"), "runId": "r", "step": step, "role": "navigator",
        "promptId": "navigator", "variant": rendered.variant, "promptHash": rendered.prompt_hash,
        "revisionHash": rendered.revision_hash, "params": params, "error": null,
        "startedAt": format!("2026-11-20T09:0{step}:00.000Z"),
    });
    if let Some(answer) = kept {
        trace["prompt"] = json!({"system": rendered.text, "user": "Answer with the JSON object."});
        trace["attempts"] = json!([
            {"model": "m", "raw": "not json", "problems": ["no JSON object"]},
            {"model": "m", "raw": answer, "problems": []},
        ]);
    }
    trace
}

fn params(task: &str, page: &str) -> Value {
    json!({"task": task, "follow_ups": "", "plan": "1. Open the kettle", "reviewer_notes": "",
           "last_action": "", "last_outcome": "", "dom_comparison": "", "successes": 0,
           "failures": 0, "history": "", "extracted": null, "page_state": page, "max_actions": 3,
           "step": 1, "step_limit": 40})
}

fn render(call: &NavigatorCall) -> Result<String, String> {
    Ok(PromptSet::bundled().render(&call.prompt_id, Some(&call.variant), &call.params)?.text)
}

fn parse(raw: &str) -> Option<Value> {
    prompt_files::structured::extract_json(raw).ok()
}

fn step(index: u32, actions: Value) -> Step {
    let mut step = Step { run_id: "r".into(), index, ..Step::default() };
    step.thoughts.thought1 = "I opened the shop.".into();
    step.thoughts.thought2 = "I can see the 'Steel kettle' link.".into();
    step.thoughts.thought3 = "I should click it to see its price.".into();
    step.extended_thoughts = vec!["The cheapest kettle is listed first.".into()];
    step.actions = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| json!({"action": a, "target": "x", "ok": true, "message": ""}))
        .collect();
    step
}

#[test]
fn each_step_becomes_the_prompt_the_navigator_saw_and_its_annotated_answer() {
    let answered = "```json\n{\"current_state\": {\"evaluation_previous_goal\": \"Success\", \
        \"thought_changed\": \"model's own\", \"thought_state\": \"model's own\", \
        \"thought_next\": \"model's own\", \"extended_thoughts\": [], \"decision\": \"retry\", \
        \"memory\": \"Price not seen yet\", \"next_goal\": \"Add it to the cart\"}, \
        \"ask_user\": \"\", \"actions\": []}\n```";
    let traces = vec![
        trace(0, params("Find the kettle's price", "[4]<a>Steel kettle"), None),
        trace(1, params("Find the kettle's price", "[9]<button>Add to cart"), Some(answered)),
    ];
    let calls = navigator_calls(&traces);
    assert_eq!(calls.len(), 2);
    let steps = vec![
        step(0, json!([{"action": "click", "id": 4}])),
        step(
            1,
            json!([{"action": "type", "id": 7, "text": "[secret]"}, {"action": "done", "text": "24.99", "success": true}]),
        ),
        step(2, json!([])),
    ];
    let options = Options { statuses: vec![ReviewStatus::Approved], ..Options::default() };
    let build = Build {
        options: &options,
        user_turn: "Answer with the JSON object described above.",
        secrets: &[],
        render: &render,
        parse_answer: &parse,
        image: &|_| None,
    };
    let mut tally = Tally::default();
    let run = Run { id: "r".into(), status: ReviewStatus::Approved, ..Run::default() };
    let made = run_examples(&run, &steps, &calls, &build, &mut tally);
    let examples: Vec<Value> =
        made.lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(examples.len(), 2, "the third step has no recorded call");
    assert_eq!(tally.skipped.get(&Skip::NoPrompt), Some(&1));
    let messages = examples[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are the Navigator") && system.contains("[4]<a>Steel kettle"));
    assert!(system.contains("Find the kettle's price"));
    assert_eq!(messages[1]["content"], "Answer with the JSON object described above.");
    assert_eq!(
        examples[1]["messages"][1]["content"], "Answer with the JSON object.",
        "the user turn as the trace kept it"
    );
    // Every target is a valid answer in the Navigator's own schema.
    let bundled = PromptSet::bundled();
    let schema = &bundled.prompt("navigator").unwrap().schema;
    let answers: Vec<Value> = examples
        .iter()
        .map(|e| serde_json::from_str(e["messages"][2]["content"].as_str().unwrap()).unwrap())
        .collect();
    for answer in &answers {
        assert_eq!(schema.validate(answer), vec![], "{answer}");
        let state = &answer["current_state"];
        assert_eq!(state["thought_changed"], "I opened the shop.", "the annotated thought 1");
        assert_eq!(state["thought_state"], "I can see the 'Steel kettle' link.");
        assert_eq!(state["thought_next"], "I should click it to see its price.");
        assert_eq!(state["extended_thoughts"], json!(["The cheapest kettle is listed first."]));
    }
    assert_eq!(answers[0]["actions"], json!([{"action": "click", "id": 4}]));
    assert_eq!(answers[0]["current_state"]["decision"], "proceed", "no answer kept: proceed");
    let kept = &answers[1]["current_state"];
    assert_eq!(
        (&kept["decision"], &kept["memory"], &kept["next_goal"]),
        (&json!("retry"), &json!("Price not seen yet"), &json!("Add it to the cart")),
        "fields annotators do not edit come from the model's accepted answer"
    );
    // Rendered again, or as kept, the prompt is byte for byte what the Navigator got.
    assert_eq!(tally.prompts.values().next(), Some(&(2, 2)));
    let empty =
        RunExamples { run_id: "none".into(), lines: String::new(), count: 0, steps: vec![] };
    let other = RunExamples { run_id: "r2".into(), ..made.clone() };
    let splits =
        split(vec![made, empty, other], &Options { validation_percent: 50, ..options }, &mut tally);
    assert_eq!(
        (tally.train_runs, tally.train_examples),
        (1, 2),
        "a run without examples is no run of the split"
    );
    assert_eq!((tally.validation_runs, tally.validation_examples), (1, 2));
    assert_eq!((splits.train.lines().count(), splits.validation.lines().count()), (2, 2));
    assert!(splits.test.is_empty());
}

#[test]
fn screenshots_make_every_content_a_list_of_parts_with_the_image_in_the_user_turn() {
    let line =
        example("system", "user", Some("data:image/jpeg;base64,AAAA"), &json!({"a": 1}), true);
    let messages = line["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m["content"].is_array()));
    assert_eq!(messages[1]["content"][1]["image_url"]["url"], "data:image/jpeg;base64,AAAA");
    assert_eq!(messages[2]["content"][0]["text"], "{\"a\":1}");
    let plain = example("system", "user", None, &json!({"a": 1}), false);
    assert!(plain["messages"].as_array().unwrap().iter().all(|m| m["content"].is_string()));
}

#[test]
fn known_secrets_are_masked_wherever_they_appear() {
    let mut line = json!({"messages": [{"content": "key sk-live-123456789 and token tok-abcdefgh"}],
                          "nested": ["sk-live-123456789"]});
    mask(&mut line, &["sk-live-123456789".into(), "tok-abcdefgh".into(), "short".into()]);
    let text = line.to_string();
    assert!(!text.contains("sk-live") && !text.contains("tok-abc"), "{text}");
    assert_eq!(line["nested"][0], MASK);
}

#[test]
fn the_split_is_by_whole_runs_seeded_and_train_is_never_empty() {
    let ids: Vec<String> = (0..20).map(|i| format!("run-{i}")).collect();
    let (a, test) = held_out(&ids, 10, 0, 7);
    assert_eq!(a.len(), 2);
    assert!(test.is_empty());
    assert_eq!(held_out(&ids, 10, 0, 7).0, a, "the same seed, the same runs");
    assert_ne!(held_out(&ids, 10, 0, 8).0, a, "another seed, other runs");
    assert_eq!(held_out(&ids[..2], 10, 0, 7).0.len(), 1, "at least one when asked for");
    assert!(held_out(&ids[..1], 50, 50, 7).0.is_empty(), "a single run stays in train");
    assert!(held_out(&ids, 0, 0, 7).0.is_empty());
    assert_eq!(held_out(&ids, 90, 0, 7).0.len(), 10, "at most half");
    // Three splits: no run in two of them, and train keeps at least one.
    let (validation, test) = held_out(&ids, 10, 20, 7);
    assert_eq!((validation.len(), test.len()), (2, 4));
    assert!(validation.iter().all(|id| !test.contains(id)));
    let (v, t) = held_out(&ids[..3], 30, 30, 7);
    assert_eq!((v.len(), t.len()), (1, 1), "of three runs, one each and one for train");
    assert_eq!(held_out(&ids[..2], 50, 50, 7).1.len(), 0, "nothing left for test");
}

#[test]
fn only_finished_runs_go_in_when_asked() {
    let run = Run { status: ReviewStatus::Approved, ..Run::default() };
    let finished = Step { verified: true, ..Step::default() };
    let unfinished = Step::default();
    let all = Options::default();
    let only = Options { only_finished: true, ..Options::default() };
    assert!(chosen(&run, &[finished.clone(), unfinished.clone()], &all));
    assert!(!chosen(&run, &[finished.clone(), unfinished], &only));
    assert!(chosen(&run, &[finished], &only));
}

#[test]
fn the_card_names_the_splits_counts_prompts_and_what_was_left_out() {
    let mut tally = Tally {
        train_runs: 3,
        train_examples: 9,
        validation_runs: 1,
        validation_examples: 2,
        ..Tally::default()
    };
    tally.skipped.insert(Skip::NoAction, 1);
    tally.prompts.insert(("navigator".into(), "A".into(), "abc123".into()), (11, 10));
    let options = Options::default();
    let card = card(
        &tally,
        &CardFacts {
            exported_at: "2026-11-24T10:00:00.000Z",
            filter: "approved",
            options: &options,
        },
    );
    assert!(
        card.starts_with("---\n")
            && card.contains("path: train.jsonl")
            && card.contains("path: validation.jsonl")
    );
    assert!(card.contains("| train | 3 | 9 |") && card.contains("| validation | 1 | 2 |"));
    assert!(card.contains("| navigator | A | `abc123` | 11 | 10 |"));
    assert!(card.contains("no action in the Navigator's schema | 1"));
    assert!(card.contains("seed 42"));
    let empty = self::card(
        &Tally::default(),
        &CardFacts { exported_at: "t", filter: "all runs", options: &options },
    );
    assert!(!empty.contains("split: train"), "no split without examples");
}

#[test]
fn a_step_with_no_action_in_the_schema_is_left_out() {
    let mut odd = step(0, json!([]));
    odd.actions = vec![json!({"action": {"action": "teleport"}})];
    assert_eq!(target(&odd, None), Err(Skip::NoAction));
}

#[test]
fn the_navigators_notes_go_in_as_annotated() {
    let answered = json!({"current_state": {"evaluation_previous_goal": "Success",
        "memory": "Pirce not seen yet", "next_goal": "Add it to the cart", "decision": "retry"}});
    let mut annotated = step(0, json!([{"action": "click", "id": 4}]));
    annotated.navigator = Some(crate::record::NavigatorNotes {
        evaluation_previous_goal: "Success: the shop is open".into(),
        memory: "Price not seen yet".into(),
        next_goal: "Add it to the cart".into(),
    });
    let state = &target(&annotated, Some(&answered)).unwrap()["current_state"];
    assert_eq!(state["memory"], "Price not seen yet", "the corrected memory, not the model's");
    assert_eq!(state["evaluation_previous_goal"], "Success: the shop is open");
    assert_eq!(state["decision"], "retry");
    // A step captured before steps kept the notes: the model's own answer.
    let older = step(0, json!([{"action": "click", "id": 4}]));
    assert_eq!(
        target(&older, Some(&answered)).unwrap()["current_state"]["memory"],
        "Pirce not seen yet"
    );
}

#[test]
fn drafted_steps_are_named_in_the_provenance_or_left_out() {
    let traces = vec![
        trace(0, params("Find the kettle's price", "[4]<a>Steel kettle"), None),
        trace(1, params("Find the kettle's price", "[9]<button>Add to cart"), None),
    ];
    let calls = navigator_calls(&traces);
    let mut steps = vec![
        step(0, json!([{"action": "click", "id": 4}])),
        step(1, json!([{"action": "click", "id": 9}])),
    ];
    steps[1].drafted_thoughts = vec![Thought::Two, Thought::Three];
    let run = Run { id: "r".into(), status: ReviewStatus::Approved, ..Run::default() };
    let examples = |options: &Options, tally: &mut Tally| {
        let build = Build {
            options,
            user_turn: "Answer.",
            secrets: &[],
            render: &render,
            parse_answer: &parse,
            image: &|_| None,
        };
        run_examples(&run, &steps, &calls, &build, tally)
    };
    let options = Options::default();
    let mut tally = Tally::default();
    let made = examples(&options, &mut tally);
    assert_eq!((made.count, tally.drafted), (2, 1));
    let splits = split(vec![made], &options, &mut tally);
    let provenance: Vec<Value> =
        splits.provenance.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        provenance[1],
        json!({"split": "train", "line": 1, "run_id": "r", "step": 1,
               "drafted_thoughts": ["thought2", "thought3"]})
    );
    assert_eq!(provenance[0]["drafted_thoughts"], json!([]));
    let facts = CardFacts { exported_at: "t", filter: "all", options: &options };
    assert!(card(&tally, &facts).contains("a model drafted: 1 examples"));

    let leave_out = Options { leave_out_drafted: true, ..Options::default() };
    let mut tally = Tally::default();
    let made = examples(&leave_out, &mut tally);
    assert_eq!((made.count, tally.skipped.get(&Skip::Drafted)), (1, Some(&1)));
    let facts = CardFacts { exported_at: "t", filter: "all", options: &leave_out };
    assert!(card(&tally, &facts).contains("drafted by a model (left out as chosen) | 1"));
}
