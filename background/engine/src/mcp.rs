//! An MCP client over the streamable HTTP transport (MCP 2025-06-18), behind the providers'
//! [`Http`]: what a pipeline's `tool: mcp` step and `{{tools.list}}` use.
//!
//! Invariants: every request goes to the configured server's own URL (so its own origin),
//! and only after [`McpServer::problems`] found nothing (http(s), plain http only to this
//! computer); the bearer token goes in those requests' `Authorization` header and nowhere
//! else, and every message a failure carries has it masked.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use protocol::settings::McpServer;
use serde::Serialize;
use serde_json::{Value, json};

use crate::providers::{Http, HttpFailure, HttpRequest, HttpResponse};

/// The protocol revision this client speaks.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// How long one request may take.
pub const TIMEOUT_MS: u32 = 30_000;
/// `tools/list` pages followed at most (a server that always answers a cursor stops here).
const MAX_PAGES: usize = 20;

/// One tool a server offers, as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct McpTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Value,
}

/// Why a request to a server failed, said for a person: the server (and tool) named, the
/// token never.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct McpError {
    pub message: String,
    /// Whether trying again may work (the server down or busy, a timeout).
    pub recoverable: bool,
    /// The server forgot the session (HTTP 404 on it): a new session may work at once.
    #[serde(default)]
    pub session_ended: bool,
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A session with one server: `initialize`d, its `Mcp-Session-Id` kept for later requests.
pub struct McpSession<'a, H> {
    http: &'a H,
    server: McpServer,
    session_id: RefCell<Option<String>>,
    /// The protocol version `initialize` agreed on, sent on every later request.
    protocol: RefCell<Option<String>>,
    next_id: Cell<u64>,
}

/// Every tool of `server`, in a session of its own.
pub async fn list_tools<H: Http>(http: &H, server: &McpServer) -> Result<Vec<McpTool>, McpError> {
    McpSession::connect_for(http, server, "tools/list").await?.list_tools().await
}

impl<'a, H: Http> McpSession<'a, H> {
    /// `initialize`, then `notifications/initialized`.
    pub async fn connect(http: &'a H, server: &McpServer) -> Result<Self, McpError> {
        McpSession::connect_for(http, server, "initialize").await
    }

