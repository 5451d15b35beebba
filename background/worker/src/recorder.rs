//! Recording the panel's tab (seed 004 §Record): the shell. It installs
//! `content-script/recorder.js` beside the page agent, stores each event the moment it
//! arrives, keeps the screenshots the steps need, and folds the events into steps at Stop
//! with the engine's `workflow::recording::fold_events`, which decides what a step is.
//!
//! Page events reach the worker through a CDP binding (`Runtime.bindingCalled`); each also
//! stays in the page's `pending` list until stored, so what happened while Chrome had
//! stopped the worker is read when it starts again ([`Recorder::restore`]).
//!
//! Screenshots: one at the start, then one each time the page has settled after events. An
//! event gets the latest screenshot whose capture had finished before the page saw it, so a
//! step's screenshot never shows its own action's effect; it may be older than the moment
//! right before the action when the person acts faster than the page settles.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use agent_engine::actions::{Hands, Tabs, WaitLimits};
use agent_engine::cdp::Activity;
use agent_engine::firewall::Firewall;
use agent_engine::jobs::{Job, JobKind, JobStatus};
use agent_engine::observe::ObserveOptions;
use agent_engine::page_agent;
use agent_engine::run::iso8601;
use agent_engine::screenshot;
use agent_engine::workflow::recording::{RawEvent, RawInput, Recording, fold_events};
use base64::Engine;
use protocol::jobs::JobSummary;
use protocol::recording::{RecordingNote, RecordingStatus};
use protocol::{TabId, WorkerEvent};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

use crate::Worker;
use crate::chrome::{self, ChromeTabs, PerformanceClock, to_js};
use crate::recording_store::{EventRow, RECORDING, RecordingRow, RecordingStore, STOPPED};
use crate::signal::{Notify, within};

/// The recorder's source, installed into the page agent's world.
const SOURCE: &str = page_agent::RECORDER_SOURCE;
/// The page calls this global (in the page agent's world only) to report an event.
const BINDING: &str = "alphascoutRecord";
const QUALITY: u8 = 70;
/// How long a screenshot may take before the recording goes on without it.
const CAPTURE_MS: f64 = 4000.0;

#[derive(Default)]
pub struct Recorder {
    active: RefCell<Option<Active>>,
    /// The last recording stopped since the worker started, for the panel's "saved" line.
    last: RefCell<Option<RecordingStatus>>,
    inbox: RefCell<VecDeque<Incoming>>,
    draining: Cell<bool>,
    /// Start-up has looked for an unfinished recording to pick up.
    restored: Cell<bool>,
    /// Told when start-up has looked, and when a drain ends.
    changed: Notify,
    store: RefCell<Option<Rc<RecordingStore>>>,
}

struct Active {
    id: String,
    tab: TabId,
    started_at: String,
    next_seq: u32,
    /// (epoch ms when the capture finished, SHA-256), oldest first.
    shots: Vec<(f64, String)>,
    /// The page state text at each screenshot, by its key (for models without vision).
    states: HashMap<String, String>,
    offer_open: bool,
    error: Option<String>,
    /// Page names of the events stored, so one delivered twice is stored once.
    seen: HashSet<String>,
    /// The main frame asked to navigate (a link, a form, a script) since its last document.
    nav_requested: bool,
    notes: u32,
    script: Option<String>,
    needs_shot: bool,
}

enum Incoming {
    /// An event as the page (or the navigation watch) reported it, as JSON.
    Page(Value),
    Note(RecordingNote),
    /// The person made another tab the active one.
    Switch {
        to: TabId,
        url: String,
        title: String,
    },
}

impl Recorder {
    pub fn status(&self) -> Option<RecordingStatus> {
        match self.active.borrow().as_ref() {
            Some(a) => Some(RecordingStatus {
                recording_id: a.id.clone(),
                tab_id: a.tab,
                started_at: a.started_at.clone(),
                events: a.next_seq,
                screenshots: a.shots.len() as u32,
                settled: !self.draining.get() && self.inbox.borrow().is_empty() && !a.needs_shot,
                offer_open: a.offer_open,
                steps: None,
                error: a.error.clone(),
                name: String::new(),
            }),
            None => self.last.borrow().clone(),
        }
    }

    /// The recorded tab must stay attached while the panel is closed.
    pub fn holds_tab(&self) -> bool {
        self.active.borrow().is_some()
    }

