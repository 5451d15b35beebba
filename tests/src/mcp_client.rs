//! An MCP client of the official Python SDK (`tests/py/mcp_client.py`) driving AlphaScout
//! through `alphascout-mcp`, over stdio as a desktop app and over streamable HTTP as a local
//! agent, and the browser it drives: the host registered in the profile and confined to a
//! folder of its own, with the jobs' scripted model. The e2e tests in `tests/mcp_server.rs`
//! and `bench mcp` share it.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::agent::{TEST_KEY, settings};
use crate::browser::Browser;
use crate::fixtures::FixtureSites;

/// The API key of every role, for `save_settings`.
pub fn keys() -> Value {
    json!({"planner": TEST_KEY, "navigator": TEST_KEY, "thinking": TEST_KEY})
}

/// The client, driven a line at a time: calls run at once, and what each brings (progress,
/// a result, an error) is kept by its tag.
pub struct Client {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    /// Lines read and not yet asked for.
    seen: Vec<Value>,
}

impl Client {
    fn python() -> PathBuf {
        crate::python::environment("mcp", &["mcp==1.23.3"], &["mcp", "uvicorn"])
    }

    fn start(args: &[String]) -> Client {
        let script = crate::workspace_root().join("tests/py/mcp_client.py");
        let mut child = Command::new(Client::python())
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the MCP client starts");
        let to = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (send, from) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        let mut client = Client { child, to, from, seen: Vec::new() };
        client.next_where("the client's initialize", |line| line["ready"] == true);
        client
    }

    /// A desktop client: `alphascout-mcp stdio`, started by the client as Claude Desktop does.
    pub fn stdio(name: &str, dir: &Path) -> Client {
        let binary = crate::mcp_host::binary().display().to_string();
        Client::start(&["stdio".into(), name.into(), binary, dir.display().to_string()])
    }

    /// A local agent over streamable HTTP, with the token from `mcp.json`.
    pub fn http(name: &str, http: &HttpEndpoint) -> Client {
        let url = format!("http://127.0.0.1:{}/mcp", http.port);
        Client::start(&["http".into(), name.into(), url, http.token.clone()])
    }

    fn send(&mut self, command: Value) {
        writeln!(self.to, "{command}").unwrap();
        self.to.flush().unwrap();
    }

    /// The next line (kept or new) that `test` takes, within 90 s.
    pub fn next_where(&mut self, what: &str, test: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&test) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(line) if test(&line) => return line,
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {what} from the MCP client; it said {:#?}", self.seen),
            }
        }
    }

    /// Drops the events (`tools_changed`) heard so far, so the next one is new.
    pub fn forget_events(&mut self) {
        while let Ok(line) = self.from.try_recv() {
            self.seen.push(line);
        }
        self.seen.retain(|l| l.get("event").is_none());
    }

    pub fn list_tools(&mut self) -> Vec<Value> {
        self.send(json!({"op": "list_tools", "tag": "tools"}));
        let listed =
            self.next_where("tools", |l| l["tag"] == "tools" && l.get("progress").is_none());
        listed["tools"].as_array().unwrap_or_else(|| panic!("no tools: {listed}")).clone()
    }

    /// Starts a call tagged `tag`; [`Client::outcome`] waits for its end.
    pub fn call(&mut self, tag: &str, tool: &str, arguments: Value) {
        self.send(json!({"op": "call", "tag": tag, "tool": tool, "arguments": arguments}));
    }

    /// The call's result (`{"result": …}`) or error (`{"error": …}`), and its progress lines.
    pub fn outcome(&mut self, tag: &str) -> (Value, Vec<Value>) {
        let end = self.next_where(&format!("end of {tag}"), |l| {
            l["tag"] == tag && (l.get("result").is_some() || l.get("error").is_some())
        });
        let mut progress = Vec::new();
        self.seen.retain(|l| {
            let mine = l["tag"] == tag && l.get("progress").is_some();
            if mine {
                progress.push(l.clone());
            }
            !mine
        });
        (end, progress)
    }

    /// A call and its end: the structured result of a tool that ran, else the error.
    pub fn run(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Value>) {
        let tag = format!("{tool}-{}", self.seen.len() + next_tag());
        self.call(&tag, tool, arguments);
        self.outcome(&tag)
    }
}

/// A number no other call or folder of this process has.
fn next_tag() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = writeln!(self.to, "{}", json!({"op": "quit"}));
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// The HTTP endpoint written into `mcp.json` before the host starts.
pub struct HttpEndpoint {
    pub port: u16,
    pub token: String,
}

/// A browser whose profile has the host registered, confined to a folder of its own, with
/// the jobs' scripted model, the firewall denying [`DENIED`], and MCP clients allowed.
pub struct Setup {
    pub sites: FixtureSites,
    pub browser: Browser,
    pub model: crate::jobs::Model,
    pub dir: PathBuf,
    pub http: HttpEndpoint,
}

/// The host the setup's firewall denies.
pub const DENIED: &str = "blocked.example";

/// Launches the [`Setup`], its model answering each call after `delay`, and returns once
/// Chrome has started the host.
pub fn setup(delay: Duration) -> Setup {
    let dir = std::env::temp_dir().join(format!(
        "alphascout-mcp-ext-{}-{}",
        std::process::id(),
        next_tag()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let http = HttpEndpoint { port, token: "mcp-http-e2e-7d0c2b9f41".into() };
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"http": {"port": port, "token": http.token}}).to_string())
        .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let sites = FixtureSites::serve();
    let browser = Browser::launch_with(crate::mcp_host::launch_options(&dir)).unwrap();
    let model = crate::jobs::model(delay);
    let mut allowed = settings(model.llm.base_url());
    allowed["allow_mcp_clients"] = json!(true);
    allowed["deny"] = json!([DENIED]);
    let mut setup = Setup { sites, browser, model, dir, http };
    setup.store(allowed);
    // The worker connected: Chrome started the host, which listens on its socket.
    let socket = setup.dir.join("bridge.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the host never made {}", socket.display());
        std::thread::sleep(Duration::from_millis(20));
    }
    setup
}

impl Setup {
    /// Saves the stored settings after `change`.
    pub fn save(&mut self, change: impl FnOnce(&mut Value)) {
        let stored = self.browser.agent_request(json!({"type": "get_settings"}));
        let mut next = stored["settings"].clone();
        change(&mut next);
        self.store(next);
    }

    fn store(&mut self, settings: Value) {
        let saved = self
            .browser
            .agent_request(json!({"type": "save_settings", "settings": settings, "keys": keys()}));
        assert_eq!(saved["problems"], json!([]), "{saved}");
    }

    /// Swaps the model for one that answers each call after `delay`.
    pub fn use_model(&mut self, delay: Duration) {
        self.model = crate::jobs::model(delay);
        let base_url = self.model.llm.base_url().to_owned();
        self.save(|stored| stored["models"] = settings(&base_url)["models"].clone());
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The structured content of a tool's result; panics on an error.
pub fn structured(outcome: &Value) -> &Value {
    assert!(outcome.get("result").is_some(), "not a result: {outcome:#}");
    &outcome["result"]["structured"]
}

/// The message of a call's error; panics on a result.
pub fn error_message(outcome: &Value) -> String {
    outcome["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {outcome:#}"))
        .to_owned()
}
