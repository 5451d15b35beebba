//! Two browser profiles sync the same run through the real sync server on loopback (SQLite
//! in a temp folder): the first push, the pull into the second profile, an offline queue,
//! and a conflict that a person resolves without anything being overwritten silently.

use crate::support::sync_server::SyncServer;
use e2e::annotation::*;
use e2e::browser::Browser;
use serde_json::json;

fn thought1_on_server(server: &SyncServer, text: &'static str) {
    server.wait_for("quinn", "/runs/r7/steps", &format!("thought 1 = {text:?}"), move |page| {
        page["items"][0]["thoughts"]["thought1"] == text
    });
}

#[test]
fn two_profiles_sync_through_the_server_and_a_conflict_is_resolved_by_a_person() {
    let server = SyncServer::start("sync-e2e");

    // Profile A captured the run; it works offline until the server is reachable.
    let mut browser_a = Browser::launch();
    let a = open_annotation(&mut browser_a, "");
    assert_eq!(a.text("[data-testid=sync-state]"), "Local only");
    let mut captured = run_record("r7", "Find the kettle's price", 2);
    captured["telemetry"] = json!({
        "log": [{"at": 1795000000000.0, "step": 1, "kind": "pause", "message": "Paused by the user"}],
        "pauses": 1, "resumes": 0, "thinkingCalls": 1,
        "spend": {"navigator": {"calls": 2, "inputTokens": 900, "outputTokens": 80, "cost": 0.002}}
    });
    seed(
        &a,
        &[captured.clone()],
        &step_records(
            "r7",
            &[
                ["I start on the shop.", "I can see the Kettles link.", "I should click it."],
                ["I opened Kettles.", "I can see 24.99 €.", "I should return the price."],
            ],
        ),
    );
    navigate(&browser_a, &a, "");
    configure_sync(&a, "http://127.0.0.1:9", &server.tokens["ann"]);
    wait_sync(&a, "offline");
    assert!(a.text("[data-testid=sync-state]").contains("queued"), "the queue is shown");
    configure_sync(&a, &server.url(), &server.tokens["ann"]);
    wait_sync(&a, "synced");
    let stored = a.eval("JSON.stringify(localStorage)").to_string();
    assert!(!stored.contains(&server.tokens["ann"]), "the token is not in localStorage");

    let run = server.wait_for("quinn", "/runs/r7", "run r7", |run| run["id"] == "r7");
    assert_eq!(run["annotator"], "ann", "the run is its uploader's");
    assert_eq!(run["telemetry"], captured["telemetry"], "its telemetry went with it");
    let steps = server.wait_for("quinn", "/runs/r7/steps", "both steps", |page| {
        page["items"].as_array().is_some_and(|s| s.len() == 2)
    });
    let key = steps["items"][0]["screenshot"]["key"].as_str().unwrap().to_owned();
    assert_eq!(
        server.get("quinn", &format!("/screenshots/{key}")).status,
        200,
        "the screenshot was uploaded"
    );

    // A change the server refuses is shown with its reason and can be discarded.
    navigate(&browser_a, &a, "?agentRunId=r7&qa=false");
    a.click("[data-testid=step-row][data-index='1']");
    a.wait_for_text("[data-testid=step-heading]", "Step 2 of 2");
    replace_text(&a, "[data-testid=thought3]", &"a".repeat(20_001));
    a.click("[data-testid=save]");
    wait_sync(&a, "error");
    a.click("[data-testid=sync-state]");
    let refused = a.text("[data-testid=refused]");
    assert!(refused.contains("step 2 of run r7") && refused.contains("thought3"), "{refused}");
    a.click("[data-testid=discard-change]");
    wait_sync(&a, "synced");
    a.click("[data-testid=sync-close]");

    // Profile B (a QA manager) pulls it, screenshots and all.
    let mut browser_b = Browser::launch();
    let b = open_annotation(&mut browser_b, "");
    configure_sync(&b, &server.url(), &server.tokens["quinn"]);
    wait_sync(&b, "synced");
    b.wait_for_text("[data-testid=runs-count]", "1 of 1 runs");
    navigate(&browser_b, &b, "?agentRunId=r7&qa=false");
    b.wait_for(
        "document.querySelector('[data-testid=screenshot-img]')?.complete",
        "the pulled screenshot",
    );

    // A edits step 1 and syncs first.
    navigate(&browser_a, &a, "?agentRunId=r7&qa=false");
    replace_text(&a, "[data-testid=thought1]", "I start on the shop's home page.");
    a.click("[data-testid=save]");
    a.wait_for_text("[data-testid=notice]", "Saved as version");
    thought1_on_server(&server, "I start on the shop's home page.");

    // B edited the same thought from the older copy: a conflict, nothing overwritten.
    replace_text(&b, "[data-testid=thought1]", "I begin on the Fixture Shop front page.");
    b.click("[data-testid=save]");
    b.wait_for_text("[data-testid=notice]", "Saved as version");
    wait_sync(&b, "conflict");
    assert_eq!(b.text("[data-testid=sync-state]"), "1 conflict to resolve");
    thought1_on_server(&server, "I start on the shop's home page.");
    b.click("[data-testid=sync-state]");
    assert_eq!(b.text("[data-testid=conflict-mine]"), "I begin on the Fixture Shop front page.");
    assert_eq!(b.text("[data-testid=conflict-theirs]"), "I start on the shop's home page.");
    b.click("[data-testid=keep-mine]");
    thought1_on_server(&server, "I begin on the Fixture Shop front page.");
    wait_sync(&b, "synced");

    // A pulls B's resolution into its open, unedited run.
    a.click("[data-testid=sync-state]");
    a.click("[data-testid=sync-now]");
    a.wait_for(
        "document.querySelector('[data-testid=thought1]')?.value === 'I begin on the Fixture Shop front page.'",
        "B's text in A's editor",
    );

    // Status moves by the server's transitions: submitting here submits there.
    a.click("[data-testid=sync-close]");
    a.click("[data-testid=to-in-review]");
    a.wait_for_text("[data-testid=run-status]", "In review");
    server.wait_for("quinn", "/runs/r7", "the run in review", |run| run["status"] == "in-review");

    // Review across profiles: B suggests and comments, A sees both, accepts, and B approves.
    navigate(&browser_b, &b, "?agentRunId=r7&qa=true");
    b.wait_for_text("[data-testid=run-status]", "In review");
    b.click("[data-testid=suggest2]");
    replace_text(
        &b,
        "[data-testid=suggest-text]",
        "I can see the Kettles link in the top menu, but the list is not open yet.",
    );
    b.click("[data-testid=suggest-submit]");
    // The suggestion is saved before the comment is written, as a person sees it appear.
    b.wait_for_text("[data-testid=pending-count]", "1 suggestion pending");
    replace_text(&b, "[data-testid=comment-text]", "Say where the link is.");
    b.click("[data-testid=comment-post]");
    b.wait_for_text("[data-testid=threads]", "Say where the link is.");
    sync_now(&b);
    server.wait_for("quinn", "/runs/r7/suggestions", "the suggestion", |page| {
        page["items"].as_array().is_some_and(|s| s.len() == 1)
    });
    server.wait_for("quinn", "/runs/r7/comments", "the comment", |page| {
        page["items"][0]["text"] == "Say where the link is."
    });

    sync_now(&a);
    a.click("[data-testid=tab-review]");
    a.wait_for_text("[data-testid=threads]", "Say where the link is.");
    a.click("[data-testid=suggestion-accept]");
    a.wait_for(
        "document.querySelector('[data-testid=thought2]').value === 'I can see the Kettles link in the top menu, but the list is not open yet.'",
        "the accepted suggestion in A's thought",
    );
    server.wait_for("quinn", "/runs/r7/suggestions", "the suggestion accepted", |page| {
        page["items"][0]["state"] == "accepted"
    });
    server.wait_for("quinn", "/runs/r7/steps", "the accepted text", |page| {
        page["items"][0]["thoughts"]["thought2"]
            == "I can see the Kettles link in the top menu, but the list is not open yet."
    });

    sync_now(&b);
    b.wait_for(
        "document.querySelector('[data-testid=suggestion][data-state=accepted]')",
        "B to see the acceptance",
    );
    b.click("[data-testid=to-approved]");
    // Steps not marked complete: the reviewer says yes to approving it as it is.
    b.click("[data-testid=approve-anyway]");
    b.wait_for_text("[data-testid=run-status]", "Approved");
    server.wait_for("quinn", "/runs/r7", "the run approved", |run| {
        run["status"] == "approved" && run["reviewedBy"] == "quinn"
    });
}
