//! Headless Chromium with the built extension loaded, and the pages a test drives.

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use chromium_launch::Chromium;

use crate::cdp::Cdp;

/// How long a `wait_for` polls before failing the test.
pub const WAIT: Duration = Duration::from_secs(15);

pub use chromium_launch::LaunchOptions;

/// `$CHROMIUM` or Debian's `/usr/bin/chromium`, the workspace's `dist/`, headless.
pub fn options_from_env() -> LaunchOptions {
    LaunchOptions {
        chromium: std::env::var_os("CHROMIUM").map_or("/usr/bin/chromium".into(), Into::into),
        dist: crate::workspace_root().join("dist"),
        headless: true,
        mcp_host: None,
        env: Vec::new(),
    }
}

pub struct Browser {
    cdp: Rc<RefCell<Cdp>>,
    // Declared after `cdp` so the socket closes before the process is killed.
    process: Chromium,
    devtools_url: String,
    extension_id: String,
    /// An extension document that calls `chrome.*` on the harness's behalf. It is
    /// `manifest.json`, which opens no port, so it never keeps the worker awake.
    control: Option<Page>,
}

/// A tab as both `chrome.tabs` (its id, which the side panel takes) and CDP see it.
pub struct Tab {
    pub id: i32,
    pub page: Page,
}

impl Browser {
    /// Launches with [`options_from_env`]; panics with a next step if that fails.
    pub fn launch() -> Browser {
        Browser::launch_with(options_from_env()).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn launch_with(options: LaunchOptions) -> Result<Browser, String> {
        let mut process = Chromium::start(&options)?;
        let devtools_url = process.devtools_url()?;
        let cdp = Rc::new(RefCell::new(Cdp::connect(&devtools_url)?));
        let mut browser =
            Browser { cdp, process, devtools_url, extension_id: String::new(), control: None };
        browser.extension_id = browser.extension_worker()?.1;
        Ok(browser)
    }

    /// The last lines Chromium (and a native host it started) wrote, for a failure's message.
    pub fn log_tail(&self) -> String {
        self.process.log_tail()
    }

    /// The id Chrome gave the extension (pinned by `key` in manifest.json).
    pub fn extension_id(&self) -> &str {
        &self.extension_id
    }

    pub fn devtools_url(&self) -> &str {
        &self.devtools_url
    }

    /// `chrome-extension://<id>/<path>`
    pub fn extension_url(&self, path: &str) -> String {
        format!("chrome-extension://{}/{}", self.extension_id, path.trim_start_matches('/'))
    }

    /// Sends a browser-level CDP command.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.cdp.borrow_mut().call(None, method, params)
    }

