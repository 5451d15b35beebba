//! Annotation for teams (issue 29) end to end, with the real sync server on loopback and
//! SQLite, and four browser profiles: an admin registers a webhook, sets overlap 2 and
//! assigns a run to two annotators; each annotates it in their own profile, in a version
//! the other cannot see, and hands it in; the reviewer sees their agreement, merges and
//! approves; a comment on a passage survives an unrelated edit. A local receiver gets the
//! signed webhook deliveries (it answers 500 once, and the delivery is retried), the audit
//! log lists every action, and the annotator is notified.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use sync_server::auth::Role;

use crate::support::sync_server::SyncServer;
use e2e::annotation::*;
use e2e::browser::{Browser, Page};

/// One request the receiver got: its headers (names lowercased) and body.
#[derive(Clone, Debug)]
struct Received {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
    }
}

/// A webhook receiver on loopback: it answers 500 to the first request and 200 to the rest,
/// and keeps every request.
fn receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<Received>>> = Arc::default();
    let kept = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut headers = Vec::new();
            let mut line = String::new();
            reader.read_line(&mut line).ok();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
                }
            }
            let length = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0usize);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).ok();
            let first = {
                let mut got = kept.lock().unwrap();
                got.push(Received { headers, body });
                got.len() == 1
            };
            let status = if first { "500 Internal Server Error" } else { "200 OK" };
            let answer =
                format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = reader.get_mut().write_all(answer.as_bytes());
        }
    });
    (url, got)
}

fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Waits until the receiver holds a request that `test` accepts.
fn wait_received(got: &Arc<Mutex<Vec<Received>>>, what: &str, test: impl Fn(&[Received]) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !test(&got.lock().unwrap()) {
        assert!(std::time::Instant::now() < deadline, "the receiver never got {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A profile signed in to the server as `user`, on its runs list once synced.
fn profile(server: &SyncServer, user: &str) -> (Browser, Page) {
    let mut browser = Browser::launch();
    let page = open_annotation(&mut browser, "");
    configure_sync(&page, &server.url(), &server.tokens[user]);
    wait_sync(&page, "synced");
    page.wait_for_text("[data-testid=user-name]", user);
    (browser, page)
}

/// A sync round now, and its end.
fn synced(page: &Page) {
    sync_now(page);
    wait_sync(page, "synced");
}

fn shot(page: &Page, name: &str) {
    page.screenshot(
        &e2e::workspace_root().join(format!("target/tmp/screenshots/teams-{name}.png")),
    );
}

/// Selects characters `start..end` of a thought's textarea, as a person dragging over them.
fn select(page: &Page, selector: &str, quote: &str) {
    page.eval(&format!(
        "(() => {{ const a = document.querySelector({sel}); const at = a.value.indexOf({quote});
            a.focus(); a.setSelectionRange(at, at + {len}); }})()",
        sel = Value::from(selector),
        quote = Value::from(quote),
        len = quote.encode_utf16().count()
    ));
}

/// An annotator opens the run from "My queue", writes thought 2 of step 1 (and thought 3
/// of step 2), saves, and hands the version in.
fn annotate(page: &Page, user: &str, thought2: &str, thought3: &str) {
    page.wait_for(
        "document.querySelector('[data-testid=queue-item][data-run=r1]')",
        "r1 in My queue",
    );
    // The queue's row reads like the list's, and the header counts what is shown.
    page.wait_for_text("[data-testid=queue-count]", "1 run in your queue");
    let row = "[data-testid=queue-item][data-run=r1]";
    assert_eq!(page.text(&format!("{row} [data-testid=queue-status]")), "Draft");
    assert_eq!(page.text(&format!("{row} [data-testid=queue-position]")), "1");
    assert!(page.text(row).contains("ada"), "assigned by: {}", page.text(row));
    if user == "ann" {
        shot(page, "queue");
        page.click("[data-testid=queue-item][data-run=r1] button");
    } else {
        page.click("[data-testid=queue-start-next]");
    }
    page.wait_for_text("[data-testid=own-version]", "Your own version");
    page.wait_for_text("[data-testid=guidelines-link]", "Guidelines ↗");
    page.click("[data-testid=step-row][data-index='0']");
    replace_text(page, "[data-testid=thought2]", thought2);
    page.click("[data-testid=step-row][data-index='1']");
    page.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
    replace_text(page, "[data-testid=thought3]", thought3);
    page.click("[data-testid=save]");
    page.wait_for_text("[data-testid=notice]", "Saved as version");
    if user == "ann" {
        // A tag of one's own version: it goes with the hand-in, not to the run's header.
        replace_text(page, "[data-testid=run-tags]", "top-menu");
        page.wait_for_text("[data-testid=notice]", "Saved as version");
    }
    synced(page);
    if user == "ann" {
        shot(page, "own-version");
    }
    page.click("[data-testid=to-in-review]");
    page.wait_for_text("[data-testid=run-status]", "In review");
    synced(page);
}

