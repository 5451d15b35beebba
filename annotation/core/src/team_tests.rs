use serde_json::json;

use super::*;

#[test]
fn project_settings_are_read_and_written_as_typed() {
    let project = Project::from_server(
        &json!({"overlap": 2, "guidelinesUrl": "https://team.test/rules",
        "guidelinesMarkdown": "", "version": 3, "etag": "\"3\"", "updatedAt": null, "updatedBy": null}),
    );
    assert_eq!((project.overlap, project.version), (2, 3));
    assert_eq!(project.link(), Some("https://team.test/rules"));
    assert_eq!(project.guidelines_markdown, None);
    assert_eq!(
        Project::write(" 2 ", "https://team.test/rules", "# Rules\n").unwrap(),
        json!({"overlap": 2, "guidelinesUrl": "https://team.test/rules", "guidelinesMarkdown": "# Rules"})
    );
    assert_eq!(Project::write("1", "", "").unwrap()["guidelinesUrl"], serde_json::Value::Null);
    assert!(Project::write("0", "", "").is_err());
    assert!(Project::write("11", "", "").is_err());
    assert!(Project::write("2", "javascript:alert(1)", "").is_err());
    let hostile =
        Project { guidelines_url: Some("javascript:alert(1)".into()), ..Project::default() };
    assert_eq!(hostile.link(), None, "only a web address is a link");
}

#[test]
fn guidelines_markdown_is_read_as_text_blocks() {
    let blocks = guideline_blocks(
        "# How we annotate\n\nWrite **three** thoughts,\nin order.\n- Say what `changed`\n* See [the rules](https://x.test) <b>now</b>\n",
    );
    assert_eq!(
        blocks,
        [
            Block::Heading("How we annotate".into()),
            Block::Paragraph("Write three thoughts, in order.".into()),
            Block::Item("Say what changed".into()),
            Block::Item("See the rules <b>now</b>".into()),
        ]
    );
}

#[test]
fn assignments_are_named_by_hand_or_in_turn_over_the_filter() {
    assert_eq!(user_list("ann, bea ann\tcal"), ["ann", "bea", "cal"]);
    assert_eq!(assign_body("ann,bea").unwrap(), json!({"annotators": ["ann", "bea"]}));
    assert_eq!(toggle_user("ann", "bea"), "ann, bea");
    assert_eq!(toggle_user("ann, bea ,cid", "bea"), "ann, cid");
    assert_eq!(toggle_user("", "ann"), "ann");
    assert_eq!(
        known_annotators(["bea", " ann ", "", "bea", "two words", "ada"]),
        ["ada", "ann", "bea"],
        "each id once, sorted; nothing that is not an id"
    );
    assert!(assign_body(" , ").is_err());
    let filter = Filter {
        statuses: vec![ReviewStatus::Draft],
        tags: vec!["shop".into()],
        text: "kettle".into(),
        ..Filter::default()
    };
    assert_eq!(
        round_robin_body(&filter, "ann bea").unwrap(),
        json!({"filter": {"status": ["draft"], "tag": ["shop"], "q": "kettle"},
            "annotators": ["ann", "bea"], "onlyUnassigned": true})
    );
    let dated = Filter { from: Some("2026-11-01".into()), min_quality: Some(80), ..filter };
    let refused = round_robin_body(&dated, "ann").unwrap_err();
    assert!(refused.contains("dates, quality"), "{refused}");
    let driven = Filter { driven_by: Some("Claude Desktop".into()), ..Filter::default() };
    let refused = round_robin_body(&driven, "ann").unwrap_err();
    assert!(refused.contains("driven by"), "the server's filter has no MCP client: {refused}");
    assert_eq!(
        round_robin_text(
            &json!({"assigned": [{"runId": "a"}, {"runId": "b"}], "skipped": [{"runId": "c"}]})
        ),
        "Assigned 2 runs in turn; 1 run skipped (already assigned)."
    );
    let queue = queue_from_server(&[json!({
        "assignment": {"runId": "r1", "annotator": "ann", "assignedBy": "ada", "assignedAt": "t", "state": "open", "submittedAt": null},
        "run": {"id": "r1", "taskPrompt": "Find the kettle", "status": "draft"}})]);
    assert_eq!((queue[0].run_id.as_str(), queue[0].assigned_by.as_str()), ("r1", "ada"));
    assert_eq!(queue[0].steps, 0, "no storedSteps: none known");
    let assignees = Assignees::from_server(&json!({"runId": "r1", "overlap": 2, "runVersion": 4,
        "items": [{"annotator": "ann", "state": "submitted"}, {"annotator": "bea", "state": "open"}]}));
    assert_eq!(assignees.annotators, [("ann".to_owned(), true), ("bea".to_owned(), false)]);
}

