//! Other agents driving AlphaScout through its MCP server, in real Chromium over the real
//! worker and the real `alphascout-mcp`, registered in the test profile: a client of the
//! official Python SDK (`tests/py/mcp_client.py`) over stdio, as a desktop app, and over
//! streamable HTTP, as a local agent, with the jobs' scripted model. What a user checks: the
//! tools, a task's progress and answer, a question answered, a workflow replayed with a
//! parameter, a published pipeline run, clear refusals (switched off, a denied URL, a busy
//! tab), Settings' "Allow MCP clients" with the host's state and the clients, the tab's
//! "Driven by" and the captured run naming its client.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use e2e::agent::{TEST_KEY, settings};
use e2e::browser::Browser;
use e2e::fixtures::FixtureSites;
use e2e::llm::{Reply, ScriptedLlm};
use serde_json::{Value, json};

fn keys() -> Value {
    json!({"planner": TEST_KEY, "navigator": TEST_KEY, "thinking": TEST_KEY})
}

/// Without the host installed, switching MCP clients on says what to do in Settings; off,
/// it says no client can reach AlphaScout.
#[test]
fn settings_says_when_the_mcp_host_is_not_installed() {
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch();
    let llm = ScriptedLlm::responding(|_| Reply::json(json!({})));
    let saved = browser.agent_request(
        json!({"type": "save_settings", "settings": settings(llm.base_url()), "keys": keys()}),
    );
    assert_eq!(saved["problems"], json!([]), "{saved}");
    let tab = browser.open_tab(&sites.url("/shop/product.html?sku=kettle"));
    let panel = browser.open_side_panel(&tab);
    panel.click("[data-testid=settings-toggle]");
    panel
        .wait_for_text("[data-testid=mcp-host-status]", "Off: no MCP client can reach AlphaScout.");
    panel.wait_for(
        "document.querySelector('[data-testid=settings-allow-mcp-clients]')?.checked === false",
        "off by default",
    );

    // Switched on and saved: Chrome finds no host, and Settings says what to do.
    panel.click("[data-testid=settings-allow-mcp-clients]");
    panel.click("[data-testid=settings-save]");
    panel.wait_for_text(
        "[data-testid=mcp-host-status]",
        "The MCP host is not installed: run `cargo xtask mcp install`.",
    );
    panel.eval(
        "document.querySelector('[data-testid=settings-mcp-clients]').scrollIntoView(), true",
    );
    panel.screenshot(
        &e2e::workspace_root().join("target/tmp/screenshots/mcp-clients-not-installed.png"),
    );

    // Off again.
    panel.click("[data-testid=settings-allow-mcp-clients]");
    panel.click("[data-testid=settings-save]");
    panel
        .wait_for_text("[data-testid=mcp-host-status]", "Off: no MCP client can reach AlphaScout.");
    let stored = browser.agent_request(json!({"type": "get_settings"}));
    assert_eq!(stored["settings"]["allow_mcp_clients"], json!(false), "{stored}");
}

/// An MCP client of the official Python SDK (`tests/py/mcp_client.py`), driven a line at a
/// time: calls run at once, and what each brings (progress, a result, an error) is kept by
/// its tag.
struct Client {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    /// Lines read and not yet asked for.
    seen: Vec<Value>,
}

impl Client {
    fn python() -> PathBuf {
        e2e::python::environment("mcp", &["mcp==1.23.3"], &["mcp", "uvicorn"])
    }

    fn start(args: &[String]) -> Client {
        let script = e2e::workspace_root().join("tests/py/mcp_client.py");
        let mut child = Command::new(Client::python())
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the MCP client starts");
        let to = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (send, from) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        let mut client = Client { child, to, from, seen: Vec::new() };
        client.next_where("the client's initialize", |line| line["ready"] == true);
        client
    }

    /// A desktop client: `alphascout-mcp stdio`, started by the client as Claude Desktop does.
    fn stdio(name: &str, dir: &Path) -> Client {
        let binary = e2e::mcp_host::binary().display().to_string();
        Client::start(&["stdio".into(), name.into(), binary, dir.display().to_string()])
    }

