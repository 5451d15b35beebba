//! `cargo xtask bench agreement`: the team figures at project size. Seeds a SQLite database
//! with 1,000 runs × 20 steps annotated in overlap by 2 annotators (through the server's
//! own store and migrations), starts the real server binary on it (`SYNC_SERVER_BIN`), and
//! measures over HTTP:
//!
//! - the server computing agreement and per-annotator figures for all of it
//!   (`GET /analytics/annotators`, `GET /analytics/agreement`): wall time, and the server
//!   process's peak memory (`VmHWM`) against its memory before;
//! - "My queue"'s first page (`GET /users/me/queue`), beside a plain `GET /runs` page for
//!   the same annotator as the floor, and their ratio.
//!
//! Each figure is the median of several requests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sync_server::auth::{Role, add_user};
use sync_server::store::Store;

const RUNS: usize = 1000;
const STEPS: usize = 20;
const ANNOTATORS: [&str; 2] = ["alice", "carol"];
const REPEAT: usize = 5;

const WORDS: [&str; 48] = [
    "the", "page", "shows", "a", "search", "box", "kettle", "price", "basket", "button", "I",
    "click", "type", "into", "field", "list", "of", "products", "steel", "open", "menu", "under",
    "kitchen", "need", "to", "find", "cheapest", "one", "result", "filter", "by", "brand", "is",
    "empty", "so", "next", "scroll", "down", "see", "more", "items", "and", "then", "check",
    "total", "with", "shipping", "cost",
];

/// A small deterministic generator, so every run of the bench seeds the same data.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }

    fn sentence(&mut self, words: usize) -> String {
        (0..words).map(|_| WORDS[self.next() % WORDS.len()]).collect::<Vec<_>>().join(" ")
    }
}

