//! Annotation for teams (issue 29) over real HTTP on a real database, on SQLite and (with
//! `SYNC_TEST_POSTGRES_URL`) PostgreSQL, as the people of a labelling project would check
//! it: an admin (adam), a reviewer (rita), a qa_manager (quinn) and two annotators (alice,
//! carol). Webhooks go to a real HTTP receiver on a loopback port that checks each
//! delivery's signature and answers 500 once.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use hmac::{Hmac, Mac};
use run_contract::agreement::token_f1;
use serde_json::{Value, json};
use sha2::Sha256;
use support::{Backend, Server};

on_both_backends!(
    overlap_from_assignment_to_approval,
    round_robin_queues_and_next_run,
    passages_survive_unrelated_edits,
    annotators_read_comments_from_review_on,
    approval_waits_for_suggestions_one_run_or_many,
    every_change_is_checked_against_the_role,
    figures_collections_and_anonymised_peers,
    the_audit_log_filters_pages_and_exports,
);

// ------------------------------------------------------------------------------ helpers

fn items(value: &Value) -> Vec<Value> {
    value["items"].as_array().cloned().unwrap_or_default()
}

fn set_overlap(s: &Server, overlap: i64) {
    let version = s.get_json("adam", "/project")["version"].as_i64().unwrap();
    let body = json!({"overlap": overlap, "guidelinesUrl": "https://example.com/CoT_OFFICIAL.md",
        "guidelinesMarkdown": "# Thoughts\nSay what you see."});
    let resp = s.req("adam", "PUT", "/project").if_match(version).json(&body).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
}

/// A run of `steps` steps uploaded by adam.
fn run_with_steps(s: &Server, id: &str, steps: u32) {
    s.create_run("adam", id);
    for i in 0..steps {
        s.create_step("adam", id, i);
    }
}

fn assign(s: &Server, who: &str, run: &str, annotators: &[&str]) -> support::Resp {
    let version = s.get_json(who, &format!("/runs/{run}"))["version"].as_i64().unwrap();
    s.req(who, "PUT", &format!("/runs/{run}/assignees"))
        .if_match(version)
        .json(&json!({"annotators": annotators}))
        .send()
}

fn annotated(thought1: &str, thought2: &str, thought3: &str, target: &str) -> Value {
    json!({"thoughts": {"thought1": thought1, "thought2": thought2, "thought3": thought3},
        "action": {"type": "click", "target": target, "value": null}})
}

fn save_version(s: &Server, who: &str, run: &str, index: u32, body: &Value) {
    let resp = s
        .req(who, "PUT", &format!("/runs/{run}/annotations/me/steps/{index}"))
        .create()
        .json(body)
        .send();
    assert_eq!(resp.status, 201, "{}", resp.text());
}

fn unread(s: &Server, who: &str) -> i64 {
    s.get_json(who, "/users/me/notifications/count")["unread"].as_i64().unwrap()
}

fn audit_actions(s: &Server, query: &str) -> Vec<String> {
    let page = s.get_json("adam", &format!("/audit?limit=200{query}"));
    items(&page).iter().map(|e| e["action"].as_str().unwrap().to_owned()).collect()
}

// ------------------------------------------------------------------------------ scenarios