    pub fn answer(&self, id: Option<u32>) -> WorkerEvent {
        WorkerEvent::Recording { id, status: self.status() }
    }

    /// Tells every page, and the job table, where the recording stands.
    fn broadcast(&self, worker: &Rc<Worker>) {
        worker.ports.broadcast(&self.answer(None));
        if let Some(status) = self.status() {
            let live = self.active.borrow().is_some();
            let state = if live { JobStatus::Running } else { JobStatus::Done };
            let id = status.recording_id.clone();
            let summary = JobSummary {
                why: status.error.clone(),
                step: status.steps.unwrap_or(status.events),
                ..JobSummary::new(id, JobKind::Recording, Some(status.tab_id), "Recording", state)
            };
            worker.jobs.put(worker, summary, None);
        }
    }

    async fn store(&self, worker: &Worker) -> Result<Rc<RecordingStore>, String> {
        if let Some(store) = self.store.borrow().clone() {
            return Ok(store);
        }
        let store = Rc::new(RecordingStore::new(&*worker.tasks.store().await?));
        *self.store.borrow_mut() = Some(store.clone());
        Ok(store)
    }

    /// Requests wait for start-up to have picked up an unfinished recording (bounded: 10 s).
    async fn restored(&self) {
        within(10_000.0, self.changed.until(|| self.restored.get())).await;
    }

    /// Waits until what already arrived is stored (bounded: 10 s).
    async fn drained(&self) {
        let idle = || !self.draining.get() && self.inbox.borrow().is_empty();
        within(10_000.0, self.changed.until(idle)).await;
    }

    pub async fn start(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        tab: TabId,
    ) -> Result<WorkerEvent, String> {
        self.restored().await;
        if let Some(a) = self.active.borrow().as_ref() {
            return Err(format!("Already recording tab {}: stop that recording first.", a.tab));
        }
        // Recordings count against no limit, but share no tab with an agent's job.
        worker.jobs.admit_unlimited(&Job::new("new recording", JobKind::Recording, Some(tab)))?;
        let store = self.store(worker).await?;
        let script = install(worker, tab).await.map_err(|e| e.to_string())?;
        let page = page_agent::evaluate(&worker.sessions, tab, "alphascout.describe()")
            .await
            .unwrap_or_default();
        let text = |key: &str| page[key].as_str().unwrap_or_default().to_owned();
        let (url, title) = (text("url"), text("title"));
        let started = js_sys::Date::now();
        let (shot, error) = match capture(worker, tab, &store).await {
            Ok(shot) => (Some(shot), None),
            Err(error) => (None, Some(format!("No start screenshot: {error}"))),
        };
        let mut states = HashMap::new();
        if let (Some((_, key)), Some(text)) = (&shot, page_text(worker, tab).await) {
            states.insert(key.clone(), text);
        }
        let recording = Recording {
            id: format!("rec-{}", chrome::random_uuid()),
            name: if title.trim().is_empty() { url.clone() } else { title },
            created_at: iso8601(started),
            start_url: url,
            start_screenshot: shot.as_ref().map(|s| s.1.clone()),
            end_screenshot: None,
            end_page_state: None,
            steps: Vec::new(),
        };
        let row = RecordingRow { recording, status: RECORDING.into(), tab_id: tab, named: false };
        store.put_recording(&row).await?;
        *self.last.borrow_mut() = None;
        *self.active.borrow_mut() = Some(Active {
            id: row.recording.id.clone(),
            tab,
            started_at: row.recording.created_at.clone(),
            next_seq: 0,
            shots: shot.into_iter().collect(),
            states,
            offer_open: false,
            error,
            seen: HashSet::new(),
            nav_requested: false,
            notes: 0,
            script,
            needs_shot: false,
        });
        self.broadcast(worker);
        Ok(self.answer(Some(id)))
    }

