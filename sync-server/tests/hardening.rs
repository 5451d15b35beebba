//! The server under load, failure and abuse: replay records that stay cheap as they grow,
//! crashes between a write and its replay record, idle, half-sent and unread connections and
//! peers that open too many, clocks that disagree, and what one user may learn of another's
//! data. Each scenario runs on SQLite, and on PostgreSQL too when `SYNC_TEST_POSTGRES_URL` is
//! set; the connection tests run on SQLite only (connections do not depend on the database).

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use annotation_core::sync::{self, SyncSettings};
use serde_json::{Value, json};
use support::{Backend, Server, jpeg, run_record, step_record, trace_record};
use sync_server::store::{REPLAY_TABLES, prune_sql};
use sync_server::{Config, auth};

on_both_backends!(
    replay_records_are_indexed_and_pruned_off_the_write_path,
    a_retry_after_a_crash_finds_the_write_and_its_answer_together,
    a_client_whose_clock_is_an_hour_ahead_still_pulls_others_updates,
    a_queue_goes_in_batches_under_the_body_limit_and_a_giant_alone_is_held_back,
    health_says_the_database_is_down_but_not_why,
    creating_a_run_with_someone_elses_id_is_refused_without_saying_so,
    an_approved_run_takes_no_traces,
    screenshots_are_read_through_runs_one_may_see_and_say_nothing_else,
    tokens_expire_and_can_be_rotated_and_revoked,
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

/// Silent sockets, request heads cut off and bodies that never finish are all closed once
/// their timeouts pass (a body that never finished is answered `408` first), and while they
/// are open an authenticated request is still answered. Connections do not depend on the
/// database, so this runs on SQLite only. The margins are wide: the timeouts are 1 and 2 s,
/// the sockets get 30 s to be closed.
#[test]
fn idle_and_half_sent_connections_are_closed_and_others_still_served() {
    let config = Config {
        head_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    let s = Server::start_with(Backend::Sqlite, config).expect("a SQLite server");
    let half_body = format!(
        "POST /runs:batchUpsert HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"items\":",
        s.token("carol")
    );
    let mut sockets: Vec<(usize, TcpStream)> = (0..90)
        .map(|i| {
            let mut stream = TcpStream::connect(s.addr).expect("connect");
            let sent = match i % 3 {
                0 => String::new(),
                1 => "GET /users/me HTTP/1.1\r\nHost: test\r\nAuthor".to_owned(),
                _ => half_body.clone(),
            };
            stream.write_all(sent.as_bytes()).expect("send");
            (i, stream)
        })
        .collect();

    let me = s.req("alice", "GET", "/users/me").send();
    assert_eq!((me.status, me.json()["id"].as_str()), (200, Some("alice")));

    let deadline = Instant::now() + Duration::from_secs(30);
    for (i, stream) in &mut sockets {
        let left = deadline.saturating_duration_since(Instant::now());
        stream.set_read_timeout(Some(left.max(Duration::from_millis(10)))).unwrap();
        let mut answer = Vec::new();
        match stream.read_to_end(&mut answer) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            Err(e) => panic!("socket {i} is still open after 30 s ({e})"),
        }
        if *i % 3 == 2 {
            let answer = String::from_utf8_lossy(&answer);
            assert!(answer.starts_with("HTTP/1.1 408"), "socket {i}: {answer}");
        }
    }
    let me = s.req("alice", "GET", "/users/me").send();
    assert_eq!(me.status, 200);
}

/// The test clients' usual address, and another one: each is a peer of its own to the server.
const HERE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A connection with a request in progress: its head sent, a body promised
/// (`Expect: 100-continue`) and the server reading that body (its `100 Continue` came back),
/// so it stays busy until the body arrives or the body timeout passes.
fn busy_connection(s: &Server, from: IpAddr) -> TcpStream {
    let mut stream = support::connect_from(s.addr, from, None);
    let head = format!(
        "POST /runs:batchUpsert HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\
         Connection: close\r\n\r\n",
        s.token("carol"),
        BUSY_BODY.len()
    );
    stream.write_all(head.as_bytes()).expect("send");
    let mut interim = Vec::new();
    let mut byte = [0u8; 1];
    while !interim.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("100 Continue");
        assert_eq!(n, 1, "closed before 100 Continue: {}", String::from_utf8_lossy(&interim));
        interim.push(byte[0]);
    }
    assert!(interim.starts_with(b"HTTP/1.1 100"), "{}", String::from_utf8_lossy(&interim));
    stream
}

