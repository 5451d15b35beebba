//! The sync server over real HTTP on a real database: each scenario runs on SQLite, and on
//! PostgreSQL too when `SYNC_TEST_POSTGRES_URL` is set (otherwise that run prints a note
//! and does nothing).

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Barrier;

use run_contract::digest::sha256_hex;
use serde_json::{Value, json};
use support::{Resp, Server, jpeg, run_record, step_record, trace_record};
use sync_server::auth;

on_both_backends!(
    health_auth_and_routing,
    roles_are_enforced_on_the_server,
    a_stale_write_conflicts_and_overwrites_nothing,
    concurrent_writers_one_wins,
    bad_input_is_refused_with_paths,
    oversize_bodies_are_413,
    screenshots_are_content_addressed,
    pagination_and_filters,
    rollback_creates_a_new_version,
    comment_threads,
    batch_upsert_and_traces,
    racing_retries_with_one_idempotency_key_act_once,
    users_rotate_their_own_token,
);

fn health_auth_and_routing(s: &Server) {
    let health = s.anon("GET", "/healthz").send();
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["status"], "ok");
    // The scenario really runs on the database its module names.
    assert_eq!(health.json()["database"], s.backend.name());
    assert!(sync_server::NOT_IMPLEMENTED.is_empty(), "{:?}", sync_server::NOT_IMPLEMENTED);

    let resp = s.anon("GET", "/users/me").send();
    resp.problem(401, "unauthorized");
    assert_eq!(resp.header("www-authenticate"), Some("Bearer"));
    let resp = s.anon("GET", "/users/me").header("Authorization", "Bearer nope").send();
    resp.problem(401, "unauthorized");

    // CORS: extension pages get an answer, other origins do not.
    let preflight = |origin: &str| {
        s.anon("OPTIONS", "/runs/r1")
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "PUT")
            .header("Access-Control-Request-Headers", "authorization,if-match")
            .send()
    };
    let ok = preflight("chrome-extension://abcdefghijklmnop");
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("chrome-extension://abcdefghijklmnop")
    );
    assert!(ok.header("access-control-allow-headers").unwrap().contains("if-match"));
    assert_eq!(preflight("https://elsewhere.example").header("access-control-allow-origin"), None);

    let me = s.get_json("rita", "/users/me");
    assert_eq!(me, json!({"id": "rita", "name": "rita", "role": "reviewer"}));
    assert!(!me.to_string().contains(s.token("rita")), "no response returns the token");

    s.req("alice", "GET", "/runs/r1/suggestions").send().problem(404, "not-found");
    s.req("alice", "GET", "/nope").send().problem(404, "not-found");
    s.req("alice", "DELETE", "/runs").send().problem(405, "method-not-allowed");
}

fn roles_are_enforced_on_the_server(s: &Server) {
    let run = s.create_run("alice", "r1");
    assert_eq!(run["status"], "draft");
    assert_eq!(run["annotator"], "alice");
    assert_eq!(run["version"], 1);
    s.create_step("alice", "r1", 0);

    // Another annotator's run is 404, for reads and writes alike, and not listed.
    s.req("carol", "GET", "/runs/r1").send().problem(404, "not-found");
    s.req("carol", "GET", "/runs/r1/steps/0").send().problem(404, "not-found");
    let step = step_record("r1", 0, None);
    s.req("carol", "PUT", "/runs/r1/steps/0")
        .if_match(2)
        .json(&step)
        .send()
        .problem(404, "not-found");
    assert_eq!(s.get_json("carol", "/runs")["items"], json!([]));
    assert_eq!(s.get_json("rita", "/runs")["items"].as_array().unwrap().len(), 1);

    // Reviewers do not create or edit runs; an annotator cannot assign a run to another.
    let resp = s.req("rita", "PUT", "/runs/r2").create().json(&run_record("r2")).send();
    resp.problem(403, "forbidden");
    let mut other = run_record("r3");
    other["annotator"] = json!("carol");
    let resp = s.req("alice", "PUT", "/runs/r3").create().json(&other).send();
    assert_eq!(resp.problem(403, "forbidden")["errors"][0]["path"], "/annotator");
    let resp = s.req("quinn", "PUT", "/runs/r3").create().json(&other).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    assert_eq!(resp.json()["annotator"], "carol");

    // An annotator cannot approve, even in review; a reviewer cannot approve a draft.
    assert_eq!(s.transition("rita", "r1", "approved").status, 422);
    s.transition("alice", "r1", "in-review");
    let resp = s.transition("alice", "r1", "approved");
    assert_eq!(resp.problem(403, "forbidden")["allowed"], json!(["draft"]));
    let options = s.get_json("rita", "/runs/r1/transitions");
    assert_eq!(options["allowed"], json!(["draft", "approved", "rejected"]));

    // A reviewer cannot edit thoughts, but may mark a step verified while it is in review.
    let current = s.get_json("rita", "/runs/r1/steps/0");
    let version = current["version"].as_i64().unwrap();
    let mut edit = current.clone();
    edit["thoughts"]["thought1"] = json!("A reviewer's rewrite.");
    let resp = s.req("rita", "PUT", "/runs/r1/steps/0").if_match(version).json(&edit).send();
    assert_eq!(resp.problem(403, "forbidden")["errors"][0]["path"], "/thoughts/thought1");
    let mut verify = current.clone();
    verify["verified"] = json!(true);
    let resp = s.req("rita", "PUT", "/runs/r1/steps/0").if_match(version).json(&verify).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["lastEditedBy"], "rita");
    let resp = s.req("rita", "PUT", "/runs/r1").if_match(version).json(&run_record("r1")).send();
    resp.problem(403, "forbidden");

    // Approval records the reviewer; an approved run is read only, even for its annotator.
    let resp = s.transition("rita", "r1", "approved");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["reviewedBy"], "rita");
    let current = s.get_json("alice", "/runs/r1/steps/0");
    let resp = s
        .req("alice", "PUT", "/runs/r1/steps/0")
        .if_match(current["version"].as_i64().unwrap())
        .json(&current)
        .send();
    resp.problem(403, "forbidden");
    // approved → draft is not a transition at all; archived → draft is admin's alone.
    let resp = s.transition("quinn", "r1", "draft");
    let body = resp.problem(422, "invalid-transition");
    assert_eq!(body["allowed"], json!(["in-review", "archived"]));
    assert_eq!(s.transition("quinn", "r1", "archived").status, 200);
    s.transition("quinn", "r1", "draft").problem(403, "forbidden");
    assert_eq!(s.transition("adam", "r1", "draft").status, 200);

    // Annotators do not open approval threads.
    let thread = json!({"text": "LGTM", "kind": "approval", "anchor": {"stepIndex": null}});
    s.req("alice", "POST", "/runs/r1/comments").json(&thread).send().problem(403, "forbidden");
    let resp = s.req("rita", "POST", "/runs/r1/comments").json(&thread).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
}

