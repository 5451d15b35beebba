//! Settings' "Test connection": one tiny call with a role's model as it is being edited,
//! through the engine's provider code, so it fails exactly as a task would.

use agent_engine::Clock;
use agent_engine::providers::{self, ChatMessage, ChatRequest, ModelConfig, Secret};
use protocol::WorkerEvent;
use protocol::settings::ModelRole;

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