/// The whole overlap path: two annotators annotate independently, a reviewer sees their
/// agreement, merges step by step, and approves; the history keeps every state.
fn overlap_from_assignment_to_approval(s: &Server) {
    set_overlap(s, 2);
    let project = s.get_json("alice", "/project");
    assert_eq!(project["overlap"], 2);
    assert_eq!(project["guidelinesUrl"], "https://example.com/CoT_OFFICIAL.md");
    run_with_steps(s, "o1", 2);

    // Overlap 2 wants two distinct annotators.
    let one = assign(s, "rita", "o1", &["alice"]);
    assert_eq!(one.problem(422, "validation")["errors"][0]["path"], "/annotators");
    let resp = assign(s, "rita", "o1", &["alice", "carol"]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(items(&resp.json()).len(), 2);
    assert_eq!(unread(s, "alice"), 1, "assigned to you");

    // Both see the run, in their queue.
    for who in ["alice", "carol"] {
        let queue = s.get_json(who, "/users/me/queue");
        assert_eq!(items(&queue)[0]["run"]["id"], "o1", "{who}");
        assert_eq!(s.get_json(who, "/runs/o1")["id"], "o1");
    }
    // The run's own steps are not theirs to edit while in overlap.
    let step = support::step_record("o1", 0, None);
    let resp = s.req("adam", "GET", "/runs/o1/steps/0").send();
    let version = resp.json()["version"].as_i64().unwrap();
    let resp = s.req("alice", "PUT", "/runs/o1/steps/0").if_match(version).json(&step).send();
    resp.problem(404, "not-found");

    // Each writes their own version.
    let a0 = annotated(
        "The kettles page is open.",
        "The steel kettle is listed.",
        "Click the steel kettle.",
        "Steel kettle",
    );
    let c0 = annotated(
        "The kettles page is open.",
        "A steel kettle is listed first.",
        "Click the steel kettle.",
        "Steel kettle",
    );
    let a1 = annotated(
        "Its page shows the price.",
        "The price is 24 pounds.",
        "Answer with the price.",
        "Price",
    );
    let c1 = annotated(
        "The product page is open.",
        "It costs 24 pounds.",
        "Read the price.",
        "Add to basket",
    );
    save_version(s, "alice", "o1", 0, &a0);
    save_version(s, "alice", "o1", 1, &a1);
    save_version(s, "carol", "o1", 0, &c0);
    save_version(s, "carol", "o1", 1, &c1);
    // Nobody reads another annotator's version, before review or after.
    s.req("carol", "GET", "/runs/o1/annotations/alice/steps").send().problem(404, "not-found");
    let sets = s.get_json("carol", "/runs/o1/annotations");
    assert_eq!(items(&sets).len(), 1);
    assert_eq!(items(&sets)[0]["annotator"], "carol");
    // Agreement is the reviewers'.
    s.req("alice", "GET", "/runs/o1/agreement").send().problem(403, "forbidden");

    // Handing in: the first leaves the run a draft, the second sends it to review. Each
    // hands in the tags they gave the run in their version.
    let submit = |who: &str, tags: Value| {
        s.req(who, "POST", "/runs/o1/annotations/me/submit").json(&json!({"tags": tags})).send()
    };
    s.req("alice", "POST", "/runs/o1/annotations/me/submit")
        .json(&json!({"tags": "hard"}))
        .send()
        .problem(422, "validation");
    assert_eq!(submit("alice", json!(["hard"])).status, 200);
    assert!(items(&s.get_json("alice", "/users/me/queue")).is_empty(), "handed in");
    assert_eq!(s.get_json("rita", "/runs/o1")["status"], "draft");
    submit("alice", json!(["hard"])).problem(409, "not-pending");
    assert_eq!(submit("carol", json!(["kettle", "hard"])).status, 200);
    let sets = s.get_json("rita", "/runs/o1/annotations");
    let alice = items(&sets).iter().find(|v| v["annotator"] == "alice").unwrap().clone();
    assert_eq!(alice["tags"], json!(["hard"]));
    assert_eq!(s.get_json("rita", "/runs/o1")["status"], "in-review");
    assert!(unread(s, "rita") >= 1, "review requested");

    // The reviewer reads the agreement, computed by the shared maths.
    let agreement = s.get_json("rita", "/runs/o1/agreement");
    assert_eq!(agreement["annotators"], json!(["alice", "carol"]));
    let steps = agreement["steps"].as_array().unwrap();
    assert_eq!(steps[0]["actionEqual"], true);
    assert_eq!(steps[1]["actionEqual"], false);
    let t2 = token_f1("The steel kettle is listed.", "A steel kettle is listed first.");
    assert!((steps[0]["thoughts"]["thought2"].as_f64().unwrap() - t2).abs() < 1e-9);
    assert_eq!(steps[0]["thoughts"]["thought1"], 1.0);
    assert_eq!(steps[1]["versions"]["carol"]["action"]["target"], "Add to basket");
    let run_score = agreement["score"].as_f64().unwrap();
    let mean = (steps[0]["score"].as_f64().unwrap() + steps[1]["score"].as_f64().unwrap()) / 2.0;
    assert!((run_score - mean).abs() < 1e-9);

    // Merge: alice's version, with carol's step 1.
    let version = s.get_json("rita", "/runs/o1")["version"].as_i64().unwrap();
    let merge =
        json!({"pick": "alice", "steps": [{"index": 1, "from": "carol"}], "note": "best of both"});
    let resp = s.req("rita", "POST", "/runs/o1/resolve").if_match(version).json(&merge).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let step0 = s.get_json("rita", "/runs/o1/steps/0");
    let step1 = s.get_json("rita", "/runs/o1/steps/1");
    assert_eq!(step0["thoughts"]["thought2"], "The steel kettle is listed.");
    assert_eq!(step1["thoughts"]["thought2"], "It costs 24 pounds.");
    assert_eq!(step1["action"]["target"], "Add to basket");
    let tags = s.get_json("rita", "/runs/o1")["tags"].clone();
    for tag in ["hard", "kettle"] {
        assert!(tags.as_array().unwrap().contains(&json!(tag)), "{tag} in {tags}");
    }
    let history = s.get_json("rita", "/runs/o1/versions");
    assert_eq!(items(&history)[0]["kind"], "agreement-resolved");
    // The captured text is still in the history.
    let before = s.get_json("rita", &format!("/runs/o1/versions/{version}/steps/1"));
    assert_eq!(before["thoughts"]["thought2"], "The kettles are under Kitchen.");

    // Approve; the annotators hear of it.
    let (alice_before, carol_before) = (unread(s, "alice"), unread(s, "carol"));
    assert_eq!(s.transition("rita", "o1", "approved").status, 200);
    assert_eq!(unread(s, "alice"), alice_before + 1);
    assert_eq!(unread(s, "carol"), carol_before + 1);
    let news = s.get_json("alice", "/users/me/notifications?unread=true");
    let kinds: Vec<String> =
        items(&news).iter().map(|n| n["kind"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds, ["run-approved", "assigned"]);
    let first = items(&news)[0]["id"].as_str().unwrap().to_owned();
    let read = s.req("alice", "POST", &format!("/users/me/notifications/{first}/read")).send();
    assert_eq!(read.status, 200);
    assert!(read.json()["readAt"].is_string());
    assert_eq!(unread(s, "alice"), alice_before);
    let all = s.req("alice", "POST", "/users/me/notifications:readAll").send();
    assert_eq!(all.json()["marked"], alice_before);
    assert_eq!(unread(s, "alice"), 0);
    s.req("carol", "POST", &format!("/users/me/notifications/{first}/read"))
        .send()
        .problem(404, "not-found");

    // Every step of it is in the audit log.
    let actions = audit_actions(s, "&runId=o1");
    for action in [
        "assignment.changed",
        "annotation.saved",
        "annotation.submitted",
        "status-changed",
        "agreement-resolved",
    ] {
        assert!(actions.iter().any(|a| a == action), "{action} in {actions:?}");
    }
}

/// Round-robin over a `GET /runs` filter, "My queue" in order, and the next run after one.
fn round_robin_queues_and_next_run(s: &Server) {
    for id in ["q1", "q2", "q3", "q4"] {
        s.create_run("adam", id);
    }
    // q4 is tagged elsewhere: the filter leaves it out.
    let mut other = support::run_record("q4");
    other["tags"] = json!(["other"]);
    let version = s.get_json("adam", "/runs/q4")["version"].as_i64().unwrap();
    assert_eq!(s.req("adam", "PUT", "/runs/q4").if_match(version).json(&other).send().status, 200);
    let body =
        json!({"filter": {"status": ["draft"], "q": "kettle"}, "annotators": ["alice", "carol"]});
    let body_tagless =
        json!({"filter": {"status": ["draft"], "tag": ["other"]}, "annotators": ["alice"]});
    s.req("alice", "POST", "/assignments:roundRobin").json(&body).send().problem(403, "forbidden");
    let bad = json!({"filter": {}, "annotators": ["rita"]});
    let resp = s.req("rita", "POST", "/assignments:roundRobin").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/annotators/0");
    let resp = s.req("rita", "POST", "/assignments:roundRobin").json(&body_tagless).send();
    assert_eq!(resp.json()["assigned"], json!([{"runId": "q4", "annotators": ["alice"]}]));
    let resp = s.req("rita", "POST", "/assignments:roundRobin").json(&body).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let result = resp.json();
    assert_eq!(
        result["assigned"],
        json!([{"runId": "q1", "annotators": ["alice"]}, {"runId": "q2", "annotators": ["carol"]},
            {"runId": "q3", "annotators": ["alice"]}])
    );
    assert_eq!(result["skipped"], json!([{"runId": "q4", "reason": "already assigned"}]));
    // Overlap 1: the assignee is the run's annotator, a run version of its own.
    assert_eq!(s.get_json("rita", "/runs/q1")["annotator"], "alice");
    assert_eq!(items(&s.get_json("rita", "/runs/q1/versions"))[0]["kind"], "annotator-assigned");

    let queue = s.get_json("alice", "/users/me/queue?limit=2");
    let ids: Vec<String> =
        items(&queue).iter().map(|i| i["run"]["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, ["q4", "q1"]);
    let cursor = queue["nextCursor"].as_str().unwrap();
    let rest = s.get_json("alice", &format!("/users/me/queue?limit=2&cursor={cursor}"));
    assert_eq!(items(&rest)[0]["run"]["id"], "q3");
    assert_eq!(s.get_json("alice", "/users/me/queue/next")["item"]["run"]["id"], "q4");
    assert_eq!(s.get_json("alice", "/users/me/queue/next?after=q1")["item"]["run"]["id"], "q3");
    assert_eq!(s.get_json("alice", "/users/me/queue/next?after=q3")["item"], Value::Null);

    // Submitting takes a run off the queue; sending it back puts it on again.
    assert_eq!(s.transition("alice", "q1", "in-review").status, 200);
    assert_eq!(s.get_json("alice", "/users/me/queue/next?after=q4")["item"]["run"]["id"], "q3");
    assert_eq!(s.transition("rita", "q1", "draft").status, 200);
    assert_eq!(s.get_json("alice", "/users/me/queue/next?after=q4")["item"]["run"]["id"], "q1");

    // Reassigning by hand: carol gets q3, alice loses it; both kept in the log.
    assert_eq!(assign(s, "quinn", "q3", &["carol"]).status, 200);
    s.req("alice", "GET", "/runs/q3").send().problem(404, "not-found");
    assert_eq!(s.get_json("carol", "/runs/q3")["annotator"], "carol");
    let log = s.get_json("adam", "/audit?runId=q3&action=assignment.changed");
    let entries = items(&log);
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (entries[0]["before"]["annotators"].clone(), entries[0]["after"]["annotators"].clone()),
        (json!(["alice"]), json!(["carol"]))
    );
    assert_eq!(entries[0]["user"], "quinn");
}

/// A comment on a passage follows the passage through an unrelated edit and is flagged when
/// the passage goes; a suggestion on a passage replaces that range only.
fn passages_survive_unrelated_edits(s: &Server) {
    s.create_run("alice", "p1");
    s.create_step("alice", "p1", 0);
    // "The kettles are under Kitchen." — "under Kitchen" is characters 16..29.
    let thread = json!({"text": "Which shelf?", "kind": "question", "anchor": {"stepIndex": 0,
        "field": "thoughts.thought2", "range": {"start": 16, "end": 29}, "quote": "under Kitchen"}});
    let resp = s.req("rita", "POST", "/runs/p1/comments").json(&thread).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    let comment = resp.json();
    assert_eq!(comment["anchor"]["prefix"], "The kettles are ");
    assert_eq!(comment["outdated"], false);
    let wrong = json!({"text": "x", "kind": "question", "anchor": {"stepIndex": 0,
        "field": "thoughts.thought2", "range": {"start": 0, "end": 3}, "quote": "Kettles"}});
    let resp = s.req("rita", "POST", "/runs/p1/comments").json(&wrong).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/anchor/quote");

    // A passage suggestion on thought3: "the price" → "the price and stock".
    let step = s.get_json("alice", "/runs/p1/steps/0");
    let thought3 = step["thoughts"]["thought3"].as_str().unwrap().to_owned();
    let at = thought3.find("the price").unwrap();
    let start = thought3[..at].chars().count();
    let suggestion = json!({"stepIndex": 0, "field": "thoughts.thought3", "baseVersion": 2,
        "range": {"start": start, "end": start + 9}, "quote": "the price", "proposed": "the price and stock"});
    let resp = s.req("rita", "POST", "/runs/p1/suggestions").json(&suggestion).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    let suggested = resp.json();
    assert_eq!(suggested["passage"]["quote"], "the price");

    // An unrelated edit: text added before both passages.
    let mut edited = support::step_record("p1", 0, None);
    edited["thoughts"]["thought2"] = json!("Looking at the menu, the kettles are under Kitchen.");
    edited["thoughts"]["thought3"] = json!(format!("First, {}", thought3));
    let resp = s.req("alice", "PUT", "/runs/p1/steps/0").if_match(2).json(&edited).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let threads = s.get_json("rita", "/runs/p1/comments");
    let moved = &items(&threads)[0];
    assert_eq!(moved["outdated"], false);
    assert_eq!(moved["anchor"]["range"], json!({"start": 37, "end": 50}));
    assert_eq!(moved["anchor"]["quote"], "under Kitchen");

    // Accepting the suggestion changes that range and keeps the edit around it.
    let resp = s
        .req(
            "alice",
            "POST",
            &format!("/runs/p1/suggestions/{}/accept", suggested["id"].as_str().unwrap()),
        )
        .if_match(3)
        .send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let after = s.get_json("alice", "/runs/p1/steps/0")["thoughts"]["thought3"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(after, format!("First, {}", thought3.replace("the price", "the price and stock")));

    // The commented passage deleted: the comment is outdated, its last range kept.
    edited["thoughts"]["thought2"] = json!("The kettles sit on the top shelf.");
    edited["thoughts"]["thought3"] = json!(after);
    let resp = s.req("alice", "PUT", "/runs/p1/steps/0").if_match(4).json(&edited).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let gone = &items(&s.get_json("rita", "/runs/p1/comments"))[0];
    assert_eq!(gone["outdated"], true);
    assert_eq!(gone["anchor"]["quote"], "under Kitchen");

    // A passage suggestion whose passage is gone cannot be accepted.
    let step = s.get_json("alice", "/runs/p1/steps/0");
    let late = json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": step["version"],
        "range": {"start": 4, "end": 11}, "quote": "kettles", "proposed": "steel kettles"});
    let late = s.req("rita", "POST", "/runs/p1/suggestions").json(&late).send().json();
    edited["thoughts"]["thought2"] = json!("Nothing on the shelf.");
    let version = step["version"].as_i64().unwrap();
    assert_eq!(
        s.req("alice", "PUT", "/runs/p1/steps/0").if_match(version).json(&edited).send().status,
        200
    );
    let listed = s.get_json("alice", "/runs/p1/suggestions?state=pending");
    assert_eq!(items(&listed)[0]["outdated"], true);
    let resp = s
        .req(
            "alice",
            "POST",
            &format!("/runs/p1/suggestions/{}/accept", late["id"].as_str().unwrap()),
        )
        .if_match(version + 1)
        .send();
    resp.problem(409, "conflict");
}

/// Seed §6: an annotator does not read others' comments on a run until it has gone to
/// review; from then on, the whole conversation (also after it is sent back).
fn annotators_read_comments_from_review_on(s: &Server) {
    s.create_run("alice", "c1");
    s.create_step("alice", "c1", 0);
    let note = |who: &str, text: &str| {
        let body = json!({"text": text, "kind": "question", "anchor": {"stepIndex": 0}});
        let resp = s.req(who, "POST", "/runs/c1/comments").json(&body).send();
        assert_eq!(resp.status, 201, "{}", resp.text());
        resp.json()
    };
    let hers = note("alice", "Is step 0 right?");
    let rita = note("rita", "Early remark.");
    let seen = |who: &str| -> Vec<String> {
        items(&s.get_json(who, "/runs/c1/comments"))
            .iter()
            .map(|c| c["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(seen("alice"), ["Is step 0 right?"]);
    assert_eq!(seen("rita").len(), 2);
    let reply = json!({"text": "Sure?", "parentId": rita["id"]});
    s.req("alice", "POST", "/runs/c1/comments").json(&reply).send().problem(422, "validation");
    // Replying in her own thread is fine, and notifies nobody (it is hers).
    let own = json!({"text": "Answering myself.", "parentId": hers["id"]});
    assert_eq!(s.req("alice", "POST", "/runs/c1/comments").json(&own).send().status, 201);

    assert_eq!(s.transition("alice", "c1", "in-review").status, 200);
    assert_eq!(seen("alice").len(), 3);
    let before = unread(s, "rita");
    assert_eq!(s.req("alice", "POST", "/runs/c1/comments").json(&reply).send().status, 201);
    assert_eq!(unread(s, "rita"), before + 1, "a reply to your comment");
    assert_eq!(s.get_json("alice", "/runs/c1/metrics")["reviewRounds"], 1);
    // Sent back to rework: still readable.
    assert_eq!(s.transition("rita", "c1", "draft").status, 200);
    assert_eq!(seen("alice").len(), 4);
}

/// Approval waits for pending suggestions, for one run and for a batch.
fn approval_waits_for_suggestions_one_run_or_many(s: &Server) {
    for id in ["b1", "b2", "b3"] {
        s.create_run("alice", id);
        s.create_step("alice", id, 0);
        assert_eq!(s.transition("alice", id, "in-review").status, 200);
    }
    let suggestion = json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "The kettles are under Kitchen > Appliances."});
    assert_eq!(s.req("rita", "POST", "/runs/b2/suggestions").json(&suggestion).send().status, 201);
    s.transition("rita", "b2", "approved").problem(409, "pending-suggestions");
    let version =
        |id: &str| s.get_json("rita", &format!("/runs/{id}"))["version"].as_i64().unwrap();
    let batch = json!({"to": "approved", "note": "batch review", "items": [
        {"runId": "b1", "baseVersion": version("b1")},
        {"runId": "b2", "baseVersion": version("b2")},
        {"runId": "b3", "baseVersion": 1},
        {"runId": "nope", "baseVersion": 1},
    ]});
    s.req("alice", "POST", "/runs:batchTransition").json(&batch).send();
    let resp = s.req("rita", "POST", "/runs:batchTransition").json(&batch).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let results = resp.json()["results"].as_array().unwrap().clone();
    let outcomes: Vec<&str> = results.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "conflict", "conflict", "rejected"]);
    assert_eq!(results[1]["problem"]["type"], "urn:alphascout:problem:pending-suggestions");
    assert_eq!(results[3]["problem"]["status"], 404);
    assert_eq!(results[0]["run"]["status"], "approved");
    assert_eq!(s.get_json("rita", "/runs/b2")["status"], "in-review");
    // An annotator cannot approve, alone or in a batch.
    let mine = json!({"to": "approved", "items": [{"runId": "b3", "baseVersion": version("b3")}]});
    let resp = s.req("alice", "POST", "/runs:batchTransition").json(&mine).send();
    assert_eq!(resp.json()["results"][0]["problem"]["status"], 403);
}

/// Every new write refuses the roles that may not make it.
fn every_change_is_checked_against_the_role(s: &Server) {
    run_with_steps(s, "r1", 1);
    let forbidden = |who: &str, method: &str, path: &str, body: Value, version: Option<i64>| {
        let mut req = s.req(who, method, path).json(&body);
        if let Some(v) = version {
            req = req.if_match(v);
        }
        let resp = req.send();
        assert_eq!(resp.status, 403, "{who} {method} {path}: {}", resp.text());
    };
    for who in ["alice", "rita", "quinn"] {
        forbidden(who, "PUT", "/project", json!({"overlap": 2}), Some(0));
        forbidden(
            who,
            "POST",
            "/webhooks",
            json!({"url": "https://example.com/h", "events": ["run.approved"]}),
            None,
        );
        assert_eq!(s.req(who, "GET", "/audit").send().status, 403);
        assert_eq!(s.req(who, "GET", "/audit:export").send().status, 403);
        assert_eq!(s.req(who, "GET", "/webhooks").send().status, 403);
    }
    forbidden("alice", "PUT", "/runs/r1/assignees", json!({"annotators": ["alice"]}), Some(1));
    forbidden("alice", "POST", "/collections", json!({"name": "mine"}), None);
    assert_eq!(s.req("alice", "GET", "/collections").send().status, 403);
    // An annotator's version is written by that annotator only, and only when assigned.
    let body = annotated("a", "b", "c", "d");
    let resp =
        s.req("rita", "PUT", "/runs/r1/annotations/alice/steps/0").create().json(&body).send();
    assert_eq!(resp.status, 403, "{}", resp.text());
    let resp = s.req("adam", "PUT", "/runs/r1/annotations/me/steps/0").create().json(&body).send();
    assert_eq!(resp.status, 403, "{}", resp.text());
    // Reviewers resolve; annotators do not.
    s.req("alice", "POST", "/runs/r1/resolve")
        .if_match(1)
        .json(&json!({"pick": "alice"}))
        .send()
        .problem(403, "forbidden");
    // Quality is set by whoever edits the run; a reviewer reports time only.
    assert_eq!(
        s.req("rita", "POST", "/runs/r1/metrics").json(&json!({"quality": 90})).send().status,
        403
    );
    assert_eq!(
        s.req("rita", "POST", "/runs/r1/metrics").json(&json!({"addTimeMs": 1000})).send().status,
        200
    );
    // Reviewers do not delete collections; qa_managers do.
    let c = s.req("rita", "POST", "/collections").json(&json!({"name": "set"})).send().json();
    let path = format!("/collections/{}", c["id"].as_str().unwrap());
    assert_eq!(s.req("rita", "DELETE", &path).if_match(1).send().status, 403);
    assert_eq!(s.req("quinn", "DELETE", &path).if_match(1).send().status, 204);
}

/// The figures the page kept alone now come from the server: quality, time, review rounds,
/// issues, collections with metadata, and per-annotator figures with anonymised peers.
fn figures_collections_and_anonymised_peers(s: &Server) {
    for (who, id, quality) in [("alice", "f1", 80), ("alice", "f2", 90), ("carol", "f3", 60)] {
        s.create_run(who, id);
        s.create_step(who, id, 0);
        let report = json!({"quality": quality, "addTimeMs": 60_000});
        let resp = s
            .req(who, "POST", &format!("/runs/{id}/metrics"))
            .header("Idempotency-Key", &format!("metrics-{id}-1"))
            .json(&report)
            .send();
        assert_eq!(resp.status, 200, "{}", resp.text());
        // A retried report is not added twice.
        s.req(who, "POST", &format!("/runs/{id}/metrics"))
            .header("Idempotency-Key", &format!("metrics-{id}-1"))
            .json(&report)
            .send();
    }
    let mut flagged = support::step_record("f1", 0, None);
    flagged["issues"] = json!([{"type": "logic", "severity": "minor", "description": "Skips a step.", "suggestion": null}]);
    assert_eq!(
        s.req("alice", "PUT", "/runs/f1/steps/0").if_match(2).json(&flagged).send().status,
        200
    );
    assert_eq!(s.transition("alice", "f1", "in-review").status, 200);
    assert_eq!(s.transition("rita", "f1", "approved").status, 200);
    assert_eq!(s.transition("alice", "f2", "in-review").status, 200);
    let metrics = s.get_json("alice", "/runs/f1/metrics");
    assert_eq!(metrics["quality"], 80);
    assert_eq!(metrics["timeSpentMs"], 60_000);
    assert_eq!(metrics["mine"], 60_000);
    assert_eq!(metrics["reviewRounds"], 1);
    assert_eq!(metrics["issues"], json!({"flagged": 1, "resolved": 0, "open": 1}));

    let created = s.req("rita", "POST", "/collections")
        .json(&json!({"name": "Kettles", "description": "Approved kettle runs", "runIds": ["f1", "f3"]}))
        .send();
    assert_eq!(created.status, 201, "{}", created.text());
    let collection = created.json();
    let meta = &collection["metadata"];
    assert_eq!((meta["runs"].as_i64(), meta["steps"].as_i64()), (Some(2), Some(2)));
    assert_eq!(meta["averageQuality"], 70.0);
    assert_eq!(meta["domains"], json!(["shop.example"]));
    assert_eq!(meta["annotators"], json!(["alice", "carol"]));
    assert_eq!(meta["averageTimePerStepMs"], 60_000.0);
    let path = format!("/collections/{}", collection["id"].as_str().unwrap());
    let dup = s.req("quinn", "POST", "/collections").json(&json!({"name": "Kettles"})).send();
    dup.problem(409, "already-exists");
    let edit = json!({"addRuns": ["f2"], "removeRuns": ["f3"], "exported": true});
    let resp = s.req("quinn", "PATCH", &path).if_match(1).json(&edit).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["runIds"], json!(["f1", "f2"]));
    assert!(resp.json()["metadata"]["lastExportedAt"].is_string());
    s.req("quinn", "PATCH", &path).if_match(1).json(&edit).send().problem(409, "conflict");
    let bad = s.req("quinn", "PATCH", &path).if_match(2).json(&json!({"addRuns": ["nope"]})).send();
    assert_eq!(bad.problem(422, "validation")["errors"][0]["path"], "/addRuns/0");
    assert_eq!(items(&s.get_json("rita", "/collections")).len(), 1);

    // Per-annotator figures: names for the admin only.
    let admin = s.get_json("adam", "/analytics/annotators");
    let alice = items(&admin).into_iter().find(|r| r["annotator"] == "alice").unwrap();
    assert_eq!(alice["averageQuality"], 85.0);
    assert_eq!(alice["consistency"], 95.0);
    assert_eq!(alice["reviewCompletionRate"], 0.5, "f1 approved, f2 still in review");
    let carol_view = s.get_json("carol", "/analytics/annotators");
    let rows = items(&carol_view);
    let own: Vec<&Value> = rows.iter().filter(|r| r["you"] == true).collect();
    assert_eq!(own.len(), 1);
    assert_eq!(own[0]["label"], "carol");
    for peer in rows.iter().filter(|r| r["you"] == false) {
        assert_eq!(peer["annotator"], Value::Null);
        assert!(peer["label"].as_str().unwrap().starts_with("Annotator "), "{peer}");
    }
    assert!(!carol_view.to_string().contains("alice"), "no peer's name: {carol_view}");
    let reviewer_view = s.get_json("rita", "/analytics/annotators");
    assert!(!reviewer_view.to_string().contains("alice"));
    assert_eq!(s.req("carol", "GET", "/analytics/agreement?annotator=alice").send().status, 403);
}

