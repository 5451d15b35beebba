//! The MCP server's state as the side panel's Settings shows it: whether the native host
//! is connected (or why not, in a sentence), and which MCP clients are connected through it.

use serde::Serialize;

/// Sent to every page when it connects and whenever it changes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct McpStatus {
    /// Settings' "Allow MCP clients".
    pub allowed: bool,
    /// The native host answers.
    pub connected: bool,
    /// Why it is not connected while allowed, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(default)]
    pub clients: Vec<McpClient>,
}

/// One connected MCP client.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct McpClient {
    /// Its `clientInfo` name and version.
    pub name: String,
    #[serde(default)]
    pub version: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// When it connected, milliseconds since the epoch.
    pub since: f64,
}

/// What Chrome says when the host manifest is not installed.
pub const HOST_NOT_FOUND: &str = "Specified native messaging host not found.";

/// Chrome's reason a native port closed, said for a person.
pub fn host_problem(chrome_says: &str) -> String {
    match chrome_says.trim() {
        HOST_NOT_FOUND => {
            "The MCP host is not installed: run `cargo xtask mcp install`.".to_owned()
        }
        "Access to the specified native messaging host is forbidden." => {
            "The MCP host's manifest does not allow this extension: run `cargo xtask mcp \
             install` again."
                .to_owned()
        }
        "Native host has exited." => {
            "The MCP host stopped. It is started again when you switch MCP clients off and on."
                .to_owned()
        }
        "" => "The MCP host closed the connection.".to_owned(),
        other => format!("The MCP host could not be reached: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chromes_reasons_become_what_to_do() {
        assert_eq!(
            host_problem(HOST_NOT_FOUND),
            "The MCP host is not installed: run `cargo xtask mcp install`."
        );
        assert_eq!(
            host_problem("Error when communicating with the native messaging host."),
            "The MCP host could not be reached: Error when communicating with the native \
             messaging host."
        );
    }
}
