//! The integration tests' harness: a real server on a loopback port, on a real database
//! (a SQLite file in a temp dir, or a fresh schema in the PostgreSQL of
//! `SYNC_TEST_POSTGRES_URL`), talked to over real HTTP/1.1 by a tiny blocking client.
//! Records are built from the engine's own types, so what the extension stores is what
//! these tests upload.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_engine::actions::Action;
use agent_engine::providers::Usage;
use agent_engine::repair::Attempt;
use agent_engine::run::{
    Actor, AgentRun, ExecutedAction, LlmTrace, PromptChars, ReplayOrigin, ReviewStatus,
    ScreenshotRef, SentPrompt, StepAction, StepRecord, Subtask, Thoughts,
};
use run_contract::telemetry::{LogEntry, LogKind, RoleSpend, Telemetry};
use serde_json::{Value, json};
use sync_server::auth::{Role, add_user};
/// The database a test server runs on; `name` is as `/healthz` says it.
pub use sync_server::store::Backend;
use sync_server::store::Store;

/// The users every test server has.
pub const USERS: [(&str, Role); 5] = [
    ("alice", Role::Annotator),
    ("carol", Role::Annotator),
    ("rita", Role::Reviewer),
    ("quinn", Role::QaManager),
    ("adam", Role::Admin),
];

pub struct Server {
    pub addr: SocketAddr,
    pub backend: Backend,
    tokens: HashMap<String, String>,
    /// The server's own store and runtime, for looking into the database behind it.
    store: Store,
    runtime: tokio::runtime::Handle,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: Option<PathBuf>,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst))
}

impl Server {
    /// Starts a server, or `None` (with a note) for PostgreSQL when it is not configured.
    pub fn start(backend: Backend) -> Option<Server> {
        Server::start_with(backend, sync_server::Config::default())
    }