fn main() {
    let server_bin = std::env::var("SYNC_SERVER_BIN").expect("SYNC_SERVER_BIN: the server binary");
    let dir = std::env::temp_dir().join(format!("agreement-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!("sqlite://{}/sync.db", dir.display());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let started = Instant::now();
    let tokens = runtime.block_on(seed(&url));
    println!(
        "seeded {RUNS} runs × {STEPS} steps × {} annotators in {:.1} s",
        ANNOTATORS.len(),
        started.elapsed().as_secs_f64()
    );

    let port = free_port();
    let mut server = Command::new(&server_bin)
        .args(["--addr", &format!("127.0.0.1:{port}"), "--database-url", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the server");
    let addr = format!("127.0.0.1:{port}");
    wait_healthy(&addr, &mut server);
    let pid = server.id();
    let rss_before = status_kib(pid, "VmRSS");

    let admin = &tokens[0];
    let alice = &tokens[2];
    let (annotators_ms, figures) = median(|| get(&addr, admin, "/analytics/annotators"));
    let (series_ms, series) = median(|| get(&addr, admin, "/analytics/agreement"));
    let peak = status_kib(pid, "VmHWM");
    let (run_ms, run) = median(|| get(&addr, admin, "/runs/run-0500/agreement"));
    let (queue_ms, queue) = median(|| get(&addr, alice, "/users/me/queue?limit=50"));
    let (floor_ms, floor) = median(|| get(&addr, alice, "/runs?limit=50"));
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);

    let rows = figures["items"].as_array().map_or(0, Vec::len);
    let alice_row = figures["items"]
        .as_array()
        .and_then(|items| items.iter().find(|r| r["annotator"] == "alice"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(queue["items"].as_array().map(Vec::len), Some(50), "a full first page");
    assert_eq!(floor["items"].as_array().map(Vec::len), Some(50), "a full first page");
    assert!(run["score"].is_number(), "{run}");
    println!();
    println!(
        "agreement and per-annotator figures, computed by the server ({} runs in overlap):",
        RUNS
    );
    println!(
        "  GET /analytics/annotators   {annotators_ms:8.1} ms  ({rows} annotators; alice's agreement {:.3})",
        alice_row["agreement"].as_f64().unwrap_or(f64::NAN)
    );
    println!(
        "  GET /analytics/agreement    {series_ms:8.1} ms  ({} series)",
        series["items"].as_array().map_or(0, Vec::len)
    );
    println!("  GET /runs/{{id}}/agreement    {run_ms:8.1} ms  (one run, {STEPS} steps)");
    println!("  server memory: {} MiB before, peak {} MiB (VmHWM)", rss_before / 1024, peak / 1024);
    println!();
    println!("\"My queue\" at this size (alice: {} open assignments):", RUNS / 2);
    println!("  GET /users/me/queue?limit=50   {queue_ms:8.2} ms");
    println!("  GET /runs?limit=50 (floor)     {floor_ms:8.2} ms");
    println!("  ratio                          {:8.2}", queue_ms / floor_ms);
    println!("(medians of {REPEAT} requests each)");
}

/// The database: users, and the runs with their steps, assignments and both versions. Half
/// the runs are still being annotated (open in both annotators' queues), half handed in.
async fn seed(url: &str) -> Vec<String> {
    let store = Store::connect(url).await.expect("database");
    let mut tokens = Vec::new();
    for (id, role) in [
        ("adam", Role::Admin),
        ("rita", Role::Reviewer),
        ("alice", Role::Annotator),
        ("carol", Role::Annotator),
    ] {
        tokens.push(add_user(&store, id, id, role).await.unwrap());
    }
    let mut random = Lcg(29);
    let base_ms = run_contract::time::parse_ms("2026-09-01T08:00:00.000Z").unwrap();
    for chunk in 0..RUNS / 100 {
        let mut tx = store.begin().await.unwrap();
        for i in chunk * 100..(chunk + 1) * 100 {
            let id = format!("run-{i:04}");
            let at = run_contract::time::format_ms(base_ms + i as i64 * 600_000);
            let open = i < RUNS / 2;
            let status = if open { "draft" } else { "in-review" };
            let header = json!({"id": id, "taskId": format!("task-{i}"), "taskPrompt": format!("Find the cheapest kettle, case {i}"),
                "createdAt": at, "status": status, "reviewedBy": null, "annotator": "adam", "tags": []});
            sqlx::query(
                "INSERT INTO runs (id, task_id, annotator, status, tags, created_at, updated_at, \
                 updated_by, version, header_version, header, search, review_rounds, assignees) \
                 VALUES ($1, $2, 'adam', $3, '[]', $4, $4, 'adam', 1, 1, $5, '', $6, 2)",
            )
            .bind(id.clone())
            .bind(format!("task-{i}"))
            .bind(status)
            .bind(at.clone())
            .bind(header.to_string())
            .bind(i64::from(!open))
            .execute(&mut *tx)
            .await
            .unwrap();
            for who in ANNOTATORS {
                let (state, submitted) =
                    if open { ("open", None) } else { ("submitted", Some(at.clone())) };
                sqlx::query(
                    "INSERT INTO assignments (run_id, annotator, assigned_by, assigned_at, \
                     state, submitted_at) VALUES ($1, $2, 'rita', $3, $4, $5)",
                )
                .bind(id.clone())
                .bind(who)
                .bind(at.clone())
                .bind(state)
                .bind(submitted.clone())
                .execute(&mut *tx)
                .await
                .unwrap();
                sqlx::query(
                    "INSERT INTO annotation_sets (run_id, annotator, state, submitted_at, \
                     updated_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id.clone())
                .bind(who)
                .bind(state)
                .bind(submitted.clone())
                .bind(at.clone())
                .execute(&mut *tx)
                .await
                .unwrap();
            }
            for s in 0..STEPS {
                let thoughts = [random.sentence(12), random.sentence(14), random.sentence(10)];
                let action = json!({"type": "click", "target": WORDS[random.next() % WORDS.len()], "value": null});
                let body = json!({"runId": id, "index": s, "url": "https://shop.example/kettles", "title": "Kettles",
                    "action": action, "thoughts": {"thought1": thoughts[0], "thought2": thoughts[1], "thought3": thoughts[2]}});
                sqlx::query("INSERT INTO steps (run_id, idx, version, body, search) VALUES ($1, $2, 1, $3, '')")
                    .bind(id.clone())
                    .bind(s as i64)
                    .bind(body.to_string())
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                for (k, who) in ANNOTATORS.into_iter().enumerate() {
                    // The second annotator rewrites about a third of the words, and now and
                    // then chooses another action.
                    let edit = |text: &str, random: &mut Lcg| -> String {
                        text.split(' ')
                            .map(|w| {
                                if k == 1 && random.next().is_multiple_of(3) {
                                    WORDS[random.next() % WORDS.len()]
                                } else {
                                    w
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    let mut action = action.clone();
                    if k == 1 && random.next().is_multiple_of(10) {
                        action["target"] = json!("Add to basket");
                    }
                    let version = json!({"thoughts": {"thought1": edit(&thoughts[0], &mut random),
                        "thought2": edit(&thoughts[1], &mut random), "thought3": edit(&thoughts[2], &mut random)},
                        "action": action});
                    sqlx::query(
                        "INSERT INTO annotated_steps (run_id, annotator, idx, version, body, updated_at) \
                         VALUES ($1, $2, $3, 1, $4, $5)",
                    )
                    .bind(id.clone())
                    .bind(who)
                    .bind(s as i64)
                    .bind(version.to_string())
                    .bind(at.clone())
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                }
            }
        }
        tx.commit().await.unwrap();
    }
    store.pool.close().await;
    tokens
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits for `/healthz` (bounded), failing if the server exits.
fn wait_healthy(addr: &str, server: &mut Child) {
    for _ in 0..600 {
        if let Ok(Some(status)) = server.try_wait() {
            panic!("the server exited: {status}");
        }
        if TcpStream::connect(addr).is_ok() && request(addr, None, "/healthz").0 == 200 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server did not answer /healthz");
}

/// One GET over a fresh connection: status and body.
fn request(addr: &str, token: Option<&str>, path: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, raw[split + 4..].to_vec())
}

fn get(addr: &str, token: &str, path: &str) -> Value {
    let (status, body) = request(addr, Some(token), path);
    assert_eq!(status, 200, "GET {path}: {}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).expect("JSON")
}

/// The median time of `REPEAT` calls, in milliseconds, and the last answer.
fn median(mut call: impl FnMut() -> Value) -> (f64, Value) {
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..REPEAT {
        let start = Instant::now();
        last = call();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times[REPEAT / 2], last)
}

/// A `/proc/<pid>/status` figure in KiB.
fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
