//! The scripted LLM server: the one thing the tests replace, because the real thing is a
//! paid external service. It speaks the providers' real wire formats on 127.0.0.1, answers
//! each request with the next reply of the test's script, and records what it was sent.
//!
//! * `POST /v1/chat/completions` — OpenAI chat completions (also OpenRouter and any
//!   OpenAI-compatible base URL): `response_format` JSON or `tools` calls.
//! * `POST /v1/messages` — Anthropic messages, text or `tool_use` blocks.
//! * `GET /v1/models` — a model list in the shape of whichever provider's headers came in.
//!
//! CORS preflights are answered the way the real APIs answer them, so an extension page
//! can call it without host permissions.
//!
//! Requests are taken in arrival order on one thread, which records each and picks its reply
//! (so the record and the script's order are the order they came in); each reply is then
//! written on a thread of its own, so the delayed replies of concurrent jobs overlap as a
//! real provider's would instead of queueing behind each other.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};
use tiny_http::{Header, Method, Request, Response, Server};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Assistant text.
    Text(String),
    /// Assistant text that is this JSON (structured output).
    Json(Value),
    /// A call of tool `name` with `input` (OpenAI `tool_calls`, Anthropic `tool_use`).
    ToolCall { name: String, input: Value },
    /// A provider error in the provider's own shape, with an optional `Retry-After`.
    Error { status: u16, message: String, retry_after: Option<u32> },
    /// Exactly these bytes, for malformed-reply tests.
    Raw { status: u16, body: String },
    /// The inner reply after a pause, for timeout and cancel tests.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::Text(text.into())
    }
    pub fn json(value: Value) -> Reply {
        Reply::Json(value)
    }
    pub fn tool_call(name: &str, input: Value) -> Reply {
        Reply::ToolCall { name: name.to_owned(), input }
    }
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::Error { status, message: message.to_owned(), retry_after: None }
    }
    pub fn rate_limited(retry_after_secs: u32) -> Reply {
        Reply::Error {
            status: 429,
            message: "Rate limit reached".into(),
            retry_after: Some(retry_after_secs),
        }
    }
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::http::find_header(&self.headers, name)
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Wire {
    OpenAi,
    Anthropic,
}

/// A model that answers from what it is sent: it gets the whole prompt as text (system and
/// messages, in order) once the scripted replies run out.
pub type Responder = Box<dyn FnMut(&str) -> Reply + Send>;

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    received: Vec<Recorded>,
    responder: Option<Responder>,
}

/// Which of `kinds` a system prompt is, by the words it opens with; `otherwise` when none.
pub fn kind_by_opening<K: Copy>(prompt: &str, kinds: &[(&str, K)], otherwise: K) -> K {
    kinds.iter().find(|(opening, _)| prompt.starts_with(opening)).map_or(otherwise, |(_, k)| *k)
}

pub struct ScriptedLlm {
    base: String,
    script: Arc<Mutex<Script>>,
    server: Arc<Server>,
    worker: Option<JoinHandle<()>>,
}

impl ScriptedLlm {
    /// Starts on a free loopback port with `replies` queued.
    pub fn start(replies: impl IntoIterator<Item = Reply>) -> ScriptedLlm {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("binding a loopback port"));
        let port = server.server_addr().to_ip().expect("an ip listener").port();
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into_iter().collect(),
            received: Vec::new(),
            responder: None,
        }));
        let (serving, shared) = (server.clone(), script.clone());
        let worker = std::thread::spawn(move || {
            for mut request in serving.incoming_requests() {
                let outcome = receive(&mut request, &shared);
                std::thread::spawn(move || respond(request, outcome));
            }
        });
        ScriptedLlm {
            base: format!("http://127.0.0.1:{port}"),
            script,
            server,
            worker: Some(worker),
        }
    }

    /// `http://127.0.0.1:<port>`; providers append `/v1/...`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Starts with no script: every request is answered by `responder`, which reads the
    /// prompt as a model would.
    pub fn responding(responder: impl FnMut(&str) -> Reply + Send + 'static) -> ScriptedLlm {
        let llm = ScriptedLlm::start([]);
        llm.script.lock().expect("script lock").responder = Some(Box::new(responder));
        llm
    }

    /// Queues more replies mid-test.
    pub fn push(&self, reply: Reply) {
        self.script.lock().expect("script lock").replies.push_back(reply);
    }

    /// Every request received so far (CORS preflights excluded).
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().expect("script lock").received.clone()
    }

    /// Replies not yet used.
    pub fn replies_left(&self) -> usize {
        self.script.lock().expect("script lock").replies.len()
    }
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

