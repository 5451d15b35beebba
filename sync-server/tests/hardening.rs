//! The server under load, failure and abuse: replay records that stay cheap as they grow,
//! crashes between a write and its replay record, idle and half-sent connections, clocks
//! that disagree, and what one user may learn of another's data. Each scenario runs on
//! SQLite, and on PostgreSQL too when `SYNC_TEST_POSTGRES_URL` is set.

mod support;

use serde_json::json;
use support::{Server, run_record};
use sync_server::store::{REPLAY_TABLES, prune_sql};

on_both_backends!(
    replay_records_are_indexed_and_pruned_off_the_write_path,
    a_retry_after_a_crash_finds_the_write_and_its_answer_together,
);

/// Batch results and `Idempotency-Key` answers are kept for replays, then pruned; the
/// pruning is the store's (a background task in `serve`), never a scan inside a write, and
/// it and the replay lookups read indexes, not whole tables.
fn replay_records_are_indexed_and_pruned_off_the_write_path(s: &Server) {
    let long_ago = "2020-01-01T00:00:00.000Z";
    s.execute(&format!(
        "INSERT INTO mutations (user_id, mutation_id, result, created_at) \
         VALUES ('alice', 'mut-old-0001', '{{}}', '{long_ago}')"
    ));
    s.execute(&format!(
        "INSERT INTO idempotency (user_id, idem_key, fingerprint, status, etag, body, created_at) \
         VALUES ('alice', 'key-old-0001', 'x', 201, NULL, '{{}}', '{long_ago}')"
    ));
    let batch = json!({"items": [
        {"kind": "run", "mutationId": "mut-new-0001", "runId": "p1", "baseVersion": null, "run": run_record("p1")},
    ]});
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    assert_eq!(resp.json()["results"][0]["outcome"], "ok", "{}", resp.text());
    let resp = s
        .req("alice", "POST", "/runs/p1/comments")
        .header("Idempotency-Key", "key-new-0001")
        .json(&json!({"text": "Looks right.", "anchor": {"stepIndex": null}, "kind": "question"}))
        .send();
    assert_eq!(resp.status, 201, "{}", resp.text());
    let count = |table: &str| s.count(&format!("SELECT COUNT(*) AS n FROM {table}"));
    assert_eq!((count("mutations"), count("idempotency")), (2, 2), "writes do not prune");

    let pruned = s.db(|store| async move { store.prune().await.unwrap() });
    assert_eq!(pruned, 2);
    let ids = s.count("SELECT COUNT(*) AS n FROM mutations WHERE mutation_id = 'mut-new-0001'");
    let keys = s.count("SELECT COUNT(*) AS n FROM idempotency WHERE idem_key = 'key-new-0001'");
    assert_eq!((count("mutations"), ids, count("idempotency"), keys), (1, 1, 1, 1));

    // Pruning reads the age index; the replay lookups read the primary keys.
    for (table, _) in REPLAY_TABLES {
        let plan = s.plan(&prune_sql(table), &[long_ago]);
        assert!(plan.contains(&format!("{table}_by_created")), "{table}: {plan}");
    }
    let lookups = [
        "SELECT result FROM mutations WHERE user_id = $1 AND mutation_id = $2",
        "SELECT fingerprint FROM idempotency WHERE user_id = $1 AND idem_key = $2 \
         AND created_at >= $3",
    ];
    for sql in lookups {
        let plan = s.plan(sql, &["alice", "k", long_ago]);
        let indexed = match s.backend {
            support::Backend::Sqlite => plan.starts_with("SEARCH") && plan.contains("INDEX"),
            support::Backend::Postgres => plan.contains("Index"),
        };
        assert!(indexed, "{sql}: {plan}");
    }
}

/// A crash between a write and the record that answers its retry is played by a trigger
/// that fails the record's insert. The write must go with it: the retry then does the write
/// once, instead of finding it done and answering a conflict with itself.
fn a_retry_after_a_crash_finds_the_write_and_its_answer_together(s: &Server) {
    let batch = json!({"items": [
        {"kind": "run", "mutationId": "mut-crash-0001", "runId": "c1", "baseVersion": null, "run": run_record("c1")},
    ]});
    s.fail_inserts("mutations");
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    resp.problem(500, "internal");
    s.allow_inserts("mutations");
    s.req("alice", "GET", "/runs/c1").send().problem(404, "not-found");
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    let result = &resp.json()["results"][0];
    assert_eq!((result["outcome"].as_str(), result["version"].as_i64()), (Some("ok"), Some(1)));
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    assert_eq!(resp.json()["results"][0]["outcome"], "ok", "a replay gets the kept result");
    assert_eq!(s.get_json("alice", "/runs/c1/versions")["items"].as_array().unwrap().len(), 1);

    // The same for an answer kept under an Idempotency-Key.
    let transition = || {
        s.req("alice", "POST", "/runs/c1/transitions")
            .if_match(1)
            .header("Idempotency-Key", "key-crash-0001")
            .json(&json!({"to": "in-review"}))
            .send()
    };
    s.fail_inserts("idempotency");
    transition().problem(500, "internal");
    s.allow_inserts("idempotency");
    assert_eq!(s.get_json("alice", "/runs/c1")["status"], "draft");
    let resp = transition();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        (resp.json()["status"].as_str(), resp.json()["version"].as_i64()),
        (Some("in-review"), Some(2))
    );
    let again = transition();
    assert_eq!((again.status, again.json()["version"].as_i64()), (200, Some(2)));
}