    /// [`Server::start`] with another configuration.
    pub fn start_with(backend: Backend, config: sync_server::Config) -> Option<Server> {
        let (url, dir, schema) = match backend {
            Backend::Sqlite => {
                let dir = std::env::temp_dir().join(format!("sync-server-test-{}", unique()));
                (format!("sqlite://{}/sync.db", dir.display()), Some(dir), None)
            }
            Backend::Postgres => {
                let Ok(url) = std::env::var("SYNC_TEST_POSTGRES_URL") else {
                    eprintln!(
                        "note: SYNC_TEST_POSTGRES_URL is not set; skipping the PostgreSQL run"
                    );
                    return None;
                };
                (url, None, Some(format!("sync_test_{}", unique())))
            }
        };
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            let handle = runtime.handle().clone();
            runtime.block_on(async move {
                let url = match &schema {
                    Some(schema) => isolate_schema(&url, schema).await,
                    None => url,
                };
                let store = Store::connect(&url).await.expect("database");
                let mut tokens = HashMap::new();
                for (name, role) in USERS {
                    tokens
                        .insert(name.to_owned(), add_user(&store, name, name, role).await.unwrap());
                }
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let ready = (listener.local_addr().unwrap(), tokens, store.clone(), handle);
                ready_tx.send(ready).unwrap();
                let shutdown = async {
                    let _ = shutdown_rx.await;
                };
                sync_server::serve(listener, store.clone(), config, shutdown).await.unwrap();
                if let Some(schema) = &schema {
                    let drop = format!("DROP SCHEMA {schema} CASCADE");
                    let _ = sqlx::query(&drop).execute(&store.pool).await;
                }
                store.pool.close().await;
            });
        });
        let (addr, tokens, store, runtime) =
            ready_rx.recv_timeout(Duration::from_secs(60)).expect("server start");
        Some(Server {
            addr,
            backend,
            tokens,
            store,
            runtime,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
            dir,
        })
    }

    /// Runs `work` on the server's store, on its runtime.
    pub fn db<T, F: std::future::Future<Output = T>>(&self, work: impl FnOnce(Store) -> F) -> T {
        self.runtime.block_on(work(self.store.clone()))
    }

    /// Runs one statement on the server's database.
    pub fn execute(&self, sql: &str) {
        self.db(|store| async move { sqlx::query(sql).execute(&store.pool).await.unwrap() });
    }

    /// How many rows `sql` (a `SELECT COUNT(*) AS n …`) counts.
    pub fn count(&self, sql: &str) -> i64 {
        self.db(|store| async move {
            let row = sqlx::query(sql).fetch_one(&store.pool).await.unwrap();
            sync_server::store::get_i64(&row, "n").unwrap()
        })
    }

    /// How the database would run `sql` (binding `args`): SQLite's `EXPLAIN QUERY PLAN`
    /// details, or PostgreSQL's `EXPLAIN` with sequential scans discouraged (on a table this
    /// small its planner would scan it whatever the indexes), one line each.
    pub fn plan(&self, sql: &str, args: &[&str]) -> String {
        let backend = self.backend;
        self.db(|store| async move {
            let mut conn = store.pool.acquire().await.unwrap();
            let explain = match backend {
                Backend::Sqlite => format!("EXPLAIN QUERY PLAN {sql}"),
                Backend::Postgres => {
                    sqlx::query("SET enable_seqscan = off").execute(&mut *conn).await.unwrap();
                    format!("EXPLAIN {sql}")
                }
            };
            let mut query = sqlx::query(&explain);
            for arg in args {
                query = query.bind(arg.to_string());
            }
            let rows = query.fetch_all(&mut *conn).await.unwrap();
            if backend == Backend::Postgres {
                sqlx::query("RESET enable_seqscan").execute(&mut *conn).await.unwrap();
            }
            let column = match backend {
                Backend::Sqlite => "detail",
                Backend::Postgres => "QUERY PLAN",
            };
            let lines: Vec<String> = rows
                .iter()
                .map(|row| sqlx::Row::try_get::<String, _>(row, column).unwrap())
                .collect();
            lines.join("\n")
        })
    }

    /// Makes every insert into `table` fail, as a crash just before it would: a trigger.
    pub fn fail_inserts(&self, table: &str) {
        match self.backend {
            Backend::Sqlite => self.execute(&format!(
                "CREATE TRIGGER fail_{table} BEFORE INSERT ON {table} \
                 BEGIN SELECT RAISE(ABORT, 'simulated crash'); END"
            )),
            Backend::Postgres => {
                self.execute(
                    "CREATE OR REPLACE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql \
                     AS $$ BEGIN RAISE EXCEPTION 'simulated crash'; END $$",
                );
                self.execute(&format!(
                    "CREATE TRIGGER fail_{table} BEFORE INSERT ON {table} \
                     FOR EACH ROW EXECUTE FUNCTION fail_insert()"
                ));
            }
        }
    }

    /// Undoes [`Server::fail_inserts`].
    pub fn allow_inserts(&self, table: &str) {
        match self.backend {
            Backend::Sqlite => self.execute(&format!("DROP TRIGGER fail_{table}")),
            Backend::Postgres => self.execute(&format!("DROP TRIGGER fail_{table} ON {table}")),
        }
    }

    pub fn token(&self, user: &str) -> &str {
        &self.tokens[user]
    }

    /// A request as `user`.
    pub fn req(&self, user: &str, method: &str, path: &str) -> Req {
        Req::new(self.addr, method, path)
            .header("Authorization", &format!("Bearer {}", self.token(user)))
    }

    /// A request without a token.
    pub fn anon(&self, method: &str, path: &str) -> Req {
        Req::new(self.addr, method, path)
    }

    // Shortcuts for the common writes.

    /// Creates a run as `user` and returns its JSON.
    pub fn create_run(&self, user: &str, id: &str) -> Value {
        let resp =
            self.req(user, "PUT", &format!("/runs/{id}")).create().json(&run_record(id)).send();
        assert_eq!(resp.status, 201, "{}", resp.text());
        resp.json()
    }

    /// Creates step `index` of a run as `user`.
    pub fn create_step(&self, user: &str, run_id: &str, index: u32) -> Value {
        let resp = self
            .req(user, "PUT", &format!("/runs/{run_id}/steps/{index}"))
            .create()
            .json(&step_record(run_id, index, None))
            .send();
        assert_eq!(resp.status, 201, "{}", resp.text());
        resp.json()
    }

    pub fn get_json(&self, user: &str, path: &str) -> Value {
        let resp = self.req(user, "GET", path).send();
        assert_eq!(resp.status, 200, "GET {path}: {}", resp.text());
        resp.json()
    }

    pub fn transition(&self, user: &str, run_id: &str, to: &str) -> Resp {
        let version = self.get_json(user, &format!("/runs/{run_id}"))["version"].as_i64().unwrap();
        self.req(user, "POST", &format!("/runs/{run_id}/transitions"))
            .if_match(version)
            .json(&json!({"to": to}))
            .send()
    }
}

/// Makes a fresh schema and returns the URL whose connections use it.
async fn isolate_schema(url: &str, schema: &str) -> String {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.expect("PostgreSQL");
    sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&pool).await.expect("schema");
    pool.close().await;
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-c%20search_path%3D{schema}")
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

// ------------------------------------------------------------------------------ client

