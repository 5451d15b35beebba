use serde_json::json;

use super::*;
use crate::record::{Run, Step};

fn run() -> Run {
    serde_json::from_value(json!({
        "id": "r1", "taskId": "s", "taskPrompt": "Find", "status": "in-review", "agentStatus": "done",
        "createdAt": "2026-11-20T09:00:00.000Z", "updatedAt": "2026-11-20T09:05:00.000Z", "createdBy": "agent",
        "subtasks": [], "totalSteps": 1, "startUrl": "", "models": {}, "usage": {"input_tokens": 1, "output_tokens": 1},
        "cost": 0.0, "version": 4, "serverVersion": 7, "quality": 80, "annotator": "ann"
    }))
    .unwrap()
}

#[test]
fn the_token_never_prints() {
    let settings =
        SyncSettings { endpoint: "http://127.0.0.1:8787/".into(), token: "s3cret".into() };
    assert!(!format!("{settings:?}").contains("s3cret"));
    assert_eq!(settings.url("/runs"), "http://127.0.0.1:8787/runs");
    assert!(settings.problems().is_empty());
    assert_eq!(SyncSettings { endpoint: "ftp://x".into(), token: "t".into() }.problems().len(), 1);
    assert!(SyncSettings::default().problems().is_empty(), "no server is fine: local only");
}

#[test]
fn writes_carry_content_and_the_base_version_only() {
    let run = run();
    let item = batch_item("m1", &Pending::Run { run_id: "r1".into() }, &run, None).unwrap();
    assert_eq!(item["baseVersion"], 7);
    let body = item["run"].as_object().unwrap();
    for local in ["version", "serverVersion", "quality", "status", "annotator", "updatedAt"] {
        assert!(!body.contains_key(local), "{local} is not sent");
    }
    assert_eq!(body["finalAnswer"], Value::Null);
    assert!(!body.contains_key("telemetry"), "none captured, none sent");
    let mut logged = run.clone();
    logged.telemetry.pauses = 1;
    logged.telemetry.push(run_contract::telemetry::LogEntry {
        at: 1.0,
        step: 0,
        kind: run_contract::telemetry::LogKind::Pause,
        message: "Paused by the user".into(),
    });
    let item = batch_item("m0", &Pending::Run { run_id: "r1".into() }, &logged, None).unwrap();
    assert_eq!(item["run"]["telemetry"]["log"][0]["message"], "Paused by the user");
    assert_eq!(item["run"]["telemetry"]["pauses"], 1, "the run's telemetry is synced");
    let step = Step { run_id: "r1".into(), index: 2, server_version: Some(5), ..Step::default() };
    let item =
        batch_item("m2", &Pending::Step { run_id: "r1".into(), index: 2 }, &run, Some(&step))
            .unwrap();
    assert_eq!((item["baseVersion"].clone(), item["index"].clone()), (json!(5), json!(2)));
    assert!(item["step"].get("serverVersion").is_none());
}

#[test]
fn a_save_queues_the_header_and_changed_steps_once() {
    let run = run();
    let before = vec![
        Step { index: 0, server_version: Some(1), ..Step::default() },
        Step { index: 1, server_version: Some(1), ..Step::default() },
    ];
    let mut after = before.clone();
    after[1].verified = true;
    let mut queue = vec![];
    enqueue(&mut queue, changes(&run, &before, &after));
    enqueue(&mut queue, changes(&run, &before, &after));
    assert_eq!(
        queue,
        [Pending::Run { run_id: "r1".into() }, Pending::Step { run_id: "r1".into(), index: 1 }]
    );
}

#[test]
fn answers_become_outcomes_and_server_records_local_ones() {
    let answer = json!({"results": [
        {"item": 0, "kind": "run", "runId": "r1", "outcome": "ok", "version": 8, "record": {"id": "r1", "version": 8, "etag": "\"8\"", "taskPrompt": "Find"}},
        {"item": 1, "kind": "step", "runId": "r1", "index": 0, "outcome": "conflict",
         "problem": {"currentVersion": 9, "current": {"runId": "r1", "index": 0, "version": 9, "thoughts": {"thought1": "theirs"}}, "changedPaths": ["thoughts.thought1"]}},
        {"item": 2, "kind": "step", "runId": "r1", "index": 1, "outcome": "rejected",
         "problem": {"title": "Invalid", "detail": "The step is invalid.", "errors": [{"path": "thoughts.thought2", "message": "must be a string"}]}}
    ]});
    let outcomes = read_batch(&answer, 3).unwrap();
    let Outcome::Ok { version: 8, record } = &outcomes[0] else { panic!("{outcomes:?}") };
    let local = run_from_server(record.clone(), 3).unwrap();
    assert_eq!((local.server_version, local.version), (Some(8), 3));
    assert!(!local.extra.contains_key("etag"));
    let Outcome::Conflict { version: Some(9), current, paths } = &outcomes[1] else { panic!() };
    assert_eq!(paths, &["thoughts.thought1"]);
    let conflict = Conflict {
        pending: Pending::Step { run_id: "r1".into(), index: 0 },
        theirs: current.clone(),
        their_version: Some(9),
        paths: paths.clone(),
    };
    let mine = json!({"runId": "r1", "index": 0, "thoughts": {"thought1": "mine"}});
    assert_eq!(
        conflict.differences(&mine),
        [("thoughts.thought1".to_owned(), "mine".to_owned(), "theirs".to_owned())]
    );
    assert_eq!(step_from_server(current.clone()).unwrap().server_version, Some(9));
    assert_eq!(
        outcomes[2],
        Outcome::Rejected {
            why: "The step is invalid. thoughts.thought2: must be a string".into()
        }
    );
    assert!(read_batch(&answer, 2).is_err(), "a short answer is an error, not a guess");
}