#[test]
fn a_team_assigns_annotates_with_overlap_reviews_the_agreement_merges_and_approves() {
    let config = sync_server::Config {
        webhook_base_delay: Duration::from_millis(500),
        webhook_poll: Duration::from_millis(200),
        ..sync_server::Config::default()
    };
    let users = [
        ("ada", Role::Admin),
        ("ann", Role::Annotator),
        ("bea", Role::Annotator),
        ("quinn", Role::QaManager),
    ];
    let server = SyncServer::start_with("teams-e2e", &users, config);
    let (hook_url, received) = receiver();

    // The admin captured the run, and sends it to the server.
    let (browser_ada, ada) = profile(&server, "ada");
    seed(
        &ada,
        &[run_record("r1", "Find the kettle's price", 2)],
        &step_records(
            "r1",
            &[
                ["I start on the shop.", "I see the Kettles link.", "I should click it."],
                ["I opened Kettles.", "I see the price.", "I should answer."],
            ],
        ),
    );
    navigate(&browser_ada, &ada, "");
    synced(&ada);
    server.wait_for("quinn", "/runs/r1/steps", "both steps", |p| {
        p["items"].as_array().is_some_and(|s| s.len() == 2)
    });

    // A webhook for every event; its secret is shown once.
    ada.click("[data-testid=open-webhooks]");
    replace_text(&ada, "[data-testid=webhook-url]", &hook_url);
    ada.click("[data-testid=webhook-create]");
    let secret = ada.wait_value(
        "document.querySelector('[data-testid=webhook-secret]')?.textContent || null",
        "the webhook's secret",
    );
    let secret = secret.as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    shot(&ada, "webhooks");
    ada.click("[data-testid=secret-done]");
    assert!(!ada.visible_text().contains(&secret), "the secret is not shown again");

    // Overlap 2 and the guidelines.
    ada.click("[data-testid=open-project]");
    ada.wait_for("document.querySelector('[data-testid=project-overlap]')", "the project form");
    replace_text(&ada, "[data-testid=project-overlap]", "2");
    replace_text(&ada, "[data-testid=project-url]", "https://team.test/guidelines");
    replace_text(
        &ada,
        "[data-testid=project-markdown]",
        "# Thoughts\n- Say what **changed**\n<script>alert(1)</script>",
    );
    ada.click("[data-testid=project-save]");
    ada.wait_for_text("[data-testid=notice]", "Project settings saved.");
    shot(&ada, "project");
    ada.click("[data-testid=team-close]");

    // The admin assigns the run to both annotators.
    navigate(&browser_ada, &ada, "?agentRunId=r1&qa=false");
    ada.wait_for_text("[data-testid=assignees]", "Not assigned");
    // The guidelines come with the page's first round, above the form: wait, so the form
    // does not move under the click.
    ada.wait_for_text("[data-testid=guidelines-link]", "Guidelines");
    replace_text(&ada, "[data-testid=assign-to]", "ann, bea");
    ada.click("[data-testid=assign]");
    ada.wait_for_text("[data-testid=assignees]", "Assigned to ann, bea");
    let guidelines = ada.text("[data-testid=guidelines-text]");
    assert!(guidelines.contains("Read the guidelines"), "{guidelines}");
    assert_eq!(
        ada.eval("document.querySelectorAll('[data-testid=guidelines] script').length"),
        json!(0)
    );

    // Each annotator annotates in their own profile, in their own version.
    let (_browser_ann, ann) = profile(&server, "ann");
    ann.wait_for_text("[data-testid=notification-count]", "1");
    annotate(
        &ann,
        "ann",
        "I see the Kettles link in the top menu.",
        "I should answer with the price.",
    );
    let (_browser_bea, bea) = profile(&server, "bea");
    annotate(&bea, "bea", "The Kettles link is in the menu at the top.", "I answer 24.99 €.");
    // ann's tag is handed in with her version, and the run's header is untouched until the
    // merge.
    let sets = server.get("quinn", "/runs/r1/annotations").json();
    let ann_set = sets["items"].as_array().unwrap().iter().find(|v| v["annotator"] == "ann");
    assert_eq!(ann_set.unwrap()["tags"], json!(["top-menu"]), "{sets}");
    assert_eq!(server.get("quinn", "/runs/r1").json()["tags"], json!([]));
    // Neither read the other's text: the run's own steps are as captured until the merge.
    let steps = server.get("quinn", "/runs/r1/steps").json();
    assert_eq!(steps["items"][0]["thoughts"]["thought2"], "I see the Kettles link.");
    assert_eq!(server.get("ann", "/runs/r1/annotations/bea/steps").status, 404);
    server.wait_for("quinn", "/runs/r1", "the run in review", |run| run["status"] == "in-review");

    // The reviewer sees the agreement, takes step 1 from ann and step 2 from bea.
    let (browser_q, quinn) = profile(&server, "quinn");
    navigate(&browser_q, &quinn, "?agentRunId=r1&qa=true");
    quinn.wait_for_text("[data-testid=run-status]", "In review");
    quinn.click("[data-testid=tab-agreement]");
    quinn.wait_for_text("[data-testid=agreement-run]", "Run agreement");
    let step1 =
        quinn.text("[data-testid=agreement-step][data-index='0'] [data-testid=agreement-score]");
    assert_ne!(step1, "100%", "the two versions of step 1 differ");
    assert_eq!(
        quinn.eval("document.querySelectorAll('[data-testid=agreement-annotator]').length"),
        json!(2)
    );
    quinn.click("[data-testid=pick-all][data-annotator=ann]");
    quinn.click("[data-testid=step-row][data-index='1']");
    // Step 1's versions are on screen already: wait for step 2's, not any of bea's.
    quinn.wait_for(
        "document.querySelector('[data-testid=versions][data-index=\\'1\\'] [data-testid=version][data-annotator=bea]')",
        "bea's step 2",
    );
    // Step 2's versions differ in thought 3 only: that is what is marked, and the action
    // reads as the rest of the page names one.
    let marks = quinn.eval(
        "[...document.querySelectorAll('[data-testid=version][data-annotator=bea] [data-testid=version-thought]')].map(t => t.dataset.differs)",
    );
    assert_eq!(marks, json!(["false", "false", "true"]));
    assert_eq!(
        quinn.eval("document.querySelector('[data-testid=version][data-annotator=bea] [data-testid=version-action]').dataset.differs"),
        json!("false")
    );
    assert!(
        !quinn
            .text("[data-testid=version][data-annotator=bea] [data-testid=version-action]")
            .contains('{')
    );
    assert!(quinn.text("[data-testid=step-scores]").contains("Step 2"));
    quinn.click("[data-testid=version][data-annotator=bea] [data-testid=take-step]");
    shot(&quinn, "agreement");
    quinn.click("[data-testid=resolve-merge]");
    quinn.wait_for_text("[data-testid=notice]", "The merge is saved as version");
    server.wait_for("quinn", "/runs/r1/steps", "the merged steps", |p| {
        p["items"][0]["thoughts"]["thought2"] == "I see the Kettles link in the top menu."
            && p["items"][1]["thoughts"]["thought3"] == "I answer 24.99 €."
    });
    assert_eq!(server.get("quinn", "/runs/r1").json()["tags"], json!(["top-menu"]));
    quinn.click("[data-testid=step-row][data-index='0']");
    quinn.wait_for(
        "document.querySelector('[data-testid=thought2]')?.value === 'I see the Kettles link in the top menu.'",
        "the merged text in the reviewer's editor",
    );

    // A comment on a passage of thought 2, then an unrelated edit in front of it.
    select(&quinn, "[data-testid=thought2]", "in the top menu");
    quinn.click("[data-testid=comment-passage2]");
    quinn.wait_for_text("[data-testid=comment-on-passage]", "“in the top menu”");
    replace_text(&quinn, "[data-testid=comment-text]", "Which menu: the header or the side bar?");
    quinn.click("[data-testid=comment-post]");
    quinn.wait_for_text("[data-testid=comment-passage]", "“in the top menu”");
    synced(&quinn);
    let comment = server.wait_for("quinn", "/runs/r1/comments", "the passage comment", |p| {
        p["items"][0]["anchor"]["quote"] == "in the top menu"
    });
    let start = comment["items"][0]["anchor"]["range"]["start"].as_u64().unwrap();
    navigate(&browser_q, &quinn, "?agentRunId=r1&qa=false");
    quinn.click("[data-testid=step-row][data-index='0']");
    replace_text(
        &quinn,
        "[data-testid=thought2]",
        "On the home page, I see the Kettles link in the top menu.",
    );
    quinn.click("[data-testid=save]");
    quinn.wait_for_text("[data-testid=notice]", "Saved as version");
    synced(&quinn);
    let moved = server.wait_for("quinn", "/runs/r1/comments", "the comment re-anchored", |p| {
        p["items"][0]["anchor"]["range"]["start"].as_u64() == Some(start + 18)
    });
    assert_eq!(moved["items"][0]["outdated"], false, "the passage survived the edit");
    navigate(&browser_q, &quinn, "?agentRunId=r1&qa=true");
    quinn.click("[data-testid=tab-review]");
    synced(&quinn);
    quinn.wait_for(
        "document.querySelector('[data-testid=comment-passage]')?.dataset.outdated === 'false'",
        "the passage comment, current",
    );
    // A suggestion on a passage shows as a tracked change on that range only.
    select(&quinn, "[data-testid=thought2]", "top menu");
    quinn.click("[data-testid=suggest-passage2]");
    replace_text(&quinn, "[data-testid=suggest-text]", "header's menu");
    quinn.click("[data-testid=suggest-submit]");
    quinn.wait_for_text("[data-testid=tracked-del]", "top menu");
    quinn.wait_for_text("[data-testid=tracked-ins]", "header's menu");
    shot(&quinn, "passage");
    synced(&quinn);
    let suggestion =
        server.wait_for("quinn", "/runs/r1/suggestions", "the passage suggestion", |p| {
            p["items"][0]["passage"]["quote"] == "top menu"
        });
    // The run's author decides it; here the reviewer withdraws it so approval can go on.
    let id = suggestion["items"][0]["id"].as_str().unwrap().to_owned();
    let withdrawn =
        server.send("quinn", "DELETE", &format!("/runs/r1/suggestions/{id}"), &json!({}));
    assert_eq!(withdrawn.status, 200, "{}", withdrawn.body);
    synced(&quinn);

    // Approve.
    quinn.wait_for(
        "!document.querySelector('[data-testid=pending-count]')",
        "no suggestion pending",
    );
    quinn.click("[data-testid=to-approved]");
    quinn.click("[data-testid=approve-anyway]");
    quinn.wait_for_text("[data-testid=run-status]", "Approved");
    server.wait_for("quinn", "/runs/r1", "the run approved", |run| run["status"] == "approved");

    // The annotator is told, and their copy of the run is the approved merge now.
    synced(&ann);
    ann.wait_for_text("[data-testid=run-status]", "Approved");
    assert_eq!(thought(&ann, 3), "I answer 24.99 €.", "step 2 as merged from bea's version");
    assert_eq!(ann.eval("document.querySelector('[data-testid=own-version]')"), Value::Null);
    ann.click("[data-testid=notifications]");
    ann.wait_for(
        "document.querySelector('[data-testid=notification][data-kind=run-approved]')",
        "the approval notification",
    );
    shot(&ann, "notifications");
    ann.click("[data-testid=read-all]");
    ann.wait_for(
        "!document.querySelector('[data-testid=notification][data-read=false]')",
        "every notification read",
    );
    synced(&ann);
    ann.wait_for("!document.querySelector('[data-testid=notification-count]')", "the badge gone");

    // Signed deliveries: the first answered 500 and was tried again with the same id.
    wait_received(&received, "the approval", |got| {
        got.iter().any(|r| r.header("x-alphascout-event") == "run.approved")
    });
    let got = received.lock().unwrap().clone();
    for request in &got {
        assert_eq!(request.header("x-alphascout-signature"), signature(&secret, &request.body));
    }
    let events: BTreeSet<&str> = got.iter().map(|r| r.header("x-alphascout-event")).collect();
    for event in ["assignment.changed", "run.submitted", "comment.added", "run.approved"] {
        assert!(events.contains(event), "{event} in {events:?}");
    }
    let first = got[0].header("x-alphascout-delivery");
    assert!(
        got[1..].iter().any(|r| r.header("x-alphascout-delivery") == first),
        "the delivery answered 500 was retried"
    );
    ada.click("[data-testid=open-webhooks]");
    ada.wait_for("document.querySelector('[data-testid=webhook-deliveries]')", "the hook");
    ada.click("[data-testid=webhook-deliveries]");
    ada.wait_for(
        "document.querySelector('[data-testid=delivery][data-status=delivered][data-attempts=\"2\"]')",
        "the retried delivery, delivered on its second attempt",
    );
    ada.click("[data-testid=webhook-pause]");
    ada.wait_for(
        "document.querySelector('[data-testid=webhook][data-paused=true]')",
        "the hook paused",
    );

    // The audit log lists every action.
    ada.click("[data-testid=open-audit]");
    ada.wait_for(
        "document.querySelectorAll('[data-testid=audit-entry]').length > 5",
        "the audit log",
    );
    shot(&ada, "audit");
    // Each entry says what changed, field by field; the JSON is there on demand.
    let assigned = ada.text(
        "[data-testid=audit-entry][data-action='assignment.changed'] [data-testid=audit-change][data-field=annotators]",
    );
    assert!(assigned.contains(" → ") && assigned.contains("\"bea\""), "{assigned}");
    let actions = ada.eval(
        "[...document.querySelectorAll('[data-testid=audit-entry]')].map(e => e.dataset.action)",
    );
    let actions: BTreeSet<String> =
        actions.as_array().unwrap().iter().filter_map(|a| a.as_str().map(str::to_owned)).collect();
    let server_log = server.get("ada", "/audit?limit=200").json();
    let logged: BTreeSet<String> = server_log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(actions, logged, "the page lists what the server logged");
    for action in [
        "webhook.created",
        "project.updated",
        "assignment.changed",
        "annotation.saved",
        "comment.created",
    ] {
        assert!(actions.contains(action), "{action} in {actions:?}");
    }
    replace_text(&ada, "[data-testid=audit-user]", "bea");
    ada.click("[data-testid=audit-apply]");
    ada.wait_for(
        "[...document.querySelectorAll('[data-testid=audit-entry]')].every(e => e.children[2].textContent === 'bea')",
        "only bea's entries",
    );

    // Agreement over time: the admin sees each annotator's week by name; the QA manager sees
    // the annotators only as an anonymised mean, and an annotator sees their own line.
    ada.click("[data-testid=open-figures]");
    ada.wait_for(
        "document.querySelectorAll('[data-testid=series-label]').length === 2",
        "ann's and bea's agreement by week",
    );
    let labels = ada.text("[data-testid=agreement-series] thead");
    assert!(labels.contains("ann") && labels.contains("bea"), "{labels}");
    assert_eq!(
        ada.eval("document.querySelectorAll('[data-testid=series-week]').length"),
        json!(1),
        "one week so far"
    );
    shot(&ada, "figures");
    quinn.click("[data-testid=open-figures]");
    let peers =
        quinn.wait_for_text("[data-testid=agreement-series] thead", "Peers (anonymised mean)");
    assert!(!peers.contains("ann") && !peers.contains("bea"), "{peers}");
    let rows = quinn.eval(
        "[...document.querySelectorAll('[data-testid=figure]')].map(r => r.children[0].textContent)",
    );
    assert_eq!(rows, json!(["Annotator 1", "Annotator 2"]), "peers by number, never by name");
    shot(&quinn, "figures-peers");
    ann.click("[data-testid=open-figures]");
    ann.wait_for_text("[data-testid=agreement-series] thead", "ann (you)");
    assert_eq!(
        ann.eval("document.querySelectorAll('[data-testid=series-label]').length"),
        json!(1),
        "an annotator's own line only"
    );
}

