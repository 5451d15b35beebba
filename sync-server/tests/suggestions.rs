//! Suggestions over real HTTP on a real database, on SQLite and (with
//! `SYNC_TEST_POSTGRES_URL`) PostgreSQL: a reviewer proposes, the run's annotator or a
//! manager accepts (a versioned step save) or rejects, its author may withdraw, and approval
//! waits until none is pending.

mod support;

use serde_json::{Value, json};
use support::Server;

on_both_backends!(
    suggest_accept_reject_and_withdraw,
    only_the_right_roles_suggest_and_decide,
    stale_suggestions_and_accepts_conflict,
    bad_suggestions_are_refused_with_paths,
    approval_waits_for_pending_suggestions,
);

/// Posts a suggestion as `user` and returns the answer.
fn suggest(s: &Server, user: &str, run: &str, body: Value) -> support::Resp {
    s.req(user, "POST", &format!("/runs/{run}/suggestions")).json(&body).send()
}

/// Posts a suggestion that must be created, and returns it.
fn suggested(s: &Server, user: &str, run: &str, body: Value) -> Value {
    let resp = suggest(s, user, run, body);
    assert_eq!(resp.status, 201, "{}", resp.text());
    resp.json()
}

fn decide(s: &Server, user: &str, run: &str, id: &str, verb: &str) -> support::Req {
    s.req(user, "POST", &format!("/runs/{run}/suggestions/{id}/{verb}"))
}

fn id(value: &Value) -> &str {
    value["id"].as_str().unwrap()
}

