//! The native host and the stdio relay, driven as Chrome and real MCP clients drive them.

mod support;

use mcp_tools::bridge::ToExtension;
use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use support::{DENIED, Host, TempDir, free_port, http_client, raw_initialize, stdio_client};

fn run_task(task: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("run_task")
        .with_arguments(json!({"task": task}).as_object().unwrap().clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_client_lists_tools_and_runs_a_task_with_progress_over_stdio() {
    let dir = TempDir::new("stdio");
    let host = Host::start(&dir.0);
    let (client, mut heard) = stdio_client(&dir.0, "desk-client").await;

    let (name, transport) = host.next_sent(|m| match m {
        ToExtension::ClientConnected { name, transport, .. } => Some((name, transport)),
        _ => None,
    });
    assert_eq!((name.as_str(), transport.as_str()), ("desk-client", "stdio"));

    let tools = client.list_all_tools().await.expect("tools/list answers");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["run_task", "act"]);
    assert_eq!(tools[0].input_schema["required"], json!(["task"]));

    let result = client.call_tool(run_task("Find the price")).await.expect("the task's result");
    assert_eq!(
        result.structured_content,
        Some(json!({"job_id": "job-1", "status": "done", "answer": "12 €"}))
    );
    assert!(result.content[0].as_text().unwrap().text.contains("The price is 12 €."));
    let (tool, progress) = host.next_sent(|m| match m {
        ToExtension::Call { tool, progress, .. } => Some((tool, progress)),
        _ => None,
    });
    assert_eq!(tool, "run_task");
    assert!(progress, "the client sent a progress token, so the worker is asked for progress");
    assert_eq!(
        support::progress_messages(&mut heard, 2).await,
        ["Opened the shop", "Read the price"]
    );

    client.cancel().await.unwrap();
    host.next_sent(|m| matches!(m, ToExtension::ClientGone { .. }).then_some(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_reaches_the_client_as_a_json_rpc_error_with_the_workers_sentence() {
    let dir = TempDir::new("refusal");
    let _host = Host::start(&dir.0);
    let (client, _) = stdio_client(&dir.0, "desk").await;
    let refused = client
        .call_tool(CallToolRequestParams::new("act"))
        .await
        .expect_err("the worker refused it");
    let ServiceError::McpError(error) = refused else { panic!("not a JSON-RPC error: {refused}") };
    assert_eq!(error.message, DENIED);
    assert_eq!(error.data, Some(json!({"reason": "denied"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_tells_the_worker_to_stop_waiting() {
    let dir = TempDir::new("cancel");
    let host = Host::start(&dir.0);
    let (client, _) = stdio_client(&dir.0, "desk").await;
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("wait"),
    ));
    let handle = client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    let asked = host.next_sent(|m| match m {
        ToExtension::Call { id, tool, .. } if tool == "wait" => Some(id),
        _ => None,
    });
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let cancelled = host.next_sent(|m| match m {
        ToExtension::Cancel { id } => Some(id),
        _ => None,
    });
    assert_eq!(cancelled, asked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_with_the_token_serves_like_stdio_and_changed_tools_reach_every_client() {
    let dir = TempDir::new("http");
    let port = free_port();
    let token = "tok-3f9a1c77e2";
    dir.enable_http(port, token);
    let mut host = Host::start(&dir.0);
    host.wait_for_log("MCP over HTTP").expect("HTTP is on");

    let (agent, mut agent_heard) = http_client(port, token, "local-agent").await;
    let (desk, mut desk_heard) = stdio_client(&dir.0, "desk").await;
    let transport = host.next_sent(|m| match m {
        ToExtension::ClientConnected { name, transport, .. } if name == "local-agent" => {
            Some(transport)
        }
        _ => None,
    });
    assert_eq!(transport, "http");

    let tools = agent.list_all_tools().await.expect("tools/list over HTTP");
    assert_eq!(tools.len(), 2);
    let result = agent.call_tool(run_task("Find the price")).await.expect("the result over HTTP");
    assert_eq!(result.structured_content.unwrap()["status"], "done");
    assert_eq!(
        support::progress_messages(&mut agent_heard, 2).await,
        ["Opened the shop", "Read the price"]
    );

    // The desktop client is connected before the change, so both are told.
    desk.list_all_tools().await.unwrap();
    host.tools_changed();
    agent_heard.changed.recv().await.expect("the HTTP client hears tools/list_changed");
    desk_heard.changed.recv().await.expect("the stdio client hears tools/list_changed");

    agent.cancel().await.unwrap();
    desk.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_a_missing_or_wrong_token_and_a_foreign_origin_and_never_logs_the_token() {
    let dir = TempDir::new("guard");
    let port = free_port();
    let token = "tok-9b2e44d01c";
    dir.enable_http(port, token);
    let mut host = Host::start(&dir.0);
    host.wait_for_log("MCP over HTTP").expect("HTTP is on");

    assert_eq!(raw_initialize(port, "").0, 401);
    assert_eq!(raw_initialize(port, "Authorization: Bearer tok-wrong\r\n").0, 401);
    let with_token = format!("Authorization: Bearer {token}\r\n");
    let (status, _) =
        raw_initialize(port, &format!("{with_token}Origin: http://attacker.example\r\n"));
    assert_eq!(status, 403, "a page elsewhere is refused even with the token");
    let (status, body) =
        raw_initialize(port, &format!("{with_token}Origin: http://localhost:3000\r\n"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");

    host.disconnect();
    let log = host.stderr();
    assert!(log.contains(&format!("http://127.0.0.1:{port}/mcp")), "{log}");
    assert!(!log.contains(token), "the token is in stderr:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_host_stdio_says_how_to_reach_alphascout_and_works_once_it_runs() {
    let dir = TempDir::new("unreachable");
    let (client, mut heard) = stdio_client(&dir.0, "desk").await;
    let refused = client.list_all_tools().await.expect_err("no host runs");
    let ServiceError::McpError(error) = refused else { panic!("not a JSON-RPC error: {refused}") };
    assert_eq!(
        error.message,
        "AlphaScout is not reachable: start Chromium with AlphaScout and switch on \
         Settings → Allow MCP clients"
    );

    // The browser starts (and the host with it): the same client works, told of the tools.
    let host = Host::start(&dir.0);
    let tools = client.list_all_tools().await.expect("the host answers now");
    assert_eq!(tools.len(), 2);
    heard.changed.recv().await.expect("told the tools changed");
    let name = host.next_sent(|m| match m {
        ToExtension::ClientConnected { name, .. } => Some(name),
        _ => None,
    });
    assert_eq!(name, "desk", "the client's own initialize reached the host");

    // The browser closes in the middle of a call: the client hears why, and nothing hangs.
    let waiting = tokio::spawn({
        let peer = client.peer().clone();
        async move { peer.call_tool(CallToolRequestParams::new("wait")).await }
    });
    host.next_sent(|m| matches!(m, ToExtension::Call { .. }).then_some(()));
    drop(host);
    let ServiceError::McpError(error) = waiting.await.unwrap().expect_err("the host went away")
    else {
        panic!("not a JSON-RPC error")
    };
    assert!(error.message.starts_with("AlphaScout is not reachable"), "{}", error.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_host_fails_clearly_and_a_stale_socket_is_replaced() {
    let dir = TempDir::new("second");
    // A host that died left its socket behind.
    drop(std::os::unix::net::UnixListener::bind(dir.0.join("bridge.sock")).unwrap());
    let mut first = Host::start(&dir.0);
    let (client, _) = stdio_client(&dir.0, "desk").await;
    client.list_all_tools().await.expect("the new host serves the old socket's path");

    let mut second = Host::spawn(&dir.0);
    assert!(!second.exit_status().success());
    let said = second.wait_for_log("another AlphaScout MCP host");
    assert!(said.is_some(), "{}", second.stderr());
    client.list_all_tools().await.expect("the first host still serves its clients");

    assert!(first.disconnect().success());
    assert!(!dir.0.join("bridge.sock").exists(), "the socket goes with its host");
}
