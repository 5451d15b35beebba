//! The background service worker's Rust side.
//!
//! `extension/background.js` registers every `chrome.*` listener in the worker's first turn
//! (MV3 drops events that arrive before a listener exists), instantiates this module, calls
//! [`start`], then forwards each event to the `on_*` exports below. This crate only
//! translates between JS values and the engine; decisions live in `agent-engine`.

mod authoring;
mod capture;
mod chrome;
mod connection;
mod drafting;
mod jobs;
mod mcp_host;
mod new_tabs;
mod pipelines;
mod recorder;
mod recording_store;
mod requests;
mod signal;
mod store;
mod studio;
mod tasks;
mod workflow_store;
mod workflows;

use std::cell::{Cell, OnceCell};
use std::rc::Rc;

use agent_engine::cdp::{CdpError, Sessions};
// `crate::http`: the engine's Http over fetch, shared with the pipeline module.
use agent_engine::observe::Observer;
use engine_web::http;
use protocol::{TabId, WorkerEvent, WorkerTimings};
use wasm_bindgen::prelude::*;

use crate::chrome::{ChromeDebugger, Port};

/// State that lives as long as the worker does. Chrome may stop the worker at any idle
/// moment, so nothing here may be the only copy of something that must survive.
struct Worker {
    sessions: Sessions<ChromeDebugger>,
    observer: Observer,
    /// Pages connected over the port right now.
    ports: tasks::Ports,
    /// Every job (task, replay, reflection, pipeline run, recording) and the rules' table.
    jobs: jobs::JobTable,
    tasks: tasks::Tasks,
    requests: requests::Queue,
    /// Pipeline runs in flight and runs of unsaved versions (the Prompt Studio's).
    pipelines: pipelines::Pipelines,
    recorder: recorder::Recorder,
    workflows: workflows::Workflows,
    /// The native host that MCP clients reach AlphaScout through, while Settings allow it.
    mcp: mcp_host::McpHost,
    /// Tabs the agent's tabs open, held until guarded.
    new_tabs: new_tabs::NewTabs,
    listeners_registered_ms: f64,
    wasm_instantiate_ms: f64,
    ready_ms: Cell<f64>,
}

thread_local! {
    static WORKER: OnceCell<Rc<Worker>> = const { OnceCell::new() };
}

fn worker() -> Rc<Worker> {
    WORKER.with(|cell| cell.get().cloned()).expect("start() runs before any event is forwarded")
}

/// Called once by the bootstrap after instantiation, with its own start-up measurements.
#[wasm_bindgen]
pub fn start(listeners_registered_ms: f64, wasm_instantiate_ms: f64) {
    let state = Rc::new(Worker {
        sessions: Sessions::new(ChromeDebugger),
        observer: Observer::default(),
        ports: tasks::Ports::default(),
        jobs: jobs::JobTable::default(),
        tasks: tasks::Tasks::default(),
        requests: requests::Queue::default(),
        pipelines: pipelines::Pipelines::default(),
        recorder: recorder::Recorder::default(),
        workflows: workflows::Workflows::default(),
        mcp: mcp_host::McpHost::default(),
        new_tabs: new_tabs::NewTabs::default(),
        listeners_registered_ms,
        wasm_instantiate_ms,
        ready_ms: Cell::new(0.0),
    });
    WORKER.with(|cell| {
        let _ = cell.set(state.clone());
    });
    state.ready_ms.set(chrome::now_ms());
    wasm_bindgen_futures::spawn_local(recorder::Recorder::restore(state.clone()));
    wasm_bindgen_futures::spawn_local(async move {
        // A hold on new tabs left by the worker before this one: a job that resumes puts
        // its own in place.
        let _ = chrome::release_page_loads().await;
        tasks::Tasks::restore(state.clone()).await;
        workflows::Workflows::restore(state.clone()).await;
        // Jobs first: a client's call may name one.
        mcp_host::McpHost::start(state).await;
    });
}

/// Chrome created a tab; `opener` is the tab it was opened from, if any.
#[wasm_bindgen]
pub fn on_tab_created(tab_id: TabId, opener: Option<TabId>) {
    let worker = worker();
    wasm_bindgen_futures::spawn_local(async move {
        new_tabs::NewTabs::on_created(&worker, tab_id, opener).await;
    });
}

/// A tab's page load was blocked before it was requested (`net::ERR_BLOCKED_BY_CLIENT`).
#[wasm_bindgen]
pub fn on_page_load_blocked(tab_id: TabId, url: String) {
    let worker = worker();
    wasm_bindgen_futures::spawn_local(async move {
        new_tabs::NewTabs::on_blocked(&worker, tab_id, url).await;
    });
}

