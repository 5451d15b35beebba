//! The bridge between the native host and the extension's worker.
//!
//! Chrome starts the native host when the worker calls `chrome.runtime.connectNative`
//! (only while Settings allows MCP clients). Each MCP client (a desktop client over stdio, a
//! local agent over HTTP) is a connection to that host; the host numbers them (`client`)
//! and numbers their requests (`id`, unique per host process), so the worker answers each
//! request by its `id` alone.
//!
//! On the wire, each message is JSON tagged by `type`, framed as Chrome frames native
//! messages: a 32-bit length in native byte order, then the UTF-8 JSON.

use std::io::{self, Read, Write};

use serde::Serialize;
use serde_json::Value;

/// The native host's name: the worker connects to it, and its manifest registers it.
pub const HOST_NAME: &str = "com.alphascout.mcp";

/// Chrome refuses a message from a native host over 1 MB.
pub const MAX_TO_CHROME: usize = 1024 * 1024;

/// From the native host to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToExtension {
    /// An MCP client finished its `initialize`: `name` and `version` are its `clientInfo`,
    /// `transport` is `stdio` or `http`.
    ClientConnected { client: u32, name: String, version: String, transport: String },
    /// The client's connection closed. Its running jobs go on (as a closed panel's do).
    ClientGone { client: u32 },
    /// `tools/list`: answered with [`FromExtension::Tools`].
    ListTools { id: u64, client: u32 },
    /// `tools/call`: answered with [`FromExtension::Result`] or [`FromExtension::Error`],
    /// and [`FromExtension::Progress`] before that when `progress` is set (the client sent a
    /// progress token).
    Call {
        id: u64,
        client: u32,
        tool: String,
        #[serde(default)]
        arguments: Value,
        #[serde(default)]
        progress: bool,
    },
    /// The client cancelled request `id` (MCP `notifications/cancelled`): stop waiting for
    /// it. The job it started is not stopped; `stop_job` does that.
    Cancel { id: u64 },
}

/// From the worker to the native host.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromExtension {
    /// Says which extension version answers; sent first on every connection.
    Hello {
        version: String,
    },
    Tools {
        id: u64,
        tools: Vec<Tool>,
    },
    /// One step of the job request `id` waits for.
    Progress {
        id: u64,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The tool's result, as MCP's `CallToolResult`. `is_error` marks a tool that ran and
    /// failed (the task failed, the page refused the action).
    Result {
        id: u64,
        content: Vec<Content>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        structured: Option<Value>,
        #[serde(default)]
        is_error: bool,
    },
    /// A refusal: MCP is switched off, the firewall denies the URL, the tab is busy, the
    /// tool or its arguments are unknown. Sent to the client as a JSON-RPC error.
    Error {
        id: u64,
        code: ErrorCode,
        message: String,
    },
    /// The tools changed (a pipeline or workflow was published or withdrawn).
    ToolsChanged,
}

/// Why a request was refused; the binary maps each to a JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such tool, or arguments that do not fit its schema.
    InvalidParams,
    /// Settings does not allow MCP clients.
    Disabled,
    /// The URL firewall or the scheme rules deny the address.
    Denied,
    /// Another job holds the tab, or the limit of jobs is reached.
    Busy,
    /// No such job, tab, workflow or pipeline.
    NotFound,
    /// Anything else the worker could not do.
    Internal,
}

/// One tool as MCP lists it.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// One part of a tool's result, as MCP's content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// Base64 data, e.g. a screenshot.
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

/// Writes one message framed for native messaging.
pub fn write_frame(out: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let body = serde_json::to_vec(message)?;
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "message over 4 GB"))?;
    out.write_all(&len.to_ne_bytes())?;
    out.write_all(&body)?;
    out.flush()
}

/// Reads one framed message's bytes; `Ok(None)` at a clean end of input.
pub fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_framed_message_reads_back_and_a_clean_end_is_none() {
        let sent = FromExtension::Error {
            id: 7,
            code: ErrorCode::Busy,
            message: "Another job runs in tab 3.".into(),
        };
        let mut wire = Vec::new();
        write_frame(&mut wire, &sent).unwrap();
        let mut input = wire.as_slice();
        let body = read_frame(&mut input).unwrap().unwrap();
        assert_eq!(serde_json::from_slice::<FromExtension>(&body).unwrap(), sent);
        assert_eq!(read_frame(&mut input).unwrap(), None);
    }

    #[test]
    fn messages_are_tagged_by_type_in_snake_case() {
        let call: ToExtension = serde_json::from_value(json!({
            "type": "call", "id": 1, "client": 2, "tool": "run_task",
            "arguments": {"task": "Find the price"}
        }))
        .unwrap();
        assert!(matches!(call, ToExtension::Call { progress: false, .. }));
        let image = Content::Image { data: "iVBO".into(), mime_type: "image/png".into() };
        assert_eq!(
            serde_json::to_value(image).unwrap(),
            json!({"type": "image", "data": "iVBO", "mimeType": "image/png"})
        );
    }
}