/// The audit log keeps who did what to which run, filters and pages it, exports it as JSON
/// Lines, and no code path changes or deletes an entry.
fn the_audit_log_filters_pages_and_exports(s: &Server) {
    s.create_run("alice", "a1");
    s.create_step("alice", "a1", 0);
    assert_eq!(s.transition("alice", "a1", "in-review").status, 200);
    let log = s.get_json("adam", "/audit?runId=a1");
    let entries = items(&log);
    let actions: Vec<&str> = entries.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["status-changed", "step-created", "run-created"]);
    assert_eq!(entries[0]["user"], "alice");
    assert_eq!(
        (entries[0]["before"]["version"].as_i64(), entries[0]["after"]["version"].as_i64()),
        (Some(2), Some(3))
    );
    assert_eq!(entries[1]["target"], "step 0");
    let page = s.get_json("adam", "/audit?runId=a1&limit=2");
    let cursor = page["nextCursor"].as_str().unwrap();
    let rest = s.get_json("adam", &format!("/audit?runId=a1&limit=2&cursor={cursor}"));
    assert_eq!(items(&rest)[0]["action"], "run-created");
    s.req("adam", "GET", &format!("/audit?runId=a2&cursor={cursor}"))
        .send()
        .problem(400, "bad-request");
    assert_eq!(audit_actions(s, "&user=alice&action=step-created"), ["step-created"]);
    let later = s.get_json("adam", "/audit?since=2999-01-01T00:00:00Z");
    assert!(items(&later).is_empty());
    let export = s.req("adam", "GET", "/audit:export?runId=a1").send();
    assert_eq!(export.status, 200);
    assert_eq!(export.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> =
        export.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["action"], "run-created", "oldest first");
}