    pub async fn stop(&self, worker: &Rc<Worker>, id: u32) -> Result<WorkerEvent, String> {
        self.restored().await;
        // Let what already arrived be stored first.
        self.drained().await;
        let Some(active) = self.active.borrow_mut().take() else {
            return Err("Nothing is being recorded.".into());
        };
        self.inbox.borrow_mut().clear();
        let store = self.store(worker).await?;
        let tab = active.tab;
        let end = capture(worker, tab, &store).await.ok().map(|(_, key)| key);
        let end_page_state = page_text(worker, tab).await;
        uninstall(worker, tab, active.script.as_deref()).await;
        let events: Vec<RawEvent> =
            store.events(&active.id).await?.into_iter().map(|row| row.event).collect();
        let mut row = store
            .recording(&active.id)
            .await?
            .ok_or_else(|| format!("Recording {} is no longer stored.", active.id))?;
        row.recording.steps = fold_events(&events);
        row.recording.end_screenshot = end;
        row.recording.end_page_state = end_page_state;
        row.status = STOPPED.into();
        store.put_recording(&row).await?;
        *self.last.borrow_mut() = Some(RecordingStatus {
            recording_id: active.id,
            tab_id: tab,
            started_at: active.started_at,
            events: active.next_seq,
            screenshots: active.shots.len() as u32,
            settled: true,
            offer_open: false,
            steps: Some(row.recording.steps.len() as u32),
            error: active.error,
            name: row.recording.name.clone(),
        });
        self.broadcast(worker);
        Ok(self.answer(Some(id)))
    }

    /// Names a stopped recording. `by_person`: a person chose it, so a reflection keeps it;
    /// otherwise (the reflection's own name for the task) only an unnamed one takes it.
    pub async fn name(
        &self,
        worker: &Worker,
        recording_id: &str,
        name: &str,
        by_person: bool,
    ) -> Result<(), String> {
        let name = protocol::recording::recording_name(name)?;
        let store = self.store(worker).await?;
        let mut row = store
            .recording(recording_id)
            .await?
            .ok_or_else(|| format!("Recording {recording_id} is no longer stored."))?;
        if row.status != STOPPED {
            return Err("Stop the recording before naming it.".into());
        }
        if !by_person && row.named {
            return Ok(());
        }
        row.recording.name = name.clone();
        row.named |= by_person;
        store.put_recording(&row).await?;
        let renamed = match self.last.borrow_mut().as_mut() {
            Some(last) if last.recording_id == recording_id => {
                last.name = name;
                true
            }
            _ => false,
        };
        if renamed {
            worker.ports.broadcast(&self.answer(None));
        }
        Ok(())
    }

    pub async fn note(
        &self,
        worker: &Rc<Worker>,
        id: u32,
        note: RecordingNote,
    ) -> Result<WorkerEvent, String> {
        self.restored().await;
        if self.active.borrow().is_none() {
            return Err("Nothing is being recorded.".into());
        }
        if let RecordingNote::Extract { query, .. } = &note
            && query.trim().is_empty()
        {
            return Err("Say what to extract.".into());
        }
        self.inbox.borrow_mut().push_back(Incoming::Note(note));
        self.drain(worker).await;
        // Another drain may hold it: wait until it is handled.
        self.drained().await;
        Ok(self.answer(Some(id)))
    }

    /// A CDP event from a tab (the shell forwards those in `WATCHED_EVENTS`).
    pub fn on_event(worker: &Rc<Worker>, tab: TabId, method: &str, params: &Value) {
        let recorder = &worker.recorder;
        let incoming = {
            let mut active = recorder.active.borrow_mut();
            let Some(a) = active.as_mut().filter(|a| a.tab == tab) else { return };
            let main = params.pointer("/frame/parentId").is_none();
            match method {
                "Runtime.bindingCalled" if params["name"] == BINDING => {
                    let payload = params["payload"].as_str().unwrap_or_default();
                    match serde_json::from_str::<Value>(payload) {
                        Ok(event) => Incoming::Page(event),
                        Err(_) => return,
                    }
                }
                "Page.frameRequestedNavigation"
                    if worker.sessions.activity(tab).and_then(|a| a.main_frame).as_deref()
                        == params["frameId"].as_str() =>
                {
                    a.nav_requested = true;
                    return;
                }
                "Page.frameNavigated" if main => {
                    let url = params.pointer("/frame/url").and_then(Value::as_str);
                    let url = url.unwrap_or_default().to_owned();
                    // Started by the page (a link, a form, a script): an effect, not a step.
                    let typed = std::mem::take(&mut a.nav_requested).then_some(false);
                    a.notes += 1;
                    Incoming::Page(json!({
                        "kind": "navigate", "to": url, "typed": typed, "url": url, "title": "",
                        "uid": format!("navigation:{}", a.notes), "atMs": js_sys::Date::now(),
                    }))
                }
                _ => return,
            }
        };
        recorder.inbox.borrow_mut().push_back(incoming);
        let worker = worker.clone();
        wasm_bindgen_futures::spawn_local(async move { worker.recorder.drain(&worker).await });
    }

