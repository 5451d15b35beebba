//! LLM providers in their native wire formats, as pure request building and reply parsing
//! behind an [`Http`] trait (the worker implements it with `fetch`), plus retries that honour
//! `Retry-After`, error classes a person can act on, and token usage with cost.
//!
//! | provider | endpoint | structured output |
//! |---|---|---|
//! | OpenAI, OpenRouter, any OpenAI-compatible URL | `POST {base}/chat/completions` | `response_format: json_schema` |
//! | Anthropic | `POST {base}/messages` | a forced tool call whose input is the JSON |
//! | Ollama | `POST {base}/api/chat` | `format: <schema>` (needs `OLLAMA_ORIGINS=chrome-extension://*` on the server) |
//! | Google Gemini | `POST {base}/models/{model}:generateContent` | `responseMimeType` + `responseSchema` |

use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};

use crate::{Clock, truncate};

pub use protocol::settings::{ModelConfig, ProviderKind, Secret};

/// A chat request in provider-neutral terms.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// The JSON Schema the answer must follow, with a name for it.
    pub schema: Option<(String, Value)>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ChatMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    /// JPEG images, base64, shown to the model with the text (vision).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: "user".into(), content: content.into(), images: Vec::new() }
    }
    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage { role: "assistant".into(), content: content.into(), images: Vec::new() }
    }
}

pub use run_records::Usage;

/// What a model answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatReply {
    /// The text, or the JSON text of a structured answer.
    pub text: String,
    pub usage: Usage,
    pub model: String,
    /// How many attempts it took (1 without retries).
    pub attempts: u32,
}

/// A provider call that failed, sorted into what a person or the agent can do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmError {
    /// 401 or 403.
    Auth {
        status: u16,
        detail: String,
    },
    /// 404: usually the model name.
    ModelNotFound {
        model: String,
        detail: String,
    },
    /// 400: the request itself.
    BadRequest {
        detail: String,
    },
    /// 429 after retries.
    RateLimited {
        detail: String,
    },
    /// 5xx (or 529) after retries.
    Server {
        status: u16,
        detail: String,
    },
    Timeout {
        ms: u32,
    },
    /// The server could not be reached at all.
    Network {
        detail: String,
    },
    /// The reply is not in the provider's format.
    Malformed {
        detail: String,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Auth { status, detail } => write!(
                f,
                "The provider refused the API key ({status}: {detail}). Check your API key in Settings."
            ),
            LlmError::ModelNotFound { model, detail } => write!(
                f,
                "The provider does not know the model {model:?} ({detail}). Check the model name in Settings."
            ),
            LlmError::BadRequest { detail } => {
                write!(f, "The provider rejected the request: {detail}")
            }
            LlmError::RateLimited { detail } => write!(
                f,
                "The provider is rate-limiting requests ({detail}). Wait a minute, or use another model."
            ),
            LlmError::Server { status, detail } => {
                write!(f, "The provider had an error ({status}: {detail}). Try again shortly.")
            }
            LlmError::Timeout { ms } => {
                write!(f, "The provider did not answer within {} s.", ms / 1000)
            }
            LlmError::Network { detail } => write!(
                f,
                "Could not reach the provider ({detail}). Check the base URL in Settings and your connection."
            ),
            LlmError::Malformed { detail } => {
                write!(f, "The provider's reply could not be read: {detail}")
            }
        }
    }
}

