//! `alphascout-mcp stdio`: what a desktop MCP client starts. It relays MCP's JSON lines
//! between its stdio and the native host's socket, so the client talks to the host's
//! server. While no host runs it is a server of its own: it completes `initialize`, answers
//! `ping`, and refuses `tools/list` and `tools/call` with [`errors::UNREACHABLE`]; every
//! request tries the socket again, and once it answers, the client's `initialize` is
//! replayed to the host and the client is told the tools changed, so nothing needs
//! restarting.
//!
//! [`Relay`] decides what each line means and where it goes; [`run`] only moves lines.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

use crate::errors;
use crate::handler::{protocol_versions, server_config};
use crate::log;

/// Ids of the relay's own `initialize` replays; a client's ids are its own business, so
/// these are strings no client is likely to pick, and their answers never reach it.
const REPLAY_ID: &str = "alphascout-relay-initialize-";

/// A JSON-RPC message to write, and to whom.
#[derive(Debug, Clone, PartialEq)]
pub enum Send {
    Client(Value),
    Host(Value),
}

#[derive(Default)]
pub struct Relay {
    /// The client's `initialize` params, replayed to each new connection to the host.
    initialize: Option<Value>,
    connected: bool,
    /// The client's requests the host has yet to answer, by their id's JSON text.
    forwarded: HashMap<String, Value>,
    replays: u64,
}

fn key(id: &Value) -> String {
    id.to_string()
}

