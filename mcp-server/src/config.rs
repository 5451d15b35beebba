//! Where the host keeps its socket, lock and configuration, and what `mcp.json` says.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use chromium_launch::native_host::host_dir_from;
use serde::Deserialize;

/// The socket `alphascout-mcp stdio` connects to.
pub const SOCKET: &str = "bridge.sock";
/// `{"http": {"port": N, "token": "..."}}`, written by `cargo xtask mcp install`.
pub const CONFIG: &str = "mcp.json";
/// Held (flock) by the live host, so a second one fails instead of taking its socket.
pub const LOCK: &str = "host.lock";

/// `$ALPHASCOUT_MCP_DIR`, else `$XDG_CONFIG_HOME/alphascout`, else `~/.config/alphascout`
/// (the rule `cargo xtask mcp install` writes `mcp.json` by).
pub fn dir() -> Result<PathBuf, String> {
    host_dir_from(
        std::env::var_os("ALPHASCOUT_MCP_DIR"),
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
    .ok_or_else(|| "neither ALPHASCOUT_MCP_DIR, XDG_CONFIG_HOME nor HOME is set".to_owned())
}

/// Creates `dir` if needed and keeps it to its owner (0700): the socket inside it
/// answers anyone who can reach it.
pub fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("restricting {} to its owner: {e}", dir.display()))
}

/// The HTTP endpoint `mcp.json` enables.
#[derive(Clone, Deserialize)]
pub struct HttpConfig {
    pub port: u16,
    pub token: String,
}

impl std::fmt::Debug for HttpConfig {
    // The token stays out of every log line, including a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig").field("port", &self.port).field("token", &"***").finish()
    }
}

#[derive(Deserialize)]
struct ConfigFile {
    http: Option<HttpConfig>,
}

/// The HTTP endpoint from `<dir>/mcp.json`: `Ok(None)` when the file or its `http` is
/// absent; an error, with what to do, when it is unreadable, readable by others, or has
/// no token.
pub fn read_http(dir: &Path) -> Result<Option<HttpConfig>, String> {
    let path = dir.join(CONFIG);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let mode = std::fs::metadata(&path).map_err(|e| e.to_string())?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} holds the HTTP token but others may read it: `chmod 600` it",
            path.display()
        ));
    }
    parse_http(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `mcp.json`'s text read as [`read_http`] reads it.
pub fn parse_http(text: &str) -> Result<Option<HttpConfig>, String> {
    let file: ConfigFile = serde_json::from_str(text).map_err(|e| {
        // serde's message may quote the input, and with it the token: say where only.
        format!("not the expected {{\"http\": {{\"port\", \"token\"}}}} (line {})", e.line())
    })?;
    match file.http {
        Some(http) if http.token.trim().is_empty() => Err("http.token is empty".into()),
        Some(http) if http.port == 0 => Err("http.port is 0".into()),
        other => Ok(other),
    }
}

/// Whether an `Authorization` header carries `Bearer <token>`, compared in constant time
/// (the time taken does not depend on where the first difference is).
pub fn bearer_matches(header: Option<&[u8]>, token: &str) -> bool {
    let Some(given) = header.and_then(|h| h.strip_prefix(b"Bearer ")) else {
        return false;
    };
    let expected = token.as_bytes();
    if given.len() != expected.len() {
        return false;
    }
    given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_enables_http_only_with_a_port_and_a_token() {
        let on = parse_http(r#"{"http": {"port": 8931, "token": "s3cret"}}"#).unwrap().unwrap();
        assert_eq!((on.port, on.token.as_str()), (8931, "s3cret"));
        assert!(parse_http("{}").unwrap().is_none());
        assert!(parse_http(r#"{"http": {"port": 1, "token": " "}}"#).is_err());
        let broken = parse_http(r#"{"http": {"port": "s3cret"}}"#).unwrap_err();
        assert!(!broken.contains("s3cret"), "{broken}");
        assert!(!format!("{on:?}").contains("s3cret"));
    }

    #[test]
    fn only_the_exact_bearer_token_matches() {
        let token = "abc123";
        assert!(bearer_matches(Some(b"Bearer abc123"), token));
        assert!(!bearer_matches(Some(b"Bearer abc124"), token));
        assert!(!bearer_matches(Some(b"Bearer abc1234"), token));
        assert!(!bearer_matches(Some(b"bearer abc123"), token));
        assert!(!bearer_matches(Some(b"abc123"), token));
        assert!(!bearer_matches(None, token));
    }
}