fn a_stale_write_conflicts_and_overwrites_nothing(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    s.create_step("alice", "r1", 1);
    // Both read step 0 at the same version.
    let seen = s.get_json("alice", "/runs/r1/steps/0");
    let base = seen["version"].as_i64().unwrap();
    assert_eq!(base, 2);

    let mut theirs = seen.clone();
    theirs["thoughts"]["thought1"] = json!("The qa manager's wording.");
    let resp = s.req("quinn", "PUT", "/runs/r1/steps/0").if_match(base).json(&theirs).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("etag"), Some("\"4\""));

    let mut mine = seen.clone();
    mine["thoughts"]["thought1"] = json!("The annotator's wording.");
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(base).json(&mine).send();
    let conflict = resp.problem(409, "conflict");
    assert_eq!(conflict["resource"], "step");
    assert_eq!(conflict["baseVersion"], 2);
    assert_eq!(conflict["currentVersion"], 4);
    assert_eq!(conflict["current"]["thoughts"]["thought1"], "The qa manager's wording.");
    assert_eq!(conflict["changedPaths"], json!(["thoughts.thought1"]));
    let stored = s.get_json("alice", "/runs/r1/steps/0");
    assert_eq!(stored["thoughts"]["thought1"], "The qa manager's wording.");

    // Resent on the current version, after the merge, it goes through.
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(4).json(&mine).send();
    assert_eq!(resp.status, 200, "{}", resp.text());

    // Edits to different steps never conflict: step 1 is still at version 3.
    let mut other = s.get_json("alice", "/runs/r1/steps/1");
    other["verified"] = json!(true);
    let resp = s.req("alice", "PUT", "/runs/r1/steps/1").if_match(3).json(&other).send();
    assert_eq!(resp.status, 200, "{}", resp.text());

    // The header conflicts only with header changes.
    let mut header = run_record("r1");
    header["finalAnswer"] = json!("20 EUR");
    let resp = s.req("alice", "PUT", "/runs/r1").if_match(1).json(&header).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let resp = s.req("quinn", "PUT", "/runs/r1").if_match(1).json(&run_record("r1")).send();
    let conflict = resp.problem(409, "conflict");
    assert_eq!(conflict["changedPaths"], json!(["finalAnswer"]));
    assert_eq!(conflict["current"]["finalAnswer"], "20 EUR");

    // Creating what exists is a conflict carrying the stored record.
    let resp = s.req("alice", "PUT", "/runs/r1").create().json(&run_record("r1")).send();
    assert_eq!(resp.problem(409, "already-exists")["current"]["finalAnswer"], "20 EUR");

    // No precondition, or If-Match: *, is 428; a transition needs one too.
    s.req("alice", "PUT", "/runs/r1/steps/0")
        .json(&mine)
        .send()
        .problem(428, "precondition-required");
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").header("If-Match", "*").json(&mine).send();
    resp.problem(428, "precondition-required");
    let resp =
        s.req("alice", "POST", "/runs/r1/transitions").json(&json!({"to": "in-review"})).send();
    resp.problem(428, "precondition-required");
    // A stale transition is a conflict: approving means approving what you saw.
    let resp = s
        .req("alice", "POST", "/runs/r1/transitions")
        .if_match(2)
        .json(&json!({"to": "in-review"}))
        .send();
    assert!(resp.problem(409, "conflict")["changedPaths"].as_array().unwrap().len() >= 2);

    // A read with the current ETag is a 304.
    let resp = s.req("alice", "GET", "/runs/r1").header("If-None-Match", "\"7\"").send();
    assert_eq!(resp.status, 304, "{}", resp.text());
}