// ------------------------------------------------------------------------------ webhooks

/// One delivery as the receiver saw it.
struct Delivery {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Delivery {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A real HTTP receiver on a loopback port: answers the first request 500 and the rest 200,
/// and hands every request to the test.
fn receiver() -> (String, mpsc::Receiver<Delivery>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/in", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                let trimmed = line.trim_end();
                if trimmed.is_empty() {
                    break;
                }
                let (name, value) = trimmed.split_once(':').unwrap();
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            let length = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .map_or(0, |(_, v)| v.parse().unwrap());
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let status = if n == 0 { "500 Internal Server Error" } else { "200 OK" };
            let answer =
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            stream.write_all(answer.as_bytes()).unwrap();
            if tx.send(Delivery { headers, body }).is_err() {
                return;
            }
        }
    });
    (url, rx)
}

/// Waits for the receiver's next request (the bound is only for a broken server).
fn next(rx: &mpsc::Receiver<Delivery>) -> Delivery {
    rx.recv_timeout(Duration::from_secs(60)).expect("a delivery")
}

fn verify(secret: &str, delivery: &Delivery) {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&delivery.body);
    let expected: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        delivery.header("X-AlphaScout-Signature"),
        Some(format!("sha256={expected}").as_str())
    );
}

fn quick_retries() -> sync_server::Config {
    sync_server::Config {
        webhook_base_delay: Duration::from_millis(50),
        webhook_poll: Duration::from_millis(100),
        ..sync_server::Config::default()
    }
}

