//! The binary as Chrome starts it (pipes, the extension's origin, `ALPHASCOUT_MCP_DIR`),
//! with this side playing the worker's end of the bridge, and MCP clients that drive it
//! as real ones do (rmcp's own client, over a child's stdio and over HTTP).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;

use mcp_tools::bridge::{self, Content, ErrorCode, FromExtension, ToExtension, Tool};
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc;

pub const ORIGIN: &str = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/";
/// The sentence the scripted worker refuses `act` with.
pub const DENIED: &str = "The URL firewall denies http://blocked.example/.";

/// A directory of its own for one test: the host's socket, lock and config.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "alphascout-mcp-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Enables HTTP on `port` with `token`, as `cargo xtask mcp install` writes it.
    pub fn enable_http(&self, port: u16, token: &str) {
        let path = self.0.join("mcp.json");
        std::fs::write(&path, json!({"http": {"port": port, "token": token}}).to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_alphascout-mcp")
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The native host, started as Chrome starts it, with a scripted worker on its pipes.
pub struct Host {
    child: Child,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    /// Every message the host sent the worker, in order.
    pub sent: std_mpsc::Receiver<ToExtension>,
    stderr: Arc<Mutex<String>>,
    stderr_lines: std_mpsc::Receiver<String>,
}

impl Host {
    /// Starts the host on `dir` and waits until it says it listens.
    pub fn start(dir: &Path) -> Host {
        let mut host = Host::spawn(dir);
        host.wait_for_log("MCP clients connect through")
            .unwrap_or_else(|| panic!("the host did not start:\n{}", host.stderr()));
        host
    }

    /// Starts the host on `dir` without waiting for anything.
    pub fn spawn(dir: &Path) -> Host {
        let mut child = Command::new(binary())
            .arg(ORIGIN)
            .env("ALPHASCOUT_MCP_DIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        let (sent_to_test, sent) = std_mpsc::channel();
        let mut stdout = child.stdout.take().unwrap();
        let replies = stdin.clone();
        std::thread::spawn(move || {
            reply(&replies, &FromExtension::Hello { version: "0.1.0".into() });
            while let Ok(Some(body)) = bridge::read_frame(&mut stdout) {
                let message: ToExtension = serde_json::from_slice(&body)
                    .unwrap_or_else(|e| panic!("the host wrote a non-bridge frame: {e}"));
                for answer in worker(&message) {
                    reply(&replies, &answer);
                }
                let _ = sent_to_test.send(message);
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (lines_to_test, stderr_lines) = std_mpsc::channel();
        let log = stderr.clone();
        let child_stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(child_stderr).lines().map_while(Result::ok) {
                log.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = lines_to_test.send(line);
            }
        });
        Host { child, stdin, sent, stderr, stderr_lines }
    }

    /// Waits for a stderr line containing `text`; `None` if stderr closes first.
    pub fn wait_for_log(&mut self, text: &str) -> Option<String> {
        self.stderr_lines.iter().find(|line| line.contains(text))
    }

    /// Everything the host wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The next message the host sends the worker that `pick` keeps.
    pub fn next_sent<T>(&self, mut pick: impl FnMut(ToExtension) -> Option<T>) -> T {
        loop {
            let message = self
                .sent
                .recv_timeout(Duration::from_secs(30))
                .expect("the host sent the worker nothing more within 30 s");
            if let Some(found) = pick(message) {
                return found;
            }
        }
    }

    /// Chrome disconnecting: stdin closes; returns how the host exited.
    pub fn disconnect(&mut self) -> std::process::ExitStatus {
        self.stdin.lock().unwrap().take();
        self.child.wait().unwrap()
    }

    /// Waits for the process to end by itself (a host that refused to start).
    pub fn exit_status(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// Has the worker announce changed tools.
    pub fn tools_changed(&self) {
        reply(&self.stdin, &FromExtension::ToolsChanged);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn reply(stdin: &Mutex<Option<ChildStdin>>, message: &FromExtension) {
    if let Some(stdin) = stdin.lock().unwrap().as_mut() {
        let _ = bridge::write_frame(stdin, message);
    }
}

/// The worker's side, scripted: two tools, a task that reports two steps, a refused
/// action, and a call that never ends (until cancelled).
fn worker(message: &ToExtension) -> Vec<FromExtension> {
    match message {
        ToExtension::ListTools { id, .. } => vec![FromExtension::Tools {
            id: *id,
            tools: vec![
                Tool {
                    name: "run_task".into(),
                    description: "Runs a browser task and returns its answer.".into(),
                    input_schema: json!({
                        "type": "object",
                        "properties": {"task": {"type": "string"}},
                        "required": ["task"]
                    }),
                },
                Tool {
                    name: "act".into(),
                    description: "Carries out one Navigator action.".into(),
                    input_schema: json!({"type": "object"}),
                },
            ],
        }],
        ToExtension::Call { id, tool, progress, arguments, .. } => match tool.as_str() {
            "run_task" => {
                let mut answers = Vec::new();
                if *progress {
                    for (step, what) in [(1.0, "Opened the shop"), (2.0, "Read the price")] {
                        answers.push(FromExtension::Progress {
                            id: *id,
                            progress: step,
                            total: None,
                            message: Some(what.into()),
                        });
                    }
                }
                answers.push(FromExtension::Result {
                    id: *id,
                    content: vec![Content::Text {
                        text: format!("Done: {} The price is 12 €.", arguments["task"]),
                    }],
                    structured: Some(
                        json!({"job_id": "job-1", "status": "done", "answer": "12 €"}),
                    ),
                    is_error: false,
                });
                answers
            }
            "act" => vec![FromExtension::Error {
                id: *id,
                code: ErrorCode::Denied,
                message: DENIED.into(),
            }],
            _ => vec![], // "wait": answered never
        },
        _ => vec![],
    }
}

/// An MCP client's own side: what it was told besides answers.
#[derive(Clone)]
pub struct Listener {
    name: String,
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
    changed: mpsc::UnboundedSender<()>,
}

pub struct Heard {
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    pub changed: mpsc::UnboundedReceiver<()>,
}

/// The messages of the next `count` progress notifications, in the order of their
/// `progress` (rmcp's client may hand notifications to its handler out of order).
pub async fn progress_messages(heard: &mut Heard, count: usize) -> Vec<String> {
    let mut steps = Vec::new();
    for _ in 0..count {
        steps.push(heard.progress.recv().await.expect("a progress notification"));
    }
    steps.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    steps.into_iter().map(|s| s.message.unwrap_or_default()).collect()
}

pub fn listener(name: &str) -> (Listener, Heard) {
    let (progress, progress_heard) = mpsc::unbounded_channel();
    let (changed, changed_heard) = mpsc::unbounded_channel();
    (
        Listener { name: name.into(), progress, changed },
        Heard { progress: progress_heard, changed: changed_heard },
    )
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new(&self.name, "1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

pub type Client = RunningService<RoleClient, Listener>;

/// A desktop client: starts `alphascout-mcp stdio` on `dir` and initializes.
pub async fn stdio_client(dir: &Path, name: &str) -> (Client, Heard) {
    let (listener, heard) = listener(name);
    let dir = dir.to_owned();
    let child = TokioChildProcess::new(tokio::process::Command::new(binary()).configure(|cmd| {
        cmd.arg("stdio").env("ALPHASCOUT_MCP_DIR", &dir);
    }))
    .expect("alphascout-mcp stdio starts");
    (listener.serve(child).await.expect("initialize completes over stdio"), heard)
}

/// A local agent over streamable HTTP with the bearer token.
pub async fn http_client(port: u16, token: &str, name: &str) -> (Client, Heard) {
    let (listener, heard) = listener(name);
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(token),
    );
    (listener.serve(transport).await.expect("initialize completes over HTTP"), heard)
}

/// One raw HTTP/1.1 POST of an `initialize`, with extra header lines; the status code
/// and body.
pub fn raw_initialize(port: u16, headers: &str) -> (u16, String) {
    use std::io::Write;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}
    }})
    .to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.read_to_string(&mut reply);
    let status = reply.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, reply.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned())
}
