//! A small synchronous CDP client over one WebSocket, using flattened sessions.
//!
//! Single-threaded on purpose: a call writes a command and reads until its answer arrives,
//! queueing the events it reads on the way. Tests stay deterministic and need no locks.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// Events kept for later `wait_event` calls; older ones are dropped past this.
const MAX_QUEUED_EVENTS: usize = 10_000;

pub struct Cdp {
    socket: WebSocket<TcpStream>,
    next_id: u64,
    events: VecDeque<Value>,
}

impl Cdp {
    /// Connects to a `ws://127.0.0.1:PORT/devtools/browser/…` endpoint.
    pub fn connect(url: &str) -> Result<Cdp, String> {
        let address = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| format!("not a ws:// url: {url}"))?;
        let stream = TcpStream::connect(address).map_err(|e| format!("{address}: {e}"))?;
        stream.set_nodelay(true).ok();
        // Screenshots of large pages arrive as one big message.
        let config = WebSocketConfig::default()
            .max_message_size(Some(512 << 20))
            .max_frame_size(Some(512 << 20));
        let (socket, _) = tungstenite::client::client_with_config(url, stream, Some(config))
            .map_err(|e| format!("websocket handshake with {url}: {e}"))?;
        Ok(Cdp { socket, next_id: 0, events: VecDeque::new() })
    }

    /// Sends `method` (to `session`, or the browser) and returns its `result`.
    pub fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut command = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            command["sessionId"] = session.into();
        }
        self.socket
            .send(Message::text(command.to_string()))
            .map_err(|e| format!("sending {method}: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let message =
                self.read(deadline)?.ok_or_else(|| format!("no answer to {method} within 60 s"))?;
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                return match message.get("error") {
                    Some(error) => Err(format!("{method}: {}", error["message"])),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
            }
            self.queue(message);
        }
    }

    /// The first event (queued or new) that `matches`, or `None` at the deadline.
    pub fn wait_event(
        &mut self,
        deadline: Instant,
        matches: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        if let Some(at) = self.events.iter().position(&matches) {
            return self.events.remove(at);
        }
        while let Ok(Some(message)) = self.read(deadline) {
            if message.get("method").is_some() && matches(&message) {
                return Some(message);
            }
            self.queue(message);
        }
        None
    }

    fn queue(&mut self, message: Value) {
        if message.get("method").is_some() {
            if self.events.len() == MAX_QUEUED_EVENTS {
                self.events.pop_front();
            }
            self.events.push_back(message);
        }
    }

    /// Reads one JSON message; `Ok(None)` when the deadline passes first.
    fn read(&mut self, deadline: Instant) -> Result<Option<Value>, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.socket.get_mut().set_read_timeout(Some(left)).ok();
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    return serde_json::from_str(&text).map(Some).map_err(|e| e.to_string());
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(format!("CDP connection: {e}")),
            }
        }
    }
}