pub struct Req {
    addr: SocketAddr,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Req {
    pub fn new(addr: SocketAddr, method: &str, path: &str) -> Req {
        Req {
            addr,
            method: method.into(),
            path: path.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn if_match(self, version: i64) -> Req {
        self.header("If-Match", &format!("\"{version}\""))
    }

    pub fn create(self) -> Req {
        self.header("If-None-Match", "*")
    }

    pub fn json(self, body: &Value) -> Req {
        self.bytes("application/json", body.to_string().into_bytes())
    }

    pub fn bytes(mut self, content_type: &str, body: Vec<u8>) -> Req {
        self.body = body;
        self.header("Content-Type", content_type)
    }

    /// The request's bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.method, self.path, self.addr
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() || matches!(self.method.as_str(), "PUT" | "POST" | "PATCH") {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    pub fn send(self) -> Resp {
        let bytes = self.encode();
        exchange(self.addr, &bytes)
    }
}

/// A connection to `addr` from the loopback address `from`: any of 127.0.0.0/8 reaches the
/// server, and each is a peer of its own to it. `recv_buffer` sets the client's receive
/// buffer (before connecting, so the window is small from the start): a client that does
/// not read then stalls the server's writes sooner.
pub fn connect_from(addr: SocketAddr, from: IpAddr, recv_buffer: Option<u32>) -> TcpStream {
    // std cannot bind before connecting; tokio's socket can.
    static CONNECTOR: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime")
    });
    let stream = CONNECTOR.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        if let Some(bytes) = recv_buffer {
            socket.set_recv_buffer_size(bytes)?;
        }
        socket.bind(SocketAddr::new(from, 0))?;
        socket.connect(addr).await?.into_std()
    });
    let stream = stream.unwrap_or_else(|e| panic!("connect from {from}: {e}"));
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
    stream
}

/// Sends `req` from the loopback address `from` and reads the whole response.
pub fn send_from(from: IpAddr, req: &Req) -> Resp {
    let mut stream = connect_from(req.addr, from, None);
    stream.write_all(&req.encode()).expect("write request");
    read_response(&mut stream)
}

/// Writes `request` and reads the whole response (the server closes after it).
pub fn exchange(addr: SocketAddr, request: &[u8]) -> Resp {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(request).expect("write request");
    read_response(&mut stream)
}

pub fn read_response(stream: &mut TcpStream) -> Resp {
    let mut raw = Vec::new();
    // A reset after the server answered early (before reading the whole body) still leaves
    // the answer in what was read.
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Resp {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete response head");
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size_text = String::from_utf8_lossy(&rest[..line_end]).to_string();
            let size =
                usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body = out;
    }
    Resp { status, headers, body }
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.text()))
    }

    /// The `path`s of a problem's `errors`.
    pub fn error_paths(&self) -> Vec<String> {
        self.json()["errors"]
            .as_array()
            .map(|errors| errors.iter().map(|e| e["path"].as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }

    /// Asserts a `422 validation` problem and returns the `path`s of its `errors`, sorted.
    pub fn refused_paths(&self) -> Vec<String> {
        self.problem(422, "validation");
        let mut paths = self.error_paths();
        paths.sort();
        paths
    }

    /// Asserts a problem+json answer of `status` and `kind` and returns its body.
    pub fn problem(&self, status: u16, kind: &str) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.header("content-type"), Some("application/problem+json"));
        let body = self.json();
        assert_eq!(body["type"], format!("urn:alphascout:problem:{kind}"), "{body}");
        body
    }
}

// ---------------------------------------------------------------------------- records

pub const CAPTURED_AT: &str = "2026-11-22T06:37:49.123Z";

/// An `AgentRun` as the engine serializes it.
pub fn run_record(id: &str) -> Value {
    let run = AgentRun {
        id: id.into(),
        task_id: "task-1".into(),
        task_prompt: format!("Find the price of the steel kettle ({id})"),
        follow_ups: vec!["only the steel one".into()],
        status: ReviewStatus::Draft,
        agent_status: agent_engine::jobs::JobStatus::Done,
        final_answer: Some("The steel kettle costs 20 EUR.".into()),
        created_at: CAPTURED_AT.into(),
        updated_at: CAPTURED_AT.into(),
        created_by: "agent".into(),
        reviewed_by: None,
        subtasks: vec![Subtask {
            id: "plan-1".into(),
            title: "Find the kettle".into(),
            description: "Search the shop and open the kettle's page.".into(),
            step_range: [0, 1],
            status: agent_engine::run::SubtaskStatus::Pending,
        }],
        total_steps: 2,
        start_url: "https://shop.example/".into(),
        models: json!({"planner": "m-large", "navigator": "m-small", "thinking": "m-large", "repair": null}),
        usage: Usage { input_tokens: 1200, output_tokens: 300 },
        cost: 0.012,
        telemetry: Telemetry {
            log: vec![LogEntry {
                at: 1_795_000_000_000.0,
                step: 1,
                kind: LogKind::Thinking,
                message:
                    "Called because the user sent a message during the task. Decided: re-plan."
                        .into(),
            }],
            pauses: 1,
            resumes: 1,
            thinking_calls: 2,
            spend: [(
                "navigator".to_owned(),
                RoleSpend { calls: 2, input_tokens: 1000, output_tokens: 200, cost: 0.01 },
            )]
            .into(),
        },
        replay: Some(ReplayOrigin {
            workflow_id: "wf-shop".into(),
            version: 2,
            params: [("product".to_owned(), "kettle".to_owned())].into(),
            fast_path: true,
            steps: 2,
            fast_path_steps: 1,
        }),
        driven_by: Some("Claude Desktop".into()),
    };
    serde_json::to_value(run).unwrap()
}