/// An HTTP request as the shell sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// Sending one POST with a timeout. `Err` means no response arrived at all.
#[allow(async_fn_in_trait)]
pub trait Http {
    async fn post(
        &self,
        request: &HttpRequest,
        timeout_ms: u32,
    ) -> Result<HttpResponse, HttpFailure>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFailure {
    Timeout,
    Network(String),
}

/// Builds the provider's request for `chat`.
pub fn build_request(config: &ModelConfig, chat: &ChatRequest) -> HttpRequest {
    let base = if config.base_url.is_empty() {
        config.provider.default_base_url()
    } else {
        &config.base_url
    };
    let base = base.trim_end_matches('/');
    let key = config.api_key.expose();
    // Text-only messages keep the plain string form every provider accepts; images use each
    // provider's own content blocks.
    let messages: Vec<Value> = chat
        .messages
        .iter()
        .map(|m| match config.provider {
            _ if m.images.is_empty() => json!({"role": m.role, "content": m.content}),
            ProviderKind::Anthropic => {
                let mut blocks: Vec<Value> = m
                    .images
                    .iter()
                    .map(|data| {
                        json!({"type": "image", "source":
                        {"type": "base64", "media_type": "image/jpeg", "data": data}})
                    })
                    .collect();
                blocks.push(json!({"type": "text", "text": m.content}));
                json!({"role": m.role, "content": blocks})
            }
            ProviderKind::Ollama => {
                json!({"role": m.role, "content": m.content, "images": m.images})
            }
            _ => {
                let mut blocks = vec![json!({"type": "text", "text": m.content})];
                blocks.extend(m.images.iter().map(|data| {
                    json!({"type": "image_url",
                    "image_url": {"url": format!("data:image/jpeg;base64,{data}")}})
                }));
                json!({"role": m.role, "content": blocks})
            }
        })
        .collect();
    let header = |name: &str, value: String| (name.to_owned(), value);
    match config.provider {
        ProviderKind::OpenAi | ProviderKind::OpenRouter | ProviderKind::OpenAiCompatible => {
            let mut all = vec![json!({"role": "system", "content": chat.system})];
            all.extend(messages);
            let mut body = json!({"model": config.model, "messages": all});
            if let Some((name, schema)) = &chat.schema {
                body["response_format"] = json!({"type": "json_schema",
                    "json_schema": {"name": name, "schema": schema, "strict": false}});
            }
            optional(&mut body, "temperature", chat.temperature.map(Value::from));
            optional(&mut body, "max_tokens", chat.max_tokens.map(Value::from));
            let mut headers = vec![header("Content-Type", "application/json".into())];
            if !key.is_empty() {
                headers.push(header("Authorization", format!("Bearer {key}")));
            }
            HttpRequest { url: format!("{base}/chat/completions"), headers, body }
        }
        ProviderKind::Anthropic => {
            let mut body = json!({"model": config.model, "system": chat.system, "messages": messages,
                                  "max_tokens": chat.max_tokens.unwrap_or(4096)});
            if let Some((name, schema)) = &chat.schema {
                body["tools"] = json!([{"name": name, "description": "Give your answer.", "input_schema": schema}]);
                body["tool_choice"] = json!({"type": "tool", "name": name});
            }
            optional(&mut body, "temperature", chat.temperature.map(Value::from));
            let headers = vec![
                header("Content-Type", "application/json".into()),
                header("x-api-key", key.to_owned()),
                header("anthropic-version", "2023-06-01".into()),
                // Anthropic asks browser callers to say so explicitly.
                header("anthropic-dangerous-direct-browser-access", "true".into()),
            ];
            HttpRequest { url: format!("{base}/messages"), headers, body }
        }
        ProviderKind::Ollama => {
            let mut all = vec![json!({"role": "system", "content": chat.system})];
            all.extend(messages);
            let mut body = json!({"model": config.model, "messages": all, "stream": false});
            if let Some((_, schema)) = &chat.schema {
                body["format"] = schema.clone();
            }
            if let Some(t) = chat.temperature {
                body["options"] = json!({"temperature": t});
            }
            let headers = vec![header("Content-Type", "application/json".into())];
            HttpRequest { url: format!("{base}/api/chat"), headers, body }
        }
        ProviderKind::Gemini => {
            let contents: Vec<Value> = chat
                .messages
                .iter()
                .map(|m| {
                    let role = if m.role == "assistant" { "model" } else { "user" };
                    let mut parts = vec![json!({"text": m.content})];
                    parts.extend(m.images.iter().map(
                        |data| json!({"inline_data": {"mime_type": "image/jpeg", "data": data}}),
                    ));
                    json!({"role": role, "parts": parts})
                })
                .collect();
            let mut config_json = json!({});
            if let Some((_, schema)) = &chat.schema {
                config_json["responseMimeType"] = "application/json".into();
                config_json["responseSchema"] = gemini_schema(schema);
            }
            optional(&mut config_json, "temperature", chat.temperature.map(Value::from));
            optional(&mut config_json, "maxOutputTokens", chat.max_tokens.map(Value::from));
            let body = json!({"systemInstruction": {"parts": [{"text": chat.system}]},
                              "contents": contents, "generationConfig": config_json});
            let headers = vec![
                header("Content-Type", "application/json".into()),
                header("x-goog-api-key", key.to_owned()),
            ];
            HttpRequest {
                url: format!("{base}/models/{}:generateContent", config.model),
                headers,
                body,
            }
        }
    }
}

fn optional(body: &mut Value, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        body[key] = value;
    }
}