/// The body a [`busy_connection`] promised.
const BUSY_BODY: &[u8] = br#"{"items": []}"#;

/// Past the connection cap with every connection busy (a request in progress), a new one is
/// answered `503` with `Retry-After` at once instead of waiting, and no busy one is closed to
/// make room; once a slot frees, requests are served again.
#[test]
fn connections_over_the_cap_are_told_to_retry() {
    let config = Config { max_connections: 8, ..Config::default() };
    let s = Server::start_with(Backend::Sqlite, config).expect("a SQLite server");
    let mut held: Vec<TcpStream> = (0..8).map(|_| busy_connection(&s, HERE)).collect();
    let busy = s.req("alice", "GET", "/users/me").send();
    let body = busy.problem(503, "unavailable");
    assert_eq!(busy.header("retry-after"), Some("1"), "{body}");

    // Each busy one is still there, and answered once its body comes (an empty batch: `422`).
    for stream in &mut held {
        stream.write_all(BUSY_BODY).expect("the rest of the request");
    }
    for stream in &mut held {
        support::read_response(stream).problem(422, "validation");
    }
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let me = s.req("alice", "GET", "/users/me").send();
        if me.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "no slot freed: {}", me.status);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// At the connection cap, a connection waiting for a request (new, or idle between requests)
/// makes room for a new one: the one idle longest is closed, without an answer, as an idle
/// timeout would. So idle sockets holding every slot, opened again and again, cannot keep an
/// authenticated request from being answered. Before, it was answered `503`.
#[test]
fn idle_connections_make_room_for_requests() {
    let config = Config { max_connections: 8, max_connections_per_peer: 1000, ..Config::default() };
    let s = Server::start_with(Backend::Sqlite, config).expect("a SQLite server");
    let mut idle: Vec<TcpStream> = Vec::new();
    for round in 0..25 {
        // Eight more: every slot is idle when the request comes, whatever closed before.
        idle.extend((0..8).map(|_| TcpStream::connect(s.addr).expect("connect")));
        let me = s.req("alice", "GET", "/users/me").send();
        let id = me.json()["id"].clone();
        assert_eq!((me.status, id.as_str()), (200, Some("alice")), "round {round}");
    }
    // The first one was idle longest when the first request came: closed, and told nothing.
    let mut said = Vec::new();
    match idle[0].read_to_end(&mut said) {
        Ok(_) => assert_eq!(String::from_utf8_lossy(&said), ""),
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}"),
    }
}