/// A page connected a port: greet it, and show it every task and replay (each panel picks
/// its own tab's: how a reopened panel picks up a running or paused task) and the jobs.
#[wasm_bindgen]
pub fn on_port_connect(port: Port) {
    let worker = worker();
    port.post(&WorkerEvent::Hello { version: env!("CARGO_PKG_VERSION").to_owned() });
    for event in worker.tasks.snapshots() {
        port.post(&event);
    }
    port.post(&worker.recorder.answer(None));
    for event in worker.workflows.events() {
        port.post(&event);
    }
    port.post(&worker.mcp.event());
    worker.ports.add(port.clone());
    wasm_bindgen_futures::spawn_local(async move { port.post(&worker.jobs.event(None).await) });
}

/// A page's port closed. When the last one goes, nobody is watching: let go of the tabs,
/// unless a job holds them (closing the panel does not stop the agent).
#[wasm_bindgen]
pub fn on_port_disconnect(port: Port) {
    let worker = worker();
    worker.ports.remove(&port);
    if worker.ports.count() == 0 && !worker.jobs.any_live() && !worker.recorder.holds_tab() {
        wasm_bindgen_futures::spawn_local(async move { worker.sessions.release_all().await });
    }
}

/// A message arrived on a page's port.
#[wasm_bindgen]
pub fn on_port_message(port: Port, message: JsValue) {
    requests::enqueue(worker(), port, message);
}

/// A message from the MCP native host (see `mcp_host`).
#[wasm_bindgen]
pub fn on_mcp_message(port: Port, message: JsValue) {
    mcp_host::McpHost::on_message(&worker(), port, message);
}

/// The MCP native host's port closed; `why` is Chrome's `runtime.lastError` message, or empty.
#[wasm_bindgen]
pub fn on_mcp_disconnect(port: Port, why: String) {
    mcp_host::McpHost::on_disconnect(&worker(), port, why);
}

/// A `chrome.runtime.sendMessage` request; the returned promise resolves to the answer.
#[wasm_bindgen]
pub async fn on_message(message: JsValue) -> JsValue {
    let worker = worker();
    requests::handle_debug_request(&worker, message).await
}

/// The CDP events the engine acts on; the bootstrap forwards only these.
#[wasm_bindgen]
pub fn watched_events() -> Vec<String> {
    agent_engine::cdp::WATCHED_EVENTS.iter().map(|e| (*e).to_owned()).collect()
}

/// A CDP event from a tab the engine is attached to, or from one of its cross-site frames
/// (`session`, the child session CDP gave it).
#[wasm_bindgen]
pub fn on_debugger_event(tab_id: TabId, session: Option<String>, method: String, params: JsValue) {
    let params: serde_json::Value = capture_db::decode(params).unwrap_or_default();
    if method == "Fetch.requestPaused" {
        // The request waits until it is answered: answer it now, off this callback.
        wasm_bindgen_futures::spawn_local(async move {
            worker().sessions.on_request_paused(tab_id, session.as_deref(), &params).await;
        });
        return;
    }
    if method == "Target.attachedToTarget" {
        // The frame waits, unable to request anything, until it is set up and let go.
        let params = params.clone();
        wasm_bindgen_futures::spawn_local(async move {
            worker().sessions.on_attached(tab_id, &params).await;
        });
    }
    let worker = worker();
    worker.sessions.on_event(tab_id, &method, &params, chrome::now_ms());
    recorder::Recorder::on_event(&worker, tab_id, &method, &params);
}

/// A tab became the active one in its window (a recording follows the person).
#[wasm_bindgen]
pub fn on_tab_activated(tab_id: TabId) {
    let worker = worker();
    wasm_bindgen_futures::spawn_local(async move {
        recorder::Recorder::on_tab_activated(&worker, tab_id).await;
    });
}

/// Chrome detached the debugger from a tab.
#[wasm_bindgen]
pub fn on_debugger_detach(tab_id: TabId, reason: String) {
    let worker = worker();
    worker.sessions.forget(tab_id);
    // Keep the tab's last page state otherwise: after re-attaching, ids must keep rising
    // rather than restart and name elements the model saw before.
    if reason == "target_closed" {
        worker.observer.forget(tab_id);
        worker.new_tabs.forget(tab_id);
    }
    let why = CdpError::from_detach_reason(&reason).to_string();
    chrome::log(&format!("detached from tab {tab_id}: {why}"));
    if reason == "target_closed" && worker.jobs.holds(tab_id) {
        // The jobs in a closed tab end, saying so; what they captured stays.
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move {
            worker.jobs.tab_closed(&worker, tab_id).await;
        });
        return;
    }
    recorder::Recorder::on_detach(&worker, tab_id, why);
}

impl Worker {
    fn timings(&self) -> WorkerTimings {
        WorkerTimings {
            listeners_registered_ms: self.listeners_registered_ms,
            wasm_instantiate_ms: self.wasm_instantiate_ms,
            ready_ms: self.ready_ms.get(),
            answered_ms: chrome::now_ms(),
        }
    }
}