fn error(id: Value, code: i32, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

fn unreachable(id: Value) -> Value {
    let refusal = errors::unreachable();
    error(id, refusal.code.0, &refusal.message, refusal.data)
}

/// The `initialize` answer the host would give: the client's version when the host
/// speaks it, else the newest the host does.
fn initialize_result(params: &Value) -> Value {
    let mut result = serde_json::to_value(server_config()).expect("the server config is JSON");
    let requested = params["protocolVersion"].as_str().unwrap_or_default();
    let versions = protocol_versions();
    let version = versions
        .iter()
        .find(|v| v.as_str() == requested)
        .or(versions.last())
        .expect("some version has initialize");
    result["protocolVersion"] = json!(version.as_str());
    result
}

impl Relay {
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// One line from the client. `connect` is called when the line needs the host and
    /// none is connected; it says whether the socket answered.
    pub fn from_client(&mut self, line: &str, connect: &mut dyn FnMut() -> bool) -> Vec<Send> {
        let message: Value = match serde_json::from_str(line) {
            Ok(message @ Value::Object(_)) => message,
            Ok(_) => return vec![Send::Client(error(Value::Null, -32600, "not a request", None))],
            Err(_) => return vec![Send::Client(error(Value::Null, -32700, "not JSON", None))],
        };
        let method = message["method"].as_str().map(str::to_owned);
        let id = message.get("id").cloned();
        let (Some(method), Some(id)) = (method, id) else {
            // A notification or a response: only the host has a use for it.
            return if self.connected { vec![Send::Host(message)] } else { vec![] };
        };
        let mut sends = Vec::new();
        if method == "initialize" {
            self.initialize = Some(message["params"].clone());
            if !self.connected && !self.open(connect, &mut sends, false) {
                let result = initialize_result(&message["params"]);
                return vec![Send::Client(json!({"jsonrpc": "2.0", "id": id, "result": result}))];
            }
        } else if !self.connected && !self.open(connect, &mut sends, true) {
            let answer = match method.as_str() {
                "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                "tools/list" | "tools/call" => unreachable(id),
                _ => error(id, -32601, &format!("{method} is not offered"), None),
            };
            return vec![Send::Client(answer)];
        }
        self.forwarded.insert(key(&id), id);
        sends.push(Send::Host(message));
        sends
    }

    /// Connects; on a connection that is to carry a request of a client that already
    /// initialized, first replays its handshake and tells it the tools changed.
    fn open(
        &mut self,
        connect: &mut dyn FnMut() -> bool,
        sends: &mut Vec<Send>,
        replay: bool,
    ) -> bool {
        if !connect() {
            return false;
        }
        self.connected = true;
        if let (true, Some(params)) = (replay, &self.initialize) {
            self.replays += 1;
            let id = format!("{REPLAY_ID}{}", self.replays);
            sends.push(Send::Host(json!({
                "jsonrpc": "2.0", "id": id, "method": "initialize", "params": params
            })));
            sends
                .push(Send::Host(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
            sends.push(Send::Client(
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ));
        }
        true
    }

    /// One line from the host.
    pub fn from_host(&mut self, line: &str) -> Vec<Send> {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            log!("skipped a line from the host that is not JSON");
            return vec![];
        };
        if message.get("method").is_none()
            && let Some(id) = message.get("id")
        {
            if id.as_str().is_some_and(|id| id.starts_with(REPLAY_ID)) {
                if let Some(error) = message.get("error") {
                    log!("the host refused the replayed initialize: {error}");
                }
                return vec![];
            }
            self.forwarded.remove(&key(id));
        }
        vec![Send::Client(message)]
    }

    /// The host went away: what it had not answered is answered here.
    pub fn host_closed(&mut self) -> Vec<Send> {
        self.connected = false;
        self.forwarded.drain().map(|(_, id)| Send::Client(unreachable(id))).collect()
    }
}

enum Event {
    Client(String),
    ClientClosed,
    /// A line from connection number `.0`.
    Host(u64, String),
    HostClosed(u64),
}

/// Relays until the client closes stdin.
pub fn run(dir: &Path) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(relay(&dir.join(crate::config::SOCKET)));
    Ok(())
}

async fn relay(socket: &Path) {
    let (events, mut next) = mpsc::unbounded_channel();
    let from_client = events.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if from_client.send(Event::Client(line)).is_err() {
                return;
            }
        }
        let _ = from_client.send(Event::ClientClosed);
    });
    let mut stdout = tokio::io::stdout();
    let mut relay = Relay::default();
    let mut host: Option<OwnedWriteHalf> = None;
    let mut connection = 0u64;
    while let Some(event) = next.recv().await {
        let sends = match event {
            Event::Client(line) if line.trim().is_empty() => continue,
            Event::Client(line) => {
                let mut connect = || match connect(socket, connection + 1, &events) {
                    Some(writer) => {
                        connection += 1;
                        host = Some(writer);
                        true
                    }
                    None => false,
                };
                relay.from_client(&line, &mut connect)
            }
            Event::ClientClosed => return,
            Event::Host(from, line) if from == connection => relay.from_host(&line),
            Event::HostClosed(from) if from == connection && relay.connected() => {
                host = None;
                relay.host_closed()
            }
            Event::Host(..) | Event::HostClosed(_) => continue,
        };
        for send in sends {
            let (line, to_host) = match send {
                Send::Client(message) => (message.to_string() + "\n", false),
                Send::Host(message) => (message.to_string() + "\n", true),
            };
            if !to_host {
                if stdout.write_all(line.as_bytes()).await.and(stdout.flush().await).is_err() {
                    return; // the client is gone
                }
                continue;
            }
            let written = match host.as_mut() {
                Some(writer) => writer.write_all(line.as_bytes()).await.is_ok(),
                None => false,
            };
            if !written {
                // Its reader will report the close; answer what waits now.
                host = None;
                connection += 1;
                for send in relay.host_closed() {
                    if let Send::Client(message) = send {
                        let _ = stdout.write_all((message.to_string() + "\n").as_bytes()).await;
                    }
                }
                let _ = stdout.flush().await;
                break;
            }
        }
    }
}