/// Filters the list by the collection `name` once the list offers it.
fn filter_collection(page: &Page, name: &str) {
    page.wait_for(
        &format!(
            "[...document.querySelectorAll('[data-testid=filter-collection] option')].some(o => o.value === {})",
            Value::from(name)
        ),
        "the collection among the filters",
    );
    choose(page, "[data-testid=filter-collection]", name);
}

/// Picks exactly `runs` on the list (each picked once, whatever was picked before).
fn pick(page: &Page, runs: &[&str]) {
    let picked = |id: &str| {
        page.eval(&format!(
            "document.querySelector('[data-run={id}] input[type=checkbox]').checked"
        )) == json!(true)
    };
    let all: Vec<String> = page
        .eval("[...document.querySelectorAll('[data-testid=run-row]')].map(r => r.dataset.run)")
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    for id in &all {
        if picked(id) != runs.contains(&id.as_str()) {
            page.click(&format!("[data-run={id}] input[type=checkbox]"));
        }
    }
    page.wait_for_text("[data-testid=batch-bar]", &format!("{} picked", runs.len()));
}

/// Waits until the server holds `runs`, each with its two steps.
fn on_server(server: &SyncServer, runs: &[&str]) {
    for run in runs {
        server.wait_for("quinn", &format!("/runs/{run}/steps"), "the run's steps", |p| {
            p["items"].as_array().is_some_and(|s| s.len() == 2)
        });
    }
}