/// Gemini's schema dialect has no `additionalProperties`, `const` or `$defs`; keep what it
/// understands.
fn gemini_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "additionalProperties" | "$schema" | "$defs" | "const")
                })
                .map(|(k, v)| (k.clone(), gemini_schema(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(gemini_schema).collect()),
        other => other.clone(),
    }
}

/// Reads a provider's answer, or sorts its error.
pub fn parse_response(
    config: &ModelConfig,
    response: &HttpResponse,
) -> Result<ChatReply, LlmError> {
    let body: Value = serde_json::from_str(&response.body).unwrap_or(Value::Null);
    if !(200..300).contains(&response.status) {
        let detail = error_detail(&body).unwrap_or_else(|| truncate(&response.body, 200));
        // A provider refusing a key often quotes part of it; the detail reaches the user,
        // the task's events and its trace.
        let detail = config.api_key.redact(&detail);
        return Err(match response.status {
            401 | 403 => LlmError::Auth { status: response.status, detail },
            404 => LlmError::ModelNotFound { model: config.model.clone(), detail },
            400 | 413 | 422 => LlmError::BadRequest { detail },
            429 => LlmError::RateLimited { detail },
            status => LlmError::Server { status, detail },
        });
    }
    let malformed = |what: &str| LlmError::Malformed {
        detail: config.api_key.redact(&format!("{what} in {}", truncate(&response.body, 200))),
    };
    let (text, usage) = match config.provider {
        ProviderKind::OpenAi | ProviderKind::OpenRouter | ProviderKind::OpenAiCompatible => {
            let message = body
                .pointer("/choices/0/message")
                .ok_or_else(|| malformed("no choices[0].message"))?;
            let text =
                match message.pointer("/tool_calls/0/function/arguments").and_then(Value::as_str) {
                    Some(arguments) => arguments.to_owned(),
                    None => message
                        .get("content")
                        .and_then(Value::as_str)
                        .ok_or_else(|| malformed("no content"))?
                        .to_owned(),
                };
            (text, usage_at(&body, "/usage/prompt_tokens", "/usage/completion_tokens"))
        }
        ProviderKind::Anthropic => {
            let blocks = body
                .get("content")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed("no content blocks"))?;
            let text = match blocks.iter().find(|b| b["type"] == "tool_use") {
                Some(tool) => tool["input"].to_string(),
                None => {
                    blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("")
                }
            };
            (text, usage_at(&body, "/usage/input_tokens", "/usage/output_tokens"))
        }
        ProviderKind::Ollama => {
            let text = body
                .pointer("/message/content")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed("no message.content"))?;
            (text.to_owned(), usage_at(&body, "/prompt_eval_count", "/eval_count"))
        }
        ProviderKind::Gemini => {
            let parts = body
                .pointer("/candidates/0/content/parts")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed("no candidates[0].content.parts"))?;
            let text = parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("");
            (
                text,
                usage_at(
                    &body,
                    "/usageMetadata/promptTokenCount",
                    "/usageMetadata/candidatesTokenCount",
                ),
            )
        }
    };
    let model = body.get("model").and_then(Value::as_str).unwrap_or(&config.model).to_owned();
    Ok(ChatReply { text, usage, model, attempts: 1 })
}

fn usage_at(body: &Value, input: &str, output: &str) -> Usage {
    let count = |p: &str| body.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Usage { input_tokens: count(input), output_tokens: count(output) }
}

