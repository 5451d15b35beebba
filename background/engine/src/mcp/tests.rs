use std::cell::RefCell;
use std::collections::VecDeque;

use futures::executor::block_on;
use protocol::settings::{McpServer, Secret};
use serde_json::{Value, json};

use super::*;

const TOKEN: &str = "tok-mcp-0123456789";

fn server(url: &str) -> McpServer {
    McpServer { name: "shop".into(), url: url.into(), token: Secret::new(TOKEN) }
}

/// A server that answers each request with the next scripted response and keeps the requests.
struct Scripted {
    answers: RefCell<VecDeque<Result<HttpResponse, HttpFailure>>>,
    seen: RefCell<Vec<HttpRequest>>,
}

impl Scripted {
    fn new(answers: Vec<Result<HttpResponse, HttpFailure>>) -> Scripted {
        Scripted { answers: RefCell::new(answers.into()), seen: RefCell::new(Vec::new()) }
    }
    fn header(&self, n: usize, name: &str) -> Option<String> {
        self.seen.borrow()[n]
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
}

impl Http for Scripted {
    async fn post(&self, request: &HttpRequest, _: u32) -> Result<HttpResponse, HttpFailure> {
        self.seen.borrow_mut().push(request.clone());
        self.answers.borrow_mut().pop_front().expect("a scripted answer")
    }
}

fn json_reply(id: u64, result: Value) -> Result<HttpResponse, HttpFailure> {
    Ok(HttpResponse {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    })
}

fn sse_reply(id: u64, result: Value) -> Result<HttpResponse, HttpFailure> {
    // A progress notification first, then the response, as servers stream them.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    Ok(HttpResponse {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        body: format!(
            "event: message\r\ndata: {note}\r\n\r\nevent: message\r\ndata: {answer}\r\n\r\n"
        ),
    })
}

fn initialized() -> Vec<Result<HttpResponse, HttpFailure>> {
    let mut init =
        json_reply(1, json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {}})).unwrap();
    init.headers.push(("mcp-session-id".into(), "session-7".into()));
    vec![Ok(init), Ok(HttpResponse { status: 202, headers: vec![], body: String::new() })]
}