/// A `StepRecord` as the engine serializes it.
pub fn step_record(run_id: &str, index: u32, screenshot: Option<(&str, usize)>) -> Value {
    let step = StepRecord {
        run_id: run_id.into(),
        index,
        url: "https://shop.example/kettles".into(),
        title: "Kettles".into(),
        screenshot: screenshot.map(|(key, bytes)| ScreenshotRef {
            key: key.into(),
            timestamp: CAPTURED_AT.into(),
            mime: "image/jpeg".into(),
            bytes,
        }),
        action: StepAction { kind: "click".into(), target: "Steel kettle".into(), value: None },
        actions: vec![ExecutedAction {
            action: Action::Click { id: 4 },
            target: "Steel kettle".into(),
            ok: true,
            message: "Clicked.".into(),
        }],
        thoughts: Thoughts {
            thought1: format!("Step {index}: the shop's front page is open."),
            thought2: "The kettles are under Kitchen.".into(),
            thought3: "Open the steel kettle; its page should show the price.".into(),
        },
        extended_thoughts: vec![],
        verified: false,
        issues: vec![],
        last_edited_by: "agent".into(),
        last_edited_at: CAPTURED_AT.into(),
        outcome: agent_engine::run::StepOutcome::Ok,
        trace_ids: vec![format!("trace-{index}")],
        duration_ms: 812.5,
        navigator: Some(agent_engine::run::NavigatorNotes {
            evaluation_previous_goal: "Success: the front page is open".into(),
            memory: "Kettles are under Kitchen".into(),
            next_goal: "Open the steel kettle".into(),
        }),
        drafted_thoughts: vec![agent_engine::run::Thought::Two],
    };
    serde_json::to_value(step).unwrap()
}

/// An `LlmTrace` as the engine serializes it.
pub fn trace_record(run_id: &str, id: &str, step: u32) -> Value {
    let trace = LlmTrace {
        id: id.into(),
        run_id: run_id.into(),
        step,
        role: Actor::Navigator,
        prompt_id: "navigator".into(),
        variant: "default".into(),
        prompt_hash: "abc123".into(),
        revision_hash: "def456".into(),
        params: json!({"task": "kettle", "page": {"state": "[redacted]"}}),
        redacted: vec!["page.state".into()],
        provider: "openai".into(),
        model: "m-small".into(),
        usage: Usage { input_tokens: 100, output_tokens: 20 },
        cost: 0.001,
        started_at: CAPTURED_AT.into(),
        duration_ms: 950.0,
        attempts: vec![Attempt {
            model: "m-small".into(),
            raw: "{}".into(),
            problems: vec![],
            usage: Usage { input_tokens: 100, output_tokens: 20 },
        }],
        error: None,
        chars: PromptChars { system: 10, state: 20, history: 5, total: 35 },
        prompt: SentPrompt {
            system: "You are the Navigator. The page now:\n[redacted]".into(),
            user: "Answer with the JSON object described above.".into(),
            temperature: Some(0.0),
            max_tokens: None,
            schema_name: Some("navigator".into()),
            images: 0,
        },
        fallback: None,
    };
    serde_json::to_value(trace).unwrap()
}

/// A tiny JPEG-looking blob (the server checks the `FF D8 FF` start, not the image).
pub fn jpeg(seed: u8, len: usize) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xD8, 0xFF, 0xE0];
    bytes.extend((0..len.saturating_sub(4)).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)));
    bytes
}

/// Runs `scenario` on SQLite and, when configured, on PostgreSQL.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() {
                if let Some(server) = $crate::support::Server::start($crate::support::Backend::Sqlite) {
                    super::$name(&server);
                }
            })*
        }
        mod postgres {
            $(#[test] fn $name() {
                if let Some(server) = $crate::support::Server::start($crate::support::Backend::Postgres) {
                    super::$name(&server);
                }
            })*
        }
    };
}