/// Issue 29's shared side of curating: runs assigned in turn over the list's filter; a
/// collection made in one profile, with the quality and time measured there, read in
/// another with the server's metadata, and its export recorded; batch review in one
/// request, the server's refusal of a run with a pending suggestion named in the notice.
#[test]
fn a_collection_with_its_quality_and_time_reaches_another_profile_and_batch_review_goes_to_the_server()
 {
    let users = [
        ("ada", Role::Admin),
        ("ann", Role::Annotator),
        ("bea", Role::Annotator),
        ("quinn", Role::QaManager),
    ];
    let server = SyncServer::start_with("teams-curate-e2e", &users, sync_server::Config::default());
    let (browser_q, quinn) = profile(&server, "quinn");
    let runs = [
        ("k1", "Find the blender's price"),
        ("k2", "Compare two blenders"),
        ("t1", "Find a toaster"),
        ("t2", "Order a toaster"),
    ];
    let thoughts = [
        ["I start on the shop.", "I see the menu.", "I should open it."],
        ["I opened the menu.", "I see the list.", "I should answer."],
    ];
    let steps: Vec<Value> = runs.iter().flat_map(|(id, _)| step_records(id, &thoughts)).collect();
    let records: Vec<Value> = runs.iter().map(|(id, prompt)| run_record(id, prompt, 2)).collect();
    seed(&quinn, &records, &steps);
    navigate(&browser_q, &quinn, "");
    synced(&quinn);
    on_server(&server, &["k1", "k2", "t1", "t2"]);

    // Round-robin over the list's filter: the two blender runs, one to each annotator.
    replace_text(&quinn, "[data-testid=search]", "blender");
    quinn.wait_for_text("[data-testid=runs-count]", "2 of 4 runs");
    replace_text(&quinn, "[data-testid=round-robin-to]", "ann, bea");
    shot(&quinn, "round-robin");
    quinn.click("[data-testid=round-robin]");
    quinn.wait_for_text("[data-testid=notice]", "Assigned 2 runs in turn.");
    let queue = |user: &str| -> Vec<String> {
        let page = server.get(user, "/users/me/queue").json();
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["assignment"]["runId"].as_str().map(str::to_owned))
            .collect()
    };
    let (ann_queue, bea_queue) = (queue("ann"), queue("bea"));
    assert_eq!((ann_queue.len(), bea_queue.len()), (1, 1), "{ann_queue:?} {bea_queue:?}");
    let mut both = [ann_queue[0].clone(), bea_queue[0].clone()];
    both.sort();
    assert_eq!(both, ["k1", "k2"], "only the runs the filter showed, in turn");

    // Quality and time are measured here as the curator edits a toaster run.
    replace_text(&quinn, "[data-testid=search]", "");
    navigate(&browser_q, &quinn, "?agentRunId=t1&qa=false");
    quinn.click("[data-testid=step-row][data-index='0']");
    replace_text(&quinn, "[data-testid=thought2]", "I see the menu with the toasters in it.");
    replace_text(&quinn, "[data-testid=thought3]", "I should open the toasters.");
    quinn.click("[data-testid=save]");
    quinn.wait_for_text("[data-testid=notice]", "Saved as version");
    synced(&quinn);
    let metrics = server.wait_for("quinn", "/runs/t1/metrics", "t1's quality and time", |m| {
        m["quality"].is_u64() && m["timeSpentMs"].as_u64().is_some_and(|ms| ms > 0)
    });
    synced(&quinn);
    quinn.wait_for_text("[data-testid=team-time]", "(yours");

    // The collection, made on the list with its description.
    navigate(&browser_q, &quinn, "");
    pick(&quinn, &["t1", "t2"]);
    replace_text(&quinn, "[data-testid=collection-name]", "Toasters");
    quinn.click("[data-testid=collection-add]");
    quinn.wait_for_text("[data-testid=notice]", "Added 2 runs to the collection “Toasters”");
    filter_collection(&quinn, "Toasters");
    replace_text(&quinn, "[data-testid=collection-description]", "Toaster runs for the study");
    synced(&quinn);
    let shared = server.wait_for("ada", "/collections", "the shared collection", |p| {
        let c = &p["items"][0];
        c["name"] == "Toasters"
            && c["description"] == "Toaster runs for the study"
            && c["metadata"]["runs"] == 2
            && c["metadata"]["averageTimePerStepMs"].is_number()
    });
    assert_eq!(
        shared["items"][0]["metadata"]["averageQuality"].as_f64(),
        metrics["quality"].as_f64(),
        "one run scored: its quality is the average"
    );
    quinn.wait_for(
        "document.querySelector('[data-testid=collection]')?.dataset.shared === 'true'",
        "the collection shared",
    );

    // Another profile reads it, with the server's figures, and exports it.
    let (browser_a, ada) = profile(&server, "ada");
    navigate(&browser_a, &ada, "");
    synced(&ada);
    filter_collection(&ada, "Toasters");
    let meta = ada.wait_for_text("[data-testid=collection-meta]", "2 runs");
    for fact in [
        format!("average quality {}", metrics["quality"]),
        "per step".to_owned(),
        "by quinn".to_owned(),
        "never exported".to_owned(),
    ] {
        assert!(meta.contains(&fact), "{fact} in {meta}");
    }
    assert_eq!(
        ada.eval("document.querySelector('[data-testid=collection-description]').value"),
        json!("Toaster runs for the study")
    );
    ada.wait_for_text("[data-testid=runs-count]", "2 of 4 runs");
    shot(&ada, "collection");
    let downloads = allow_downloads(&browser_a, "teams-collection");
    ada.click("[data-testid=export-open]");
    choose(&ada, "[data-testid=export-format]", "jsonl");
    ada.click("[data-testid=export-go]");
    wait_for_download(&downloads, ".jsonl");
    synced(&ada);
    server.wait_for("ada", "/collections", "the export recorded", |p| {
        p["items"][0]["metadata"]["lastExportedAt"].is_string()
    });
    synced(&quinn);
    quinn.wait_for_text("[data-testid=collection-meta]", "last exported");

    // Batch review: both submitted in one request, then approval refused for the run with a
    // suggestion its author has not decided.
    choose(&quinn, "[data-testid=filter-collection]", "");
    quinn.wait_for_text("[data-testid=runs-count]", "4 of 4 runs");
    pick(&quinn, &["t1", "t2"]);
    quinn.click("[data-testid=batch-submit]");
    quinn.wait_for_text("[data-testid=notice]", "2 runs moved to In review");
    server.wait_for("ada", "/runs/t2", "t2 in review", |r| r["status"] == "in-review");
    let step = server.get("ada", "/runs/t2/steps").json();
    let suggestion = json!({"stepIndex": 0, "field": "thoughts.thought1",
        "baseVersion": step["items"][0]["version"], "proposed": "I start on the toaster shop."});
    let made = server.send("ada", "POST", "/runs/t2/suggestions", &suggestion);
    assert_eq!(made.status, 201, "{}", made.body);
    pick(&quinn, &["t1", "t2"]);
    quinn.click("[data-testid=batch-approve]");
    quinn.click("[data-testid=batch-approve-all]");
    let notice = quinn.wait_for_text("[data-testid=notice]", "1 run moved to Approved");
    assert!(notice.contains("Not moved: Order a toaster"), "{notice}");
    assert!(notice.to_lowercase().contains("suggestion"), "the server's reason: {notice}");
    shot(&quinn, "batch-approve");
    assert_eq!(server.get("ada", "/runs/t1").json()["status"], "approved");
    assert_eq!(server.get("ada", "/runs/t2").json()["status"], "in-review");
    quinn.wait_for_text("[data-run=t1] [data-testid=run-status]", "Approved");
}