fn error_detail(body: &Value) -> Option<String> {
    body.pointer("/error/message")
        .or_else(|| body.get("error"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn retry_after_ms(response: &HttpResponse) -> Option<f64> {
    let value = response.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("retry-after"))?;
    value.1.trim().parse::<f64>().ok().map(|secs| secs * 1000.0)
}

/// A call waiting before its next attempt, because the provider answered 429 or 5xx.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryWait {
    pub status: u16,
    pub wait_ms: f64,
    /// The attempt that follows the wait (2 for the first retry).
    pub attempt: u32,
}

/// Sends `chat`, retrying 429 and 5xx with exponential backoff (1 s, 2 s, 4 s … capped at
/// 30 s) or the server's `Retry-After`, up to `max_retries` times. Dropping the future
/// cancels the call.
pub async fn complete(
    http: &impl Http,
    clock: &impl Clock,
    config: &ModelConfig,
    chat: &ChatRequest,
) -> Result<ChatReply, LlmError> {
    complete_watched(http, clock, config, chat, &|_| {}).await
}

/// [`complete`], telling `on_wait` when a retry waits (`Some`) and when the wait is over
/// (`None`), so a person sees why nothing happens meanwhile.
pub async fn complete_watched(
    http: &impl Http,
    clock: &impl Clock,
    config: &ModelConfig,
    chat: &ChatRequest,
    on_wait: &dyn Fn(Option<RetryWait>),
) -> Result<ChatReply, LlmError> {
    let request = build_request(config, chat);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let response = match http.post(&request, config.timeout_ms).await {
            Ok(response) => response,
            Err(HttpFailure::Timeout) => return Err(LlmError::Timeout { ms: config.timeout_ms }),
            Err(HttpFailure::Network(detail)) => {
                return Err(LlmError::Network { detail: config.api_key.redact(&detail) });
            }
        };
        let retriable = response.status == 429 || response.status >= 500;
        if retriable && attempt <= config.max_retries {
            let backoff = 1000.0 * f64::from(1u32 << (attempt - 1).min(5));
            let wait_ms = retry_after_ms(&response).unwrap_or(backoff).min(30_000.0);
            on_wait(Some(RetryWait { status: response.status, wait_ms, attempt: attempt + 1 }));
            clock.sleep(wait_ms).await;
            on_wait(None);
            continue;
        }
        let mut reply = parse_response(config, &response)?;
        reply.attempts = attempt;
        return Ok(reply);
    }
}

/// Prices per million tokens, editable by the user.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct PriceTable {
    /// model name → (input, output) USD per million tokens.
    pub per_million: lean::StrMap<(f64, f64)>,
}