fn concurrent_writers_one_wins(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    let seen = s.get_json("alice", "/runs/r1/steps/0");
    let writers: Vec<_> = (0..6)
        .map(|i| {
            let mut body = seen.clone();
            body["thoughts"]["thought2"] = json!(format!("writer {i}"));
            let user = if i % 2 == 0 { "alice" } else { "quinn" };
            let req = s.req(user, "PUT", "/runs/r1/steps/0").if_match(2).json(&body);
            std::thread::spawn(move || req.send())
        })
        .collect();
    let answers: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let winners: Vec<_> = answers.iter().filter(|a| a.status == 200).collect();
    assert_eq!(winners.len(), 1, "{:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
    assert!(answers.iter().all(|a| a.status == 200 || a.status == 409));
    let stored = s.get_json("alice", "/runs/r1/steps/0");
    assert_eq!(stored["thoughts"]["thought2"], winners[0].json()["thoughts"]["thought2"]);
    assert_eq!(stored["version"], 3);
    let versions = s.get_json("alice", "/runs/r1/versions");
    assert_eq!(versions["items"].as_array().unwrap().len(), 3);
}

fn bad_input_is_refused_with_paths(s: &Server) {
    let mut run = run_record("r1");
    run["taskPrompt"] = json!("");
    run["subtasks"][0]["stepRange"] = json!([5, 2]);
    run["usage"]["input_tokens"] = json!(-1);
    run["agentStatus"] = json!("sleeping");
    run["apiKey"] = json!("sk-secret");
    run["models"]["planner"] = json!("x".repeat(201));
    let resp = s.req("alice", "PUT", "/runs/r1").create().json(&run).send();
    assert_eq!(
        resp.refused_paths(),
        [
            "/agentStatus",
            "/apiKey",
            "/models/planner",
            "/subtasks/0/stepRange",
            "/taskPrompt",
            "/usage/input_tokens"
        ]
    );

    // The id in the body must be the path's.
    let resp = s.req("alice", "PUT", "/runs/r2").create().json(&run_record("r1")).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/id");
    s.req("alice", "PUT", "/runs/bad%20id")
        .create()
        .json(&run_record("r1"))
        .send()
        .problem(400, "bad-request");

    s.create_run("alice", "r1");
    let mut step = step_record("r1", 0, None);
    step["thoughts"]["thought2"] = json!("é".repeat(20_001));
    step["extendedThoughts"] = json!(["ok", "nul \u{0}"]);
    step["issues"] = json!([{"type": "logic", "severity": "huge", "description": ""}]);
    step["actions"][0]["action"] = json!({"action": "click", "id": -3});
    step["screenshot"] =
        json!({"key": "abc", "timestamp": "yesterday", "mime": "image/png", "bytes": 0});
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").create().json(&step).send();
    assert_eq!(
        resp.refused_paths(),
        [
            "/actions/0/action/id",
            "/extendedThoughts/1",
            "/issues/0/description",
            "/issues/0/severity",
            "/screenshot/bytes",
            "/screenshot/key",
            "/screenshot/mime",
            "/screenshot/timestamp",
            "/thoughts/thought2",
        ]
    );
    let resp = s
        .req("alice", "PUT", "/runs/r1/steps/2000")
        .create()
        .json(&step_record("r1", 0, None))
        .send();
    resp.problem(400, "bad-request");

    // Captured facts are fixed once stored.
    s.create_step("alice", "r1", 0);
    let mut changed = step_record("r1", 0, None);
    changed["url"] = json!("https://elsewhere.example/");
    changed["outcome"] = json!("failed");
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(2).json(&changed).send();
    resp.problem(422, "validation");
    assert_eq!(resp.error_paths(), ["/url", "/outcome"]);

    // Malformed JSON is 400; another media type 415; a bad query parameter 400.
    let resp = s
        .req("alice", "PUT", "/runs/r1")
        .if_match(1)
        .bytes("application/json", b"{".to_vec())
        .send();
    resp.problem(400, "bad-request");
    let resp =
        s.req("alice", "PUT", "/runs/r1").if_match(1).bytes("text/plain", b"{}".to_vec()).send();
    resp.problem(415, "unsupported-media-type");
    let resp = s.req("alice", "GET", "/runs?limit=500").send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "query.limit");
    s.req("alice", "GET", "/runs?stauts=draft").send().problem(400, "bad-request");
    let resp =
        s.req("alice", "PUT", "/runs/r1").header("If-Match", "1").json(&run_record("r1")).send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "header.If-Match");
    // A body field with a wrong type in a transition.
    let resp =
        s.req("alice", "POST", "/runs/r1/transitions").if_match(2).json(&json!({"to": 3})).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/to");
}

/// The head of a request whose body is announced but not sent.
fn head_only(s: &Server, path: &str, content_type: &str, framing: &str) -> String {
    format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAuthorization: Bearer {}\r\n\
         If-Match: \"1\"\r\nContent-Type: {content_type}\r\n{framing}\r\n\r\n",
        s.addr,
        s.token("alice")
    )
}

fn oversize_bodies_are_413(s: &Server) {
    s.create_run("alice", "r1");
    // Declared too large: refused before any of the body is read.
    let length = format!("Content-Length: {}", 10 * 1024 * 1024 + 1);
    let head = head_only(s, "/runs/r1", "application/json", &length);
    support::exchange(s.addr, head.as_bytes()).problem(413, "payload-too-large");
    let sha = sha256_hex(b"x");
    let length = format!("Content-Length: {}", 5 * 1024 * 1024 + 1);
    let head = head_only(s, &format!("/screenshots/{sha}"), "image/jpeg", &length);
    support::exchange(s.addr, head.as_bytes()).problem(413, "payload-too-large");

    // Too large as sent (chunked, so no length up front): refused once the limit is passed.
    // The last chunk crosses the limit, so the server has read nearly all of it by then.
    let head = head_only(s, "/runs/r1", "application/json", "Transfer-Encoding: chunked");
    let mut stream = TcpStream::connect(s.addr).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        let chunk = vec![b' '; 1024 * 1024];
        for _ in 0..10 {
            let mut piece = format!("{:x}\r\n", chunk.len()).into_bytes();
            piece.extend_from_slice(&chunk);
            piece.extend_from_slice(b"\r\n");
            if writer.write_all(&piece).is_err() {
                return;
            }
        }
        let _ = writer.write_all(b"1\r\n \r\n0\r\n\r\n");
    });
    let resp = support::read_response(&mut stream);
    let _ = sender.join();
    resp.problem(413, "payload-too-large");
}