/// Connects to the host's socket as connection `number`, whose lines and close come back
/// as events; `None` when no host listens.
fn connect(
    socket: &Path,
    number: u64,
    events: &mpsc::UnboundedSender<Event>,
) -> Option<OwnedWriteHalf> {
    let stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_nonblocking(true).ok()?;
    let (reader, writer) = tokio::net::UnixStream::from_std(stream).ok()?.into_split();
    let events = events.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if events.send(Event::Host(number, line)).is_err() {
                return;
            }
        }
        let _ = events.send(Event::HostClosed(number));
    });
    Some(writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(value: Value) -> String {
        value.to_string()
    }

    fn initialize(id: u64) -> String {
        line(json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "desk", "version": "1"}
        }}))
    }

    fn request(id: u64, method: &str) -> String {
        line(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}))
    }

    #[test]
    fn without_a_host_initialize_completes_and_tools_are_refused_clearly() {
        let mut relay = Relay::default();
        let mut down = || false;
        let [Send::Client(init)] = &relay.from_client(&initialize(1), &mut down)[..] else {
            panic!("answered here")
        };
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(init["result"]["serverInfo"]["name"], "alphascout");
        let initialized = line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(relay.from_client(&initialized, &mut down).is_empty());
        let [Send::Client(refused)] = &relay.from_client(&request(2, "tools/list"), &mut down)[..]
        else {
            panic!("answered here")
        };
        assert_eq!(refused["id"], 2);
        assert_eq!(refused["error"]["message"], errors::UNREACHABLE);
        let [Send::Client(pong)] = &relay.from_client(&request(3, "ping"), &mut down)[..] else {
            panic!("answered here")
        };
        assert_eq!(pong["result"], json!({}));
    }

    #[test]
    fn a_host_that_appears_later_gets_the_handshake_replayed_before_the_request() {
        let mut relay = Relay::default();
        relay.from_client(&initialize(1), &mut || false);
        let mut tries = 0;
        let sends = relay.from_client(&request(2, "tools/list"), &mut || {
            tries += 1;
            true
        });
        assert_eq!(tries, 1);
        let hosts: Vec<&Value> = sends
            .iter()
            .filter_map(|s| if let Send::Host(m) = s { Some(m) } else { None })
            .collect();
        assert_eq!(hosts[0]["method"], "initialize");
        assert_eq!(hosts[0]["params"]["clientInfo"]["name"], "desk");
        assert_eq!(hosts[1]["method"], "notifications/initialized");
        assert_eq!(hosts[2]["method"], "tools/list");
        assert!(sends.contains(&Send::Client(
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        )));
        // The replay's answer is the relay's; the request's is the client's.
        let replay_answer = line(json!({"jsonrpc": "2.0", "id": hosts[0]["id"], "result": {}}));
        assert!(relay.from_host(&replay_answer).is_empty());
        let tools = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}});
        assert_eq!(relay.from_host(&line(tools.clone())), vec![Send::Client(tools)]);
    }

    #[test]
    fn a_host_up_at_initialize_answers_it_itself() {
        let mut relay = Relay::default();
        let sends = relay.from_client(&initialize(1), &mut || true);
        assert!(matches!(&sends[..], [Send::Host(m)] if m["id"] == 1));
    }

    #[test]
    fn when_the_host_goes_away_its_unanswered_requests_are_answered_and_the_next_retries() {
        let mut relay = Relay::default();
        relay.from_client(&initialize(1), &mut || true);
        relay.from_host(&line(json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        relay.from_client(&request(7, "tools/call"), &mut || unreachable!("connected"));
        let [Send::Client(answer)] = &relay.host_closed()[..] else { panic!("one answer") };
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (json!(7), json!(-32000))
        );
        let mut tried = false;
        relay.from_client(&request(8, "tools/list"), &mut || {
            tried = true;
            false
        });
        assert!(tried);
    }

    #[test]
    fn lines_that_are_not_requests_get_json_rpc_errors() {
        let mut relay = Relay::default();
        let [Send::Client(answer)] = &relay.from_client("{oops", &mut || false)[..] else {
            panic!("one answer")
        };
        assert_eq!(answer["error"]["code"], -32700);
    }
}