type Body = Response<std::io::Cursor<Vec<u8>>>;

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name, value).expect("a valid header")
}

fn with_cors(response: Body, allow_headers: &str) -> Body {
    response
        .with_header(header("Access-Control-Allow-Origin", "*"))
        .with_header(header("Access-Control-Allow-Headers", allow_headers))
        .with_header(header("Access-Control-Allow-Methods", "GET, POST, OPTIONS"))
        .with_header(header("Access-Control-Expose-Headers", "Retry-After"))
}

fn json_response(status: u16, body: &Value) -> Body {
    Response::from_string(body.to_string())
        .with_status_code(status)
        .with_header(header("Content-Type", "application/json"))
}

/// What a request gets: an answer ready now, or a reply to render (and maybe wait for).
enum Outcome {
    Preflight(Body),
    Ready(Body),
    Reply { wire: Wire, body: Value, reply: Reply },
}

/// Reads and records `request` and picks its answer, in arrival order (the accept thread).
fn receive(request: &mut Request, script: &Mutex<Script>) -> Outcome {
    if *request.method() == Method::Options {
        // `Allow-Headers: *` does not cover Authorization, so name what was asked for.
        let asked = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Access-Control-Request-Headers"))
            .map(|h| h.value.as_str().to_owned());
        let preflight = Response::from_data(Vec::new()).with_status_code(204);
        return Outcome::Preflight(with_cors(preflight, asked.as_deref().unwrap_or("*")));
    }
    let mut raw = String::new();
    let _ = request.as_reader().read_to_string(&mut raw);
    let path = request.url().split('?').next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_owned()))
        .collect();
    let recorded = Recorded {
        method: request.method().as_str().to_owned(),
        path: path.clone(),
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
    };
    let wire = if path.ends_with("/messages") || recorded.header("anthropic-version").is_some() {
        Wire::Anthropic
    } else {
        Wire::OpenAi
    };
    if path.ends_with("/models") && recorded.method == "GET" {
        return Outcome::Ready(json_response(200, &models(wire)));
    }
    if !path.ends_with("/chat/completions") && !path.ends_with("/messages") {
        return Outcome::Ready(json_response(
            404,
            &error_body(wire, 404, &format!("no endpoint {path}")),
        ));
    }
    let (reply, number) = {
        let mut script = script.lock().expect("script lock");
        script.received.push(recorded.clone());
        let reply = script.replies.pop_front().or_else(|| {
            let prompt = prompt_text(&recorded.body);
            script.responder.as_mut().map(|respond| respond(&prompt))
        });
        (reply, script.received.len())
    };
    let reply = reply.unwrap_or_else(|| Reply::Error {
        status: 500,
        message: format!("scripted LLM: the test's script has no reply left for request #{number}"),
        retry_after: None,
    });
    Outcome::Reply { wire, body: recorded.body, reply }
}

/// Writes the answer (after the reply's delay, if any): on a thread of the request's own.
fn respond(request: Request, outcome: Outcome) {
    let response = match outcome {
        Outcome::Preflight(preflight) => preflight,
        Outcome::Ready(response) => with_cors(response, "*"),
        Outcome::Reply { wire, body, reply } => with_cors(render(wire, &body, reply), "*"),
    };
    let _ = request.respond(response);
}

/// The prompt of a chat request as one text: the system prompt, then each message's text.
fn prompt_text(body: &Value) -> String {
    fn push(text: &mut String, content: &Value) {
        match content {
            Value::String(s) => text.push_str(s),
            Value::Array(parts) => {
                for part in parts {
                    if let Some(s) = part["text"].as_str() {
                        text.push_str(s);
                    }
                }
            }
            _ => {}
        }
    }
    let mut text = String::new();
    push(&mut text, &body["system"]);
    for message in body["messages"].as_array().into_iter().flatten() {
        push(&mut text, &message["content"]);
        text.push('\n');
    }
    text
}