fn screenshots_are_content_addressed(s: &Server) {
    let shot = jpeg(7, 3000);
    let sha = sha256_hex(&shot);
    let path = format!("/screenshots/{sha}");

    let head = s.req("rita", "HEAD", &path).send();
    assert_eq!((head.status, head.body.len()), (404, 0));
    // Wrong hash, not a JPEG, a bad name, a reviewer.
    let other = sha256_hex(b"something else");
    let resp = s
        .req("alice", "PUT", &format!("/screenshots/{other}"))
        .bytes("image/jpeg", shot.clone())
        .send();
    assert_eq!(resp.problem(422, "hash-mismatch")["errors"][0]["path"], "path.sha256");
    let png = b"\x89PNG....".to_vec();
    let resp = s
        .req("alice", "PUT", &format!("/screenshots/{}", sha256_hex(&png)))
        .bytes("image/jpeg", png)
        .send();
    resp.problem(415, "unsupported-media-type");
    s.req("alice", "PUT", &path)
        .bytes("image/png", shot.clone())
        .send()
        .problem(415, "unsupported-media-type");
    s.req("alice", "PUT", "/screenshots/ABC")
        .bytes("image/jpeg", shot.clone())
        .send()
        .problem(400, "bad-request");
    s.req("rita", "PUT", &path).bytes("image/jpeg", shot.clone()).send().problem(403, "forbidden");

    let resp = s.req("alice", "PUT", &path).bytes("image/jpeg", shot.clone()).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    assert_eq!(resp.json()["bytes"], 3000);
    let resp = s.req("alice", "PUT", &path).bytes("image/jpeg", shot.clone()).send();
    assert_eq!(resp.status, 200, "uploading again is harmless");
    // Another user's upload of the same image is their first: it says nothing of alice's.
    let resp = s.req("carol", "PUT", &path).bytes("image/jpeg", shot.clone()).send();
    assert_eq!(resp.status, 201);
    assert_eq!(s.anon("HEAD", &path).send().status, 401);

    let missing = s
        .req("alice", "POST", "/screenshots:missing")
        .json(&json!({"hashes": [sha, other, other]}))
        .send();
    assert_eq!(missing.json(), json!({"missing": [other]}));

    // Steps reference stored screenshots only, with their real size.
    s.create_run("alice", "r1");
    let step = step_record("r1", 0, Some((&other, 10)));
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").create().json(&step).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/screenshot/key");
    let step = step_record("r1", 0, Some((&sha, 10)));
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").create().json(&step).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/screenshot/bytes");
    let step = step_record("r1", 0, Some((&sha, 3000)));
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").create().json(&step).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    assert_eq!(resp.header("location"), Some("/runs/r1/steps/0"));

    // Whoever sees the run reads its screenshots.
    let resp = s.req("rita", "GET", &path).send();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body, shot);
    assert_eq!(resp.header("content-type"), Some("image/jpeg"));
    assert_eq!(resp.header("cache-control"), Some("private, max-age=31536000, immutable"));
    assert_eq!(resp.header("etag"), Some(format!("\"{sha}\"").as_str()));
    let head = s.req("rita", "HEAD", &path).send();
    assert_eq!((head.status, head.body.len()), (200, 0));
    assert_eq!(head.header("content-length"), Some("3000"));
}