    /// A local agent over streamable HTTP, with the token from `mcp.json`.
    fn http(name: &str, http: &HttpEndpoint) -> Client {
        let url = format!("http://127.0.0.1:{}/mcp", http.port);
        Client::start(&["http".into(), name.into(), url, http.token.clone()])
    }

    fn send(&mut self, command: Value) {
        writeln!(self.to, "{command}").unwrap();
        self.to.flush().unwrap();
    }

    /// The next line (kept or new) that `test` takes, within 90 s.
    fn next_where(&mut self, what: &str, test: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&test) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(line) if test(&line) => return line,
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {what} from the MCP client; it said {:#?}", self.seen),
            }
        }
    }

    fn list_tools(&mut self) -> Vec<Value> {
        self.send(json!({"op": "list_tools", "tag": "tools"}));
        let listed =
            self.next_where("tools", |l| l["tag"] == "tools" && l.get("progress").is_none());
        listed["tools"].as_array().unwrap_or_else(|| panic!("no tools: {listed}")).clone()
    }

    /// Starts a call tagged `tag`; [`Client::outcome`] waits for its end.
    fn call(&mut self, tag: &str, tool: &str, arguments: Value) {
        self.send(json!({"op": "call", "tag": tag, "tool": tool, "arguments": arguments}));
    }

    /// The call's result (`{"result": …}`) or error (`{"error": …}`), and its progress lines.
    fn outcome(&mut self, tag: &str) -> (Value, Vec<Value>) {
        let end = self.next_where(&format!("end of {tag}"), |l| {
            l["tag"] == tag && (l.get("result").is_some() || l.get("error").is_some())
        });
        let mut progress = Vec::new();
        self.seen.retain(|l| {
            let mine = l["tag"] == tag && l.get("progress").is_some();
            if mine {
                progress.push(l.clone());
            }
            !mine
        });
        (end, progress)
    }

    /// A call and its end: the structured result of a tool that ran, else the error.
    fn run(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Value>) {
        let tag = format!("{tool}-{}", self.seen.len() + next_tag());
        self.call(&tag, tool, arguments);
        self.outcome(&tag)
    }
}

/// A number no other call or folder of this test binary has.
fn next_tag() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = writeln!(self.to, "{}", json!({"op": "quit"}));
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// The HTTP endpoint written into `mcp.json` before the host starts.
struct HttpEndpoint {
    port: u16,
    token: String,
}

/// A browser whose profile has the host registered, confined to a folder of its own, with
/// the jobs' scripted model, the firewall denying one host, and MCP clients allowed.
struct Setup {
    sites: FixtureSites,
    browser: Browser,
    model: e2e::jobs::Model,
    dir: PathBuf,
    http: HttpEndpoint,
}

const DENIED: &str = "blocked.example";

