//! Settings' "Test connection": one tiny call with a role's model as it is being edited,
//! through the engine's provider code, so it fails exactly as a task would.

use agent_engine::Clock;
use agent_engine::providers::{self, ChatMessage, ChatRequest, ModelConfig, Secret};
use protocol::WorkerEvent;
use protocol::settings::{McpServer, ModelRole};
use serde_json::{Value, json};

use crate::chrome::PerformanceClock;
use crate::http::FetchHttp;
use crate::store::Store;

/// Calls `model` once and says how it went. `key` is a key typed in the form; without one
/// the key stored for `role` is used. The key never appears in the answer.
pub async fn test(
    store: &Store,
    id: u32,
    role: ModelRole,
    mut model: ModelConfig,
    key: Option<String>,
) -> WorkerEvent {
    let answer = |ok: bool, message: String| WorkerEvent::Connection { id, ok, message };
    if let Some(problem) = model.problems(role).into_iter().next().map(|p| p.message) {
        return answer(false, format!("Fix the form first: {problem}"));
    }
    let key = match key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty()) {
        Some(key) => key,
        // The stored key goes only to the server it was entered for.
        None => match store.settings().await {
            Ok(Some(stored)) => match stored.models.get(role) {
                Some(old) if old.server() == model.server() => old.api_key.expose().to_owned(),
                Some(old) if !old.api_key.is_empty() => {
                    return answer(
                        false,
                        format!(
                            "Enter the API key for {}: the stored key is for {} and is not sent anywhere else.",
                            model.server(),
                            old.server()
                        ),
                    );
                }
                _ => String::new(),
            },
            Ok(None) => String::new(),
            Err(error) => return answer(false, error),
        },
    };
    model.api_key = Secret::new(key);
    // A test says at once what is wrong; retrying a rate limit would only hide it.
    model.max_retries = 0;
    let chat = ChatRequest {
        system: "You are AlphaScout's connection test. Answer with one word.".into(),
        messages: vec![ChatMessage::user("Say OK.")],
        ..Default::default()
    };
    let started = PerformanceClock.now_ms();
    match providers::complete(&FetchHttp, &PerformanceClock, &model, &chat).await {
        Ok(reply) => {
            let ms = (PerformanceClock.now_ms() - started).round();
            let name = if reply.model.trim().is_empty() { &model.model } else { &reply.model };
            answer(true, format!("Connected: {name} answered in {ms} ms"))
        }
        Err(error) => answer(false, model.api_key.redact(&error.to_string())),
    }
}

/// Settings' "Test" of an MCP server as edited: a session and its tools, said in a line.
/// `token` is one typed in the form; without one the stored token of the server with this
/// name is used, only while the URL's origin is the one it was entered for.
pub async fn test_mcp(
    store: &Store,
    id: u32,
    mut server: McpServer,
    token: Option<String>,
) -> WorkerEvent {
    let answer = |ok: bool, message: String| WorkerEvent::Connection { id, ok, message };
    if let Some(problem) = server.problems(0).into_iter().next() {
        return answer(false, format!("Fix the form first: {}", problem.message));
    }
    server.token = match token.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) {
        Some(token) => Secret::new(token),
        None => match store.settings().await {
            Ok(stored) => {
                let old = stored
                    .as_ref()
                    .and_then(|s| s.mcp_servers.iter().find(|s| s.name == server.name).cloned());
                let origin = run_contract::url::origin;
                match old {
                    Some(old) if origin(&old.url) == origin(&server.url) => old.token,
                    Some(old) if !old.token.is_empty() => {
                        return answer(
                            false,
                            format!(
                                "Enter the token for {}: the stored one is for {} and is not sent anywhere else.",
                                origin(&server.url),
                                origin(&old.url)
                            ),
                        );
                    }
                    _ => Secret::default(),
                }
            }
            Err(error) => return answer(false, error),
        },
    };
    // Listed by the authoring module, which makes the MCP calls.
    let request = json!({"server": server, "token": server.token.expose()});
    match crate::authoring::list_mcp_tools(&request).await {
        Ok(listed) => {
            let ms = listed["ms"].as_f64().unwrap_or_default().round();
            let names: Vec<&str> = listed["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let listed = match names.len() {
                0 => "no tools".to_owned(),
                1 => format!("1 tool: {}", names[0]),
                n => format!("{n} tools: {}", names.join(", ")),
            };
            answer(true, format!("Connected in {ms} ms; {listed}."))
        }
        Err(error) => answer(false, error),
    }
}