    /// Chrome detached from a tab: a recording of it can no longer see it.
    pub fn on_detach(worker: &Rc<Worker>, tab: TabId, why: String) {
        if let Some(a) = worker.recorder.active.borrow_mut().as_mut().filter(|a| a.tab == tab) {
            a.error = Some(why);
        } else {
            return;
        }
        worker.recorder.broadcast(worker);
    }

    /// Handles what arrived, one at a time, then screenshots the settled page.
    async fn drain(&self, worker: &Rc<Worker>) {
        if self.draining.replace(true) {
            return;
        }
        loop {
            let next = self.inbox.borrow_mut().pop_front();
            match next {
                Some(incoming) => {
                    if let Err(error) = self.handle(worker, incoming).await {
                        chrome::log(&format!("recording: {error}"));
                        if let Some(a) = self.active.borrow_mut().as_mut() {
                            a.error = Some(error);
                        }
                        self.broadcast(worker);
                    }
                }
                None => {
                    let due = self.active.borrow_mut().as_mut().map(|a| {
                        let due = a.needs_shot && !a.offer_open;
                        a.needs_shot = false;
                        (due, a.tab)
                    });
                    let Some((true, tab)) = due else { break };
                    settle(worker, tab).await;
                    if !self.inbox.borrow().is_empty() {
                        // More happened meanwhile: handle it first, then screenshot.
                        if let Some(a) = self.active.borrow_mut().as_mut() {
                            a.needs_shot = true;
                        }
                        continue;
                    }
                    let shot = match self.store(worker).await {
                        Ok(store) => capture(worker, tab, &store).await,
                        Err(error) => Err(error),
                    };
                    let text = match shot {
                        Ok(_) => page_text(worker, tab).await,
                        Err(_) => None,
                    };
                    if let Some(a) = self.active.borrow_mut().as_mut() {
                        match shot {
                            Ok(shot) => {
                                if let Some(text) = text {
                                    a.states.insert(shot.1.clone(), text);
                                }
                                a.shots.push(shot);
                            }
                            Err(error) => a.error = Some(format!("No screenshot: {error}")),
                        }
                    }
                }
            }
        }
        self.draining.set(false);
        self.changed.notify();
        self.broadcast(worker);
    }

    async fn handle(&self, worker: &Rc<Worker>, incoming: Incoming) -> Result<(), String> {
        let Some(tab) = self.active.borrow().as_ref().map(|a| a.tab) else { return Ok(()) };
        let mut event = match incoming {
            Incoming::Page(event) => event,
            Incoming::Switch { to, url, title } => {
                let n = self.active.borrow_mut().as_mut().map_or(0, |a| {
                    a.notes += 1;
                    a.notes
                });
                json!({"kind": "tab_switch", "to_tab": to, "uid": format!("tab:{n}"),
                       "atMs": js_sys::Date::now(), "url": url, "title": title})
            }
            Incoming::Note(note) => match self.note_event(worker, tab, note).await? {
                Some(event) => event,
                None => return Ok(()),
            },
        };
        let uid = event["uid"].as_str().unwrap_or_default().to_owned();
        let kind = event["kind"].as_str().unwrap_or_default().to_owned();
        let kept = {
            let mut active = self.active.borrow_mut();
            let Some(a) = active.as_mut() else { return Ok(()) };
            if kind == "offer" {
                a.offer_open = true;
            }
            // While the Ctrl+I offer is open the page is not recorded.
            let ignored = !captured(&kind, a.offer_open) || !a.seen.insert(uid.clone());
            if ignored {
                None
            } else {
                let at = event["atMs"].as_f64().unwrap_or_else(js_sys::Date::now);
                let shot = match event.get("screenshot").and_then(Value::as_str) {
                    Some(own) => own.to_owned(),
                    None => screenshot_before(&a.shots, at).unwrap_or_default().to_owned(),
                };
                let seq = a.next_seq;
                a.next_seq += 1;
                a.needs_shot = true;
                let text = a.states.get(&shot).cloned();
                Some((a.id.clone(), seq, shot, text))
            }
        };
        let Some((recording_id, seq, shot, page_state)) = kept else {
            acknowledge(worker, tab, &uid).await;
            self.broadcast(worker);
            return Ok(());
        };
        event["tabId"] = tab.into();
        if !shot.is_empty() {
            event["screenshot"] = shot.into();
        }
        if let Some(text) = page_state {
            event["pageState"] = text.into();
        }
        let raw: RawEvent = serde_json::from_value(event)
            .map_err(|error| format!("The page reported an event that cannot be read: {error}"))?;
        let store = self.store(worker).await?;
        let switch = match raw.input {
            RawInput::TabSwitch { to_tab } => Some(to_tab),
            _ => None,
        };
        store.put_event(&EventRow { recording_id, seq, uid: uid.clone(), event: raw }).await?;
        match switch {
            Some(to) => self.follow(worker, tab, to).await?,
            None => acknowledge(worker, tab, &uid).await,
        }
        self.broadcast(worker);
        Ok(())
    }