#[test]
fn retries_back_off_and_honour_retry_after() {
    assert_eq!(backoff(1, None), 2);
    assert_eq!(backoff(4, None), 16);
    assert_eq!(backoff(30, None), 300);
    assert_eq!(backoff(1, Some(60)), 60);
    assert_eq!(
        SyncState::Offline { queued: 3, retry_in_s: 8 }.label(),
        "Offline · 3 changes queued · retry in 8 s"
    );
}

#[test]
fn a_status_reached_locally_is_replayed_edge_by_edge() {
    use crate::record::ReviewStatus::*;
    assert_eq!(transition_path(Draft, Approved), [InReview, Approved]);
    assert_eq!(transition_path(Approved, Draft), [InReview, Draft]);
    assert_eq!(transition_path(Draft, Draft), []);
    assert_eq!(transition_path(Archived, Approved), [Draft, InReview, Approved]);
}

#[test]
fn passages_go_to_the_server_as_anchors_and_come_back_re_anchored() {
    use crate::record::Thought;
    use crate::review::{Comment, CommentKind, PassageRef};
    let text = "I see the search box. I type kettle.";
    let passage = PassageRef::capture(Thought::Two, text, 22, 35).unwrap();
    let comment = Comment {
        id: "c".into(),
        run_id: "r1".into(),
        step_index: Some(0),
        parent_id: None,
        author: "rev".into(),
        text: "Which field?".into(),
        kind: CommentKind::Question,
        resolved: false,
        created_at: "t".into(),
        server_id: None,
        passage: Some(passage.clone()),
    };
    let body = comment_create(&comment, None);
    assert_eq!(
        body["anchor"],
        json!({"stepIndex": 0, "field": "thoughts.thought2", "range": {"start": 22, "end": 35},
            "quote": "I type kettle", "prefix": "I see the search box. ", "suffix": "."})
    );
    // The server moved the range after an edit in front of it, and says it is current.
    let mut record = json!({"id": "c1", "runId": "r1", "threadId": "c1", "parentId": null,
        "anchor": body["anchor"].clone(), "kind": "question", "text": "Which field?",
        "author": "rev", "createdAt": "t", "resolved": false, "outdated": false});
    record["anchor"]["range"] = json!({"start": 40, "end": 53});
    let back = comment_from_server(&record, &[]).unwrap().passage.unwrap();
    assert_eq!((back.start, back.end, back.outdated), (40, 53, false));
    assert_eq!(back.quote, "I type kettle");
    record["outdated"] = json!(true);
    assert!(comment_from_server(&record, &[]).unwrap().passage.unwrap().outdated);

    let mut suggestion = crate::review::tests::suggestion("I type kettle", "I type teapot");
    suggestion.passage = Some(passage);
    let body = suggestion_create(&suggestion, 4);
    assert_eq!(
        (body["range"]["start"].clone(), body["quote"].clone()),
        (json!(22), json!("I type kettle"))
    );
    let decided = json!({"id": "s1", "runId": "r", "stepIndex": 0, "field": "thoughts.thought2",
        "original": text, "proposed": "I type teapot", "author": "rev", "createdAt": "t", "state": "pending",
        "passage": {"start": 22, "end": 35, "quote": "I type kettle", "prefix": "", "suffix": "."}, "outdated": false});
    let local = suggestion_from_server(&decided, &[]).unwrap();
    assert_eq!(local.passage.map(|p| (p.start, p.end)), Some((22, 35)));
}

