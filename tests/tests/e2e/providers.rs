//! The engine's provider code against the scripted LLM server over real HTTP: both sides
//! must agree on each provider's wire format, or every later e2e test would be testing a
//! fiction.

use std::time::Duration;

use agent_engine::Clock;
use agent_engine::providers::{
    ChatMessage, ChatReply, ChatRequest, Http, HttpFailure, HttpRequest, HttpResponse, LlmError,
    ModelConfig, ProviderKind, Secret, complete,
};
use e2e::llm::{Reply, ScriptedLlm};
use futures::executor::block_on;
use serde_json::{Value, json};

/// The engine's `Http` over the harness's blocking client.
struct LoopbackHttp;

impl Http for LoopbackHttp {
    async fn post(&self, request: &HttpRequest, _: u32) -> Result<HttpResponse, HttpFailure> {
        let headers: Vec<(&str, &str)> =
            request.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let response =
            e2e::http::request("POST", &request.url, &headers, &request.body.to_string());
        Ok(HttpResponse { status: response.status, headers: response.headers, body: response.body })
    }
}

struct RealClock;

impl Clock for RealClock {
    fn now_ms(&self) -> f64 {
        0.0
    }
    async fn sleep(&self, ms: f64) {
        std::thread::sleep(Duration::from_millis(ms as u64));
    }
}

fn model(provider: ProviderKind, llm: &ScriptedLlm) -> ModelConfig {
    ModelConfig {
        provider,
        base_url: format!("{}/v1", llm.base_url()),
        api_key: Secret::new("sk-test-key"),
        model: "scripted-model".into(),
        timeout_ms: 10_000,
        max_retries: 1,
    }
}

fn plan_request() -> ChatRequest {
    ChatRequest {
        system: "You plan.".into(),
        messages: vec![ChatMessage::user("Find a kettle")],
        schema: Some((
            "plan".into(),
            json!({"type": "object", "properties": {"done": {"type": "boolean"}}}),
        )),
        temperature: None,
        max_tokens: None,
    }
}

/// Asks the scripted server through `provider`'s wire format, as the engine will.
fn ask(provider: ProviderKind, llm: &ScriptedLlm) -> Result<ChatReply, LlmError> {
    block_on(complete(&LoopbackHttp, &RealClock, &model(provider, llm), &plan_request()))
}

#[test]
fn openai_structured_output_round_trips() {
    let llm = ScriptedLlm::start([Reply::json(json!({"done": false}))]);
    let reply = ask(ProviderKind::OpenAi, &llm).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&reply.text).unwrap(), json!({"done": false}));
    assert!(reply.usage.input_tokens > 0);
    let sent = &llm.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(sent.body["response_format"]["type"], "json_schema");
}

#[test]
fn anthropic_tool_use_round_trips() {
    let llm = ScriptedLlm::start([Reply::tool_call("plan", json!({"done": true}))]);
    let reply = ask(ProviderKind::Anthropic, &llm).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&reply.text).unwrap(), json!({"done": true}));
    assert_eq!(llm.requests()[0].body["tool_choice"]["name"], "plan");
}

#[test]
fn a_rate_limit_is_retried_after_the_servers_delay_then_succeeds() {
    let llm = ScriptedLlm::start([Reply::rate_limited(1), Reply::text("ok")]);
    let reply = ask(ProviderKind::OpenAi, &llm).unwrap();
    assert_eq!((reply.text.as_str(), reply.attempts), ("ok", 2));
}

#[test]
fn provider_errors_arrive_sorted_with_a_next_step() {
    let llm = ScriptedLlm::start([Reply::error(401, "invalid x-api-key")]);
    let error = ask(ProviderKind::Anthropic, &llm).unwrap_err();
    assert!(matches!(error, LlmError::Auth { status: 401, .. }), "{error:?}");
    assert!(error.to_string().contains("Check your API key in Settings"));
    assert!(!error.to_string().contains("sk-test-key"));
}

/// The same call made by the extension's worker, over its `fetch`, as Settings' "test
/// connection" will.
fn ask_from_the_extension(browser: &mut e2e::browser::Browser, config: Value) -> Value {
    browser.eval_in_extension(&format!(
        "chrome.runtime.sendMessage({})",
        json!({"type": "debug.llm", "config": config, "prompt": "Say ok", "schema": {"type": "object"}})
    ))
}

fn extension_config(provider: &str, base_url: String) -> Value {
    json!({"provider": provider, "base_url": base_url, "api_key": "sk-test-key",
           "model": "scripted-model", "timeout_ms": 5000, "max_retries": 1})
}

#[test]
fn the_worker_reaches_providers_over_fetch_without_host_permissions() {
    let llm = ScriptedLlm::start([
        Reply::json(json!({"ok": true})),
        Reply::tool_call("answer", json!({"ok": 1})),
    ]);
    let mut browser = e2e::browser::Browser::launch();

    let openai = ask_from_the_extension(
        &mut browser,
        extension_config("open_ai", format!("{}/v1", llm.base_url())),
    );
    assert_eq!(openai["text"], "{\"ok\":true}", "{openai}");
    let anthropic = ask_from_the_extension(
        &mut browser,
        extension_config("anthropic", format!("{}/v1", llm.base_url())),
    );
    assert_eq!(anthropic["text"], "{\"ok\":1}", "{anthropic}");

    let sent = llm.requests();
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(sent[1].header("x-api-key"), Some("sk-test-key"));
    assert_eq!(sent[1].header("anthropic-dangerous-direct-browser-access"), Some("true"));
}

#[test]
fn an_unreachable_or_refusing_provider_gets_a_next_step_and_no_key_in_the_message() {
    let llm = ScriptedLlm::start([Reply::error(401, "invalid api key")]);
    let mut browser = e2e::browser::Browser::launch();

    let refused = ask_from_the_extension(
        &mut browser,
        extension_config("open_ai", format!("{}/v1", llm.base_url())),
    );
    assert!(
        refused["error"].as_str().unwrap().contains("Check your API key in Settings"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("sk-test-key"));

    let nowhere = ask_from_the_extension(
        &mut browser,
        extension_config("open_ai", "http://127.0.0.1:9/v1".into()),
    );
    assert!(
        nowhere["error"].as_str().unwrap().contains("Check the base URL in Settings"),
        "{nowhere}"
    );
}