    /// Records in tab `to` from now on (a tab switch): the recorder leaves the old tab.
    async fn follow(&self, worker: &Rc<Worker>, from: TabId, to: TabId) -> Result<(), String> {
        let script = self.active.borrow_mut().as_mut().and_then(|a| {
            a.tab = to;
            a.nav_requested = false;
            a.needs_shot = true;
            a.script.take()
        });
        uninstall(worker, from, script.as_deref()).await;
        let script = install(worker, to)
            .await
            .map_err(|error| format!("Could not record in the tab switched to: {error}"))?;
        let Some(id) = self.active.borrow_mut().as_mut().map(|a| {
            a.script = script;
            a.id.clone()
        }) else {
            return Ok(());
        };
        // A restart picks the recording up in the tab it is in now.
        let store = self.store(worker).await?;
        if let Some(mut row) = store.recording(&id).await? {
            row.tab_id = to;
            store.put_recording(&row).await?;
        }
        Ok(())
    }

    /// Chrome says a tab became the active one: a recording follows the person there, unless
    /// it is no web page (an extension page such as this panel, a `chrome://` page).
    pub async fn on_tab_activated(worker: &Rc<Worker>, tab: TabId) {
        let recorder = &worker.recorder;
        if recorder.active.borrow().as_ref().is_none_or(|a| a.tab == tab) {
            return;
        }
        let Ok(tabs) = ChromeTabs.list().await else { return };
        let Some(info) = tabs.into_iter().find(|t| t.id == tab) else { return };
        let switch = Incoming::Switch { to: tab, url: info.url, title: info.title };
        recorder.inbox.borrow_mut().push_back(switch);
        recorder.drain(worker).await;
    }

    /// The event a Ctrl+I choice makes, if any; every choice closes the offer.
    async fn note_event(
        &self,
        worker: &Rc<Worker>,
        tab: TabId,
        note: RecordingNote,
    ) -> Result<Option<Value>, String> {
        let n = {
            let mut active = self.active.borrow_mut();
            let Some(a) = active.as_mut() else { return Ok(None) };
            a.offer_open = matches!(note, RecordingNote::Open);
            a.notes += 1;
            a.notes
        };
        let mut event = match note {
            RecordingNote::Open | RecordingNote::Cancel => {
                self.broadcast(worker);
                return Ok(None);
            }
            RecordingNote::Extract { query, candidates } => {
                // The screen as it is while the person asks: what to read the value off.
                let store = self.store(worker).await?;
                let shot = capture(worker, tab, &store).await.ok();
                let text = page_text(worker, tab).await;
                if let (Some(shot), Some(a)) = (&shot, self.active.borrow_mut().as_mut()) {
                    if let Some(text) = text {
                        a.states.insert(shot.1.clone(), text);
                    }
                    a.shots.push(shot.clone());
                }
                let shot = shot.map(|(_, key)| key);
                json!({"kind": "extract", "query": query.trim(), "candidates": candidates,
                       "screenshot": shot})
            }
            RecordingNote::Details { text } => json!({"kind": "details", "text": text.trim()}),
        };
        let page = page_agent::evaluate(&worker.sessions, tab, "alphascout.describe()")
            .await
            .unwrap_or_default();
        event["uid"] = format!("note:{n}").into();
        event["atMs"] = js_sys::Date::now().into();
        event["url"] = page["url"].as_str().unwrap_or_default().into();
        event["title"] = page["title"].as_str().unwrap_or_default().into();
        if event["screenshot"].is_null() {
            event.as_object_mut().map(|o| o.remove("screenshot"));
        }
        Ok(Some(event))
    }

