//! Pipelines using an outside MCP server's tools, in real Chromium over the real worker: a
//! shop's server written with the official Python SDK (FastMCP, streamable HTTP on
//! 127.0.0.1, a bearer token required) is configured in Settings through the port; a
//! pipeline's prompt renders `{{tools.list}}` and its `tool: mcp` step calls `lookup`. What a
//! user checks: the answer holds the tool's result, the model was told the tool's name,
//! description and input schema, a tool outside the allowlist is refused, a server without
//! its token is refused with a clear message, and the token is stored nowhere but the keys.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use crate::support::pipeline_request;
use e2e::agent::{TEST_KEY, settings};
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::{Value, json};

const TOKEN: &str = "mcp-e2e-token-5f1c9a7e";

/// The Python MCP server, stopped when dropped.
struct ShopServer {
    child: Child,
    url: String,
}

impl ShopServer {
    fn start(extension_origin: &str) -> ShopServer {
        let python = e2e::python::environment("mcp", &["mcp==1.23.3"], &["mcp", "uvicorn"]);
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = e2e::workspace_root().join("tests/py/mcp_shop.py");
        let mut child = Command::new(python)
            .arg(script)
            .args([&port.to_string(), TOKEN, extension_origin])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the MCP server starts");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
        assert_eq!(ready.trim(), "ready");
        // uvicorn binds after the script says ready: wait for the port.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "the MCP server did not listen");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        ShopServer { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for ShopServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// A prompt of the user's own (a prompt override) that shows the model the tools.
fn prompt_files() -> Value {
    json!({
        "pick_tool/prompt.json": json!({"id": "pick_tool", "variants": {"A": "A.md"}, "schema": "schema.json"}).to_string(),
        "pick_tool/A.md": "You help a shop assistant. These are the tools you may use:\n{{tools.list}}\n\nThe assistant asks about {{question}}. Answer with the SKU to look up.",
        "pick_tool/schema.json": json!({"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}}).to_string(),
    })
}

const PIPELINE: &str = r#"
id: stock_check
allow_tools: ["mcp:shop/lookup"]
steps:
  - id: pick
    type: llm
    prompt_id: pick_tool
    params: { question: "{{input.question}}" }
  - id: stock
    type: tool
    tool: mcp
    server: shop
    name: lookup
    input: { sku: "{{steps.pick.output.sku}}" }
  - id: answer
    type: transform
    output: { sku: "{{steps.pick.output.sku}}", price: "{{steps.stock.output.price}}", in_stock: "{{steps.stock.output.stock}}" }
"#;

/// Every record of every store but `settings` (where keys live by design), as JSON text.
fn everything_stored(browser: &mut Browser) -> String {
    let dump = browser.eval_in_extension(
        r#"(async () => {
          const db = await new Promise((ok, fail) => {
            const open = indexedDB.open("alphascout");
            open.onsuccess = () => ok(open.result);
            open.onerror = () => fail(open.error);
          });
          const out = {};
          for (const name of db.objectStoreNames) {
            if (name === "settings") continue;
            out[name] = await new Promise((ok, fail) => {
              const request = db.transaction(name).objectStore(name).getAll();
              request.onsuccess = () => ok(request.result);
              request.onerror = () => fail(request.error);
            });
          }
          db.close();
          return JSON.stringify(out);
        })()"#,
    );
    dump.as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_pipeline_lists_and_calls_a_local_mcp_servers_tool_within_its_allowlist() {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let shop = ShopServer::start(&format!("chrome-extension://{}", browser.extension_id()));
    let llm = ScriptedLlm::responding(|_| Reply::json(json!({"sku": "KET-1"})));

    // Settings, through the port as the panel saves them: the token travels in `keys` only.
    let mut configured = settings(llm.base_url());
    configured["prompt_overrides"] = prompt_files();
    configured["mcp_servers"] = json!([
        {"name": "shop", "url": shop.url, "token": "***"},
        {"name": "shop_no_token", "url": shop.url},
    ]);
    let keys = json!({"planner": TEST_KEY, "navigator": TEST_KEY, "thinking": TEST_KEY, "mcp:shop": TOKEN});
    let saved = browser
        .agent_request(json!({"type": "save_settings", "settings": configured, "keys": keys}));
    assert_eq!(saved["problems"], json!([]), "{saved}");
    assert_eq!(saved["settings"]["mcp_servers"][0]["token"], "***", "{saved}");
    assert!(!saved.to_string().contains(TOKEN));

    // The run: the model is told the tools, picks a SKU, the server answers.
    let run = |browser: &mut Browser, text: &str| {
        browser.agent_request(pipeline_request(
            "run_pipeline",
            text,
            json!({"input": {"question": "the blue kettle"}}),
        ))
    };
    let done = run(&mut browser, PIPELINE);
    assert_eq!(done["type"], "pipeline_result", "{done}");
    assert_eq!(done["run"]["status"], "ok", "{done}");
    assert_eq!(done["run"]["output"], json!({"sku": "KET-1", "price": 39.5, "in_stock": 7}));
    let asked = llm.requests();
    assert_eq!(asked.len(), 1, "one model call");
    let prompt = asked[0].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(
        prompt.contains("- mcp:shop/lookup: Looks up a SKU's price in EUR and the units in stock."),
        "{prompt}"
    );
    let schema_line = prompt
        .lines()
        .skip_while(|l| !l.starts_with("- mcp:shop/lookup"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("input schema: "))
        .unwrap_or_else(|| panic!("no input schema after the tool: {prompt}"));
    let schema: Value = serde_json::from_str(schema_line).unwrap();
    assert_eq!(schema["properties"]["sku"]["type"], "string", "{schema}");
    assert_eq!(schema["required"], json!(["sku"]), "{schema}");
    // Only what the allowlist allows is listed: not restock, not the other server's tools.
    assert!(!prompt.contains("restock") && !prompt.contains("shop_no_token"), "{prompt}");
    assert!(!prompt.contains("- page_state:"), "{prompt}");

    // A tool outside the allowlist is refused before anything runs.
    let restock = PIPELINE.replace("name: lookup", "name: restock");
    let refused = run(&mut browser, &restock);
    let said = refused.to_string();
    assert!(said.contains("mcp:shop/restock is not in the pipeline's allow_tools"), "{refused}");
    assert_eq!(llm.requests().len(), 1, "nothing ran");

    // The same server without its token: refused, and said so.
    let no_token = PIPELINE
        .replace("server: shop\n", "server: shop_no_token\n")
        .replace("mcp:shop/lookup", "mcp:shop_no_token/lookup");
    let unauthorized = run(&mut browser, &no_token);
    assert_eq!(unauthorized["run"]["status"], "failed", "{unauthorized}");
    assert_eq!(unauthorized["run"]["error"]["step_id"], "stock");
    assert_eq!(
        unauthorized["run"]["error"]["message"],
        "MCP server \"shop_no_token\", tool \"lookup\": refused the request (HTTP 401): check the server's token in Settings"
    );

    // The token is in no stored run, trace or version: only with the keys.
    let stored = everything_stored(&mut browser);
    assert!(
        stored.contains("stock_check"),
        "the runs are stored: {}",
        &stored[..stored.len().min(400)]
    );
    assert!(!stored.contains(TOKEN), "the token was stored outside the keys");

    // What a person sees in Settings: the server, its token masked.
    let tab = browser.open_tab(&sites.url("/shop/product.html?sku=kettle"));
    let panel = browser.open_side_panel(&tab);
    panel.click("[data-testid=settings-toggle]");
    panel.wait_for(
        "document.querySelector('[data-testid=settings-mcp-0-name]')?.value === 'shop'",
        "the MCP servers in Settings",
    );
    assert_eq!(
        panel.eval("document.querySelector('[data-testid=settings-mcp-0-token]').value"),
        json!("***")
    );
    // A server without a token shows none.
    assert_eq!(
        panel.eval("document.querySelector('[data-testid=settings-mcp-1-token]').value"),
        json!("")
    );
    // "Test" says whether the server answers, and with which tools; without its token, why not.
    panel.click("[data-testid=settings-mcp-0-test]");
    let tested =
        panel.wait_for_text("[data-testid=settings-mcp-0-test-result]", "2 tools: lookup, restock");
    assert!(tested.contains("Connected in"), "{tested}");
    panel.click("[data-testid=settings-mcp-1-test]");
    let refused = panel.wait_for_text("[data-testid=settings-mcp-1-test-result]", "HTTP 401");
    assert!(refused.contains("check the server's token in Settings"), "{refused}");
    panel.eval("document.querySelector('[data-testid=settings-mcp]').scrollIntoView(), true");
    panel.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-settings.png"));
    // A remote plain-http server is refused as it is typed.
    panel.click("[data-testid=settings-mcp-add]");
    panel.type_into("[data-testid=settings-mcp-2-url]", "http://tools.lan:8000/mcp");
    panel.wait_for_text("#settings-mcp-2-url-errors", "unencrypted");
    panel
        .screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-settings-problem.png"));
}
