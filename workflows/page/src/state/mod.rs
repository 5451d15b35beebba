//! The page's state and its pure transitions. An [`Action`] changes the state and may queue
//! [`Effect`]s (IndexedDB reads and writes, worker requests, downloads), which the effect
//! layer carries out and answers with more actions. Nothing here touches the browser, so
//! every rule is tested natively (`tests.rs`).

mod editor;
mod replay_form;

use std::collections::BTreeMap;

use page_kit::RecordingName;
use protocol::TabId;
use protocol::workflow::WorkflowsEvent;
use protocol::workflow::WorkflowsRequest;
use protocol::workflow::{ReflectProgress, ReflectStage, ReplayControl, ReplayProgress};
use workflow_format::edit::Edit;
use workflow_format::schema::Workflow;

pub use editor::Editor;
pub use replay_form::{ReplayForm, TabChoice};

/// A recording as the list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingRow {
    pub id: String,
    pub name: String,
    pub created_at: String,
    /// `recording` while the recorder still runs, else `stopped`.
    pub status: String,
    pub steps: usize,
}

/// IO the reducer asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Read the recordings and every workflow version.
    Load,
    /// Send a request to the worker.
    Send(WorkflowsRequest),
    /// Tell the worker something in passing: nobody waits for the answer, and a worker
    /// that is not connected is not worth a notice.
    Tell(WorkflowsRequest),
    /// Store this workflow version (its `updatedAt` stamped at the moment of saving).
    Save(Workflow),
    /// Offer a file for download.
    Download { name: String, text: String },
    /// Read recording `id` and offer it as JSONL.
    ExportRecording(String),
    /// Start a replay: in `tab`, or in a new tab at `start_url` when `None`.
    StartReplay {
        id: u32,
        workflow_id: String,
        version: u32,
        tab: Option<TabId>,
        start_url: String,
        params: BTreeMap<String, String>,
        /// Recorded steps replayed without the model while the page matches them.
        fast_path: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Loaded {
        recordings: Vec<RecordingRow>,
        workflows: Vec<Workflow>,
    },
    /// Something the person must read (a failed read or write, a refused request).
    Notice(String),
    DismissNotice,
    Reflect(String),
    ExportRecording(String),
    /// Opens the name of recording `id` for editing.
    RenameRecording(String),
    RecordingName(String),
    SaveRecordingName,
    CancelRecordingName,
    Worker(WorkflowsEvent),
    /// Opens the latest version of a workflow in the editor.
    Open(String),
    Close,
    Edit(Edit),
    SetName(String),
    SetDescription(String),
    Save,
    Saved(Workflow),
    /// Saves version `n`'s content as the newest version.
    Rollback(u32),
    Export,
    Import(String),
    ReplayOpen,
    ReplayParam(String, String),
    ReplayTab(Option<TabId>),
    ReplayFastPath(bool),
    Tabs(Vec<TabChoice>),
    ReplayStart,
    ReplayCancelForm,
    ReplayControl(ReplayControl),
    /// Pause & Steer: steering for the running replay, or the answer that resumes a paused
    /// one.
    ReplayMessage(String),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Page {
    pub loaded: bool,
    pub recordings: Vec<RecordingRow>,
    /// Workflow id → its versions, oldest first.
    pub workflows: BTreeMap<String, Vec<Workflow>>,
    /// Recording id → the latest word on its reflection.
    pub reflections: BTreeMap<String, ReflectProgress>,
    pub editor: Option<Editor>,
    pub replay_form: Option<ReplayForm>,
    pub replay: Option<ReplayProgress>,
    pub tabs: Vec<TabChoice>,
    pub notice: Option<String>,
    /// The recording whose name is being edited.
    pub renaming: Option<RecordingName>,
    /// Queued effects, numbered; the effect layer runs each number once.
    pub effects: Vec<(u64, Effect)>,
    next_effect: u64,
    next_request: u32,
    /// Requests waiting for an answer: reflect requests by recording.
    reflect_asked: BTreeMap<u32, String>,
    /// A workflow to open once the list is read again (a reflection's or an import's).
    open_after_load: Option<String>,
    /// The tab the page was opened for (`?tabId=`, from the side panel): replays run there
    /// unless another is chosen.
    pub preferred_tab: Option<TabId>,
}

/// How many effects are kept after they ran (the layer remembers which it ran).
const EFFECTS_KEPT: usize = 64;

impl Page {
    /// A fresh page that reads what is stored; `tab` from `?tabId=`.
    pub fn new(tab: Option<TabId>) -> Page {
        let mut page = Page { next_request: 1, preferred_tab: tab, ..Page::default() };
        page.effect(Effect::Load);
        page
    }

    fn effect(&mut self, effect: Effect) {
        self.next_effect += 1;
        self.effects.push((self.next_effect, effect));
        if self.effects.len() > EFFECTS_KEPT {
            self.effects.remove(0);
        }
    }

    fn request(&mut self, make: impl FnOnce(u32) -> WorkflowsRequest) -> u32 {
        let id = self.next_request.max(1);
        self.next_request = id + 1;
        self.effect(Effect::Send(make(id)));
        id
    }

    /// The newest stored version of workflow `id`.
    pub fn latest(&self, id: &str) -> Option<&Workflow> {
        self.workflows.get(id).and_then(|versions| versions.last())
    }

    /// The number the next save of workflow `id` gets.
    fn next_version(&self, id: &str) -> u32 {
        self.latest(id).map_or(1, |w| w.version + 1)
    }

    pub fn apply(&mut self, action: Action) {
        match action {
            Action::Loaded { recordings, workflows } => {
                self.loaded = true;
                self.recordings = recordings;
                self.workflows.clear();
                for workflow in workflows {
                    self.workflows.entry(workflow.id.clone()).or_default().push(workflow);
                }
                for versions in self.workflows.values_mut() {
                    lean::sort_by_key(versions, |w| w.version);
                }
                if let Some(id) = self.open_after_load.take() {
                    // Unsaved edits are never replaced by a workflow that just arrived.
                    if self.editor.as_ref().is_some_and(|e| e.dirty() && e.draft.id != id) {
                        let name = self.latest(&id).map_or(id.clone(), |w| w.name.clone());
                        self.notice = Some(format!(
                            "{name} is ready in the list; save or close your edits to open it."
                        ));
                    } else {
                        self.apply(Action::Open(id));
                    }
                }
            }
            Action::Notice(message) => self.notice = Some(message),
            Action::DismissNotice => self.notice = None,
            Action::Reflect(recording_id) => {
                let asked = recording_id.clone();
                let id = self.request(|id| WorkflowsRequest::ReflectRecording { id, recording_id });
                self.reflect_asked.insert(id, asked.clone());
                self.reflections.insert(
                    asked.clone(),
                    ReflectProgress {
                        recording_id: asked,
                        stage: ReflectStage::Step { step: 0, of: 0 },
                    },
                );
            }
            Action::ExportRecording(id) => self.effect(Effect::ExportRecording(id)),
            Action::RenameRecording(recording_id) => {
                let Some(row) = self.recordings.iter().find(|r| r.id == recording_id) else {
                    return;
                };
                let text = row.name.clone();
                self.renaming = Some(RecordingName::new(recording_id, text));
            }
            Action::RecordingName(text) => {
                if let Some(renaming) = &mut self.renaming {
                    renaming.edit(text);
                }
            }
            Action::SaveRecordingName => {
                let Some(renaming) = self.renaming.as_mut() else { return };
                let Some((recording_id, name)) = renaming.to_save() else { return };
                let id =
                    self.request(|id| WorkflowsRequest::NameRecording { id, recording_id, name });
                self.renaming.as_mut().expect("checked").sending(id);
            }
            Action::CancelRecordingName => self.renaming = None,
            Action::Worker(event) => self.on_worker(event),
            Action::Open(id) => match self.latest(&id) {
                Some(latest) => {
                    self.editor = Some(Editor::open(latest.clone()));
                    self.replay_form = None;
                }
                None => self.notice = Some(format!("There is no workflow {id:?}.")),
            },
            Action::Close => {
                self.editor = None;
                self.replay_form = None;
            }
            Action::Edit(edit) => {
                if let Some(editor) = &mut self.editor {
                    editor.edit(&edit);
                }
            }
            Action::SetName(name) => {
                if let Some(editor) = &mut self.editor {
                    editor.change(|w| w.name = name);
                }
            }
            Action::SetDescription(text) => {
                if let Some(editor) = &mut self.editor {
                    editor.change(|w| w.description = text);
                }
            }
            Action::Save => {
                let Some(editor) = &self.editor else { return };
                if !editor.can_save() {
                    return;
                }
                let version = self.next_version(&editor.draft.id);
                let workflow = Workflow { version, ..editor.draft.clone() };
                self.effect(Effect::Save(workflow));
            }
            Action::Saved(workflow) => {
                // The worker cannot see the store change; MCP clients list it as a tool.
                let workflow_id = workflow.id.clone();
                self.effect(Effect::Tell(WorkflowsRequest::WorkflowSaved { id: 0, workflow_id }));
                let versions = self.workflows.entry(workflow.id.clone()).or_default();
                versions.retain(|w| w.version != workflow.version);
                versions.push(workflow.clone());
                lean::sort_by_key(versions, |w| w.version);
                let open = self.editor.as_ref().is_some_and(|e| e.draft.id == workflow.id);
                if open || self.open_after_load.as_deref() == Some(workflow.id.as_str()) {
                    self.open_after_load = None;
                    self.editor = Some(Editor::open(workflow));
                }
            }
            Action::Rollback(version) => {
                let Some(editor) = &self.editor else { return };
                let id = editor.draft.id.clone();
                let old =
                    self.workflows.get(&id).and_then(|v| v.iter().find(|w| w.version == version));
                match old {
                    Some(old) => {
                        let workflow = Workflow { version: self.next_version(&id), ..old.clone() };
                        self.effect(Effect::Save(workflow));
                    }
                    None => self.notice = Some(format!("There is no version {version}.")),
                }
            }
            Action::Export => {
                if let Some(editor) = &self.editor {
                    let saved = self.latest(&editor.draft.id).unwrap_or(&editor.draft);
                    let name =
                        format!("{}.v{}.workflow.json", file_stem(&saved.name), saved.version);
                    self.effect(Effect::Download { name, text: saved.to_export() });
                }
            }
            Action::Import(text) => match Workflow::import(&text) {
                Ok((workflow, _problems)) => {
                    // A new version of a workflow this browser has, or version 1 of a new
                    // one; its problems show once it is open.
                    let workflow =
                        Workflow { version: self.next_version(&workflow.id), ..workflow };
                    self.open_after_load = Some(workflow.id.clone());
                    self.effect(Effect::Save(workflow));
                }
                Err(problems) => {
                    let list: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
                    self.notice = Some(format!("The file was not imported: {}", list.join("; ")));
                }
            },
            Action::ReplayOpen => {
                let Some(editor) = &self.editor else { return };
                match self.latest(&editor.draft.id) {
                    Some(saved) => {
                        let mut form = ReplayForm::for_workflow(saved);
                        form.tab = self.preferred_tab;
                        self.replay_form = Some(form);
                        self.request(|id| WorkflowsRequest::ListTabs { id });
                    }
                    None => self.notice = Some("Save the workflow before replaying it.".into()),
                }
            }
            Action::ReplayParam(name, value) => {
                if let Some(form) = &mut self.replay_form {
                    form.set(&name, value);
                }
            }
            Action::ReplayFastPath(on) => {
                if let Some(form) = &mut self.replay_form {
                    form.fast_path = on;
                }
            }
            Action::ReplayTab(tab) => {
                if let Some(form) = &mut self.replay_form {
                    form.tab = tab;
                }
            }
            Action::Tabs(tabs) => self.tabs = tabs,
            Action::ReplayStart => {
                let Some(form) = self.replay_form.clone() else { return };
                if let Some(problem) = form.problem() {
                    self.notice = Some(problem);
                    return;
                }
                let id = self.next_request.max(1);
                self.next_request = id + 1;
                self.effect(Effect::StartReplay {
                    id,
                    workflow_id: form.workflow_id.clone(),
                    version: form.version,
                    tab: form.tab,
                    start_url: form.start_url.clone(),
                    params: form.values(),
                    fast_path: form.fast_path,
                });
                self.replay_form = None;
            }
            Action::ReplayCancelForm => self.replay_form = None,
            Action::ReplayControl(action) => {
                if let Some(run_id) = self.replay.as_ref().map(|r| r.run_id.clone()) {
                    self.request(|id| WorkflowsRequest::ReplayControl { id, run_id, action });
                }
            }
            Action::ReplayMessage(text) => {
                let live = self.replay.as_ref().filter(|r| r.is_live());
                let text = text.trim().to_owned();
                if let Some(run_id) = live.map(|r| r.run_id.clone())
                    && !text.is_empty()
                {
                    self.request(|id| WorkflowsRequest::ReplayMessage { id, run_id, text });
                }
            }
        }
    }

    fn on_worker(&mut self, event: WorkflowsEvent) {
        match event {
            WorkflowsEvent::Hello { .. } => {
                self.request(|id| WorkflowsRequest::CurrentReplay { id });
            }
            WorkflowsEvent::Reflection { progress } => {
                if let ReflectStage::Done { workflow_id } = &progress.stage {
                    self.open_after_load = Some(workflow_id.clone());
                    self.effect(Effect::Load);
                }
                self.reflections.insert(progress.recording_id.clone(), progress);
            }
            WorkflowsEvent::Replay { replay, .. } => self.replay = replay.map(|r| *r),
            // The web pages a replay can run in, by title and URL.
            WorkflowsEvent::Tabs { tabs, .. } => {
                self.tabs = tabs
                    .into_iter()
                    .filter(|t| t.url.starts_with("http"))
                    .map(|t| TabChoice { id: t.id, title: t.title, url: t.url })
                    .collect();
            }
            WorkflowsEvent::Failed { id, message }
                if self.renaming.as_ref().is_some_and(|r| r.saved_by(id)) =>
            {
                self.renaming.as_mut().expect("checked").failed(message);
            }
            WorkflowsEvent::Done { id }
                if self.renaming.as_ref().is_some_and(|r| r.saved_by(id)) =>
            {
                self.renaming = None;
                self.effect(Effect::Load);
            }
            WorkflowsEvent::Failed { id, message } => {
                if let Some(recording_id) = self.reflect_asked.remove(&id) {
                    let stage = ReflectStage::Failed { why: message, details: None };
                    self.reflections
                        .insert(recording_id.clone(), ReflectProgress { recording_id, stage });
                } else {
                    self.notice = Some(message);
                }
            }
            WorkflowsEvent::Done { id } => {
                self.reflect_asked.remove(&id);
            }
            _ => {}
        }
    }
}

/// A file name from a workflow's name.
fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let stem = stem.split('-').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("-");
    if stem.is_empty() { "workflow".into() } else { stem }
}

page_kit::reducible_by_apply!(Page, Action);

#[cfg(test)]
mod tests;