fn suggest_accept_reject_and_withdraw(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0); // run version 2
    s.create_step("alice", "r1", 1); // run version 3

    // A reviewer proposes a new thought2 for step 0, against the version she read.
    let body = json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "The kettles are listed under Kitchen > Appliances.", "note": "More precise."});
    let created = suggested(s, "rita", "r1", body);
    assert_eq!(created["state"], "pending");
    assert_eq!(created["author"], "rita");
    assert_eq!(created["original"], "The kettles are under Kitchen.");
    assert_eq!(created["outdated"], false);
    assert_eq!(created["appliedVersion"], Value::Null);
    let first = id(&created).to_owned();

    // The counters show it; nothing in the content changed.
    let run = s.get_json("alice", "/runs/r1");
    assert_eq!((run["pendingSuggestions"].as_i64(), run["version"].as_i64()), (Some(1), Some(3)));
    assert_eq!(s.get_json("alice", "/runs/r1/steps/0")["pendingSuggestions"], 1);
    assert_eq!(s.get_json("alice", "/runs/r1/steps/1")["pendingSuggestions"], 0);
    let steps = s.get_json("alice", "/runs/r1/steps");
    assert_eq!(steps["items"][0]["pendingSuggestions"], 1);
    assert_eq!(s.get_json("alice", "/runs?limit=1")["items"][0]["pendingSuggestions"], 1);
    let listed = s.get_json("alice", "/runs/r1/suggestions?state=pending");
    assert_eq!(listed["items"], json!([created]));

    // The annotator accepts, looking at step 0 as it is: one step save, by her.
    let resp = decide(s, "alice", "r1", &first, "accept").if_match(2).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("etag"), Some("\"4\""));
    let result = resp.json();
    assert_eq!(result["suggestion"]["state"], "accepted");
    assert_eq!(result["suggestion"]["decidedBy"], "alice");
    assert_eq!(result["suggestion"]["appliedVersion"], 4);
    assert_eq!(result["step"]["version"], 4);
    assert_eq!(result["step"]["lastEditedBy"], "alice");
    assert_eq!(result["step"]["pendingSuggestions"], 0);
    let step = s.get_json("rita", "/runs/r1/steps/0");
    assert_eq!(step["thoughts"]["thought2"], "The kettles are listed under Kitchen > Appliances.");
    assert_eq!(step["thoughts"]["thought1"], "Step 0: the shop's front page is open.");

    // The history records it like any save: who, what, and which suggestion.
    let entry = &s.get_json("rita", "/runs/r1/versions?limit=1")["items"][0];
    assert_eq!(entry["version"], 4);
    assert_eq!(entry["kind"], "suggestion-accepted");
    assert_eq!(entry["by"], "alice");
    assert_eq!(entry["stepIndex"], 0);
    assert_eq!(entry["suggestionId"], first.as_str());
    assert_eq!(entry["changes"], json!([{"path": "steps.0.thoughts.thought2", "op": "replace"}]));
    let diff = s.get_json("rita", "/runs/r1/diff?from=3&to=4");
    let changes = diff["changes"].as_array().unwrap();
    let thought2 = changes.iter().find(|c| c["path"] == "steps.0.thoughts.thought2").unwrap();
    assert_eq!(thought2["before"], "The kettles are under Kitchen.");
    assert_eq!(s.get_json("rita", "/runs/r1")["pendingSuggestions"], 0);

    // Deciding twice is a conflict carrying the suggestion as it is.
    let resp = decide(s, "alice", "r1", &first, "accept").if_match(4).send();
    let problem = resp.problem(409, "not-pending");
    assert_eq!(
        (problem["resource"].as_str(), problem["current"]["state"].as_str()),
        (Some("suggestion"), Some("accepted"))
    );
    decide(s, "alice", "r1", &first, "reject").send().problem(409, "not-pending");

    // Rejecting changes no content and adds no version.
    let body = json!({"stepIndex": 1, "field": "action.target", "baseVersion": 3,
        "proposed": "The steel kettle's tile"});
    let second = suggested(s, "rita", "r1", body);
    let resp = decide(s, "alice", "r1", id(&second), "reject")
        .json(&json!({"note": "The tile is what the agent named."}))
        .send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let result = resp.json();
    assert_eq!(result["step"], Value::Null);
    assert_eq!(result["suggestion"]["state"], "rejected");
    assert_eq!(result["suggestion"]["decisionNote"], "The tile is what the agent named.");
    assert_eq!(result["suggestion"]["appliedVersion"], Value::Null);
    let step = s.get_json("alice", "/runs/r1/steps/1");
    assert_eq!(
        (step["action"]["target"].as_str(), step["version"].as_i64()),
        (Some("Steel kettle"), Some(3))
    );
    assert_eq!(s.get_json("alice", "/runs/r1")["version"], 4);

    // Only its author withdraws a suggestion; it is kept, as withdrawn.
    let body = json!({"stepIndex": 1, "field": "extendedThoughts", "baseVersion": 3,
        "proposed": ["The price is in the product box."]});
    let third = suggested(s, "quinn", "r1", body);
    let path = format!("/runs/r1/suggestions/{}", id(&third));
    s.req("rita", "DELETE", &path).send().problem(403, "forbidden");
    let resp = s.req("quinn", "DELETE", &path).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["state"], "withdrawn");
    s.req("quinn", "DELETE", &path).send().problem(409, "not-pending");
    s.req("quinn", "DELETE", "/runs/r1/suggestions/nope").send().problem(404, "not-found");

    // Every suggestion stays listed, oldest first, a page at a time.
    let page = s.get_json("alice", "/runs/r1/suggestions?limit=2");
    let states: Vec<&str> =
        page["items"].as_array().unwrap().iter().map(|g| g["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["accepted", "rejected"]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("alice", &format!("/runs/r1/suggestions?limit=2&cursor={cursor}"));
    assert_eq!(
        (page["items"][0]["state"].as_str(), &page["nextCursor"]),
        (Some("withdrawn"), &Value::Null)
    );
    let on_step_1 = s.get_json("alice", "/runs/r1/suggestions?stepIndex=1&state=rejected");
    assert_eq!(on_step_1["items"].as_array().unwrap().len(), 1);
}

fn only_the_right_roles_suggest_and_decide(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    let body = json!({"stepIndex": 0, "field": "thoughts.thought3", "baseVersion": 2,
        "proposed": "Open the steel kettle's page and read the price."});

    // Annotators do not suggest (on their own run they edit); another's run is not there.
    suggest(s, "alice", "r1", body.clone()).problem(403, "forbidden");
    suggest(s, "carol", "r1", body.clone()).problem(404, "not-found");
    let one = suggested(s, "rita", "r1", body.clone());
    s.get_json("rita", "/runs/r1/suggestions");
    s.req("carol", "GET", "/runs/r1/suggestions").send().problem(404, "not-found");

    // Neither another annotator nor a reviewer decides; no If-Match is 428.
    decide(s, "carol", "r1", id(&one), "accept").if_match(2).send().problem(404, "not-found");
    decide(s, "carol", "r1", id(&one), "reject").send().problem(404, "not-found");
    decide(s, "rita", "r1", id(&one), "accept").if_match(2).send().problem(403, "forbidden");
    decide(s, "rita", "r1", id(&one), "reject").send().problem(403, "forbidden");
    decide(s, "alice", "r1", id(&one), "accept").send().problem(428, "precondition-required");
    assert_eq!(s.get_json("alice", "/runs/r1/steps/0")["version"], 2);

    // A qa manager may decide on a run that is not theirs, and may suggest too.
    let resp = decide(s, "quinn", "r1", id(&one), "accept").if_match(2).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["step"]["lastEditedBy"], "quinn");
    let body = json!({"stepIndex": 0, "field": "action", "baseVersion": 3,
        "proposed": {"type": "click", "target": "Steel kettle (20 EUR)", "value": null}});
    let two = suggested(s, "quinn", "r1", body);

    // Nobody suggests on, or accepts into, a run that is read only.
    s.transition("alice", "r1", "in-review");
    decide(s, "alice", "r1", id(&two), "reject").send();
    assert_eq!(s.transition("rita", "r1", "approved").status, 200);
    let body = json!({"stepIndex": 0, "field": "thoughts.thought1", "baseVersion": 3,
        "proposed": "Too late."});
    suggest(s, "rita", "r1", body).problem(403, "forbidden");
}

