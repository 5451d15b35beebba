//! The end-to-end harness. A test reads like the user story it checks:
//!
//! ```no_run
//! let (_sites, mut browser, shop) = e2e::open_fixture("/shop/index.html");
//! let panel = browser.open_side_panel(&shop);
//! panel.click("[data-testid=read-title]");
//! panel.wait_for_text("[data-testid=page-title]", "Fixture Shop");
//! ```
//!
//! * [`browser`] launches headless Chromium with `dist/` loaded and drives pages over CDP
//!   with real input events.
//! * [`fixtures`] serves `tests/fixtures/` on two sites (127.0.0.1 and localhost), so
//!   cross-origin iframes are real out-of-process frames.
//! * [`llm`] is the scripted LLM server: OpenAI chat completions and Anthropic messages on
//!   the wire, answers from a per-test script, records every request.
//! * [`http`] is a tiny blocking HTTP client for talking to those servers from tests.
//! * [`tasks`] are fixture tasks solved by a model that reads only its prompt.
//! * [`mcp_host`] registers the MCP native host in a launch's profile.
//! * [`mcp_client`] is an MCP client of the official Python SDK, and a browser for it to drive.
//! * [`jobs`] runs several of them at once, each in its own tab and panel, with a model
//!   that takes its time.

pub mod agent;
pub mod annotation;
pub mod browser;
pub mod cdp;
pub mod fixtures;
pub mod http;
pub mod jobs;
pub mod llm;
pub mod mcp_client;
pub mod mcp_host;
pub mod python;
pub mod recording;
pub mod tasks;
pub mod workflows;

use std::path::PathBuf;

use browser::{Browser, Tab};
use fixtures::FixtureSites;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// The element of a page state (`debug.page_state`) whose accessible text is `text`.
pub fn listed<'a>(state: &'a serde_json::Value, text: &str) -> Option<&'a serde_json::Value> {
    state["elements"].as_array()?.iter().find(|e| e["text"] == text)
}

/// How most tests begin: the fixture sites served and Chromium launched with `dist/`. The
/// sites serve for as long as they are kept.
pub fn launch_with_fixtures() -> (FixtureSites, Browser) {
    (FixtureSites::serve(), Browser::launch())
}

/// [`launch_with_fixtures`], with a tab open on the fixture page `path`.
pub fn open_fixture(path: &str) -> (FixtureSites, Browser, Tab) {
    let (sites, mut browser) = launch_with_fixtures();
    let tab = browser.open_tab(&sites.url(path));
    (sites, browser, tab)
}

/// Page JavaScript, inside an async function, that opens the extension's database as `db`.
pub const OPEN_DB: &str = "const db = await new Promise((ok, fail) => { \
    const open = indexedDB.open('alphascout'); \
    open.onsuccess = () => ok(open.result); open.onerror = () => fail(open.error); });";

/// Page JavaScript resolving to every record of `store` in the extension's database, as
/// JSON: for an extension page or the worker's [`browser::Browser::eval_in_extension`].
pub fn all_records_js(store: &str) -> String {
    format!(
        r#"(async () => {{
            {OPEN_DB}
            const rows = await new Promise((ok, fail) => {{
                const request = db.transaction({store:?}).objectStore({store:?}).getAll();
                request.onsuccess = () => ok(request.result);
                request.onerror = () => fail(request.error);
            }});
            db.close();
            return JSON.parse(JSON.stringify(rows));
        }})()"#
    )
}
