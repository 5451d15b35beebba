//! The page's state and its pure transitions. Components render it; `app.rs` carries out
//! the storage work the transitions ask for and reports the results back as actions.

pub mod editor;
pub mod list;

use std::rc::Rc;

use annotation_core::history::Version;
use annotation_core::query::RunSummary;
use annotation_core::record::{ReviewStatus, Run, Step, StepAction, Subtask, Thought};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::roles::User;
use annotation_core::sync::{Conflict, Pending, SyncSettings, SyncState};
use yew::Reducible;

use editor::{EditorState, Loaded, Tool};
use list::ListState;

/// The page's URL parameters (seed §3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    pub run_id: Option<String>,
    pub task_id: Option<String>,
    pub qa: bool,
}

impl Route {
    /// Reads `?agentRunId=…&taskId=…&qa=true|false`; anything else is ignored.
    pub fn parse(query: &str) -> Route {
        let mut route = Route::default();
        for pair in query.trim_start_matches('?').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            match key {
                "agentRunId" if !value.is_empty() => route.run_id = Some(value),
                "taskId" if !value.is_empty() => route.task_id = Some(value),
                "qa" => route.qa = value == "true" || value == "1",
                _ => {}
            }
        }
        route
    }

    pub fn query(&self) -> String {
        match &self.run_id {
            None => String::new(),
            Some(run) => {
                let mut query = format!("?agentRunId={}", encode(run));
                if let Some(task) = &self.task_id {
                    query += &format!("&taskId={}", encode(task));
                }
                query + if self.qa { "&qa=true" } else { "&qa=false" }
            }
        }
    }
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match text.get(i + 1..i + 3).map(|hex| u8::from_str_radix(hex, 16)) {
                    Some(Ok(byte)) => {
                        out.push(byte);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An edit applied to every step at once (a fix across all steps).
pub type StepsEdit = Box<dyn FnOnce(&mut [Step])>;

#[derive(Debug, Clone, PartialEq)]
pub enum Screen {
    Loading,
    List,
    Run,
    /// The run in the URL is not stored here.
    Missing(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub ok: bool,
    pub text: String,
}

/// Sync as the page shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncView {
    pub state: SyncState,
    /// Conflicts waiting for a person, each with the local body it would send.
    pub conflicts: Vec<(Conflict, serde_json::Value)>,
    /// Queued changes the server refused, with why.
    pub refused: Vec<(Pending, String)>,
    pub settings: SyncSettings,
    pub open: bool,
    /// Rounds that failed in a row.
    pub failures: u32,
    /// Bumped whenever there is something new to send; a round follows.
    pub kick: u32,
    pub running: bool,
}

/// An export or import under way.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub label: String,
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Studio {
    pub screen: Screen,
    pub user: User,
    pub list: ListState,
    pub editor: Option<EditorState>,
    pub notice: Option<Notice>,
    pub help: bool,
    pub progress: Option<Progress>,
    /// Import problems to show, one line each.
    pub rejections: Vec<String>,
    pub sync: SyncView,
    /// The LanguageTool-compatible server, empty when grammar checking is off.
    pub grammar: String,
    /// The last storage command number issued, by any editor.
    pub commands: u32,
    /// A refused import that would succeed as copies: (file name, text).
    pub copyable: Option<(String, String)>,
}

impl Default for Studio {
    fn default() -> Self {
        Studio {
            screen: Screen::Loading,
            user: User::default(),
            list: ListState::default(),
            editor: None,
            notice: None,
            help: false,
            progress: None,
            rejections: Vec::new(),
            sync: SyncView::default(),
            copyable: None,
            grammar: String::new(),
            commands: 0,
        }
    }
}

pub enum Action {
    UserLoaded(User),
    UserChanged(User),
    ListLoaded(Vec<RunSummary>),
    List(list::ListAction),
    RunLoaded(Box<Loaded>),
    RunMissing(String),
    BackToList,
    // ---- the open run ----
    Select(usize),
    Next,
    Prev,
    SetThought(Thought, String),
    SetAction(StepAction),
    ReplaceStep(Box<Step>),
    EditAll(StepsEdit),
    SetSubtasks(Vec<Subtask>),
    SetTags(Vec<String>),
    MarkComplete,
    Transition(ReviewStatus),
    Flag(String, String),
    Save,
    Saved {
        run: Box<Run>,
        steps: Vec<Step>,
        versions: Vec<Version>,
        then_select: Option<usize>,
    },
    SaveFailed(String),
    ShowTool(Tool),
    ToggleZoom,
    Escaping(Option<Thought>),
    StartSuggest(Thought),
    SuggestText(String),
    CancelSuggest,
    Compare(Option<(u32, u32)>),
    /// Review data changed in storage.
    Review {
        comments: Vec<Comment>,
        suggestions: Vec<Suggestion>,
    },
    // ---- page-wide ----
    Notify(Notice),
    DismissNotice,
    Help(bool),
    Progress(Option<Progress>),
    Rejections(Vec<String>),
    CopyableImport(Option<(String, String)>),
    Grammar(String),
    SyncSettings(SyncSettings),
    SyncOpen(bool),
    SyncKick,
    SyncStarted,
    SyncFinished {
        state: SyncState,
        conflicts: Vec<(Conflict, serde_json::Value)>,
        /// Queued changes the server refused, with why.
        refused: Vec<(Pending, String)>,
    },
}

impl Reducible for Studio {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.apply(action);
        Rc::new(next)
    }
}

impl Studio {
    pub fn apply(&mut self, action: Action) {
        match action {
            Action::UserLoaded(user) | Action::UserChanged(user) => {
                if let Some(editor) = &mut self.editor {
                    editor.user = user.clone();
                }
                self.user = user;
            }
            Action::ListLoaded(summaries) => {
                self.list.load(summaries);
                if self.editor.is_none() {
                    self.screen = Screen::List;
                }
            }
            Action::List(action) => self.list.apply(action),
            Action::RunLoaded(loaded) => {
                let mut editor = EditorState::new(*loaded);
                editor.issued = self.commands;
                self.editor = Some(editor);
                self.screen = Screen::Run;
            }
            Action::RunMissing(id) => self.screen = Screen::Missing(id),
            Action::BackToList => {
                self.editor = None;
                self.screen = Screen::List;
            }
            Action::Notify(notice) => self.notice = Some(notice),
            Action::DismissNotice => self.notice = None,
            Action::Help(open) => self.help = open,
            Action::Progress(progress) => self.progress = progress,
            Action::Rejections(lines) => {
                self.rejections = lines;
                self.copyable = None;
            }
            Action::CopyableImport(copyable) => self.copyable = copyable,
            Action::Grammar(endpoint) => self.grammar = endpoint,
            Action::SyncSettings(settings) => {
                self.sync.state =
                    if settings.enabled() { SyncState::Syncing } else { SyncState::LocalOnly };
                self.sync.settings = settings;
                self.sync.kick += 1;
            }
            Action::SyncOpen(open) => self.sync.open = open,
            Action::SyncKick => self.sync.kick += 1,
            Action::SyncStarted => self.sync.running = true,
            Action::SyncFinished { state, conflicts, refused } => {
                self.sync.refused = refused;
                self.sync.failures = match state {
                    SyncState::Offline { .. } | SyncState::Error { .. } => self.sync.failures + 1,
                    _ => 0,
                };
                self.sync.running = false;
                self.sync.state = state;
                self.sync.conflicts = conflicts;
            }
            action => {
                // A save that made a version has something to send.
                if let Action::Saved { versions, .. } = &action
                    && !versions.is_empty()
                {
                    self.sync.kick += 1;
                }
                self.apply_to_run(action);
                if let Some((n, _)) = self.editor.as_ref().and_then(|e| e.command.as_ref()) {
                    self.commands = self.commands.max(*n);
                }
            }
        }
    }

    fn apply_to_run(&mut self, action: Action) {
        let Some(editor) = &mut self.editor else { return };
        match action {
            Action::Select(position) => editor.select(position),
            Action::Next => editor.select(editor.at + 1),
            Action::Prev => editor.select(editor.at.saturating_sub(1)),
            Action::SetThought(which, text) => editor.set_thought(which, text),
            Action::SetAction(action) => editor.set_action(action),
            Action::ReplaceStep(step) => editor.replace_step(*step),
            Action::EditAll(edit) => editor.edit_all(edit),
            Action::SetSubtasks(subtasks) => editor.set_subtasks(subtasks),
            Action::SetTags(tags) => editor.set_tags(tags),
            Action::MarkComplete => editor.mark_complete(),
            Action::Transition(to) => editor.transition(to),
            Action::Flag(why, at) => editor.flag(&why, &at),
            Action::Save => editor.save_now(),
            Action::Saved { run, steps, versions, then_select } => {
                let number = versions.last().map(|v| v.number);
                let moved = (run.status != editor.run.status).then_some(run.status);
                editor.saved(*run, steps, versions, then_select);
                let text = match (moved, number) {
                    (Some(to), Some(n)) => {
                        format!(
                            "The run is now {}, saved as version {n}.",
                            to.label().to_lowercase()
                        )
                    }
                    (None, Some(n)) => format!("Saved as version {n}."),
                    (_, None) => "Nothing changed since the last version.".into(),
                };
                self.notice = Some(Notice { ok: true, text });
            }
            Action::SaveFailed(why) => {
                editor.save_failed();
                self.notice = Some(Notice { ok: false, text: why });
            }
            Action::ShowTool(tool) => editor.tool = tool,
            Action::ToggleZoom => editor.zoom = !editor.zoom,
            Action::Escaping(thought) => editor.escaping = thought,
            Action::StartSuggest(which) => {
                let text = editor.current().map(|s| s.thoughts.get(which).to_owned());
                editor.suggesting = text.map(|t| (which, t));
            }
            Action::SuggestText(text) => {
                if let Some((_, draft)) = &mut editor.suggesting {
                    *draft = text;
                }
            }
            Action::CancelSuggest => editor.suggesting = None,
            Action::Compare(pair) => editor.compare = pair,
            // A round may bring these while someone types a suggestion: the draft stays.
            Action::Review { comments, suggestions } => {
                editor.comments = comments;
                editor.suggestions = suggestions;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