fn stale_suggestions_and_accepts_conflict(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0); // version 2
    let on_thought1 = suggested(
        s,
        "rita",
        "r1",
        json!({"stepIndex": 0, "field": "thoughts.thought1", "baseVersion": 2,
            "proposed": "The front page is open; the search box is at the top."}),
    );
    let on_target = suggested(
        s,
        "rita",
        "r1",
        json!({"stepIndex": 0, "field": "action.target", "baseVersion": 2,
            "proposed": "The steel kettle's tile"}),
    );

    // The annotator rewrites thought1 herself: step 0 is now at version 3.
    let mut step = s.get_json("alice", "/runs/r1/steps/0");
    step["thoughts"]["thought1"] = json!("The annotator's own wording.");
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(2).json(&step).send();
    assert_eq!(resp.status, 200, "{}", resp.text());

    // A new suggestion against the old version is refused with the current step.
    let body = json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "Stale."});
    let conflict = suggest(s, "rita", "r1", body).problem(409, "conflict");
    assert_eq!(
        (conflict["resource"].as_str(), conflict["currentVersion"].as_i64()),
        (Some("step"), Some(3))
    );
    assert_eq!(conflict["changedPaths"], json!(["thoughts.thought1"]));
    assert_eq!(conflict["current"]["thoughts"]["thought1"], "The annotator's own wording.");

    // The suggestion whose text changed reads outdated; the other does not.
    let listed = s.get_json("alice", "/runs/r1/suggestions");
    let outdated: Vec<bool> =
        listed["items"].as_array().unwrap().iter().map(|g| g["outdated"] == true).collect();
    assert_eq!(outdated, [true, false]);

    // Accepting while looking at an old step is a conflict…
    let resp = decide(s, "alice", "r1", id(&on_target), "accept").if_match(2).send();
    let conflict = resp.problem(409, "conflict");
    assert_eq!(
        (conflict["baseVersion"].as_i64(), conflict["currentVersion"].as_i64()),
        (Some(2), Some(3))
    );
    // …and so is accepting a suggestion made against text that changed since, even when
    // the accepter has the current step: nothing is overwritten.
    let resp = decide(s, "alice", "r1", id(&on_thought1), "accept").if_match(3).send();
    let conflict = resp.problem(409, "conflict");
    assert_eq!(conflict["resource"], "step");
    assert_eq!(conflict["baseVersion"], 2);
    assert_eq!(conflict["changedPaths"], json!(["thoughts.thought1"]));
    assert_eq!(conflict["current"]["thoughts"]["thought1"], "The annotator's own wording.");
    let stored = s.get_json("alice", "/runs/r1/steps/0");
    assert_eq!(
        (stored["thoughts"]["thought1"].as_str(), stored["version"].as_i64()),
        (Some("The annotator's own wording."), Some(3))
    );
    assert_eq!(stored["pendingSuggestions"], 2);

    // The one on an untouched field still goes through on the current version.
    let resp = decide(s, "alice", "r1", id(&on_target), "accept").if_match(3).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["step"]["action"]["target"], "The steel kettle's tile");
    assert_eq!(resp.json()["step"]["thoughts"]["thought1"], "The annotator's own wording.");
}