fn models(wire: Wire) -> Value {
    match wire {
        Wire::OpenAi => json!({"object": "list", "data": [
            {"id": "scripted-model", "object": "model", "created": 0, "owned_by": "tests"}]}),
        Wire::Anthropic => json!({"data": [
            {"type": "model", "id": "scripted-model", "display_name": "Scripted"}],
            "has_more": false, "first_id": "scripted-model", "last_id": "scripted-model"}),
    }
}

/// Rough token counts: a quarter of the characters, as providers' own estimates go.
fn tokens(value: &Value) -> u64 {
    (value.to_string().len() as u64).div_ceil(4)
}

fn render(wire: Wire, request: &Value, reply: Reply) -> Body {
    let model = request["model"].as_str().unwrap_or("scripted-model").to_owned();
    let input_tokens = tokens(&request["messages"]) + tokens(&request["system"]);
    match reply {
        Reply::Delayed(delay, inner) => {
            std::thread::sleep(delay);
            render(wire, request, *inner)
        }
        Reply::Raw { status, body } => Response::from_string(body)
            .with_status_code(status)
            .with_header(header("Content-Type", "application/json")),
        Reply::Error { status, message, retry_after } => {
            let response = json_response(status, &error_body(wire, status, &message));
            match retry_after {
                Some(secs) => response.with_header(header("Retry-After", &secs.to_string())),
                None => response,
            }
        }
        Reply::Text(text) => {
            json_response(200, &message(wire, &model, input_tokens, Content::Text(text)))
        }
        Reply::Json(value) => json_response(
            200,
            &message(wire, &model, input_tokens, Content::Text(value.to_string())),
        ),
        Reply::ToolCall { name, input } => {
            json_response(200, &message(wire, &model, input_tokens, Content::Tool(name, input)))
        }
    }
}

enum Content {
    Text(String),
    Tool(String, Value),
}

fn message(wire: Wire, model: &str, input_tokens: u64, content: Content) -> Value {
    let output_tokens = match &content {
        Content::Text(text) => (text.len() as u64).div_ceil(4),
        Content::Tool(_, input) => tokens(input),
    };
    match (wire, content) {
        (Wire::OpenAi, content) => {
            let (message, finish) = match content {
                Content::Text(text) => {
                    (json!({"role": "assistant", "content": text, "refusal": null}), "stop")
                }
                Content::Tool(name, input) => (
                    json!({"role": "assistant", "content": null, "tool_calls": [{
                        "id": "call_scripted_1", "type": "function",
                        "function": {"name": name, "arguments": input.to_string()}}]}),
                    "tool_calls",
                ),
            };
            json!({
                "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
                "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                          "total_tokens": input_tokens + output_tokens}
            })
        }
        (Wire::Anthropic, content) => {
            let (block, stop) = match content {
                Content::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
                Content::Tool(name, input) => (
                    json!({"type": "tool_use", "id": "toolu_scripted_1", "name": name, "input": input}),
                    "tool_use",
                ),
            };
            json!({
                "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
            })
        }
    }
}