    /// [`McpSession::connect`], its failures said as `what`'s (the call it is made for).
    async fn connect_for(http: &'a H, server: &McpServer, what: &str) -> Result<Self, McpError> {
        if let Some(problem) = server.problems(0).into_iter().next() {
            return Err(McpError {
                message: format!("MCP server {:?} is not usable: {}", server.name, problem.message),
                recoverable: false,
                session_ended: false,
            });
        }
        let session = McpSession {
            http,
            server: server.clone(),
            session_id: RefCell::new(None),
            protocol: RefCell::new(None),
            next_id: Cell::new(1),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "AlphaScout", "version": env!("CARGO_PKG_VERSION")},
        });
        let agreed = session.request("initialize", params, what).await?;
        let version = agreed.get("protocolVersion").and_then(Value::as_str);
        *session.protocol.borrow_mut() = Some(version.unwrap_or(PROTOCOL_VERSION).to_owned());
        session.notify("notifications/initialized", what).await?;
        Ok(session)
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let result = self.request("tools/list", params, "tools/list").await?;
            let page: Vec<McpTool> = result
                .get("tools")
                .cloned()
                .and_then(|t| serde_json::from_value(t).ok())
                .ok_or_else(|| {
                    self.error("tools/list", "answered without a list of tools", false)
                })?;
            tools.extend(page);
            cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if cursor.as_deref().is_none_or(str::is_empty) {
                return Ok(tools);
            }
        }
        Ok(tools)
    }

    /// `tools/call`: the tool's `structuredContent` when it gives one, else its text.
    pub async fn call_tool(&self, name: &str, arguments: &Value) -> Result<Value, McpError> {
        let what = format!("tool {name:?}");
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}), &what)
            .await?;
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let said = if text.is_empty() { "no reason given".to_owned() } else { text };
            return Err(self.error(&what, &format!("failed: {said}"), false));
        }
        match result.get("structuredContent") {
            Some(structured) if !structured.is_null() => Ok(structured.clone()),
            _ if result.get("content").is_some() => Ok(Value::String(text)),
            _ => {
                Err(self.error(&what, "answered with neither content nor structuredContent", false))
            }
        }
    }

    /// One JSON-RPC request; its `result`.
    async fn request(&self, method: &str, params: Value, what: &str) -> Result<Value, McpError> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.post(body, what).await?;
        let message = match reply(&response, id) {
            Ok(message) => message,
            Err(why) => return Err(self.error(what, &why, false)),
        };
        if method == "initialize"
            && let Some((_, session)) =
                response.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("mcp-session-id"))
        {
            *self.session_id.borrow_mut() = Some(session.clone());
        }
        if let Some(error) = message.get("error") {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or_default();
            let said = error.get("message").and_then(Value::as_str).unwrap_or("no message");
            return Err(self.error(what, &format!("answered error {code}: {said}"), false));
        }
        message
            .get("result")
            .cloned()
            .ok_or_else(|| self.error(what, "answered without a result", false))
    }

    async fn notify(&self, method: &str, what: &str) -> Result<(), McpError> {
        self.post(json!({"jsonrpc": "2.0", "method": method}), what).await.map(|_| ())
    }

    /// POSTs `body` to the server's URL; an HTTP error status is an error.
    async fn post(&self, body: Value, what: &str) -> Result<HttpResponse, McpError> {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        if let Some(session) = self.session_id.borrow().clone() {
            headers.push(("Mcp-Session-Id".to_owned(), session));
        }
        if let Some(version) = self.protocol.borrow().clone() {
            headers.push(("MCP-Protocol-Version".to_owned(), version));
        }
        if !self.server.token.is_empty() {
            let token = self.server.token.expose();
            headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
        }
        let request = HttpRequest { url: self.server.url.trim().to_owned(), headers, body };
        let body = &request.body;
        let response = match self.http.post(&request, TIMEOUT_MS).await {
            Ok(response) => response,
            Err(HttpFailure::Timeout) => {
                return Err(self.error(what, "did not answer in time", true));
            }
            Err(HttpFailure::Network(why)) => {
                let message = format!(
                    "could not be reached at {} ({why}): is it running, and does it allow this extension's origin (CORS)?",
                    self.server.url
                );
                return Err(self.error(what, &message, true));
            }
        };
        match response.status {
            200..=299 => Ok(response),
            // Redirects are not followed (a browser's opaque redirect has status 0): the
            // request and its token go to the configured URL only.
            0 | 300..=399 => Err(self.error(
                what,
                "answered with a redirect, which is not followed: MCP requests go to the configured URL only (enter the URL it redirects to)",
                false,
            )),
            401 | 403 => Err(self.error(
                what,
                &format!(
                    "refused the request (HTTP {}): check the server's token in Settings",
                    response.status
                ),
                false,
            )),
            404 if self.session_id.borrow().is_some() => {
                let mut error = self.error(what, "ended the session (HTTP 404); run again", true);
                error.session_ended = true;
                Err(error)
            }
            // The session id never reached us: a server behind CORS must expose its header.
            400 if self.session_id.borrow().is_none()
                && body["method"] != "initialize"
                && response.body.to_ascii_lowercase().contains("session") =>
            {
                Err(self.error(
                    what,
                    "asked for its session id, which it did not let the extension read: the server must send Access-Control-Expose-Headers: Mcp-Session-Id",
                    false,
                ))
            }
            status => {
                let said: String = response.body.chars().take(200).collect();
                let said = said.trim();
                let message = if said.is_empty() {
                    format!("answered HTTP {status}")
                } else {
                    format!("answered HTTP {status}: {said}")
                };
                Err(self.error(what, &message, status >= 500 || status == 429))
            }
        }
    }

    /// A failure of `what` (a method, or a tool) on this server, the token masked.
    fn error(&self, what: &str, message: &str, recoverable: bool) -> McpError {
        let message = format!("MCP server {:?}, {what}: {message}", self.server.name);
        McpError { message: self.server.token.redact(&message), recoverable, session_ended: false }
    }
}