#[test]
fn queue_rows_are_in_due_order_with_the_progress_known_here() {
    let item = |id: &str, status: &str, steps: u32, at: &str| {
        json!({"assignment": {"runId": id, "annotator": "ann", "assignedBy": "ada", "assignedAt": at,
            "state": "open", "submittedAt": null},
            "run": {"id": id, "taskPrompt": format!("Task {id}"), "status": status, "storedSteps": steps}})
    };
    let queue = queue_from_server(&[
        item("r1", "draft", 3, "2026-11-20T09:05:00.123Z"),
        item("r2", "in-review", 2, "2026-11-21T10:00:00Z"),
    ]);
    let run = crate::record::Run { id: "r2".into(), ..crate::record::Run::default() };
    let steps = [0, 1].map(|index| crate::record::Step {
        index,
        verified: index == 0,
        ..crate::record::Step::default()
    });
    let rows = queue_rows(&queue, &[crate::query::summarize(&run, &steps)]);
    assert_eq!(rows.iter().map(|r| r.position).collect::<Vec<_>>(), [1, 2]);
    assert_eq!((rows[0].status, rows[0].steps, rows[0].done), (ReviewStatus::Draft, 3, None));
    assert_eq!(rows[0].assigned, "2026-11-20 09:05");
    assert_eq!((rows[1].status, rows[1].done), (ReviewStatus::InReview, Some(1)));
}

#[test]
fn an_own_version_sends_the_annotatable_part_of_a_step() {
    let step: crate::record::Step = serde_json::from_value(json!({
        "runId": "r1", "index": 0, "url": "http://shop.test/", "title": "Shop",
        "action": {"type": "click", "target": "Kettles", "value": null},
        "thoughts": {"thought1": "a", "thought2": "b", "thought3": "c"},
        "extendedThoughts": ["d"], "verified": true, "issues": []
    }))
    .unwrap();
    let mut own = OwnVersion { run_id: "r1".into(), ..OwnVersion::default() };
    let mut mine = step.clone();
    own.take_step(
        &json!({"index": 0, "annotator": "ann", "version": 3, "etag": "\"3\"", "updatedAt": "t",
            "thoughts": {"thought1": "mine", "thought2": "b", "thought3": "c"}, "action": {"type": "click", "target": "Kettles", "value": null}}),
        &mut mine,
    )
    .unwrap();
    assert_eq!((mine.thoughts.thought1.as_str(), mine.url.as_str()), ("mine", "http://shop.test/"));
    assert_eq!(own.steps.get(&0), Some(&3));
    let body = OwnVersion::step_body(&step);
    assert_eq!(
        body,
        json!({"thoughts": {"thought1": "a", "thought2": "b", "thought3": "c"},
            "action": {"type": "click", "target": "Kettles", "value": null}, "extendedThoughts": ["d"]})
    );
}

fn agreement() -> Agreement {
    let version = |t2: &str, target: &str| {
        json!({"thoughts": {"thought1": "On the shop.", "thought2": t2, "thought3": "Click it."},
            "action": {"type": "click", "target": target}})
    };
    Agreement::from_server(&json!({
        "runId": "r1", "annotators": ["ann", "bea"], "score": 0.8,
        "steps": [
            {"index": 0, "actionEqual": true, "thoughts": {"thought1": 1.0, "thought2": 0.5, "thought3": 1.0}, "score": 0.875,
             "versions": {"ann": version("I see the Kettles link.", "Kettles"), "bea": version("The Kettles link is there.", "Kettles")}},
            {"index": 1, "actionEqual": false, "thoughts": {"thought1": 1.0, "thought2": 1.0, "thought3": 1.0}, "score": 0.75,
             "versions": {"ann": version("Same.", "Kettles"), "bea": version("Same.", "Teapots")}}
        ]
    }))
}

#[test]
fn agreement_is_read_per_step_and_per_annotator() {
    let a = agreement();
    assert_eq!(a.annotators, ["ann", "bea"]);
    assert_eq!((a.steps[0].action_equal, a.steps[1].action_equal), (true, false));
    assert_eq!(a.steps[0].versions["bea"].thoughts[1], "The Kettles link is there.");
    let per = a.per_annotator();
    // Two annotators: each one's agreement is their pair's.
    assert_eq!(per[0].1, per[1].1);
    let expected = run_contract::agreement::pair_score(
        &[a.steps[0].versions["ann"].clone(), a.steps[1].versions["ann"].clone()],
        &[a.steps[0].versions["bea"].clone(), a.steps[1].versions["bea"].clone()],
    );
    assert_eq!(per[0].1, expected);
    assert_eq!(percent(Some(0.875)), "88%");
    assert_eq!(percent(None), "—");
}