fn error_body(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::OpenAi => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", "invalid_api_key"),
                404 => ("invalid_request_error", "model_not_found"),
                429 => ("requests", "rate_limit_exceeded"),
                400 => ("invalid_request_error", "invalid_value"),
                _ => ("server_error", "server_error"),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Wire::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http;

    fn openai(llm: &ScriptedLlm, body: Value) -> http::Response {
        let url = format!("{}/v1/chat/completions", llm.base_url());
        http::post_json(&url, &[("Authorization", "Bearer sk-test")], &body)
    }

    fn anthropic(llm: &ScriptedLlm, body: Value) -> http::Response {
        let url = format!("{}/v1/messages", llm.base_url());
        http::post_json(
            &url,
            &[("x-api-key", "sk-ant-test"), ("anthropic-version", "2023-06-01")],
            &body,
        )
    }

    #[test]
    fn openai_structured_output_comes_back_as_message_content() {
        let llm = ScriptedLlm::start([Reply::json(json!({"done": true}))]);
        let answer = openai(
            &llm,
            json!({"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema"}}),
        )
        .json();
        assert_eq!(answer["choices"][0]["finish_reason"], "stop");
        let content: Value =
            serde_json::from_str(answer["choices"][0]["message"]["content"].as_str().unwrap())
                .unwrap();
        assert_eq!(content, json!({"done": true}));
        assert_eq!(answer["model"], "gpt-x");
        assert!(answer["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    }

    #[test]
    fn tool_calls_use_each_providers_shape() {
        let input = json!({"action": "click", "id": 4});
        let llm = ScriptedLlm::start([
            Reply::tool_call("act", input.clone()),
            Reply::tool_call("act", input.clone()),
        ]);
        let openai = openai(&llm, json!({"model": "m", "messages": [], "tools": []})).json();
        let call = &openai["choices"][0]["message"]["tool_calls"][0]["function"];
        assert_eq!(call["name"], "act");
        assert_eq!(
            serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
            input
        );
        let anthropic = anthropic(&llm, json!({"model": "m", "messages": [], "tools": []})).json();
        assert_eq!(anthropic["stop_reason"], "tool_use");
        assert_eq!(anthropic["content"][0]["input"], input);
    }

    #[test]
    fn records_every_request_with_its_headers() {
        let llm = ScriptedLlm::start([Reply::text("ok")]);
        anthropic(&llm, json!({"model": "claude", "messages": [{"role": "user", "content": "x"}]}));
        let requests = llm.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].path, "/v1/messages");
        assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(requests[0].body["model"], "claude");
    }

    #[test]
    fn errors_carry_status_retry_after_and_the_provider_error_shape() {
        let llm = ScriptedLlm::start([Reply::rate_limited(3), Reply::error(401, "bad key")]);
        let limited = openai(&llm, json!({"messages": []}));
        assert_eq!((limited.status, limited.header("retry-after")), (429, Some("3")));
        assert_eq!(limited.json()["error"]["code"], "rate_limit_exceeded");
        let denied = anthropic(&llm, json!({"messages": []}));
        assert_eq!(denied.status, 401);
        assert_eq!(denied.json()["error"]["type"], "authentication_error");
    }

    #[test]
    fn delayed_replies_to_concurrent_requests_overlap_and_keep_their_order() {
        let delay = Duration::from_millis(600);
        let llm = std::sync::Arc::new(ScriptedLlm::responding(move |prompt| {
            Reply::text(format!("answer to {prompt}")).after(delay)
        }));
        let started = std::time::Instant::now();
        let calls: Vec<_> = ["first", "second", "third"]
            .into_iter()
            .map(|text| {
                let server = llm.clone();
                // Each request goes out once the one before it was recorded.
                let sent = llm.requests().len();
                let call = std::thread::spawn(move || {
                    openai(&server, json!({"messages": [{"role": "user", "content": text}]})).json()
                });
                while llm.requests().len() == sent {
                    std::thread::sleep(Duration::from_millis(5));
                }
                call
            })
            .collect();
        let answers: Vec<Value> = calls.into_iter().map(|c| c.join().unwrap()).collect();
        assert!(started.elapsed() < delay * 2, "answered together: {:?}", started.elapsed());
        let texts: Vec<&str> = answers
            .iter()
            .map(|a| a["choices"][0]["message"]["content"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["answer to first\n", "answer to second\n", "answer to third\n"]);
        let recorded: Vec<Value> =
            llm.requests().iter().map(|r| r.body["messages"][0]["content"].clone()).collect();
        assert_eq!(recorded, [json!("first"), json!("second"), json!("third")]);
    }

    #[test]
    fn an_exhausted_script_says_so() {
        let llm = ScriptedLlm::start([]);
        let answer = openai(&llm, json!({"messages": []}));
        assert_eq!(answer.status, 500);
        assert!(answer.body.contains("no reply left for request #1"), "{}", answer.body);
    }

    #[test]
    fn preflights_allow_extension_origins() {
        let llm = ScriptedLlm::start([]);
        let url = format!("{}/v1/messages", llm.base_url());
        let asked = [
            ("Origin", "chrome-extension://x"),
            ("Access-Control-Request-Headers", "authorization"),
        ];
        let preflight = http::request("OPTIONS", &url, &asked, "");
        assert_eq!(preflight.status, 204);
        assert_eq!(preflight.header("access-control-allow-headers"), Some("authorization"));
        assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
        assert!(llm.requests().is_empty());
    }
}