impl PriceTable {
    /// Estimated cost in USD, or `None` when the model has no price.
    pub fn cost(&self, model: &str, usage: Usage) -> Option<f64> {
        let (input, output) = self.per_million.get(model)?;
        Some((usage.input_tokens as f64 * input + usage.output_tokens as f64 * output) / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::FakeClock;
    use futures::executor::block_on;
    use std::cell::RefCell;
    use std::collections::VecDeque;

    fn config(provider: ProviderKind) -> ModelConfig {
        ModelConfig {
            provider,
            base_url: String::new(),
            api_key: Secret::new("sk-secret-123"),
            model: "m-1".into(),
            timeout_ms: 30_000,
            max_retries: 2,
        }
    }

    fn chat() -> ChatRequest {
        ChatRequest {
            system: "Be brief.".into(),
            messages: vec![ChatMessage::user("Plan it")],
            schema: Some((
                "plan".into(),
                json!({"type": "object", "additionalProperties": false,
                                                 "properties": {"done": {"type": "boolean"}}}),
            )),
            temperature: Some(0.0),
            max_tokens: Some(500),
        }
    }

    fn ok(body: Value) -> HttpResponse {
        HttpResponse { status: 200, headers: vec![], body: body.to_string() }
    }

    #[test]
    fn keys_never_print_or_serialize() {
        let config = config(ProviderKind::OpenAi);
        assert!(!format!("{config:?}").contains("sk-secret"));
        assert!(!serde_json::to_string(&config).unwrap().contains("sk-secret"));
    }

    #[test]
    fn a_provider_quoting_the_key_it_refused_is_never_repeated() {
        let config = config(ProviderKind::OpenAi);
        let refused = HttpResponse {
            status: 401,
            headers: vec![],
            body: json!({"error": {"message":
                "Incorrect API key provided: sk-secre*****-123. Find your key at example.test."}})
            .to_string(),
        };
        let echoed = HttpResponse {
            status: 502,
            headers: vec![],
            body: "upstream rejected Authorization: Bearer sk-secret-123".into(),
        };
        for response in [refused, echoed] {
            let error = parse_response(&config, &response).unwrap_err();
            let shown = error.to_string();
            assert!(!shown.contains("sk-secre") && shown.contains("***"), "{shown}");
        }
    }

    #[test]
    fn openai_uses_json_schema_output_and_a_bearer_key() {
        let request = build_request(&config(ProviderKind::OpenAi), &chat());
        assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
        assert!(request.headers.contains(&("Authorization".into(), "Bearer sk-secret-123".into())));
        assert_eq!(request.body["messages"][0], json!({"role": "system", "content": "Be brief."}));
        assert_eq!(request.body["response_format"]["json_schema"]["name"], "plan");
        let reply = parse_response(
            &config(ProviderKind::OpenAi),
            &ok(json!({"model": "m-1",
            "choices": [{"message": {"content": "{\"done\":true}"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}})),
        )
        .unwrap();
        assert_eq!((reply.text.as_str(), reply.usage.input_tokens), ("{\"done\":true}", 12));
    }

    #[test]
    fn anthropic_forces_a_tool_whose_input_is_the_answer() {
        let request = build_request(&config(ProviderKind::Anthropic), &chat());
        assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(request.body["system"], "Be brief.");
        assert_eq!(request.body["tool_choice"], json!({"type": "tool", "name": "plan"}));
        assert!(request.headers.iter().any(|(n, v)| n == "x-api-key" && v == "sk-secret-123"));
        let reply = parse_response(
            &config(ProviderKind::Anthropic),
            &ok(json!({
            "content": [{"type": "tool_use", "name": "plan", "input": {"done": false}}],
            "usage": {"input_tokens": 20, "output_tokens": 5}})),
        )
        .unwrap();
        assert_eq!(serde_json::from_str::<Value>(&reply.text).unwrap(), json!({"done": false}));
    }

    #[test]
    fn openrouter_ollama_gemini_and_compatible_urls_speak_their_formats() {
        let mut compatible = config(ProviderKind::OpenAiCompatible);
        compatible.base_url = "http://127.0.0.1:9000/v1/".into();
        assert_eq!(
            build_request(&compatible, &chat()).url,
            "http://127.0.0.1:9000/v1/chat/completions"
        );
        assert_eq!(
            build_request(&config(ProviderKind::OpenRouter), &chat()).url,
            "https://openrouter.ai/api/v1/chat/completions"
        );
        let ollama = build_request(&config(ProviderKind::Ollama), &chat());
        assert_eq!(
            (ollama.url.as_str(), &ollama.body["stream"]),
            ("http://localhost:11434/api/chat", &json!(false))
        );
        assert_eq!(ollama.body["format"]["type"], "object");
        let gemini = build_request(&config(ProviderKind::Gemini), &chat());
        assert!(gemini.url.ends_with("/models/m-1:generateContent"));
        assert_eq!(gemini.body["generationConfig"]["responseMimeType"], "application/json");
        assert!(
            gemini.body["generationConfig"]["responseSchema"].get("additionalProperties").is_none()
        );
        let reply = parse_response(
            &config(ProviderKind::Gemini),
            &ok(json!({
            "candidates": [{"content": {"parts": [{"text": "{\"done\":"}, {"text": "true}"}]}}],
            "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 2}})),
        )
        .unwrap();
        assert_eq!(reply.text, "{\"done\":true}");
    }

    #[test]
    fn images_go_in_each_providers_own_content_blocks() {
        let mut chat = chat();
        chat.messages[0].images = vec!["AAAA".into()];
        let body = |provider| build_request(&config(provider), &chat).body;
        let openai = body(ProviderKind::OpenAi);
        assert_eq!(
            openai["messages"][1]["content"][1]["image_url"]["url"],
            "data:image/jpeg;base64,AAAA"
        );
        assert_eq!(openai["messages"][1]["content"][0]["text"], "Plan it");
        let anthropic = body(ProviderKind::Anthropic);
        assert_eq!(anthropic["messages"][0]["content"][0]["source"]["data"], "AAAA");
        assert_eq!(anthropic["messages"][0]["content"][0]["source"]["media_type"], "image/jpeg");
        assert_eq!(body(ProviderKind::Ollama)["messages"][1]["images"], json!(["AAAA"]));
        let gemini = body(ProviderKind::Gemini);
        assert_eq!(gemini["contents"][0]["parts"][1]["inline_data"]["data"], "AAAA");
        // Without images the content stays a plain string.
        assert!(
            build_request(&config(ProviderKind::OpenAi), &super::tests::chat()).body["messages"][1]
                ["content"]
                .is_string()
        );
    }

    #[test]
    fn each_error_class_gets_its_own_next_step() {
        let cases = [
            (401, "Check your API key in Settings"),
            (403, "Check your API key in Settings"),
            (404, "Check the model name in Settings"),
            (400, "rejected the request"),
            (429, "rate-limiting"),
            (503, "Try again shortly"),
        ];
        for (status, expected) in cases {
            let response = HttpResponse {
                status,
                headers: vec![],
                body: json!({"error": {"message": "nope"}}).to_string(),
            };
            let error = parse_response(&config(ProviderKind::OpenAi), &response).unwrap_err();
            assert!(error.to_string().contains(expected), "{status}: {error}");
            assert!(!error.to_string().contains("sk-secret"));
        }
        let garbage = HttpResponse { status: 200, headers: vec![], body: "<html>".into() };
        assert!(matches!(
            parse_response(&config(ProviderKind::OpenAi), &garbage),
            Err(LlmError::Malformed { .. })
        ));
    }

    struct Scripted(RefCell<VecDeque<Result<HttpResponse, HttpFailure>>>);
    impl Http for Scripted {
        async fn post(&self, _: &HttpRequest, _: u32) -> Result<HttpResponse, HttpFailure> {
            self.0.borrow_mut().pop_front().expect("a scripted response")
        }
    }

    #[test]
    fn rate_limits_and_server_errors_are_retried_honouring_retry_after() {
        let limited = HttpResponse {
            status: 429,
            headers: vec![("Retry-After".into(), "3".into())],
            body: "{}".into(),
        };
        let busy = HttpResponse { status: 529, headers: vec![], body: "{}".into() };
        let answer = ok(json!({"choices": [{"message": {"content": "hi"}}]}));
        let http = Scripted(RefCell::new(VecDeque::from([Ok(limited), Ok(busy), Ok(answer)])));
        let clock = FakeClock::default();
        let told = RefCell::new(Vec::new());
        let watch = |wait: Option<RetryWait>| told.borrow_mut().push(wait);
        let config = config(ProviderKind::OpenAi);
        let reply = block_on(complete_watched(&http, &clock, &config, &chat(), &watch)).unwrap();
        assert_eq!((reply.text.as_str(), reply.attempts), ("hi", 3));
        assert_eq!(clock.now.get(), 3000.0 + 2000.0, "Retry-After, then the second backoff step");
        // Each wait is told before it starts and cleared when it ends, for the panel.
        let first = RetryWait { status: 429, wait_ms: 3000.0, attempt: 2 };
        let second = RetryWait { status: 529, wait_ms: 2000.0, attempt: 3 };
        assert_eq!(*told.borrow(), [Some(first), None, Some(second), None]);
    }

    #[test]
    fn retries_stop_at_the_limit_and_timeouts_are_not_retried() {
        let limited = || Ok(HttpResponse { status: 429, headers: vec![], body: "{}".into() });
        let http = Scripted(RefCell::new(VecDeque::from([limited(), limited(), limited()])));
        let error = block_on(complete(
            &http,
            &FakeClock::default(),
            &config(ProviderKind::OpenAi),
            &chat(),
        ));
        assert!(matches!(error, Err(LlmError::RateLimited { .. })));
        let http = Scripted(RefCell::new(VecDeque::from([Err(HttpFailure::Timeout)])));
        let error = block_on(complete(
            &http,
            &FakeClock::default(),
            &config(ProviderKind::OpenAi),
            &chat(),
        ));
        assert_eq!(error, Err(LlmError::Timeout { ms: 30_000 }));
    }

    #[test]
    fn cost_comes_from_the_editable_price_table() {
        let mut prices = PriceTable::default();
        prices.per_million.insert("m-1".into(), (3.0, 15.0));
        let usage = Usage { input_tokens: 1_000_000, output_tokens: 100_000 };
        assert_eq!(prices.cost("m-1", usage), Some(4.5));
        assert_eq!(prices.cost("unknown", usage), None);
    }
}