    /// Waits for the extension's service worker and returns (its target id, extension id).
    pub fn extension_worker(&self) -> Result<(String, String), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let targets = self.call("Target.getTargets", json!({}))?;
            if let Some((target, id)) = chromium_launch::extension_in(&targets["targetInfos"]) {
                return Ok((target["targetId"].as_str().unwrap_or("").to_owned(), id));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "the extension's service worker did not start within 20 s:\n{}",
            self.process.log_tail()
        ))
    }

    fn page_target_ids(&self) -> HashSet<String> {
        let targets = self.call("Target.getTargets", json!({})).unwrap_or_default();
        targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "page")
            .filter_map(|t| t["targetId"].as_str().map(str::to_owned))
            .collect()
    }

    /// Attaches to a target with a flattened session.
    pub fn attach(&self, target_id: &str) -> Page {
        let session = self
            .call("Target.attachToTarget", json!({"targetId": target_id, "flatten": true}))
            .unwrap_or_else(|e| panic!("attaching to {target_id}: {e}"));
        Page {
            cdp: self.cdp.clone(),
            session: session["sessionId"].as_str().expect("a session id").to_owned(),
            target_id: target_id.to_owned(),
        }
    }

    fn control(&mut self) -> &Page {
        if self.control.is_none() {
            let url = self.extension_url("manifest.json");
            let target = self
                .call("Target.createTarget", json!({"url": url, "background": true}))
                .unwrap_or_else(|e| panic!("opening the control page: {e}"));
            let page = self.attach(target["targetId"].as_str().expect("a target id"));
            page.wait_for("typeof chrome !== 'undefined' && !!chrome.tabs", "chrome.tabs");
            self.control = Some(page);
        }
        self.control.as_ref().expect("just set")
    }

    /// Runs `expression` in an extension page, where `chrome.*` is available.
    pub fn eval_in_extension(&mut self, expression: &str) -> Value {
        self.control().eval(expression)
    }

    /// Stops the extension's service worker, as Chrome does to an idle one, and waits until
    /// none runs. The next event starts it afresh. A worker stopped before it handled its
    /// start-up events is restarted by Chrome; that one is let finish, then stopped too.
    /// Only for when nothing reconnects: with a port open (a panel, the test's own), a fresh
    /// worker starts within a few hundred ms, so use `kill_extension_worker` there.
    pub fn stop_extension_worker(&mut self) {
        for _ in 0..5 {
            if let Some(worker) = self.worker_target() {
                let _ = self.call("Target.closeTarget", json!({"targetId": worker}));
            }
            let stopped = Instant::now();
            while stopped.elapsed() < Duration::from_millis(300) {
                if self.worker_target().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            match self.worker_target() {
                None => return,
                Some(_) => std::thread::sleep(Duration::from_millis(300)),
            }
        }
        panic!("the extension's worker would not stay stopped");
    }

    /// The running worker's target id, if it runs.
    pub(crate) fn worker_target(&self) -> Option<String> {
        let targets = self.call("Target.getTargets", json!({})).ok()?;
        let prefix = format!("chrome-extension://{}/", self.extension_id);
        targets["targetInfos"]
            .as_array()?
            .iter()
            .find(|t| {
                t["type"] == "service_worker"
                    && t["url"].as_str().is_some_and(|url| url.starts_with(&prefix))
            })
            .and_then(|t| t["targetId"].as_str().map(str::to_owned))
    }

    /// Sends a debug request (`chrome.runtime.sendMessage`) from an extension page and
    /// returns the worker's answer; panics with the worker's message if it is an error.
    pub fn debug(&mut self, request: Value) -> Value {
        let reply = self.eval_in_extension(&format!("chrome.runtime.sendMessage({request})"));
        if let Some(error) = reply.get("error") {
            panic!("{request} failed: {error}");
        }
        reply
    }

    /// `tab`'s page state (`debug.page_state`), as a benchmark or the `/state` command
    /// would see it: `{text, elements, comparison, timings_ms, chars}`.
    pub fn page_state(&mut self, tab: &Tab) -> Value {
        self.debug(json!({"type": "debug.page_state", "tabId": tab.id}))
    }

    /// The id the agent sees for the listed element whose text is `text`, in `tab`'s page
    /// state now (ids are stable per page).
    pub fn id_of(&mut self, tab: &Tab, text: &str) -> u64 {
        let state = self.page_state(tab);
        crate::listed(&state, text).and_then(|e| e["id"].as_u64()).unwrap_or_else(|| {
            panic!("no element {text:?} in\n{}", state["text"].as_str().unwrap_or(""))
        })
    }

    /// Carries out one agent action in `tab` through the worker (`debug.act`), the same
    /// code path the Navigator uses. Returns the outcome `{ok, message, page_changed, …}`.
    pub fn act(&mut self, tab: &Tab, action: Value) -> Value {
        self.debug(json!({"type": "debug.act", "tabId": tab.id, "action": action}))
    }

    /// Clicks the listed element whose text is `text` in `tab` through [`Browser::act`], and
    /// returns the outcome.
    pub fn click_named(&mut self, tab: &Tab, text: &str) -> Value {
        let id = self.id_of(tab, text);
        self.act(tab, json!({"action": "click", "id": id}))
    }

    /// Opens `url` in a new foreground tab, as a person would.
    pub fn open_tab(&mut self, url: &str) -> Tab {
        self.open_with(url, "chrome.tabs.create({url: URL, active: true}).then(tab => tab.id)")
    }

    /// Opens `url` in a new window of its own. Its tab is the front one of that window, so
    /// it stays visible (and painted) whatever tab another window brings forward.
    pub fn open_window(&mut self, url: &str) -> Tab {
        self.open_with(url, "chrome.windows.create({url: URL}).then(window => window.tabs[0].id)")
    }

    /// Opens `url` in a new tab as if from `opener` (a link the person opened in a new tab).
    pub fn open_tab_from(&mut self, url: &str, opener: &Tab) -> Tab {
        let create = format!(
            "chrome.tabs.create({{url: URL, active: true, openerTabId: {}}}).then(tab => tab.id)",
            opener.id
        );
        self.open_with(url, &create)
    }

    /// Opens `url` with `create`, JS that answers the new tab's id with `URL` standing for
    /// the URL, and attaches to it once it has loaded.
    fn open_with(&mut self, url: &str, create: &str) -> Tab {
        self.control(); // it is a page target too: it must not count as the new tab
        let before = self.page_target_ids();
        let id = self.eval_in_extension(&create.replace("URL", &Value::from(url).to_string()));
        let id = id.as_i64().expect("a new tab's id") as i32;
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(target) = self.page_target_ids().difference(&before).next() {
                let page = self.attach(target);
                // A new tab starts on about:blank, itself "complete", before it navigates.
                page.wait_for(
                    "location.href !== 'about:blank' && document.readyState === 'complete'",
                    &format!("{url} to load"),
                );
                return Tab { id, page };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("tab {id} for {url} never showed up as a CDP target");
    }

    /// Opens the side panel as a normal tab driving `tab` (`side-panel.html?tabId=N`).
    pub fn open_side_panel(&mut self, tab: &Tab) -> Page {
        let url = self.extension_url(&format!("side-panel.html?tabId={}", tab.id));
        let panel = self.open_tab(&url).page;
        panel.wait_for("document.querySelector('main.panel') !== null", "the panel to render");
        panel
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.call("Browser.close", json!({}));
    }
}

/// One page (tab or frame target) driven through its own CDP session.
pub struct Page {
    cdp: Rc<RefCell<Cdp>>,
    session: String,
    pub target_id: String,
}

impl Page {
    /// Sends a CDP command to this page.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        self.cdp.borrow_mut().call(Some(&self.session), method, params)
    }

    /// Evaluates `expression` (awaiting a promise) and returns its JSON value.
    pub fn eval(&self, expression: &str) -> Value {
        let reply = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .unwrap_or_else(|e| panic!("evaluating {expression}: {e}"));
        if let Some(details) = reply.get("exceptionDetails") {
            panic!(
                "{expression} threw: {}",
                details["exception"]["description"].as_str().unwrap_or(&details.to_string())
            );
        }
        reply["result"]["value"].clone()
    }

    /// Polls until `condition` (a JS expression) is truthy; fails the test after [`WAIT`].
    pub fn wait_for(&self, condition: &str, what: &str) {
        self.wait_value(condition, what);
    }

    /// Polls until `expression` is truthy and returns its value; fails the test after [`WAIT`].
    pub fn wait_value(&self, expression: &str, what: &str) -> Value {
        self.poll(expression, WAIT, Duration::from_millis(15)).unwrap_or_else(|| {
            panic!("timed out waiting for {what}; the page shows:\n{}", self.visible_text())
        })
    }

    /// Evaluates `expression` `every` so often until it is neither null nor false, and
    /// returns it; `None` once `limit` has passed.
    pub fn poll(&self, expression: &str, limit: Duration, every: Duration) -> Option<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let value = self
                .call("Runtime.evaluate", json!({"expression": expression, "returnByValue": true}))
                .map(|r| r["result"]["value"].clone())
                .unwrap_or(Value::Null);
            if !matches!(value, Value::Null | Value::Bool(false)) {
                return Some(value);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(every);
        }
    }

    /// The page's visible text, for failure messages.
    pub fn visible_text(&self) -> String {
        self.call(
            "Runtime.evaluate",
            json!({"expression": "document.body ? document.body.innerText : ''", "returnByValue": true}),
        )
        .map(|r| r["result"]["value"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_else(|e| format!("<unreadable: {e}>"))
    }

    /// The text of the first element matching `selector`, once it exists.
    pub fn text(&self, selector: &str) -> String {
        let selector = Value::from(selector);
        self.wait_for(&format!("document.querySelector({selector})"), &format!("{selector}"));
        self.eval(&format!("document.querySelector({selector}).textContent"))
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until the element matching `selector` contains `expected`, and returns its text.
    pub fn wait_for_text(&self, selector: &str, expected: &str) -> String {
        let (selector_js, expected_js) = (Value::from(selector), Value::from(expected));
        self.wait_for(
            &format!(
                "(document.querySelector({selector_js})?.textContent ?? '').includes({expected_js})"
            ),
            &format!("{selector} to show {expected:?}"),
        );
        self.text(selector)
    }

    /// Clicks the centre of the element matching `selector` with real mouse events, once it
    /// is visible and enabled.
    pub fn click(&self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at, "none", 0, selector);
        self.mouse("mousePressed", at, "left", 1, selector);
        self.mouse("mouseReleased", at, "left", 1, selector);
    }

    /// Where a click on `selector` lands: its centre, once that point hits the element itself
    /// and stays the same for two polls (a screenshot or font that loads late moves the
    /// layout, and a click computed before it lands elsewhere).
    fn centre(&self, selector: &str) -> (f64, f64) {
        let selector_js = Value::from(selector);
        let centre = self.wait_value(
            &format!(
                "(() => {{ const e = document.querySelector({selector_js});
                   if (!e || e.disabled) return null;
                   e.scrollIntoView({{block: 'center'}});
                   const r = e.getBoundingClientRect();
                   if (r.width <= 0 || r.height <= 0) return null;
                   const x = r.x + r.width / 2, y = r.y + r.height / 2;
                   const hit = document.elementFromPoint(x, y);
                   if (!hit || !(hit === e || e.contains(hit))) return null;
                   const at = x + ',' + y, steady = window.__clickAt === at;
                   window.__clickAt = at;
                   return steady ? [x, y] : null; }})()"
            ),
            &format!("{selector} to be visible and enabled"),
        );
        (centre[0].as_f64().unwrap_or(0.0), centre[1].as_f64().unwrap_or(0.0))
    }

    fn mouse(&self, kind: &str, (x, y): (f64, f64), button: &str, count: u32, what: &str) {
        let held = match (kind, button) {
            ("mouseReleased", _) | (_, "none") => 0,
            (_, "right") => 2,
            _ => 1,
        };
        let button = if button == "none" { "left" } else { button };
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": button, "buttons": held,
                   "clickCount": count}),
        )
        .unwrap_or_else(|e| panic!("{kind} on {what}: {e}"));
    }

    /// A person's double-click: two presses, the second with a click count of 2.
    pub fn double_click(&self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at, "none", 0, selector);
        for count in [1, 2] {
            self.mouse("mousePressed", at, "left", count, selector);
            self.mouse("mouseReleased", at, "left", count, selector);
        }
    }

    pub fn right_click(&self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at, "none", 0, selector);
        self.mouse("mousePressed", at, "right", 1, selector);
        self.mouse("mouseReleased", at, "right", 1, selector);
    }

    /// A person's drag from `from` onto `to`: press, move in steps with the button held,
    /// release.
    pub fn drag(&self, from: &str, to: &str) {
        let start = self.centre(from);
        let end = self.centre(to);
        self.mouse("mouseMoved", start, "none", 0, from);
        self.mouse("mousePressed", start, "left", 1, from);
        for step in 1..=10 {
            let share = f64::from(step) / 10.0;
            let at = (start.0 + (end.0 - start.0) * share, start.1 + (end.1 - start.1) * share);
            self.mouse("mouseMoved", at, "left", 0, from);
            std::thread::sleep(std::time::Duration::from_millis(16));
        }
        self.mouse("mouseReleased", end, "left", 1, to);
    }

    /// Control with `letter` in the focused element, running its editing command as the
    /// keyboard does (`copy`, `paste`, `selectAll`).
    pub fn shortcut(&self, letter: char, command: &str) {
        let upper = letter.to_ascii_uppercase();
        let key = json!({"key": letter.to_string(), "code": format!("Key{upper}"),
                         "windowsVirtualKeyCode": upper as u32, "modifiers": 2});
        let mut down = key.clone();
        down["type"] = "rawKeyDown".into();
        down["commands"] = json!([command]);
        let mut up = key;
        up["type"] = "keyUp".into();
        for event in [down, up] {
            self.call("Input.dispatchKeyEvent", event)
                .unwrap_or_else(|e| panic!("Control+{upper}: {e}"));
        }
    }

    /// Clicks the element matching `selector` and types `text` into it, as keystrokes
    /// would (`Input.insertText`).
    pub fn type_into(&self, selector: &str, text: &str) {
        self.click(selector);
        self.call("Input.insertText", json!({"text": text}))
            .unwrap_or_else(|e| panic!("typing into {selector}: {e}"));
    }

    /// Types `text` over the whole text of the field matching `selector` (focused, all
    /// selected, then typed).
    pub fn type_over(&self, selector: &str, text: &str) {
        self.eval(&format!(
            "{{ const f = document.querySelector({}); f.focus(); f.select(); true }}",
            json!(selector)
        ));
        self.call("Input.insertText", json!({"text": text}))
            .unwrap_or_else(|e| panic!("typing over {selector}: {e}"));
    }

    /// Presses Enter in the focused element.
    pub fn press_enter(&self) {
        for kind in ["keyDown", "keyUp"] {
            let mut event = json!({"type": kind, "key": "Enter", "code": "Enter",
                                   "windowsVirtualKeyCode": 13});
            if kind == "keyDown" {
                event["text"] = "\r".into();
            }
            self.call("Input.dispatchKeyEvent", event).unwrap_or_else(|e| panic!("Enter: {e}"));
        }
    }

    /// Brings the page's tab to the front, as a person clicking it does. Only the front tab
    /// gets CDP's input events, so a test that works in several panels brings each forward
    /// before it clicks or types there.
    pub fn bring_to_front(&self) {
        self.call("Page.bringToFront", json!({}))
            .unwrap_or_else(|e| panic!("bringing {} to the front: {e}", self.target_id));
    }

    /// Closes the page, as a person closes a tab or the side panel.
    pub fn close(self) {
        let _ = self.call("Page.close", json!({}));
    }

    /// Saves a PNG of the viewport.
    pub fn screenshot(&self, path: &Path) {
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .unwrap_or_else(|e| panic!("screenshot: {e}"));
        let bytes = BASE64
            .decode(shot["data"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("screenshot payload: {e}"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok();
        }
        std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