#[test]
fn a_version_names_its_action_and_marks_what_differs_from_the_others() {
    let a = agreement();
    let words = ActionWords::read(&a.steps[1].versions["bea"].action);
    assert_eq!(words, ActionWords { kind: "click".into(), target: "Teapots".into(), value: None });
    let typed = ActionWords::read(&json!({"type": "type", "target": "Search", "value": "kettle"}));
    assert_eq!(typed.value.as_deref(), Some("kettle"));
    assert_eq!(
        ActionWords::read(&json!({"type": "scroll", "value": 300})).value.as_deref(),
        Some("300")
    );
    assert_eq!(ActionWords::read(&json!({"type": "click", "value": ""})).value, None);

    // Step 1: same action, the second thought differs; step 2: the target differs.
    let first = a.steps[0].differences("ann");
    assert!(!first.action());
    assert_eq!(first.thoughts, [false, true, false]);
    let second = a.steps[1].differences("bea");
    assert!(second.action() && second.target && !second.kind && !second.value);
    assert_eq!(second.thoughts, [false, false, false]);
    assert_eq!(a.steps[1].differences("nobody"), VersionDiff::default());
}

#[test]
fn spacing_alone_is_no_difference_between_thoughts() {
    let mut a = agreement();
    a.steps[1].versions.get_mut("bea").unwrap().thoughts[0] = "  On the   shop. ".into();
    assert_eq!(a.steps[1].differences("ann").thoughts, [false, false, false]);
}

#[test]
fn a_merge_picks_a_version_or_chooses_per_step() {
    let mut merge = Merge::default();
    assert_eq!(merge.body(), None, "nothing chosen yet");
    merge.pick_all("ann");
    merge.choose(1, "bea");
    assert_eq!((merge.source(0), merge.source(1)), (Some("ann"), Some("bea")));
    assert_eq!(
        merge.body().unwrap(),
        json!({"pick": "ann", "steps": [{"index": 1, "from": "bea"}]})
    );
    merge.pick_all("bea");
    assert_eq!(merge.body().unwrap(), json!({"pick": "bea"}), "a pick starts the choice over");
}