/// Webhooks on both databases, with retries a test can wait for (`webhook` then the
/// backend, so the gate's PostgreSQL run finds them under `postgres::`).
mod webhook {
    pub mod sqlite {
        #[test]
        fn signed_retried_listed_and_paused() {
            let config = super::super::quick_retries();
            let server = super::super::Server::start_with(super::super::Backend::Sqlite, config);
            super::super::webhooks(&server.unwrap());
        }
    }

    pub mod postgres {
        #[test]
        fn signed_retried_listed_and_paused() {
            let config = super::super::quick_retries();
            if let Some(server) =
                super::super::Server::start_with(super::super::Backend::Postgres, config)
            {
                super::super::webhooks(&server);
            }
        }
    }
}

fn webhooks(s: &Server) {
    let (url, rx) = receiver();
    let bad = json!({"url": "http://hooks.example.com/in", "events": ["run.approved"]});
    let resp = s.req("adam", "POST", "/webhooks").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/url");
    let hook = json!({"url": url, "events": ["run.submitted", "run.approved", "comment.added"],
        "description": "the test's receiver"});
    let resp = s.req("adam", "POST", "/webhooks").json(&hook).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let created = resp.json();
    let secret = created["secret"].as_str().unwrap().to_owned();
    let id = created["id"].as_str().unwrap().to_owned();

    // run.submitted: refused once with 500, delivered on the retry, signed both times.
    s.create_run("alice", "w1");
    assert_eq!(s.transition("alice", "w1", "in-review").status, 200);
    let first = next(&rx);
    let retry = next(&rx);
    for delivery in [&first, &retry] {
        verify(&secret, delivery);
        assert_eq!(delivery.header("X-AlphaScout-Event"), Some("run.submitted"));
    }
    assert_eq!(first.body, retry.body, "the same event, byte for byte");
    assert_eq!(first.header("X-AlphaScout-Delivery"), retry.header("X-AlphaScout-Delivery"));
    let event: Value = serde_json::from_slice(&first.body).unwrap();
    assert_eq!(
        (event["event"].as_str(), event["runId"].as_str()),
        (Some("run.submitted"), Some("w1"))
    );
    assert_eq!(event["data"]["to"], "in-review");
    assert_eq!(first.header("X-AlphaScout-Delivery"), event["id"].as_str());
    assert!(first.header("X-AlphaScout-Timestamp").unwrap().parse::<i64>().is_ok());

    // Listed per hook with its status, attempts and last answer.
    let path = format!("/webhooks/{id}/deliveries");
    // The outcome is recorded right after the receiver answers: wait for it (bounded).
    let mut listed = s.get_json("adam", &path);
    for _ in 0..600 {
        if items(&listed)[0]["status"] != "pending" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        listed = s.get_json("adam", &path);
    }
    let d = &items(&listed)[0];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_i64(), d["lastStatusCode"].as_i64()),
        (Some("delivered"), Some(2), Some(200))
    );

    // Paused: events wait as pending; resumed: they go.
    let resp =
        s.req("adam", "PATCH", &format!("/webhooks/{id}")).json(&json!({"paused": true})).send();
    assert_eq!(resp.json()["paused"], true);
    let comment =
        json!({"text": "Looks right.", "kind": "approval", "anchor": {"stepIndex": null}});
    assert_eq!(s.req("rita", "POST", "/runs/w1/comments").json(&comment).send().status, 201);
    let waiting = items(&s.get_json("adam", &path));
    assert_eq!(
        (waiting[0]["status"].as_str(), waiting[0]["attempts"].as_i64()),
        (Some("pending"), Some(0))
    );
    s.req("adam", "PATCH", &format!("/webhooks/{id}")).json(&json!({"paused": false})).send();
    let resumed = next(&rx);
    verify(&secret, &resumed);
    assert_eq!(resumed.header("X-AlphaScout-Event"), Some("comment.added"));

    // The secret is in no list, no hook, and not in the audit log.
    let listed = s.req("adam", "GET", "/webhooks").send().text();
    let one = s.req("adam", "GET", &format!("/webhooks/{id}")).send().text();
    let audit = s.req("adam", "GET", "/audit:export").send().text();
    for text in [&listed, &one, &audit] {
        assert!(!text.contains(&secret), "{text}");
    }
    assert!(
        audit.contains("webhook.created")
            && audit.contains("webhook.paused")
            && audit.contains("webhook.resumed")
    );
    let deleted = s.req("adam", "DELETE", &format!("/webhooks/{id}")).send();
    assert_eq!(deleted.status, 204);
}

/// No code path updates or deletes an audit entry: the only statements that name the table
/// insert into it or read it.
#[test]
fn the_audit_log_is_append_only_in_the_source() {
    let mut sources = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    for (path, text) in &sources {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ").to_uppercase();
        for forbidden in [
            "UPDATE AUDIT_LOG",
            "DELETE FROM AUDIT_LOG",
            "DROP TABLE AUDIT_LOG",
            "TRUNCATE AUDIT_LOG",
        ] {
            assert!(!flat.contains(forbidden), "{}: {forbidden}", path.display());
        }
    }
    let inserts = sources.iter().filter(|(_, t)| t.contains("INSERT INTO audit_log")).count();
    assert_eq!(inserts, 1, "one writer: audit::record");
}
