//! The MCP server each client talks to: one [`Bridge`] per socket connection and per HTTP
//! session, forwarding `tools/list` and `tools/call` to the worker through the [`Hub`].
//! The tools are the worker's; this side only carries them.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use mcp_tools::bridge::{FromExtension, MAX_TO_CHROME, ToExtension};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::errors;
use crate::hub::Hub;

pub type HostHub = Hub<Peer<RoleServer>>;

/// What every client is told at `initialize`, by the host and by the stdio relay alike.
pub fn server_config() -> ServerConfig {
    ServerConfig::new(
        ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build(),
    )
    .with_server_info(Implementation::new("alphascout", env!("CARGO_PKG_VERSION")))
    .with_instructions(
        "AlphaScout drives the user's own Chromium: run_task starts a browser task and \
             returns its answer, or its question (reply with answer). Each tool's description \
             says what it does.",
    )
}

/// The versions with an `initialize` handshake: every client is a session, numbered at
/// its `initialize` (2026-07-28 drops both).
pub fn protocol_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// One MCP client's server.
pub struct Bridge {
    hub: Arc<HostHub>,
    /// `stdio` (through the socket) or `http`.
    transport: &'static str,
    /// Set at `initialize`; rmcp also builds handlers it only asks about a tool's schema.
    client: OnceLock<u32>,
}

impl Bridge {
    pub fn new(hub: Arc<HostHub>, transport: &'static str) -> Bridge {
        Bridge { hub, transport, client: OnceLock::new() }
    }

    fn client(&self) -> Result<u32, ErrorData> {
        self.client
            .get()
            .copied()
            .ok_or_else(|| ErrorData::new(ErrorCode::INVALID_REQUEST, "initialize first", None))
    }

    /// Sends one request and waits for its final answer, passing progress on to the
    /// client when it asked for it; the client's cancellation ends the wait (and tells the
    /// worker).
    async fn ask(
        &self,
        context: &RequestContext<RoleServer>,
        make: impl FnOnce(u64) -> ToExtension,
    ) -> Result<FromExtension, ErrorData> {
        let token = context.meta.get_progress_token();
        let mut waiting = self.hub.ask(make);
        loop {
            let message = tokio::select! {
                _ = context.ct.cancelled() => {
                    return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "cancelled", None));
                }
                message = waiting.next() => message,
            };
            match message {
                Some(FromExtension::Progress { progress: done, total, message, .. }) => {
                    if let Some(token) = &token {
                        let mut step = ProgressNotificationParam::new(token.clone(), done);
                        step.total = total;
                        step.message = message;
                        // A client that went away misses its progress; the result still comes.
                        let _ = context.peer.notify_progress(step).await;
                    }
                }
                Some(FromExtension::Error { code, message, .. }) => {
                    return Err(errors::refusal(code, message));
                }
                Some(answer) => return Ok(answer),
                None => {
                    return Err(ErrorData::new(
                        ErrorCode::INTERNAL_ERROR,
                        "the native host is shutting down",
                        None,
                    ));
                }
            }
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(client) = self.client.get() {
            self.hub.client_gone(*client);
        }
    }
}

fn unexpected(what: &str) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, format!("the extension answered {what}"), None)
}

/// The worker's tools as MCP's `tools/list` result.
fn tools_result(tools: Vec<mcp_tools::bridge::Tool>) -> Result<ListToolsResult, ErrorData> {
    serde_json::from_value(json!({ "tools": tools }))
        .map_err(|e| unexpected(&format!("a tool list MCP cannot carry ({e})")))
}

/// The worker's result as MCP's `CallToolResult` (the bridge's content blocks are MCP's).
fn call_result(
    content: Vec<mcp_tools::bridge::Content>,
    structured: Option<Value>,
    is_error: bool,
) -> Result<CallToolResult, ErrorData> {
    let mut result = json!({ "content": content, "isError": is_error });
    if let Some(structured) = structured {
        result["structuredContent"] = structured;
    }
    serde_json::from_value(result)
        .map_err(|e| unexpected(&format!("a result MCP cannot carry ({e})")))
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        server_config()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(protocol_versions())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        if self.client.get().is_none() {
            let info = &request.client_info;
            let client = self.hub.client_connected(
                &info.name,
                &info.version,
                self.transport,
                context.peer.clone(),
            );
            crate::log!(
                "client {client} connected over {}: {} {}",
                self.transport,
                info.name,
                info.version
            );
            let _ = self.client.set(client);
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let client = self.client()?;
        match self.ask(&context, |id| ToExtension::ListTools { id, client }).await? {
            FromExtension::Tools { tools, .. } => tools_result(tools),
            _ => Err(unexpected("tools/list with something else")),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = self.client()?;
        let progress = context.meta.get_progress_token().is_some();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // Chrome takes at most 1 MB from a native host; the envelope needs a little.
        if arguments.to_string().len() > MAX_TO_CHROME - 1024 {
            return Err(ErrorData::invalid_params("the arguments are over 1 MB", None));
        }
        let call = |id| ToExtension::Call {
            id,
            client,
            tool: request.name.to_string(),
            arguments,
            progress,
        };
        match self.ask(&context, call).await? {
            FromExtension::Result { content, structured, is_error, .. } => {
                call_result(content, structured, is_error).map(CallToolResponse::from)
            }
            _ => Err(unexpected("tools/call with something else")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tools::bridge::{Content, Tool};

    #[test]
    fn the_workers_tools_and_results_become_mcps() {
        let tools = tools_result(vec![Tool {
            name: "run_task".into(),
            description: "Runs a task.".into(),
            input_schema: json!({"type": "object", "properties": {"task": {"type": "string"}}}),
        }])
        .unwrap();
        assert_eq!(tools.tools[0].name, "run_task");
        assert_eq!(tools.tools[0].input_schema["properties"]["task"]["type"], "string");

        let result = call_result(
            vec![
                Content::Text { text: "The price is 12 €.".into() },
                Content::Image { data: "iVBO".into(), mime_type: "image/png".into() },
            ],
            Some(json!({"job_id": "j1", "status": "done"})),
            false,
        )
        .unwrap();
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(wire["content"][0], json!({"type": "text", "text": "The price is 12 €."}));
        assert_eq!(wire["content"][1]["mimeType"], "image/png");
        assert_eq!(wire["structuredContent"]["status"], "done");
        assert_eq!(wire["isError"], false);
    }

    #[test]
    fn only_versions_with_initialize_are_offered() {
        assert!(protocol_versions().iter().all(ProtocolVersion::has_initialize));
        assert!(protocol_versions().contains(&ProtocolVersion::V_2025_06_18));
    }
}