fn bad_suggestions_are_refused_with_paths(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    let paths = |body: Value| -> Vec<String> {
        let resp = suggest(s, "rita", "r1", body);
        resp.problem(422, "validation");
        resp.error_paths()
    };
    assert_eq!(paths(json!({})), ["/stepIndex", "/field", "/baseVersion", "/proposed"]);
    let mut got = paths(json!({"stepIndex": 5000, "field": "verified", "baseVersion": 0,
        "proposed": true, "extra": 1}));
    got.sort();
    assert_eq!(got, ["/baseVersion", "/extra", "/field", "/stepIndex"]);
    let got = paths(json!({"stepIndex": 0, "field": "thoughts.thought1", "baseVersion": 2,
        "proposed": 42, "note": 7}));
    assert_eq!(got, ["/note", "/proposed"]);
    let got = paths(json!({"stepIndex": 0, "field": "action", "baseVersion": 2,
        "proposed": {"type": "", "target": 1, "zzz": 1}}));
    assert_eq!(got, ["/proposed/target", "/proposed/type", "/proposed/zzz"]);
    let got = paths(json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "a\u{0}b"}));
    assert_eq!(got, ["/proposed"]);
    let got = paths(json!({"stepIndex": 0, "field": "extendedThoughts", "baseVersion": 2,
        "proposed": ["ok", 3]}));
    assert_eq!(got, ["/proposed/1"]);
    let long = "x".repeat(20_001);
    let got = paths(json!({"stepIndex": 0, "field": "extendedThoughts.0", "baseVersion": 2,
        "proposed": long}));
    assert_eq!(got, ["/proposed"]);

    // Checked against the run: the step, the field's entry, and a change at all.
    let got = paths(json!({"stepIndex": 7, "field": "thoughts.thought1", "baseVersion": 2,
        "proposed": "x"}));
    assert_eq!(got, ["/stepIndex"]);
    let got = paths(json!({"stepIndex": 0, "field": "extendedThoughts.3", "baseVersion": 2,
        "proposed": "x"}));
    assert_eq!(got, ["/field"]);
    let got = paths(json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
        "proposed": "The kettles are under Kitchen."}));
    assert_eq!(got, ["/proposed"]);

    // Decisions, queries and ids are checked too.
    let one = suggested(
        s,
        "rita",
        "r1",
        json!({"stepIndex": 0, "field": "action.value", "baseVersion": 2, "proposed": "4"}),
    );
    assert_eq!(one["original"], Value::Null);
    let resp =
        decide(s, "alice", "r1", id(&one), "accept").if_match(2).json(&json!({"note": 5, "x": 1}));
    let resp = resp.send();
    resp.problem(422, "validation");
    assert_eq!(resp.error_paths(), ["/note", "/x"]);
    let resp = s.req("alice", "GET", "/runs/r1/suggestions?state=open").send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "query.state");
    let resp = decide(s, "alice", "r1", "-bad", "reject").send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "path.suggestionId");
    // Nothing was half-applied: the step is as captured, the one suggestion pending.
    let step = s.get_json("alice", "/runs/r1/steps/0");
    assert_eq!((step["version"].as_i64(), step["pendingSuggestions"].as_i64()), (Some(2), Some(1)));
}

fn approval_waits_for_pending_suggestions(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    assert_eq!(s.transition("alice", "r1", "in-review").status, 200);
    let one = suggested(
        s,
        "rita",
        "r1",
        json!({"stepIndex": 0, "field": "thoughts.thought2", "baseVersion": 2,
            "proposed": "Kitchen > Kettles."}),
    );

    // Approval is not offered, and refused, while a suggestion is pending.
    let options = s.get_json("rita", "/runs/r1/transitions");
    assert_eq!(options["allowed"], json!(["draft", "rejected"]));
    let resp = s.transition("rita", "r1", "approved");
    let problem = resp.problem(409, "pending-suggestions");
    assert_eq!(problem["current"]["pendingSuggestions"], 1);
    assert_eq!(problem["current"]["status"], "in-review");
    assert_eq!(s.get_json("rita", "/runs/r1")["status"], "in-review");

    // Once it is decided, approval goes through.
    let resp = decide(s, "alice", "r1", id(&one), "reject").send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let options = s.get_json("rita", "/runs/r1/transitions");
    assert_eq!(options["allowed"], json!(["draft", "approved", "rejected"]));
    let resp = s.transition("rita", "r1", "approved");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["pendingSuggestions"], 0);
    // The run it answers is the run as stored.
    assert_eq!(resp.json(), s.get_json("rita", "/runs/r1"));
}