#[test]
fn a_session_initializes_then_lists_every_page_of_tools_with_its_session() {
    let mut answers = initialized();
    answers.push(sse_reply(
        2,
        json!({"tools": [{"name": "lookup", "description": "A SKU's price", "inputSchema": {"type": "object"}}], "nextCursor": "p2"}),
    ));
    answers.push(json_reply(3, json!({"tools": [{"name": "restock", "inputSchema": {}}]})));
    let http = Scripted::new(answers);
    let shop = server("http://127.0.0.1:8000/mcp");
    let tools = block_on(async {
        let session = McpSession::connect(&http, &shop).await?;
        session.list_tools().await
    })
    .unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["lookup", "restock"]);
    assert_eq!(tools[0].description, "A SKU's price");
    let seen = http.seen.borrow().clone();
    assert_eq!(seen[0].body["method"], "initialize");
    assert_eq!(seen[0].body["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(seen[0].body["params"]["clientInfo"]["name"], "AlphaScout");
    assert_eq!(seen[1].body, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(seen[3].body["params"], json!({"cursor": "p2"}));
    assert!(seen.iter().all(|r| r.url == "http://127.0.0.1:8000/mcp"));
    assert_eq!(http.header(0, "mcp-session-id"), None);
    for n in 1..4 {
        assert_eq!(http.header(n, "mcp-session-id").as_deref(), Some("session-7"));
        assert_eq!(http.header(n, "mcp-protocol-version").as_deref(), Some("2025-06-18"));
        assert_eq!(http.header(n, "authorization"), Some(format!("Bearer {TOKEN}")));
    }
}

fn call(answer: Result<HttpResponse, HttpFailure>) -> Result<Value, McpError> {
    let mut answers = initialized();
    answers.push(answer);
    let http = Scripted::new(answers);
    let shop = server("http://127.0.0.1:8000/mcp");
    let result = block_on(async {
        let session = McpSession::connect(&http, &shop).await?;
        session.call_tool("lookup", &json!({"sku": "A-1"})).await
    });
    if result.is_ok() {
        let body = &http.seen.borrow()[2].body;
        assert_eq!(body["params"], json!({"name": "lookup", "arguments": {"sku": "A-1"}}));
    }
    result
}

#[test]
fn a_call_answers_structured_content_else_text() {
    let structured = json!({"content": [{"type": "text", "text": "{\"price\": 4}"}],
        "structuredContent": {"price": 4, "stock": 2}});
    assert_eq!(call(sse_reply(2, structured)).unwrap(), json!({"price": 4, "stock": 2}));
    let text = json!({"content": [{"type": "text", "text": "one"}, {"type": "image"}, {"type": "text", "text": "two"}]});
    assert_eq!(call(json_reply(2, text)).unwrap(), json!("one\ntwo"));
}

#[test]
fn each_failure_names_the_server_and_tool_and_never_the_token() {
    let rpc_error = Ok(HttpResponse {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown tool: lookup"}}).to_string(),
    });
    let tool_error = json_reply(
        2,
        json!({"isError": true, "content": [{"type": "text", "text": format!("bad sku, token {TOKEN}")}]}),
    );
    let http_error = Ok(HttpResponse { status: 500, headers: vec![], body: "boom".into() });
    let garbage = Ok(HttpResponse { status: 200, headers: vec![], body: "<html>".into() });
    let wrong_id = json_reply(9, json!({}));
    for (answer, expected, recoverable) in [
        (rpc_error, "answered error -32602: Unknown tool: lookup", false),
        (tool_error, "failed: bad sku, token ***", false),
        (http_error, "answered HTTP 500: boom", true),
        (garbage, "answered what is not JSON-RPC", false),
        (wrong_id, "without the response to this request", false),
        (
            Err(HttpFailure::Network("connection refused".into())),
            "could not be reached at http://127.0.0.1:8000/mcp (connection refused): is it running, and does it allow this extension's origin (CORS)?",
            true,
        ),
        (Err(HttpFailure::Timeout), "did not answer in time", true),
        (
            Ok(HttpResponse { status: 0, headers: vec![], body: String::new() }),
            "answered with a redirect, which is not followed",
            false,
        ),
        (
            Ok(HttpResponse {
                status: 307,
                headers: vec![("location".into(), "https://elsewhere.example/".into())],
                body: String::new(),
            }),
            "answered with a redirect",
            false,
        ),
    ] {
        let error = call(answer).unwrap_err();
        assert!(error.message.starts_with("MCP server \"shop\", tool \"lookup\": "), "{error}");
        assert!(error.message.contains(expected), "{error}");
        assert!(!error.message.contains(TOKEN), "{error}");
        assert_eq!(error.recoverable, recoverable, "{error}");
    }
}

#[test]
fn a_session_id_hidden_by_cors_is_said_as_such() {
    let http = Scripted::new(answers_without_session());
    let shop = server("http://127.0.0.1:8000/mcp");
    let clients = McpClients::new(&http, vec![shop]);
    let error = block_on(clients.call_tool("shop", "lookup", &json!({}))).unwrap_err();
    assert!(error.message.contains("Access-Control-Expose-Headers: Mcp-Session-Id"), "{error}");
    // Without the session id, none was sent.
    assert_eq!(http.header(2, "mcp-session-id"), None);
}

/// An initialize whose session header the browser hid, then the server asking for it.
fn answers_without_session() -> Vec<Result<HttpResponse, HttpFailure>> {
    let mut answers = initialized();
    answers[0].as_mut().unwrap().headers.retain(|(n, _)| n != "mcp-session-id");
    answers.push(Ok(HttpResponse {
        status: 400,
        headers: vec![],
        body: "Bad Request: Missing session ID".into(),
    }));
    answers
}

#[test]
fn a_refused_token_or_a_down_server_is_said_at_connect() {
    let http =
        Scripted::new(vec![Ok(HttpResponse { status: 401, headers: vec![], body: String::new() })]);
    let shop = server("http://127.0.0.1:8000/mcp");
    let Err(error) = block_on(McpSession::connect(&http, &shop)) else { panic!("connected") };
    assert_eq!(
        error.message,
        "MCP server \"shop\", initialize: refused the request (HTTP 401): check the server's token in Settings"
    );
}

#[test]
fn a_call_names_the_tool_even_when_the_session_fails() {
    let http = Scripted::new(vec![Err(HttpFailure::Network("connection refused".into()))]);
    let shop = server("http://127.0.0.1:8000/mcp");
    let clients = McpClients::new(&http, vec![shop.clone()]);
    let error = block_on(clients.call_tool("shop", "lookup", &json!({}))).unwrap_err();
    assert!(
        error.message.starts_with("MCP server \"shop\", tool \"lookup\": could not be reached"),
        "{error}"
    );
    let http =
        Scripted::new(vec![Ok(HttpResponse { status: 401, headers: vec![], body: String::new() })]);
    let error = block_on(list_tools(&http, &shop)).unwrap_err();
    assert!(error.message.starts_with("MCP server \"shop\", tools/list: refused"), "{error}");
}

#[test]
fn a_server_the_scheme_rules_refuse_is_never_contacted() {
    let http = Scripted::new(vec![]);
    for url in ["http://tools.lan/mcp", "file:///etc/passwd", "ftp://127.0.0.1/"] {
        let remote = server(url);
        let Err(error) = block_on(McpSession::connect(&http, &remote)) else { panic!("{url}") };
        assert!(error.message.starts_with("MCP server \"shop\" is not usable"), "{error}");
    }
    assert!(http.seen.borrow().is_empty());
}

#[test]
fn a_runs_clients_keep_one_session_per_server_and_reopen_a_forgotten_one() {
    let mut answers = initialized();
    answers.push(json_reply(2, json!({"tools": [{"name": "lookup", "inputSchema": {}}]})));
    answers.push(json_reply(3, json!({"content": [], "structuredContent": {"price": 4}})));
    // The server forgets the session; a new one is opened and the call made again.
    answers.push(Ok(HttpResponse { status: 404, headers: vec![], body: String::new() }));
    answers.extend(initialized());
    answers.push(json_reply(
        2,
        json!({"content": [{"type": "text", "text": format!("echo {TOKEN}")}]}),
    ));
    let http = Scripted::new(answers);
    let clients = McpClients::new(&http, vec![server("http://127.0.0.1:8000/mcp")]);
    assert_eq!(clients.names(), ["shop"]);
    block_on(async {
        assert_eq!(clients.list_tools("shop").await.unwrap()[0].name, "lookup");
        assert_eq!(
            clients.call_tool("shop", "lookup", &json!({})).await.unwrap(),
            json!({"price": 4})
        );
        // A tool that echoes the token gives it back masked.
        assert_eq!(
            clients.call_tool("shop", "lookup", &json!({})).await.unwrap(),
            json!("echo ***")
        );
    });
    let methods: Vec<Value> = http.seen.borrow().iter().map(|r| r.body["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    assert!(http.answers.borrow().is_empty());
}

#[test]
fn a_server_not_in_settings_is_named_with_those_that_are() {
    let http = Scripted::new(vec![]);
    let clients = McpClients::new(&http, vec![server("http://127.0.0.1:8000/mcp")]);
    let error = block_on(clients.call_tool("crm", "find", &json!({}))).unwrap_err();
    assert_eq!(error.message, "No MCP server named \"crm\" in Settings (there are: shop).");
    let none = McpClients::new(&http, vec![]);
    let error = block_on(none.list_tools("crm")).unwrap_err();
    assert_eq!(error.message, "No MCP server named \"crm\": add it in Settings, MCP servers.");
}
