//! The real sync server for the e2e tests: in a thread of its own, on loopback and SQLite in
//! a temp folder, with the users `ann` (annotator) and `quinn` (QA manager), stopped on drop.
//! A test module rather than part of the `e2e` library, so only the tests that sync build
//! the server. Each test file uses part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;
use sync_server::auth::{Role, add_user};
use sync_server::store::Store;

use e2e::http;

pub struct SyncServer {
    addr: SocketAddr,
    /// Each user's bearer token.
    pub tokens: HashMap<&'static str, String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SyncServer {
    /// Starts a server whose database lives in `target/tmp/<name>-<pid>`.
    pub fn start(name: &str) -> SyncServer {
        let users = [("ann", Role::Annotator), ("quinn", Role::QaManager)];
        SyncServer::start_with(name, &users, sync_server::Config::default())
    }

    /// Starts a server with `users` (name and role; each name is also the user id) and
    /// `config`.
    pub fn start_with(
        name: &str,
        users: &[(&'static str, Role)],
        config: sync_server::Config,
    ) -> SyncServer {
        let users = users.to_vec();
        let dir = e2e::workspace_root().join(format!("target/tmp/{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}/sync.db", dir.display());
        let (ready, started) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let store = Store::connect(&url).await.expect("the sync database");
                let mut tokens = HashMap::new();
                for (name, role) in users {
                    tokens.insert(name, add_user(&store, name, name, role).await.unwrap());
                }
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready.send((listener.local_addr().unwrap(), tokens)).unwrap();
                let shutdown = async {
                    let _ = stopped.await;
                };
                sync_server::serve(listener, store, config, shutdown).await.unwrap();
            });
        });
        let (addr, tokens) =
            started.recv_timeout(Duration::from_secs(60)).expect("the sync server starts");
        SyncServer { addr, tokens, stop: Some(stop), thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn get(&self, user: &str, path: &str) -> http::Response {
        let auth = format!("Bearer {}", self.tokens[user]);
        http::request("GET", &format!("{}{path}", self.url()), &[("Authorization", &auth)], "")
    }

    /// Creates `path` as `user` (`If-None-Match: *`).
    pub fn put(&self, user: &str, path: &str, body: &Value) -> http::Response {
        let auth = format!("Bearer {}", self.tokens[user]);
        let body = body.to_string();
        let headers = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("If-None-Match", "*"),
        ];
        http::request("PUT", &format!("{}{path}", self.url()), &headers, &body)
    }

    /// Sends `body` to `path` as `user` with `method` and no precondition.
    pub fn send(&self, user: &str, method: &str, path: &str, body: &Value) -> http::Response {
        let auth = format!("Bearer {}", self.tokens[user]);
        let body = body.to_string();
        let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
        http::request(method, &format!("{}{path}", self.url()), &headers, &body)
    }

    /// Polls the server until `test` holds for `path`'s JSON.
    pub fn wait_for(
        &self,
        user: &str,
        path: &str,
        what: &str,
        test: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let response = self.get(user, path);
            if response.status == 200 && test(&response.json()) {
                return response.json();
            }
            if Instant::now() > deadline {
                panic!("the server never had {what}: {} {}", response.status, response.body);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for SyncServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