/// The MCP servers of a run, each asked through one session kept for the run (opened on
/// first use; opened again once should the server forget it).
pub struct McpClients<'a, H> {
    http: &'a H,
    servers: Vec<McpServer>,
    sessions: RefCell<lean::SortedMap<String, Rc<McpSession<'a, H>>>>,
}

impl<'a, H: Http> McpClients<'a, H> {
    pub fn new(http: &'a H, servers: Vec<McpServer>) -> Self {
        McpClients { http, servers, sessions: RefCell::default() }
    }

    /// The configured servers' names.
    pub fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }

    /// Every tool of server `name`.
    pub async fn list_tools(&self, name: &str) -> Result<Vec<McpTool>, McpError> {
        self.in_session(name, "tools/list", async |session| session.list_tools().await).await
    }

    /// Tool `tool` of server `name`: its `structuredContent`, else its text, with the
    /// server's token masked should the tool echo it (what a step returns is kept in traces).
    pub async fn call_tool(
        &self,
        name: &str,
        tool: &str,
        arguments: &Value,
    ) -> Result<Value, McpError> {
        let what = format!("tool {tool:?}");
        let call = async |session: &McpSession<'a, H>| session.call_tool(tool, arguments).await;
        let result = self.in_session(name, &what, call).await?;
        let Some(server) = self.servers.iter().find(|s| s.name == name) else { return Ok(result) };
        let token = server.token.expose();
        let text = result.to_string();
        if token.is_empty() || !text.contains(token) {
            return Ok(result);
        }
        Ok(serde_json::from_str(&text.replace(token, "***")).unwrap_or(Value::Null))
    }

    /// `op` in server `name`'s session, and once more in a new session should the server
    /// have forgotten the first.
    async fn in_session<T>(
        &self,
        name: &str,
        what: &str,
        op: impl AsyncFn(&McpSession<'a, H>) -> Result<T, McpError>,
    ) -> Result<T, McpError> {
        let session = self.session(name, what).await?;
        match op(&session).await {
            Err(error) if error.session_ended => {
                self.sessions.borrow_mut().remove(name);
                op(&*self.session(name, what).await?).await
            }
            answer => answer,
        }
    }

    async fn session(&self, name: &str, what: &str) -> Result<Rc<McpSession<'a, H>>, McpError> {
        if let Some(session) = self.sessions.borrow().get(name) {
            return Ok(session.clone());
        }
        let Some(server) = self.servers.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
            let message = if known.is_empty() {
                format!("No MCP server named {name:?}: add it in Settings, MCP servers.")
            } else {
                format!(
                    "No MCP server named {name:?} in Settings (there are: {}).",
                    known.join(", ")
                )
            };
            return Err(McpError { message, recoverable: false, session_ended: false });
        };
        let session = Rc::new(McpSession::connect_for(self.http, server, what).await?);
        self.sessions.borrow_mut().insert(name.to_owned(), session.clone());
        Ok(session)
    }
}

/// The JSON-RPC response with `id` in `response`: the body itself (`application/json`), or
/// one of the `data:` events of a `text/event-stream`.
fn reply(response: &HttpResponse, id: u64) -> Result<Value, String> {
    let content_type = response
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.to_ascii_lowercase())
        .unwrap_or_default();
    let matches = |message: &Value| message.get("id").and_then(Value::as_u64) == Some(id);
    if content_type.starts_with("text/event-stream") {
        return events(&response.body)
            .into_iter()
            .filter_map(|data| serde_json::from_str::<Value>(&data).ok())
            .find(matches)
            .ok_or_else(|| "sent an event stream without the response to this request".into());
    }
    let message: Value = serde_json::from_str(&response.body).map_err(|_| {
        let start: String = response.body.chars().take(80).collect();
        format!("answered what is not JSON-RPC: {start:?}")
    })?;
    // A batch answer is an array; pick ours from it.
    let message = match message {
        Value::Array(items) => items.into_iter().find(matches).unwrap_or(Value::Null),
        other => other,
    };
    if !matches(&message) {
        return Err("answered without the response to this request".into());
    }
    Ok(message)
}

/// Each event's data in an SSE body: its `data:` lines joined by newlines.
fn events(body: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    for line in body.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                events.push(data.join("\n"));
                data.clear();
            }
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    events
}

#[cfg(test)]
mod tests;