fn ids(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

fn pagination_and_filters(s: &Server) {
    for i in 0..7 {
        s.create_run("alice", &format!("run-{i}"));
    }
    s.create_run("quinn", "other");
    // Newest first, three at a time, each run once.
    let mut seen = Vec::new();
    let mut path = "/runs?limit=3".to_owned();
    let mut pages = 0;
    loop {
        let page = s.get_json("alice", &path);
        pages += 1;
        seen.extend(ids(&page));
        match page["nextCursor"].as_str() {
            Some(cursor) => path = format!("/runs?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..7).rev().map(|i| format!("run-{i}")).collect();
    assert_eq!(seen, expected);

    // Oldest first, for pulling; a cursor is bound to its filters.
    let page = s.get_json("quinn", "/runs?limit=2&sort=updatedAt");
    assert_eq!(ids(&page), ["run-0", "run-1"]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let resp = s.req("quinn", "GET", &format!("/runs?limit=2&cursor={cursor}")).send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "query.cursor");
    let page = s.get_json("quinn", &format!("/runs?limit=2&sort=updatedAt&cursor={cursor}"));
    assert_eq!(ids(&page), ["run-2", "run-3"]);

    // Filters: status, annotator, updatedSince, q (header and steps' thoughts).
    s.transition("alice", "run-3", "in-review");
    assert_eq!(ids(&s.get_json("quinn", "/runs?status=in-review")), ["run-3"]);
    assert_eq!(ids(&s.get_json("quinn", "/runs?status=in-review&status=approved")), ["run-3"]);
    assert_eq!(ids(&s.get_json("quinn", "/runs?annotator=me")), ["other"]);
    assert_eq!(s.get_json("quinn", "/runs?annotator=alice")["items"].as_array().unwrap().len(), 7);
    let newest =
        s.get_json("quinn", "/runs?limit=1")["items"][0]["updatedAt"].as_str().unwrap().to_owned();
    // (Runs saved in the same millisecond as run-3's transition would be listed too.)
    let since = s.get_json("quinn", &format!("/runs?updatedSince={newest}"));
    assert_eq!(ids(&since)[0], "run-3");
    assert!(
        since["items"].as_array().unwrap().iter().all(|r| r["updatedAt"].as_str() >= Some(&newest))
    );
    s.req("quinn", "GET", "/runs?updatedSince=yesterday").send().problem(400, "bad-request");
    s.req("quinn", "GET", "/runs?q=a%00b").send().problem(400, "bad-request");
    assert_eq!(ids(&s.get_json("quinn", "/runs?q=KETTLE%20(run-5)")), ["run-5"]);
    s.create_step("alice", "run-1", 0);
    let mut step = s.get_json("alice", "/runs/run-1/steps/0");
    step["thoughts"]["thought2"] = json!("The Ünïcode cart button is hidden_behind a banner.");
    let resp = s.req("alice", "PUT", "/runs/run-1/steps/0").if_match(2).json(&step).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(ids(&s.get_json("alice", "/runs?q=%C3%BCn%C3%AFcode%20cart")), ["run-1"]);
    assert_eq!(ids(&s.get_json("alice", "/runs?q=hidden_behind")), ["run-1"]);
    assert_eq!(ids(&s.get_json("alice", "/runs?q=hidden%25")), Vec::<String>::new());

    // Steps page by index; versions newest first.
    for i in 1..5 {
        s.create_step("alice", "run-1", i);
    }
    let page = s.get_json("alice", "/runs/run-1/steps?limit=2");
    let indices = |p: &Value| -> Vec<i64> {
        p["items"].as_array().unwrap().iter().map(|s| s["index"].as_i64().unwrap()).collect()
    };
    assert_eq!(indices(&page), [0, 1]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("alice", &format!("/runs/run-1/steps?limit=2&cursor={cursor}"));
    assert_eq!(indices(&page), [2, 3]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("alice", &format!("/runs/run-1/steps?limit=2&cursor={cursor}"));
    assert_eq!((indices(&page), page["nextCursor"].clone()), (vec![4], Value::Null));
    // Only what changed after a version.
    assert_eq!(indices(&s.get_json("alice", "/runs/run-1/steps?sinceVersion=5")), [3, 4]);

    let page = s.get_json("alice", "/runs/run-1/versions?limit=4");
    let versions: Vec<i64> =
        page["items"].as_array().unwrap().iter().map(|v| v["version"].as_i64().unwrap()).collect();
    assert_eq!(versions, [7, 6, 5, 4]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("alice", &format!("/runs/run-1/versions?limit=4&cursor={cursor}"));
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    assert_eq!(page["items"][2]["kind"], "run-created");
    let edits = s.get_json("alice", "/runs/run-1/versions?kind=step-edited");
    assert_eq!(
        edits["items"][0]["changes"],
        json!([{"op": "replace", "path": "steps.0.thoughts.thought2"}])
    );
    let run = s.get_json("alice", "/runs/run-1");
    assert_eq!((run["storedSteps"].as_i64(), run["version"].as_i64()), (Some(5), Some(7)));
}

fn rollback_creates_a_new_version(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    let mut step = s.get_json("alice", "/runs/r1/steps/0");
    let original = step["thoughts"]["thought1"].clone();
    step["thoughts"]["thought1"] = json!("First rewrite.");
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(2).json(&step).send();
    assert_eq!(resp.json()["version"], 3);
    step["thoughts"]["thought1"] = json!("Second rewrite.");
    step["verified"] = json!(true);
    let resp = s.req("alice", "PUT", "/runs/r1/steps/0").if_match(3).json(&step).send();
    assert_eq!(resp.json()["version"], 4);
    let mut header = run_record("r1");
    header["finalAnswer"] = json!("Changed answer.");
    let resp = s.req("alice", "PUT", "/runs/r1").if_match(4).json(&header).send();
    assert_eq!(resp.json()["version"], 5);

    // The history as it was.
    let then = s.get_json("rita", "/runs/r1/versions/3/steps/0");
    assert_eq!(
        (then["thoughts"]["thought1"].as_str(), then["version"].as_i64()),
        (Some("First rewrite."), Some(3))
    );
    let then = s.get_json("rita", "/runs/r1/versions/2/steps/0");
    assert_eq!(then["thoughts"]["thought1"], original);
    s.req("rita", "GET", "/runs/r1/versions/1/steps/0").send().problem(404, "not-found");
    let detail = s.get_json("rita", "/runs/r1/versions/4");
    assert_eq!(detail["kind"], "step-edited");
    assert_eq!(detail["by"], "alice");
    assert_eq!(detail["run"]["finalAnswer"], "The steel kettle costs 20 EUR.");
    assert_eq!(detail["run"]["version"], 4);
    let diff = s.get_json("rita", "/runs/r1/diff?from=2&to=4");
    let paths: Vec<&str> =
        diff["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert!(
        paths.contains(&"steps.0.thoughts.thought1") && paths.contains(&"steps.0.verified"),
        "{paths:?}"
    );
    let change = diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == "steps.0.thoughts.thought1")
        .unwrap();
    assert_eq!((&change["before"], change["after"].as_str()), (&original, Some("Second rewrite.")));

    // Only editors roll back, on the current version.
    let body = json!({"toVersion": 3, "note": "the second rewrite lost a detail"});
    s.req("rita", "POST", "/runs/r1/rollback")
        .if_match(5)
        .json(&body)
        .send()
        .problem(403, "forbidden");
    s.req("alice", "POST", "/runs/r1/rollback")
        .if_match(4)
        .json(&body)
        .send()
        .problem(409, "conflict");
    s.req("alice", "POST", "/runs/r1/rollback")
        .json(&body)
        .send()
        .problem(428, "precondition-required");
    let resp = s
        .req("alice", "POST", "/runs/r1/rollback")
        .if_match(5)
        .json(&json!({"toVersion": 9}))
        .send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/toVersion");

    let resp = s.req("alice", "POST", "/runs/r1/rollback").if_match(5).json(&body).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let run = resp.json();
    assert_eq!(run["version"], 6);
    assert_eq!(run["finalAnswer"], "The steel kettle costs 20 EUR.");
    assert_eq!(run["status"], "draft");
    let step = s.get_json("alice", "/runs/r1/steps/0");
    assert_eq!(step["thoughts"]["thought1"], "First rewrite.");
    assert_eq!(step["verified"], false);
    assert_eq!(step["version"], 6);

    let latest = &s.get_json("alice", "/runs/r1/versions?limit=1")["items"][0];
    assert_eq!(latest["kind"], "rolled-back");
    assert_eq!(latest["rolledBackTo"], 3);
    assert_eq!(latest["version"], 6);
    let mut paths: Vec<&str> =
        latest["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    paths.sort();
    assert_eq!(paths, ["finalAnswer", "steps.0.thoughts.thought1", "steps.0.verified"]);
    // The rolled-back-over versions are still there.
    assert_eq!(
        s.get_json("alice", "/runs/r1/versions/4/steps/0")["thoughts"]["thought1"],
        "Second rewrite."
    );
    let timeline = s.get_json("alice", "/runs/r1/versions?stepIndex=0");
    let kinds: Vec<&str> =
        timeline["items"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["rolled-back", "step-edited", "step-edited", "step-created"]);
}

fn comment_threads(s: &Server) {
    s.create_run("alice", "r1");
    s.create_step("alice", "r1", 0);
    let thread = json!({
        "text": "Is the price with VAT?",
        "kind": "question",
        "anchor": {"stepIndex": 0, "field": "thoughts.thought2", "range": {"start": 4, "end": 10}, "quote": "kettle"},
    });
    let resp = s
        .req("rita", "POST", "/runs/r1/comments")
        .header("Idempotency-Key", "key-00000001")
        .json(&thread)
        .send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    let first = resp.json();
    // A retry with the same key returns the same comment instead of a second one.
    let again = s
        .req("rita", "POST", "/runs/r1/comments")
        .header("Idempotency-Key", "key-00000001")
        .json(&thread)
        .send();
    assert_eq!(again.json()["id"], first["id"]);
    let mut other = thread.clone();
    other["text"] = json!("Something else");
    let resp = s
        .req("rita", "POST", "/runs/r1/comments")
        .header("Idempotency-Key", "key-00000001")
        .json(&other)
        .send();
    resp.problem(422, "idempotency-key-reused");

    let id = first["id"].as_str().unwrap();
    let reply = json!({"text": "Yes, VAT included.", "parentId": id});
    // The annotator reads and answers the reviewer's comments once the run is in review.
    s.req("alice", "POST", "/runs/r1/comments").json(&reply).send().problem(422, "validation");
    assert_eq!(s.transition("alice", "r1", "in-review").status, 200);
    let resp = s.req("alice", "POST", "/runs/r1/comments").json(&reply).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    let answer = resp.json();
    assert_eq!((&answer["threadId"], &answer["anchor"]), (&first["id"], &first["anchor"]));
    assert_eq!(answer["kind"], Value::Null);

    // Bad threads: a reply with an anchor, a missing step, a field of the wrong level.
    let bad = json!({"text": "x", "parentId": id, "kind": "question"});
    let resp = s.req("alice", "POST", "/runs/r1/comments").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/kind");
    let bad = json!({"text": "x", "kind": "question", "anchor": {"stepIndex": 9}});
    let resp = s.req("alice", "POST", "/runs/r1/comments").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/anchor/stepIndex");
    let bad =
        json!({"text": "x", "kind": "question", "anchor": {"stepIndex": 0, "field": "taskPrompt"}});
    let resp = s.req("alice", "POST", "/runs/r1/comments").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/anchor/field");
    let bad = json!({"text": "", "kind": "question", "anchor": {"stepIndex": null, "field": "followUps.7"}});
    let resp = s.req("alice", "POST", "/runs/r1/comments").json(&bad).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/text");
    let run_level = json!({"text": "Prompt typo", "kind": "correction", "anchor": {"stepIndex": null, "field": "followUps.0"}});
    assert_eq!(s.req("quinn", "POST", "/runs/r1/comments").json(&run_level).send().status, 201);

    let run = s.get_json("alice", "/runs/r1");
    assert_eq!(
        (run["openThreads"].as_i64(), run["version"].as_i64()),
        (Some(2), Some(3)),
        "comments add no run version (the move to review made version 3)"
    );
    assert_eq!(s.get_json("alice", "/runs/r1/steps/0")["openThreads"], 1);

    // Only the author edits; resolve and reopen are on the thread's first comment.
    let edit = json!({"text": "Is the price with VAT and shipping?"});
    let path = format!("/runs/r1/comments/{id}");
    s.req("alice", "PATCH", &path).if_match(1).json(&edit).send().problem(403, "forbidden");
    let resp = s.req("rita", "PATCH", &path).if_match(1).json(&edit).send();
    assert_eq!((resp.status, resp.json()["version"].as_i64()), (200, Some(2)));
    s.req("rita", "PATCH", &path).if_match(1).json(&edit).send().problem(409, "conflict");
    let reply_path = format!("/runs/r1/comments/{}/resolve", answer["id"].as_str().unwrap());
    s.req("alice", "POST", &reply_path).send().problem(422, "validation");
    let resp = s.req("alice", "POST", &format!("{path}/resolve")).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        (resp.json()["resolved"].as_bool(), resp.json()["resolvedBy"].as_str()),
        (Some(true), Some("alice"))
    );
    let again = s.req("rita", "POST", &format!("{path}/resolve")).send();
    assert_eq!(
        (again.json()["resolvedBy"].as_str(), again.json()["version"].as_i64()),
        (Some("alice"), Some(3))
    );
    s.req("rita", "POST", &format!("{path}/reopen")).if_match(2).send().problem(409, "conflict");

    s.req("carol", "GET", "/runs/r1/comments").send().problem(404, "not-found");
    let resolved = s.get_json("alice", "/runs/r1/comments?resolved=true");
    assert_eq!(resolved["items"].as_array().unwrap().len(), 2, "the thread and its reply");
    let page = s.get_json("alice", "/runs/r1/comments?limit=2");
    assert_eq!(page["items"][1]["parentId"], first["id"]);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("alice", &format!("/runs/r1/comments?limit=2&cursor={cursor}"));
    assert_eq!(
        (page["items"][0]["kind"].as_str(), page["nextCursor"].clone()),
        (Some("correction"), Value::Null)
    );
    assert_eq!(s.get_json("alice", "/runs/r1")["openThreads"], 1);

    // The author cannot delete a comment with replies; an admin deletes it with them.
    s.req("rita", "DELETE", &path).if_match(3).send().problem(403, "forbidden");
    assert_eq!(s.req("adam", "DELETE", &path).if_match(3).send().status, 204);
    assert_eq!(s.get_json("alice", "/runs/r1/comments")["items"].as_array().unwrap().len(), 1);
}

fn batch_upsert_and_traces(s: &Server) {
    let mut bad_step = step_record("b1", 1, None);
    let mut edited = run_record("b1");
    edited["finalAnswer"] = json!("Edited offline.");
    let mut stale = run_record("b1");
    stale["followUps"] = json!(["edited elsewhere"]);
    bad_step["thoughts"]["thought3"] = json!(7);
    let batch = json!({"items": [
        {"kind": "run", "mutationId": "mut-run-b1", "runId": "b1", "baseVersion": null, "run": run_record("b1")},
        {"kind": "step", "mutationId": "mut-step-b1-0", "runId": "b1", "index": 0, "baseVersion": null, "step": step_record("b1", 0, None)},
        {"kind": "step", "runId": "b1", "index": 1, "baseVersion": null, "step": bad_step},
        {"kind": "trace", "runId": "b1", "trace": trace_record("b1", "trace-0", 0)},
        {"kind": "step", "runId": "nope", "index": 0, "baseVersion": null, "step": step_record("nope", 0, None)},
        {"kind": "run", "runId": "b1", "baseVersion": 1, "run": edited},
        {"kind": "run", "runId": "b1", "baseVersion": 1, "run": stale},
    ]});
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    let results = resp.json()["results"].as_array().unwrap().clone();
    let outcomes: Vec<&str> = results.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "ok", "rejected", "ok", "rejected", "ok", "conflict"]);
    assert_eq!(results[1]["version"], 2);
    assert_eq!(results[2]["problem"]["errors"][0]["path"], "/items/2/step/thoughts/thought3");
    assert_eq!(results[4]["problem"]["status"], 404);
    assert_eq!(results[5]["version"], 3, "step saves do not touch the header's version");
    assert_eq!(results[6]["problem"]["currentVersion"], 3);
    assert_eq!(results[6]["problem"]["changedPaths"], json!(["finalAnswer"]));
    assert_eq!(results[3]["traceId"], "trace-0");

    // Replayed after a lost response: the same results, nothing applied twice.
    let replay = json!({"items": [batch["items"][0].clone(), batch["items"][1].clone()]});
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&replay).send();
    let results = resp.json()["results"].as_array().unwrap().clone();
    assert_eq!(
        results.iter().map(|r| r["outcome"].as_str().unwrap()).collect::<Vec<_>>(),
        ["ok", "ok"]
    );
    let stored = s.get_json("alice", "/runs/b1");
    assert_eq!(stored["version"], 3);
    assert_eq!(stored["telemetry"], run_record("b1")["telemetry"], "the run's telemetry travels");

    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&json!({"items": []})).send();
    resp.problem(422, "validation");
    // An item's own fields are checked apart from its record, which its PUT's checks take.
    let item = json!({"kind": "trace", "runId": "-x", "trace": trace_record("b1", "trace-9", 0),
        "extra": 1});
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&json!({"items": [item]})).send();
    let result = &resp.json()["results"][0];
    assert_eq!(result["outcome"], "rejected", "{result}");
    let mut paths: Vec<&str> = result["problem"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/items/0/extra", "/items/0/runId"]);

    // Traces are write-once.
    let trace = trace_record("b1", "trace-1", 0);
    let path = "/runs/b1/traces/trace-1";
    assert_eq!(s.req("alice", "PUT", path).json(&trace).send().status, 201);
    assert_eq!(s.req("alice", "PUT", path).json(&trace).send().status, 200);
    let mut changed = trace.clone();
    changed["cost"] = json!(9.0);
    let resp = s.req("alice", "PUT", path).json(&changed).send();
    assert_eq!(resp.problem(409, "conflict")["current"]["cost"], 0.001);
    s.req("rita", "PUT", path).json(&trace).send().problem(403, "forbidden");
    assert_eq!(s.get_json("rita", path), trace);
    let page = s.get_json("rita", "/runs/b1/traces?limit=1");
    assert_eq!(page["items"][0]["id"], "trace-0");
    let cursor = page["nextCursor"].as_str().unwrap();
    let page = s.get_json("rita", &format!("/runs/b1/traces?limit=1&cursor={cursor}"));
    assert_eq!(
        (page["items"][0]["id"].as_str(), page["nextCursor"].clone()),
        (Some("trace-1"), Value::Null)
    );
    let mut bad = trace.clone();
    bad["apiKey"] = json!("sk-live");
    bad["attempts"][0]["raw"] = json!(null);
    let resp = s.req("alice", "PUT", "/runs/b1/traces/trace-2").json(&bad).send();
    assert_eq!(resp.refused_paths(), ["/apiKey", "/attempts/0/raw", "/id"]);
}

/// Retries racing each other with one `Idempotency-Key` act once: the first reserves the key
/// in its write's transaction, the others wait for it and answer what it answered. Before,
/// each found no answer kept yet and stored a comment of its own. A first try that fails
/// keeps nothing, so its retry is evaluated afresh.
fn racing_retries_with_one_idempotency_key_act_once(s: &Server) {
    s.create_run("alice", "r1");
    let comment = json!({"text": "Is the price with VAT?", "kind": "question",
        "anchor": {"stepIndex": null}});
    let post = |key: &str, body: &Value| {
        s.req("rita", "POST", "/runs/r1/comments").header("Idempotency-Key", key).json(body)
    };
    let racers = 8;
    let start = Barrier::new(racers);
    let answers: Vec<Resp> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..racers)
            .map(|_| {
                let (req, start) = (post("key-race-0001", &comment), &start);
                scope.spawn(move || {
                    start.wait();
                    req.send()
                })
            })
            .collect();
        threads.into_iter().map(|thread| thread.join().expect("a racer")).collect()
    });
    let first = &answers[0];
    assert_eq!(first.status, 201, "{}", first.text());
    for answer in &answers {
        let seen = (answer.status, answer.header("etag"), answer.text());
        assert_eq!(seen, (first.status, first.header("etag"), first.text()));
    }
    let stored = s.get_json("rita", "/runs/r1/comments");
    assert_eq!(stored["items"].as_array().unwrap().len(), 1, "{stored}");

    // Its anchor's step is not there yet: refused, and nothing kept under the key.
    let on_step = json!({"text": "Which kettle?", "kind": "question", "anchor": {"stepIndex": 0}});
    let refused = post("key-race-0002", &on_step).send();
    assert_eq!(refused.problem(422, "validation")["errors"][0]["path"], "/anchor/stepIndex");
    s.create_step("alice", "r1", 0);
    let created = post("key-race-0002", &on_step).send();
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(post("key-race-0002", &on_step).send().json()["id"], created.json()["id"]);
}