    /// After (re)start: a recording stored as under way is picked up again, with what the
    /// page kept while the worker was stopped.
    pub async fn restore(worker: Rc<Worker>) {
        let recorder = &worker.recorder;
        if let Err(error) = recorder.pick_up(&worker).await {
            chrome::log(&format!("could not pick up the recording: {error}"));
        }
        recorder.restored.set(true);
        recorder.changed.notify();
        recorder.broadcast(&worker);
        recorder.drain(&worker).await;
    }

    async fn pick_up(&self, worker: &Rc<Worker>) -> Result<(), String> {
        let store = self.store(worker).await?;
        let Some(row) = store.recordings().await?.into_iter().rev().find(|r| r.status == RECORDING)
        else {
            return Ok(());
        };
        let events = store.events(&row.recording.id).await?;
        let mut shots: Vec<(f64, String)> =
            row.recording.start_screenshot.iter().map(|key| (0.0, key.clone())).collect();
        if let Some(key) = events.iter().rev().find_map(|e| e.event.moment.screenshot.clone()) {
            shots.push((0.0, key));
        }
        let tab = row.tab_id;
        *self.active.borrow_mut() = Some(Active {
            id: row.recording.id.clone(),
            tab,
            started_at: row.recording.created_at.clone(),
            next_seq: events.last().map_or(0, |e| e.seq + 1),
            shots,
            states: HashMap::new(),
            offer_open: false,
            error: None,
            seen: events.iter().map(|e| e.uid.clone()).collect(),
            nav_requested: false,
            notes: events.len() as u32,
            script: None,
            needs_shot: true,
        });
        match install(worker, tab).await {
            Ok(script) => {
                if let Some(a) = self.active.borrow_mut().as_mut() {
                    a.script = script;
                }
                // What the page kept while no worker listened.
                let pending = "globalThis.alphascoutRecorder?.pending() ?? []";
                if let Ok(Value::Array(events)) =
                    page_agent::evaluate(&worker.sessions, tab, pending).await
                {
                    self.inbox.borrow_mut().extend(events.into_iter().map(Incoming::Page));
                }
            }
            Err(error) => {
                if let Some(a) = self.active.borrow_mut().as_mut() {
                    a.error = Some(format!("Could not watch the tab again: {error}"));
                }
            }
        }
        Ok(())
    }
}

/// Whether a reported event is kept: not the Ctrl+I request itself, and nothing from the page
/// while the offer is open (its own Extract and Details excepted).
fn captured(kind: &str, offer_open: bool) -> bool {
    kind != "offer" && (!offer_open || matches!(kind, "extract" | "details"))
}

/// The screenshot of an event the page saw at `at_ms`: the latest one whose capture had
/// finished by then (so it cannot show the event's own effect), else the first.
fn screenshot_before(shots: &[(f64, String)], at_ms: f64) -> Option<&str> {
    shots.iter().rev().find(|(taken, _)| *taken <= at_ms).or(shots.first()).map(|(_, k)| k.as_str())
}

/// Makes the page report to us: the binding, the recorder in every new document of the tab,
/// and in the current one. Returns the new-document script's identifier.
async fn install(
    worker: &Worker,
    tab: TabId,
) -> Result<Option<String>, agent_engine::cdp::CdpError> {
    let sessions = &worker.sessions;
    // Bindings are exposed to new contexts only while the runtime domain is on.
    sessions.send(tab, "Runtime.enable", json!({})).await?;
    let binding = json!({"name": BINDING, "executionContextName": page_agent::WORLD_NAME});
    sessions.send(tab, "Runtime.addBinding", binding).await?;
    let source = format!("{}\n{}", page_agent::SOURCE, SOURCE);
    let added = sessions
        .send(
            tab,
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": source, "worldName": page_agent::WORLD_NAME}),
        )
        .await?;
    page_agent::evaluate(sessions, tab, SOURCE).await?;
    Ok(added["identifier"].as_str().map(str::to_owned))
}

async fn uninstall(worker: &Worker, tab: TabId, script: Option<&str>) {
    let sessions = &worker.sessions;
    let _ = page_agent::evaluate(sessions, tab, "globalThis.alphascoutRecorder?.stop()").await;
    let _ = sessions.send(tab, "Runtime.removeBinding", json!({"name": BINDING})).await;
    if let Some(identifier) = script {
        let _ = sessions
            .send(
                tab,
                "Page.removeScriptToEvaluateOnNewDocument",
                json!({"identifier": identifier}),
            )
            .await;
    }
    let _ = sessions.send(tab, "Runtime.disable", json!({})).await;
}