/// Idle sockets from one peer, each opened again as the server closes (or refuses) it, on a
/// thread of their own until [`Flood::stop`].
struct Flood {
    stop: Arc<AtomicBool>,
    reopened: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Flood {
    /// Returns once `count` sockets are open.
    fn start(addr: SocketAddr, from: IpAddr, count: usize) -> Flood {
        let (stop, reopened) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (started, ready) = std::sync::mpsc::channel();
        let (stopping, counting) = (stop.clone(), reopened.clone());
        let thread = std::thread::spawn(move || {
            let open = || {
                let stream = support::connect_from(addr, from, None);
                stream.set_nonblocking(true).unwrap();
                stream
            };
            let mut sockets: Vec<TcpStream> = (0..count).map(|_| open()).collect();
            started.send(()).unwrap();
            let mut sink = [0u8; 1024];
            while !stopping.load(Ordering::SeqCst) {
                for socket in &mut sockets {
                    // Anything but "nothing yet" (closed, reset, a 503) means it is done.
                    let read = socket.read(&mut sink);
                    if !matches!(read, Err(e) if e.kind() == ErrorKind::WouldBlock) {
                        *socket = open();
                        counting.fetch_add(1, Ordering::SeqCst);
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        ready.recv().expect("the flood starts");
        Flood { stop, reopened, thread }
    }

    /// Stops the flood (once it has opened a socket again) and says how many it reopened.
    fn stop(self) -> usize {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.reopened.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the flood thread");
        self.reopened.load(Ordering::SeqCst)
    }
}

/// One peer gets at most `max_connections_per_peer` connections. With that many requests in
/// progress, its next connection is answered `503` with `Retry-After` while another peer is
/// served; idle sockets it opens by the dozen, again as they close, hold no more than its
/// share, and the server goes on answering others. Before, one peer's ~530 idle sockets had
/// up to all of 25 requests answered `503`.
#[test]
fn one_peer_cannot_take_every_connection() {
    let config = Config { max_connections: 16, max_connections_per_peer: 4, ..Config::default() };
    let s = Server::start_with(Backend::Sqlite, config).expect("a SQLite server");
    let busy: Vec<TcpStream> = (0..4).map(|_| busy_connection(&s, ELSEWHERE)).collect();
    let me = s.req("alice", "GET", "/users/me");
    let refused = support::send_from(ELSEWHERE, &me);
    let body = refused.problem(503, "unavailable");
    assert_eq!(refused.header("retry-after"), Some("1"), "{body}");
    assert_eq!(support::send_from(HERE, &me).status, 200);
    drop(busy);

    let flood = Flood::start(s.addr, ELSEWHERE, 24);
    for i in 0..25 {
        let resp = support::send_from(HERE, &me);
        assert_eq!(resp.status, 200, "request {i}: {}", resp.text());
    }
    assert!(flood.stop() > 0, "the server closed none of the flood's sockets");
}

/// A client that asks for a large answer and never reads it holds its connection only until
/// the write timeout passes without it taking any bytes; then the server drops it and the
/// slot serves others. Before, it held the connection for as long as it kept it open. The
/// answer (a page of runs with long prompts) is made larger than what the kernel buffers
/// between the two on the machine the test runs on. With one connection allowed, another
/// request is served exactly when that one is dropped.
#[test]
fn an_answer_never_read_frees_its_connection() {
    let config =
        Config { max_connections: 1, write_timeout: Duration::from_secs(1), ..Config::default() };
    let s = Server::start_with(Backend::Sqlite, config).expect("a SQLite server");
    // The server's send buffer at its largest; the client's receive buffer is set small.
    let buffered = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|text| text.split_whitespace().nth(2)?.parse::<usize>().ok())
        .unwrap_or(16 << 20);
    // 50,000 characters (the most a prompt may have) of 4 bytes each.
    let long = "\u{1D11E}".repeat(50_000);
    let runs = (2 * buffered + (2 << 20)) / (2 * long.len()) + 1;
    assert!(runs <= 200, "one page cannot outgrow {buffered} bytes of buffers");
    for i in 0..runs {
        let id = format!("big-{i}");
        let mut run = run_record(&id);
        run["taskPrompt"] = json!(long);
        run["finalAnswer"] = json!(long);
        let resp = s.req("alice", "PUT", &format!("/runs/{id}")).create().json(&run).send();
        assert_eq!(resp.status, 201, "{}", resp.text());
    }
    let whole = s.req("alice", "GET", "/runs?limit=200").send();
    assert!(whole.body.len() > 2 * buffered, "{} bytes", whole.body.len());

    let request = format!(
        "GET /runs?limit=200 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\r\n",
        s.token("alice")
    );
    let mut unread = support::connect_from(s.addr, HERE, Some(4096));
    unread.write_all(request.as_bytes()).expect("send");
    // The answer has begun: the server is writing it, and nobody reads it.
    unread.peek(&mut [0u8; 1]).expect("the answer begins");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let me = s.req("alice", "GET", "/users/me").send();
        if me.status == 200 {
            break;
        }
        me.problem(503, "unavailable");
        assert!(Instant::now() < deadline, "the unread answer still holds the connection");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The server dropped it: it ends short of the whole answer.
    let mut got = Vec::new();
    match unread.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "still open: {e}"),
    }
    assert!(got.len() < whole.body.len(), "{} of {} bytes", got.len(), whole.body.len());
}

/// The page asks for the runs changed since its last pull with the cursor the server gave
/// it, not its own clock. Before, it asked for `updatedSince` its clock's "now" a minute
/// back: a browser an hour ahead asked for a time the server had not reached, and missed
/// every other user's changes. Here rita's page pulls the way the page does
/// (`annotation_core::sync`), carol saves a run, and rita's next pull has it.
fn a_client_whose_clock_is_an_hour_ahead_still_pulls_others_updates(s: &Server) {
    let settings =
        SyncSettings { endpoint: format!("http://{}", s.addr), token: s.token("rita").into() };
    s.create_run("carol", "before-1");
    let first = s.get_json("rita", &sync::pull_path(None, &settings, "rita"));
    assert_eq!(ids(&first), ["before-1"]);
    let mark = sync::pull_mark(&first, &settings, "rita").expect("a pull cursor");

    s.create_run("carol", "after-1");
    // What the page asked before, an hour ahead: nothing, though carol's run is new.
    let ahead = sync_server::time::format_ms(sync_server::time::now_ms() + 3_600_000 - 60_000);
    let old_way = s.get_json("rita", &format!("/runs?sort=updatedAt&updatedSince={ahead}"));
    assert_eq!(ids(&old_way), Vec::<String>::new());
    // What it asks now: carol's run (and, within the overlap, the one it had).
    let next = s.get_json("rita", &sync::pull_path(Some(&mark), &settings, "rita"));
    assert!(ids(&next).contains(&"after-1".to_owned()), "{next}");

    // Every page of a listing carries the same cursor; another user's is refused.
    let page = s.get_json("rita", "/runs?sort=updatedAt&limit=1");
    let cursor = page["nextCursor"].as_str().unwrap();
    let second = s.get_json("rita", &format!("/runs?sort=updatedAt&limit=1&cursor={cursor}"));
    assert_eq!(page["pullCursor"], second["pullCursor"]);
    let stolen = format!("/runs?pullCursor={}", mark.cursor);
    let resp = s.req("quinn", "GET", &stolen).send();
    assert_eq!(resp.problem(400, "bad-request")["errors"][0]["path"], "query.pullCursor");
    s.req("rita", "GET", "/runs?pullCursor=nope").send().problem(400, "bad-request");
}

fn ids(page: &Value) -> Vec<String> {
    let items = page["items"].as_array().expect("a page");
    items.iter().map(|run| run["id"].as_str().unwrap().to_owned()).collect()
}

/// The page splits its queue by the size of each `runs:batchUpsert` body, not by count. Before,
/// 200 items went in one request whatever their size: one large step made it `413`, and the
/// whole queue stopped behind it. Here a queue with one step too big for any request goes
/// out in batches the server takes, and only that step is held back.
fn a_queue_goes_in_batches_under_the_body_limit_and_a_giant_alone_is_held_back(s: &Server) {
    let mut giant = step_record("q1", 2, None);
    giant["thoughts"]["thought1"] = json!("x".repeat(sync::JSON_BODY_BYTES));
    let item = |i: u32, step: Value| {
        json!({"kind": "step", "mutationId": format!("mut-q1-{i}"), "runId": "q1", "index": i,
            "baseVersion": null, "step": step})
    };
    let mut items = vec![json!({"kind": "run", "mutationId": "mut-q1-run", "runId": "q1",
        "baseVersion": null, "run": run_record("q1")})];
    items.extend([item(0, step_record("q1", 0, None)), item(1, step_record("q1", 1, None))]);
    items.push(item(2, giant));
    items.extend((3..6).map(|i| item(i, step_record("q1", i, None))));

    // The old way, every item in one body: refused whole.
    let whole = json!({"items": items}).to_string().len();
    let head = format!(
        "POST /runs:batchUpsert HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {whole}\r\nConnection: close\r\n\r\n",
        s.token("alice")
    );
    support::exchange(s.addr, head.as_bytes()).problem(413, "payload-too-large");

    let plan = sync::batches(&items, sync::JSON_BODY_BYTES, sync::BATCH_ITEMS);
    assert_eq!(plan.too_big, [3], "the giant is held back, alone");
    let mut applied = Vec::new();
    for batch in &plan.batches {
        let body = json!({"items": batch.iter().map(|&i| items[i].clone()).collect::<Vec<_>>()});
        let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&body).send();
        assert_eq!(resp.status, 200, "{}", resp.text());
        for result in resp.json()["results"].as_array().unwrap() {
            assert_eq!(result["outcome"], "ok", "{result}");
            applied.push(result["mutationId"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(applied.len(), items.len() - 1);
    let steps = s.get_json("alice", "/runs/q1/steps");
    let indexes: Vec<i64> =
        steps["items"].as_array().unwrap().iter().map(|s| s["index"].as_i64().unwrap()).collect();
    assert_eq!(indexes, [0, 1, 3, 4, 5], "the steps after the giant went too");
}

/// `/healthz` needs no token, so when the database fails it says so and nothing more: the
/// error's text (which can name hosts, users, files) is only in the server's log.
fn health_says_the_database_is_down_but_not_why(s: &Server) {
    assert_eq!(s.anon("GET", "/healthz").send().status, 200);
    s.db(|store| async move { store.pool.close().await });
    let resp = s.anon("GET", "/healthz").send();
    let body = resp.problem(503, "unavailable");
    assert_eq!(body["detail"], "The database is unreachable.", "{body}");
}

/// A create whose run id another annotator's run already has is refused like any write the
/// caller may not make (`403`), without saying whose the run is or that it exists; it used to
/// be `404`, "no such run", for a create, which only a run that exists could get.
fn creating_a_run_with_someone_elses_id_is_refused_without_saying_so(s: &Server) {
    s.create_run("alice", "taken-1");
    let resp = s.req("carol", "PUT", "/runs/taken-1").create().json(&run_record("taken-1")).send();
    let body = resp.problem(403, "forbidden");
    let text = body.to_string();
    assert!(!text.contains("alice") && !text.contains("exist"), "{text}");
    let batch = json!({"items": [{"kind": "run", "mutationId": "mut-taken-1", "runId": "taken-1",
        "baseVersion": null, "run": run_record("taken-1")}]});
    let resp = s.req("carol", "POST", "/runs:batchUpsert").json(&batch).send();
    let result = &resp.json()["results"][0];
    assert_eq!(
        (result["outcome"].as_str(), result["problem"]["status"].as_i64()),
        (Some("rejected"), Some(403))
    );
    assert_eq!(s.get_json("alice", "/runs/taken-1")["version"], 1, "nothing was written");
    // Who may see it still gets the conflict with the run to merge.
    let resp = s.req("quinn", "PUT", "/runs/taken-1").create().json(&run_record("taken-1")).send();
    resp.problem(409, "already-exists");
    assert_eq!(
        s.req("carol", "PUT", "/runs/free-1").create().json(&run_record("free-1")).send().status,
        201
    );
}

/// Traces are refused on a run that is approved (or rejected, or archived), as every other
/// write to it is, with the same answer; they used to be taken until the run was archived.
fn an_approved_run_takes_no_traces(s: &Server) {
    s.create_run("alice", "t1");
    assert_eq!(s.transition("alice", "t1", "in-review").status, 200);
    assert_eq!(s.transition("rita", "t1", "approved").status, 200);
    let trace = trace_record("t1", "trace-late", 0);
    let resp = s.req("alice", "PUT", "/runs/t1/traces/trace-late").json(&trace).send();
    let refused = resp.problem(403, "forbidden");
    let step =
        s.req("alice", "PUT", "/runs/t1/steps/0").create().json(&step_record("t1", 0, None)).send();
    assert_eq!(refused["detail"], step.problem(403, "forbidden")["detail"], "the same refusal");
    let batch = json!({"items": [{"kind": "trace", "runId": "t1", "trace": trace}]});
    let resp = s.req("alice", "POST", "/runs:batchUpsert").json(&batch).send();
    assert_eq!(resp.json()["results"][0]["problem"]["status"], 403);
    assert_eq!(s.get_json("alice", "/runs/t1/traces")["items"], json!([]));
    // Moved back into review, it takes them again.
    assert_eq!(s.transition("quinn", "t1", "in-review").status, 200);
    let resp = s.req("alice", "PUT", "/runs/t1/traces/trace-late").json(&trace).send();
    assert_eq!(resp.status, 201, "{}", resp.text());
}

/// A screenshot is read by whoever uploaded it and whoever may see a run that shows it. To
/// anyone else it is absent on every route, so its existence does not leak either: `GET` and
/// `HEAD` are `404`, `screenshots:missing` lists it, and an upload of the same image is
/// answered as a first upload. Every answer carries `X-Content-Type-Options: nosniff`.
fn screenshots_are_read_through_runs_one_may_see_and_say_nothing_else(s: &Server) {
    let shot = jpeg(9, 2000);
    let sha = run_contract::digest::sha256_hex(&shot);
    let path = format!("/screenshots/{sha}");
    let put = |user: &str| s.req(user, "PUT", &path).bytes("image/jpeg", shot.clone()).send();
    assert_eq!(put("alice").status, 201);
    s.create_run("alice", "a1");
    let step = step_record("a1", 0, Some((&sha, 2000)));
    let resp = s.req("alice", "PUT", "/runs/a1/steps/0").create().json(&step).send();
    assert_eq!(resp.status, 201, "{}", resp.text());

    // carol sees neither the run nor the image.
    s.req("carol", "GET", &path).send().problem(404, "not-found");
    assert_eq!(s.req("carol", "HEAD", &path).send().status, 404);
    let missing = s.req("carol", "POST", "/screenshots:missing").json(&json!({"hashes": [sha]}));
    assert_eq!(missing.send().json(), json!({"missing": [sha]}));
    // Nor may her own run point at it without uploading it.
    s.create_run("carol", "c1");
    let step = step_record("c1", 0, Some((&sha, 2000)));
    let resp = s.req("carol", "PUT", "/runs/c1/steps/0").create().json(&step).send();
    assert_eq!(resp.problem(422, "validation")["errors"][0]["path"], "/screenshot/key");
    // Uploading it (she holds the bytes) is a first upload, like any other.
    let resp = put("carol");
    assert_eq!((resp.status, resp.json()["bytes"].as_i64()), (201, Some(2000)));
    assert_eq!(s.req("carol", "GET", &path).send().status, 200);

    // Reviewers and managers see every run, and so its screenshots.
    assert_eq!(s.req("rita", "GET", &path).send().body, shot);
    // An image no run shows yet is its uploader's alone.
    let orphan = jpeg(10, 1500);
    let orphan_path = format!("/screenshots/{}", run_contract::digest::sha256_hex(&orphan));
    let resp = s.req("alice", "PUT", &orphan_path).bytes("image/jpeg", orphan).send();
    assert_eq!(resp.status, 201);
    assert_eq!(s.req("alice", "GET", &orphan_path).send().status, 200);
    s.req("quinn", "GET", &orphan_path).send().problem(404, "not-found");

    for resp in [
        s.req("alice", "GET", &path).send(),
        s.req("alice", "GET", "/runs/a1").send(),
        s.req("carol", "GET", "/runs/a1").send(),
        s.anon("GET", "/healthz").send(),
        s.anon("GET", "/nowhere").send(),
    ] {
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"), "{}", resp.status);
    }
}

/// A token can expire, be rotated (the old one stops at once) and be revoked; each takes
/// effect on the next request. Before, a token worked for as long as its user existed.
fn tokens_expire_and_can_be_rotated_and_revoked(s: &Server) {
    let as_token = |token: &str| {
        s.anon("GET", "/users/me").header("Authorization", &format!("Bearer {token}")).send()
    };
    let old = s.token("alice").to_owned();
    assert_eq!(as_token(&old).status, 200);
    let new = s.db(|store| async move { auth::rotate_token(&store, "alice", None).await.unwrap() });
    assert_eq!(as_token(&old).problem(401, "unauthorized")["detail"], "Unknown token.");
    assert_eq!(as_token(&new).json()["id"], "alice");

    s.db(|store| async move { auth::revoke_token(&store, "alice").await.unwrap() });
    let detail = as_token(&new).problem(401, "unauthorized")["detail"].to_string();
    assert!(detail.contains("revoked"), "{detail}");
    let back = s.db(|store| async move {
        let in_an_hour = sync_server::time::now_ms() + 3_600_000;
        auth::rotate_token(&store, "alice", Some(in_an_hour)).await.unwrap()
    });
    assert_eq!(as_token(&back).status, 200);

    let lapsed = s.db(|store| async move {
        let a_second_ago = sync_server::time::now_ms() - 1_000;
        auth::rotate_token(&store, "carol", Some(a_second_ago)).await.unwrap()
    });
    let detail = as_token(&lapsed).problem(401, "unauthorized")["detail"].to_string();
    assert!(detail.contains("expired"), "{detail}");
    let users = s.db(|store| async move { auth::list_users(&store).await.unwrap() });
    let now = sync_server::time::now();
    let state = |id: &str| users.iter().find(|u| u.id == id).unwrap().token_state(&now);
    assert!(state("carol").starts_with("expired"), "{}", state("carol"));
    assert!(state("alice").starts_with("valid until"), "{}", state("alice"));
    assert_eq!(state("rita"), "valid, no expiry");
}

/// The CLI that creates users also lists them and rotates and revokes their tokens, on the
/// database a server may be using at the same time.
#[test]
fn the_cli_rotates_revokes_and_lists_tokens() {
    let dir = std::env::temp_dir().join(format!("sync-cli-test-{}", std::process::id()));
    let url = format!("sqlite://{}/sync.db", dir.display());
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sync-server"))
            .args(["--database-url", &url])
            .args(args)
            .output()
            .expect("sync-server runs");
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        (text(&out.stdout), text(&out.stderr))
    };
    let (first, said) = cli(&["user", "add", "bob", "annotator", "--expires-in-days", "30"]);
    assert!(first.starts_with("as_") && said.contains("valid until"), "{first} / {said}");
    let (second, _) = cli(&["user", "token", "rotate", "bob", "--no-expiry"]);
    assert!(second.starts_with("as_") && second != first);
    let (list, _) = cli(&["user", "list"]);
    assert_eq!(list, "bob\tannotator\tbob\ttoken valid, no expiry");
    cli(&["user", "token", "revoke", "bob"]);
    let (list, _) = cli(&["user", "list"]);
    assert!(list.contains("token revoked"), "{list}");

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = sync_server::store::Store::connect(&url).await.unwrap();
        for token in [&first, &second] {
            assert_eq!(auth::user_for_token(&store, token).await.unwrap_err().status, 401);
        }
        store.pool.close().await;
    });
    let (third, _) = cli(&["user", "token", "rotate", "bob"]);
    runtime.block_on(async {
        let store = sync_server::store::Store::connect(&url).await.unwrap();
        assert_eq!(auth::user_for_token(&store, &third).await.unwrap().id, "bob");
        store.pool.close().await;
    });
    let _ = std::fs::remove_dir_all(dir);
}