#[test]
fn notifications_audit_webhooks_and_figures_are_read_for_the_page() {
    let n = notifications_from_server(&[
        json!({"id": "n1", "kind": "assigned", "runId": "r1", "commentId": null,
        "actor": "ada", "text": "ada assigned you run r1", "createdAt": "t", "readAt": null}),
    ]);
    assert!(!n[0].read);
    assert_eq!(
        (badge(0), badge(3).as_deref(), badge(120).as_deref()),
        (None, Some("3"), Some("99+"))
    );

    let filter = AuditFilter {
        user: "ada".into(),
        since: "2026-11-20".into(),
        until: "2026-11-20".into(),
        ..AuditFilter::default()
    };
    assert_eq!(
        filter.query().unwrap(),
        "?user=ada&since=2026-11-20T00%3A00%3A00.000Z&until=2026-11-21T00%3A00%3A00.000Z"
    );
    assert_eq!(AuditFilter::default().query().unwrap(), "");
    assert!(AuditFilter { since: "last week".into(), ..AuditFilter::default() }.query().is_err());
    let entries = audit_from_server(&[
        json!({"seq": 4, "at": "t", "user": "ada", "action": "assignment.changed",
        "runId": "r1", "target": "run", "before": [], "after": ["ann", "bea"]}),
    ]);
    assert_eq!(audit_value(&entries[0].after), r#"["ann","bea"]"#);
    assert_eq!(audit_value(&serde_json::Value::Null), "—");
    assert_eq!(
        audit_changes(&entries[0].before, &entries[0].after),
        [AuditChange {
            field: String::new(),
            before: "[]".into(),
            after: r#"["ann","bea"]"#.into()
        }]
    );
    let changes = audit_changes(
        &json!({"overlap": 1, "guidelinesUrl": null, "version": 2, "thoughts": {"thought1": "a", "thought2": "b"}}),
        &json!({"overlap": 2, "guidelinesUrl": "https://team.test/rules", "version": 3,
            "thoughts": {"thought1": "a", "thought2": "x".repeat(100)}, "guidelinesMarkdown": null}),
    );
    let read: Vec<(&str, &str, &str)> =
        changes.iter().map(|c| (c.field.as_str(), c.before.as_str(), c.after.as_str())).collect();
    assert_eq!(
        read[..3],
        [
            ("guidelinesUrl", "—", "https://team.test/rules"),
            ("overlap", "1", "2"),
            ("thoughts.thought2", "b", read[2].2),
        ]
    );
    assert_eq!(read[2].2.chars().count(), 61, "long text is cut: {}", read[2].2);
    assert_eq!(read[3], ("version", "2", "3"));
    assert_eq!(read.len(), 4, "a null that stays absent is no change");
    assert!(audit_changes(&json!(3), &json!(3)).is_empty());
    let made = audit_changes(&serde_json::Value::Null, &json!({"quality": 77}));
    assert_eq!(
        made,
        [AuditChange { field: "quality".into(), before: "—".into(), after: "77".into() }]
    );

    let events = vec!["run.approved".to_owned()];
    assert!(webhook_create("http://127.0.0.1:9000/hook", &events, "").is_ok());
    assert!(webhook_create("https://hooks.test/x", &events, "").is_ok());
    assert!(
        webhook_create("http://hooks.test/x", &events, "").is_err(),
        "plain http leaves the computer"
    );
    assert!(webhook_create("https://hooks.test/x", &[], "").is_err());
    let hook = webhook_from_server(
        &json!({"id": "h1", "url": "https://hooks.test/x", "events": ["run.approved"],
        "description": "", "paused": true, "pending": 1, "delivered": 2, "failed": 0}),
    );
    assert!(hook.paused);
    let d = deliveries_from_server(&[
        json!({"id": "d1", "eventId": "e1", "event": "run.approved", "status": "delivered",
        "attempts": 2, "lastStatusCode": 200, "lastError": null, "nextAttemptAt": null, "createdAt": "t", "deliveredAt": "t"}),
    ]);
    assert_eq!((d[0].attempts, d[0].last_status_code), (2, Some(200)));
    let f = figures_from_server(&[
        json!({"label": "Annotator 1", "annotator": null, "you": false, "runs": 3,
        "scoredRuns": 2, "averageQuality": 91.5, "consistency": null, "agreement": 0.8, "reviewCompletionRate": 1.0}),
    ]);
    assert_eq!(
        (f[0].label.as_str(), figure(f[0].average_quality)),
        ("Annotator 1", "91.5".to_owned())
    );
    assert_eq!(f[0].annotator, None, "a peer has no id");
}

#[test]
fn agreement_over_time_names_peers_only_for_admins() {
    let answer = json!({"items": [
        {"annotator": "ann", "points": [{"weekStart": "2026-11-16", "runs": 1, "agreement": 0.5},
                                        {"weekStart": "2026-11-23", "runs": 2, "agreement": 0.8}]},
        {"annotator": "bea", "points": [{"weekStart": "2026-11-23", "runs": 1, "agreement": 0.6}]},
        {"annotator": "cy", "points": [{"weekStart": "2026-11-23", "runs": 3, "agreement": 1.0}]},
    ]});
    let admin = agreement_series(&answer, "ada", true);
    let labels: Vec<&str> = admin.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["ann", "bea", "cy"]);
    let reviewer = agreement_series(&answer, "bea", false);
    assert_eq!(reviewer.len(), 2);
    assert!(reviewer[0].you && reviewer[0].label == "bea");
    let peers = &reviewer[1];
    assert_eq!(peers.label, "Peers (anonymised mean)");
    assert!(!format!("{peers:?}").contains("ann") && !format!("{peers:?}").contains("cy"));
    // The week of 23 November: ann 0.8 over 2 runs, cy 1.0 over 3.
    assert!((peers.points[1].agreement - 0.92).abs() < 1e-9, "{peers:?}");
    assert_eq!(series_weeks(&reviewer), ["2026-11-16", "2026-11-23"]);
}

#[test]
fn batch_transition_goes_in_one_body_and_refusals_read_per_run() {
    let body = batch_transition_body(ReviewStatus::Approved, &[("r1".into(), 3), ("r2".into(), 5)]);
    assert_eq!(
        body,
        json!({"to": "approved", "items": [{"runId": "r1", "baseVersion": 3},
            {"runId": "r2", "baseVersion": 5}]})
    );
    let answer = json!({"results": [
        {"runId": "r1", "outcome": "ok", "run": {"id": "r1", "status": "approved"}},
        {"runId": "r2", "outcome": "conflict", "problem": {"title": "Conflict",
            "detail": "2 suggestions are pending."}},
    ]});
    let moved = batch_moved(&answer);
    assert!(matches!(&moved[0], BatchMoved::Moved { run_id, .. } if run_id == "r1"));
    match &moved[1] {
        BatchMoved::Refused { run_id, why } => {
            assert_eq!(run_id, "r2");
            assert!(why.contains("suggestions are pending"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}