fn setup(delay: Duration) -> Setup {
    let dir = std::env::temp_dir().join(format!(
        "alphascout-mcp-ext-{}-{}",
        std::process::id(),
        next_tag()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let http = HttpEndpoint { port, token: "mcp-http-e2e-7d0c2b9f41".into() };
    let config = dir.join("mcp.json");
    std::fs::write(&config, json!({"http": {"port": port, "token": http.token}}).to_string())
        .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let sites = FixtureSites::serve();
    let mut browser = Browser::launch_with(e2e::mcp_host::launch_options(&dir)).unwrap();
    let model = e2e::jobs::model(delay);
    let mut allowed = settings(model.llm.base_url());
    allowed["allow_mcp_clients"] = json!(true);
    allowed["deny"] = json!([DENIED]);
    let saved = browser
        .agent_request(json!({"type": "save_settings", "settings": allowed, "keys": keys()}));
    assert_eq!(saved["problems"], json!([]), "{saved}");
    // The worker connected: Chrome started the host, which listens on its socket.
    let socket = dir.join("bridge.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the host never made {}", socket.display());
        std::thread::sleep(Duration::from_millis(20));
    }
    Setup { sites, browser, model, dir, http }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn structured(outcome: &Value) -> &Value {
    assert!(outcome.get("result").is_some(), "not a result: {outcome:#}");
    &outcome["result"]["structured"]
}

fn error_message(outcome: &Value) -> String {
    outcome["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {outcome:#}"))
        .to_owned()
}

fn save(browser: &mut Browser, change: impl FnOnce(&mut Value)) {
    let mut stored = browser.agent_request(json!({"type": "get_settings"}))["settings"].clone();
    change(&mut stored);
    let saved =
        browser.agent_request(json!({"type": "save_settings", "settings": stored, "keys": keys()}));
    assert_eq!(saved["problems"], json!([]), "{saved}");
}

/// A desktop client over stdio: the tools, a task on a fixture page with progress and its
/// answer, a question answered, the refusals a client must understand, and what the person
/// sees of it in the tab's panel and the captured run.
#[test]
fn a_desktop_client_over_stdio_runs_tasks_answers_questions_and_is_refused_clearly() {
    let mut s = setup(Duration::from_millis(300));
    let mut client = Client::stdio("e2e-desk", &s.dir);

    // The tools, `act` with the Navigator's own action schema.
    let tools = client.list_tools();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "run_task",
        "answer",
        "get_page_state",
        "act",
        "screenshot",
        "list_tabs",
        "list_workflows",
        "replay_workflow",
        "run_pipeline",
        "job_status",
        "stop_job",
    ] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }
    let act = tools.iter().find(|t| t["name"] == "act").unwrap();
    let variants = act["inputSchema"]["properties"]["action"]["oneOf"].as_array().unwrap();
    assert!(variants.iter().any(|v| v["properties"]["action"]["const"] == "click"), "{act:#}");

    // A task at a URL: a new tab, progress per step, the answer, its run and session.
    let page = "table.html";
    let url = s.sites.url(&format!("/tasks/{page}"));
    let (done, progress) =
        client.run("run_task", json!({"task": e2e::jobs::task(page), "url": url}));
    let result = structured(&done);
    assert_eq!(result["status"], "done", "{done:#}");
    assert_eq!(result["answer"], e2e::tasks::APPROVED, "{done:#}");
    assert!(!progress.is_empty(), "no progress notification");
    assert!(
        progress.iter().all(|p| p["message"].as_str().is_some_and(|m| !m.is_empty())),
        "{progress:#?}"
    );
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains(e2e::tasks::APPROVED), "{text}");
    let run_id = result["run_id"].as_str().unwrap().to_owned();
    // The captured run names its client, for the annotators.
    let runs = s.browser.stored_runs();
    let run = runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == run_id.as_str()).cloned();
    assert_eq!(run.expect("the run is captured")["drivenBy"], "e2e-desk");
    let status = client.run("job_status", json!({"job_id": result["job_id"]})).0;
    assert_eq!(structured(&status)["status"], "done", "{status:#}");

    // A task that asks: the client gets the question, the tab's panel shows who drives it.
    let asking = "checkboxes.html";
    let tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{asking}")));
    let (asked, _) =
        client.run("run_task", json!({"task": e2e::jobs::asking_task(asking), "tab_id": tab.id}));
    let asked = structured(&asked).clone();
    assert_eq!(asked["status"], "asking", "{asked:#}");
    assert_eq!(asked["question"], e2e::jobs::question(asking), "{asked:#}");
    let panel = s.browser.open_side_panel(&tab);
    let driven = panel.wait_for_text("[data-testid=driven-by]", "Driven by e2e-desk");
    assert!(driven.contains("Stop"), "{driven}");
    panel.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-driven-by.png"));
    // The answer resumes it; the call returns when it is done.
    let (answered, _) =
        client.run("answer", json!({"job_id": asked["job_id"], "text": "Yes, go ahead."}));
    assert_eq!(structured(&answered)["status"], "done", "{answered:#}");
    assert_eq!(tab.page.eval("document.getElementById('result')?.textContent"), json!("Correct"));
    panel.wait_for("!document.querySelector('[data-testid=driven-by]')", "the banner to go");

    // The page as the agent reads it, a screenshot, and one action, in that tab.
    let state = client.run("get_page_state", json!({"tab_id": tab.id})).0;
    let text = structured(&state)["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains(&format!("/tasks/{asking}")), "{text}");
    let shot = client.run("screenshot", json!({"tab_id": tab.id})).0;
    assert_eq!(shot["result"]["content"][0]["type"], "image", "{shot:#}");
    assert_eq!(shot["result"]["content"][0]["mimeType"], "image/jpeg");
    let reloaded = client.run("act", json!({"tab_id": tab.id, "action": {"action": "reload"}})).0;
    assert_eq!(reloaded["result"]["is_error"], false, "{reloaded:#}");
    let unknown = client.run("act", json!({"tab_id": tab.id, "action": {"action": "fly"}})).0;
    assert!(error_message(&unknown).starts_with("act's action"), "{unknown:#}");

    // A URL the firewall denies: refused before any tab opens.
    let denied = client
        .run("run_task", json!({"task": "Look around.", "url": format!("https://{DENIED}/")}))
        .0;
    let said = error_message(&denied);
    assert_eq!(
        said,
        format!(
            "https://{DENIED}/ is on your deny list ({DENIED}). Edit the list in Settings to allow it."
        )
    );
    let scheme = client.run("run_task", json!({"task": "Read it.", "url": "file:///etc/passwd"})).0;
    assert!(error_message(&scheme).contains("http and https pages only"), "{scheme:#}");

    // A second job on a busy tab is refused with the panel's sentence.
    let busy_page = "paragraph.html";
    let busy_tab = s.browser.open_tab(&s.sites.url(&format!("/tasks/{busy_page}")));
    client.call(
        "first",
        "run_task",
        json!({"task": e2e::jobs::task(busy_page), "tab_id": busy_tab.id}),
    );
    s.browser.wait_for_jobs("the task running", |jobs| {
        jobs.iter().any(|j| j["tab_id"] == busy_tab.id && j["status"] == "running")
    });
    let second =
        client.run("run_task", json!({"task": "Something else.", "tab_id": busy_tab.id})).0;
    assert_eq!(
        error_message(&second),
        "A task is running in this tab: stop it, or use another tab."
    );
    assert_eq!(structured(&client.outcome("first").0)["status"], "done");

    // Arguments that do not fit, and what is not there, are named.
    let bad = client.run("run_task", json!({"task": "x", "tab": 3})).0;
    assert_eq!(error_message(&bad), "run_task takes no tab.");
    let missing = client.run("get_page_state", json!({"tab_id": 987654})).0;
    assert!(error_message(&missing).contains("There is no tab 987654"), "{missing:#}");

    // Switched off: the client is told to switch it on; switched on again, it works again.
    save(&mut s.browser, |settings| settings["allow_mcp_clients"] = json!(false));
    let socket = s.dir.join("bridge.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while socket.exists() {
        assert!(Instant::now() < deadline, "the host did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let off = client.run("list_tabs", json!({})).0;
    assert!(error_message(&off).contains("Allow MCP clients"), "{off:#}");
    save(&mut s.browser, |settings| settings["allow_mcp_clients"] = json!(true));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the host did not start again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let tabs = client.run("list_tabs", json!({})).0;
    assert!(structured(&tabs)["tabs"].as_array().is_some_and(|t| !t.is_empty()), "{tabs:#}");
    let _ = &s.model;
}

/// A pipeline the HTTP test publishes: it checks a SKU it is given.
const ECHO: &str = r#"
id: sku_check
description: Says which SKU it was given.
inputs:
  schema:
    type: object
    additionalProperties: false
    required: [sku]
    properties:
      sku: { type: string }
allow_tools: []
steps:
  - id: answer
    type: transform
    output: { sku: "{{input.sku}}", checked: true }
"#;

/// A local agent over HTTP: a workflow replayed with a parameter (by name and as its own
/// tool), a published pipeline run, and Settings listing the client.
#[test]
fn a_local_agent_over_http_replays_a_workflow_and_runs_a_published_pipeline() {
    let mut s = setup(Duration::from_millis(0));
    e2e::workflows::seed_recording(&mut s.browser, &s.sites);
    let workflow_id = e2e::workflows::reflect(&mut s.browser);
    e2e::workflows::save_with_dependency(&mut s.browser, &workflow_id);
    let mut client = Client::http("e2e-agent", &s.http);

    // Settings lists the client, with its transport.
    let tab = s.browser.open_tab(&s.sites.url("/shop/index.html"));
    let panel = s.browser.open_side_panel(&tab);
    panel.click("[data-testid=settings-toggle]");
    let listed = panel.wait_for_text("[data-testid=mcp-client-list]", "e2e-agent");
    assert!(listed.contains("http"), "{listed}");
    panel.wait_for_text("[data-testid=mcp-host-status]", "The MCP host is connected.");
    panel.eval(
        "document.querySelector('[data-testid=settings-mcp-clients]').scrollIntoView(), true",
    );
    panel.screenshot(&e2e::workspace_root().join("target/tmp/screenshots/mcp-clients.png"));
    panel.click("[data-testid=settings-toggle]");

    // The workflow is a tool of its own, its parameter in the schema.
    let tools = client.list_tools();
    let own = tools.iter().find(|t| t["name"] == "workflow_open_the_cheapest_product");
    let own = own.unwrap_or_else(|| panic!("no workflow tool: {tools:#?}"));
    assert_eq!(own["inputSchema"]["properties"]["query"]["type"], "string", "{own:#}");

    // Replayed by name with a parameter: progress per step, the extract as the answer.
    let (replayed, progress) = client.run(
        "replay_workflow",
        json!({
        "workflow": "Open the cheapest product", "params": {"query": "tea"}, "tab_id": tab.id}),
    );
    let result = structured(&replayed).clone();
    assert_eq!(result["status"], "done", "{replayed:#}");
    assert_eq!(result["answer"]["cheapest"], "French press", "{replayed:#}");
    assert!(!progress.is_empty(), "no progress notification");
    e2e::workflows::wait_for_url(&tab, "product.html?sku=press");
    let runs = s.browser.stored_runs();
    let run =
        runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == result["run_id"]).cloned();
    assert_eq!(run.expect("the replay is captured")["drivenBy"], "e2e-agent");
    // A parameter it does not have is named.
    let wrong = client.run("workflow_open_the_cheapest_product", json!({"colour": "red"})).0;
    assert!(error_message(&wrong).contains("no parameter \"colour\""), "{wrong:#}");
    let none = client.run("replay_workflow", json!({"workflow": "Fly to the moon"})).0;
    assert!(error_message(&none).contains("There is no workflow \"Fly to the moon\""), "{none:#}");

    // A pipeline: unknown until published; published, the client hears the tools changed.
    let unpublished =
        client.run("run_pipeline", json!({"name": "sku_check", "input": {"sku": "K"}})).0;
    assert!(error_message(&unpublished).contains("No published pipeline is named \"sku_check\""));
    let saved =
        s.browser.agent_request(json!({"type": "save_pipeline", "text": ECHO, "publish": true}));
    assert_eq!(saved["published"], true, "{saved}");
    client.next_where("the tools' change", |l| l["event"] == "tools_changed");
    let tools = client.list_tools();
    let own = tools.iter().find(|t| t["name"] == "pipeline_sku_check").expect("its own tool");
    assert_eq!(own["inputSchema"]["properties"]["sku"]["type"], "string", "{own:#}");
    let (ran, steps) = client.run("pipeline_sku_check", json!({"sku": "KET-1", "tab_id": tab.id}));
    assert_eq!(structured(&ran)["status"], "done", "{ran:#}");
    assert_eq!(structured(&ran)["answer"], json!({"sku": "KET-1", "checked": true}));
    assert_eq!(steps.len(), 1, "one progress per step: {steps:#?}");
    let (by_name, _) = client
        .run("run_pipeline", json!({"name": "sku_check", "input": {"sku": "X"}, "tab_id": tab.id}));
    assert_eq!(structured(&by_name)["answer"]["sku"], "X", "{by_name:#}");
    let _ = &s.model;
}