/// The page state text as the agent would read it now, ids and all: a step's target names
/// its element by the same id (`stateId`).
async fn page_text(worker: &Worker, tab: TabId) -> Option<String> {
    let observed = worker
        .observer
        .observe(&worker.sessions, &PerformanceClock, &ChromeTabs, tab, ObserveOptions::default())
        .await;
    observed.ok().map(|o| o.text)
}

/// Tells the page the event is stored (it may have navigated meanwhile: then it is moot).
async fn acknowledge(worker: &Worker, tab: TabId, uid: &str) {
    let call = format!("globalThis.alphascoutRecorder?.ack([{}])", Value::from(uid));
    let _ = page_agent::evaluate(&worker.sessions, tab, &call).await;
}

/// Waits until a navigation has loaded and the DOM has been quiet for a moment, as the
/// agent's own actions wait (on events, each wait bounded).
async fn settle(worker: &Worker, tab: TabId) {
    let hands = Hands {
        sessions: &worker.sessions,
        clock: &PerformanceClock,
        tabs: &ChromeTabs,
        search_url: crate::tasks::SEARCH_URL,
        limits: WaitLimits::default(),
        // Settling navigates nowhere.
        firewall: &Firewall::default(),
    };
    hands.settle(tab, &Activity::default()).await;
}

/// A JPEG of the viewport stored by its SHA-256: (epoch ms once taken, key).
async fn capture(
    worker: &Worker,
    tab: TabId,
    store: &RecordingStore,
) -> Result<(f64, String), String> {
    let shot = screenshot::capture(&worker.sessions, tab, None, QUALITY);
    // Chrome draws no frames for a hidden tab, and a capture waits for one.
    let data = within(CAPTURE_MS, shot)
        .await
        .ok_or("the tab showed nothing to capture (is it hidden?)")?
        .map_err(|e| e.to_string())?;
    let taken = js_sys::Date::now();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|error| format!("the screenshot is not base64: {error}"))?;
    let key = run_contract::digest::sha256_hex(&bytes);
    store.put_screenshot(&key, &bytes).await?;
    Ok((taken, key))
}

/// `debug.recording`: a stored recording (the newest when `id` is absent), folded as Stop
/// would, with its raw events and JSONL.
pub async fn debug(worker: &Worker, id: Option<String>) -> JsValue {
    let read = async {
        let store = worker.recorder.store(worker).await?;
        let rows = store.recordings().await?;
        let row = match &id {
            Some(id) => rows.into_iter().find(|r| &r.recording.id == id),
            None => rows.into_iter().last(),
        }
        .ok_or("no such recording")?;
        let events = store.events(&row.recording.id).await?;
        let mut recording = row.recording.clone();
        if row.status == RECORDING {
            let raw: Vec<RawEvent> = events.iter().map(|e| e.event.clone()).collect();
            recording.steps = fold_events(&raw);
        }
        Ok::<_, String>(json!({
            "recording": recording,
            "status": row.status,
            "tabId": row.tab_id,
            "events": events,
            "jsonl": recording.to_jsonl(),
        }))
    };
    match read.await {
        Ok(answer) => to_js(&answer),
        Err(error) => to_js(&json!({"error": error})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_gets_the_latest_screenshot_finished_before_it() {
        let shots = [(100.0, "start".to_owned()), (200.0, "after-click".to_owned())];
        assert_eq!(screenshot_before(&shots, 150.0), Some("start"));
        assert_eq!(screenshot_before(&shots, 200.0), Some("after-click"));
        assert_eq!(screenshot_before(&shots, 999.0), Some("after-click"));
        // Reported before the first capture finished (a picked-up recording): the first.
        assert_eq!(screenshot_before(&shots, 50.0), Some("start"));
        assert_eq!(screenshot_before(&[], 50.0), None);
    }

    #[test]
    fn while_the_offer_is_open_only_its_own_choices_are_captured() {
        assert!(captured("click", false));
        assert!(!captured("offer", false), "Ctrl+I itself is no step");
        assert!(!captured("click", true));
        assert!(!captured("navigate", true));
        assert!(captured("extract", true));
        assert!(captured("details", true));
    }
}