/// A user rotates their own token with `POST /users/me/token`: the answer carries the new
/// token (once, not to be stored by caches) and the old one's expiry; the old token stops
/// working at once, also for a second rotation. Before, only the CLI could rotate a token.
fn users_rotate_their_own_token(s: &Server) {
    let bearer = |token: &str| format!("Bearer {token}");
    let me = |token: &str| s.anon("GET", "/users/me").header("Authorization", &bearer(token));
    let rotate =
        |token: &str| s.anon("POST", "/users/me/token").header("Authorization", &bearer(token));
    s.anon("POST", "/users/me/token").send().problem(401, "unauthorized");

    let old = s.token("alice").to_owned();
    let resp = rotate(&old).send();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let body = resp.json();
    let new = body["token"].as_str().expect("a token").to_owned();
    assert!(new.starts_with("as_") && new != old, "{body}");
    assert_eq!(body["expiresAt"], Value::Null, "alice's token had no expiry: {body}");
    assert_eq!(me(&old).send().problem(401, "unauthorized")["detail"], "Unknown token.");
    assert_eq!(me(&new).send().json()["id"], "alice");
    rotate(&old).send().problem(401, "unauthorized");
    assert_eq!(me(&new).send().status, 200, "a refused rotation changes nothing");
    assert_eq!(me(s.token("carol")).send().status, 200, "nobody else's token changes");

    // A token that expires: the new one ends when the old one would have.
    let in_an_hour = sync_server::time::now_ms() + 3_600_000;
    let expiring = s.db(|store| async move {
        auth::rotate_token(&store, "carol", Some(in_an_hour)).await.unwrap()
    });
    let body = rotate(&expiring).send().json();
    assert_eq!(body["expiresAt"], sync_server::time::format_ms(in_an_hour), "{body}");
    assert_eq!(me(body["token"].as_str().unwrap()).send().json()["id"], "carol");
    assert_eq!(me(&expiring).send().status, 401);
}