#[test]
fn comments_and_suggestions_map_to_and_from_the_server() {
    use crate::review::{Comment, CommentKind, Suggestion, SuggestionState};
    let root = Comment {
        id: "local-1".into(),
        run_id: "r1".into(),
        step_index: Some(2),
        parent_id: None,
        author: "rev".into(),
        text: "Which bar?".into(),
        kind: CommentKind::Question,
        resolved: false,
        created_at: "t".into(),
        server_id: Some("c1".into()),
        passage: None,
    };
    assert_eq!(
        comment_create(&root, None),
        json!({"text": "Which bar?", "anchor": {"stepIndex": 2}, "kind": "question"})
    );
    assert_eq!(comment_create(&root, Some("c1"))["parentId"], "c1");
    let reply = json!({"id": "c2", "runId": "r1", "threadId": "c1", "parentId": "c1", "anchor": {"stepIndex": 2},
        "kind": null, "text": "The header one.", "author": "ann", "createdAt": "t2", "resolved": false});
    let local = comment_from_server(&reply, std::slice::from_ref(&root)).unwrap();
    assert_eq!(
        (local.id.as_str(), local.parent_id.as_deref(), local.kind),
        ("srv-c2", Some("local-1"), CommentKind::Question)
    );

    let mine = Suggestion {
        id: "s-local".into(),
        run_id: "r1".into(),
        server_id: Some("s1".into()),
        ..crate::review::tests::suggestion("I see the bar.", "I can see the search bar.")
    };
    let body = suggestion_create(&mine, 3);
    assert_eq!(
        (body["field"].clone(), body["baseVersion"].clone(), body["note"].clone()),
        (json!("thoughts.thought2"), json!(3), Value::Null)
    );
    let decided = json!({"id": "s1", "runId": "r1", "stepIndex": 0, "field": "thoughts.thought2", "original": "I see the bar.",
        "proposed": "I can see the search bar.", "author": "rev", "createdAt": "t", "state": "accepted", "decidedBy": "ann", "decidedAt": "t3"});
    let local = suggestion_from_server(&decided, std::slice::from_ref(&mine)).unwrap();
    assert_eq!(
        (local.id.as_str(), local.state, local.resolved_by.as_deref()),
        ("s-local", SuggestionState::Accepted, Some("ann"))
    );
    let on_action = json!({"id": "s9", "runId": "r1", "stepIndex": 0, "field": "action.target", "state": "pending"});
    assert_eq!(suggestion_from_server(&on_action, &[]), None);
}

#[test]
fn a_stored_token_is_kept_only_for_its_server() {
    let stored = SyncSettings { endpoint: "https://sync.team.example".into(), token: "t-1".into() };
    assert_eq!(stored.edited("HTTPS://SYNC.TEAM.EXAMPLE/", "").token, "t-1", "same server");
    assert_eq!(stored.edited("https://sync.team.example/v2", "  ").token, "t-1");
    for other in [
        "https://collector.example",
        "https://sync.team.example@collector.example",
        "http://sync.team.example",
        "https://sync.team.example:8443",
    ] {
        let moved = stored.edited(other, "");
        assert_eq!(moved.token, "", "{other}: the token followed the address");
        assert!(moved.problems().iter().any(|p| p.contains("token is needed")), "{other}");
    }
    assert_eq!(stored.edited("https://collector.example", "t-2").token, "t-2");
}

#[test]
fn a_pull_asks_with_the_servers_cursor_and_never_the_browsers_clock() {
    let settings = SyncSettings { endpoint: "http://127.0.0.1:8787/".into(), token: "t".into() };
    assert_eq!(pull_path(None, &settings, "rita"), "/runs?sort=updatedAt");
    let page = json!({"items": [], "nextCursor": null, "pullCursor": "eyJ2IjoxfQ"});
    let mark = pull_mark(&page, &settings, "rita").unwrap();
    assert_eq!(
        pull_path(Some(&mark), &settings, "rita"),
        "/runs?sort=updatedAt&pullCursor=eyJ2IjoxfQ"
    );
    // Another server's cursor, or another user's, is not sent: that pull starts over.
    let other = SyncSettings { endpoint: "https://sync.example".into(), token: "t".into() };
    assert_eq!(pull_path(Some(&mark), &other, "rita"), "/runs?sort=updatedAt");
    assert_eq!(pull_path(Some(&mark), &settings, "quinn"), "/runs?sort=updatedAt");
    // A server that issues no cursor leaves nothing to keep.
    assert_eq!(pull_mark(&json!({"items": []}), &settings, "rita"), None);
}

#[test]
fn batches_stay_under_the_servers_limits_and_a_lone_giant_is_left_out() {
    let item = |chars: usize| json!({"kind": "step", "text": "x".repeat(chars)});
    let size = |v: &Value| v.to_string().len();
    let items = vec![item(300), item(300), item(5_000), item(300), item(300), item(300)];
    let max = 900;
    let plan = batches(&items, max, 200);
    assert_eq!(plan.too_big, [2]);
    assert_eq!(plan.batches, [vec![0, 1], vec![3, 4], vec![5]]);
    for batch in &plan.batches {
        let body = json!({"items": batch.iter().map(|&i| items[i].clone()).collect::<Vec<_>>()});
        assert!(size(&body) <= max, "{} bytes", size(&body));
    }
    // A body exactly at the limit goes; the count limit splits too.
    let exact = r#"{"items":[]}"#.len() + size(&items[0]) * 2 + 1;
    assert_eq!(batches(&items[..2], exact, 200).batches, [vec![0, 1]]);
    assert_eq!(batches(&items[..2], exact - 1, 200).batches, [vec![0], vec![1]]);
    assert_eq!(batches(&items, 100_000, 2).batches, [vec![0, 1], vec![2, 3], vec![4, 5]]);
    assert!(too_big_text(12 * 1024 * 1024, 10 * 1024 * 1024).contains("12.0 MB"));
}
