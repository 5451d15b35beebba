//! The panel's state and its reducer. Pure: no DOM, no `chrome.*`, so every transition is
//! tested natively.
//!
//! The reducer also decides what to ask the worker: it appends [`PanelRequest`]s to
//! [`PanelState::outbox`], each with a fresh id, and the `App` component posts them. So what
//! "Send" does in each state (start a task, steer, answer and resume) is decided — and
//! tested — here.
//!
//! Several jobs run at once, each in its own tab, and each tab has its own panel: a panel
//! shows only its tab's task and replay (events and snapshots of other tabs are dropped
//! here), and [`jobs`] lists every job of every tab.
//!
//! [`chat`] folds the task's events into messages; [`settings`] is the Settings form;
//! [`history`] the stored conversations; [`favourites`] the quick-start prompts.

pub mod chat;
pub mod favourites;
pub mod history;
pub mod jobs;
pub mod recording;
pub mod settings;
pub mod telemetry;
pub mod workflows;

use std::rc::Rc;

use protocol::agent::{
    Actor, AgentEvent, EventKind, ExecutionState, Spend, TaskSnapshot, TaskStatus, Telemetry,
};
use protocol::{PanelRequest, TabId, WorkerEvent};
// The annotation page reads its link with `URLSearchParams`; `%20` reads the same anywhere.
use run_contract::url::component_encode;
use yew::Reducible;

use chat::{Chat, PendingKind};
use favourites::Favourites;
use history::History;
use jobs::{JobAction, Jobs};
use protocol::settings::ModelRole;
use recording::{RecordAction, RecordingView};
use settings::{Field, SettingsForm};

/// Whether the panel can reach the background worker.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum WorkerLink {
    #[default]
    Connecting,
    Connected {
        version: String,
    },
    /// The port closed (Chrome stopped the idle worker, say) and the panel connects again.
    Reconnecting,
    /// The port closed for good (extension reloaded or updated); the panel must be reopened.
    Lost,
}

/// One round trip to the worker: asked, answered, or failed.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Lookup<T> {
    #[default]
    Idle,
    Pending {
        id: u32,
    },
    Shown(T),
    Failed {
        message: String,
    },
}

impl<T> Lookup<T> {
    pub fn is_pending(&self) -> bool {
        matches!(self, Lookup::Pending { .. })
    }

    fn awaits(&self, answer: u32) -> bool {
        matches!(self, Lookup::Pending { id } if *id == answer)
    }
}

/// The page state as the `/state` command shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StateView {
    pub text: String,
    pub chars: usize,
    pub ms: f64,
}

/// What the person can type in the chat box besides a message: a line starting with `/`.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `/state`: show the page state the agent would read now.
    State,
    /// `/run <name> {json}`: run a published pipeline on this tab with that input.
    Run { name: String, input: serde_json::Value },
}

impl Command {
    /// Parses a command line; `Err` explains what is understood.
    pub fn parse(line: &str) -> Result<Command, String> {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("/run").filter(|r| r.is_empty() || r.starts_with(' '))
        {
            let rest = rest.trim();
            let (name, input) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if name.is_empty() {
                return Err("Name the pipeline: /run <name> {json input}.".into());
            }
            let input = match input.trim() {
                "" => serde_json::json!({}),
                text => serde_json::from_str(text).map_err(|e| {
                    format!("The input after the pipeline's name is not JSON: {e}.")
                })?,
            };
            return Ok(Command::Run { name: name.to_owned(), input });
        }
        match line {
            "/state" => Ok(Command::State),
            "" => Err("Type a command, for example /state.".into()),
            other => {
                Err(format!("Unknown command {other:?}. Try /state or /run <pipeline> {{json}}."))
            }
        }
    }
}

/// Where the task stands, in one word, as the `status` hook reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No task yet (or "New chat").
    Idle,
    /// A start was sent; the worker has not reported the new run yet.
    Starting,
    Running,
    /// `question`: the agent asked something (else the person paused it, or the worker did).
    Paused {
        question: bool,
    },
    Done,
    Failed,
    Cancelled,
}

impl Phase {
    /// The `data-state` of the status hook.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Starting | Phase::Running => "running",
            Phase::Paused { .. } => "paused",
            Phase::Done => "done",
            Phase::Failed => "failed",
            Phase::Cancelled => "cancelled",
        }
    }

    /// A task is under way: it can be stopped, and a new chat cannot start.
    pub fn is_active(self) -> bool {
        matches!(self, Phase::Starting | Phase::Running | Phase::Paused { .. })
    }
}

/// The task this panel shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskView {
    pub session_id: Option<String>,
    pub run_id: Option<String>,
    /// `None` before any task, and after "New chat".
    pub status: Option<TaskStatus>,
    /// Steps taken so far.
    pub step: u32,
    pub spend: Spend,
    /// The run's telemetry, as of the latest snapshot.
    pub telemetry: Telemetry,
    /// The `StartTask` awaiting its run, and the run shown when it was sent.
    pub starting: Option<u32>,
    starting_from: Option<String>,
    /// Pause was asked and the worker has not paused yet.
    pub pause_requested: bool,
    /// The session "New chat" put away: its late news is not shown again.
    dismissed: Option<String>,
}

impl TaskView {
    pub fn phase(&self) -> Phase {
        if self.starting.is_some() {
            return Phase::Starting;
        }
        match &self.status {
            None => Phase::Idle,
            Some(TaskStatus::Running) => Phase::Running,
            Some(TaskStatus::Paused { question, .. }) => {
                Phase::Paused { question: question.is_some() }
            }
            Some(TaskStatus::Done { .. }) => Phase::Done,
            Some(TaskStatus::Failed { .. }) => Phase::Failed,
            Some(TaskStatus::Cancelled) => Phase::Cancelled,
        }
    }

    /// The annotation page for the current run, relative to the extension root.
    pub fn annotation_link(&self) -> Option<String> {
        let (run, session) = (self.run_id.as_ref()?, self.session_id.as_ref()?);
        Some(format!(
            "annotation.html?agentRunId={}&taskId={}&qa=false",
            component_encode(run),
            component_encode(session)
        ))
    }
}

/// What fills the panel below the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    Chat,
    Settings,
    History,
    /// "What happened": the task's decisions, pauses and spend per role.
    Telemetry,
    /// Every job of every tab.
    Jobs,
}

/// IO the reducer asks for besides the worker's requests, as data: the `App` carries out
/// each once, by its number, through `worker_port`.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Brings `tab_id` to the front ("Go to tab" in the Jobs view).
    ShowTab { id: u32, tab_id: TabId },
}

impl Effect {
    pub fn id(&self) -> u32 {
        match self {
            Effect::ShowTab { id, .. } => *id,
        }
    }
}

/// What the person does with the favourites.
#[derive(Debug, Clone, PartialEq)]
pub enum FavouriteAction {
    /// Puts the favourite's prompt in the chat box (it is not sent).
    Use(String),
    Add,
    Edit(String),
    Remove(String),
    Title(String),
    Prompt(String),
    Save,
    Cancel,
    /// Shows or hides the chips' edit and remove buttons.
    ToggleManage,
    /// "★ Save as favourite" on a task the person sent.
    SaveTask(String),
}

/// What a request in flight was for, so its failure lands in the right place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Start,
    FollowUp,
    Pause,
    Resume,
    Cancel,
    SaveSettings,
    /// The task shown in this tab's panel (answered with `task`).
    CurrentTask,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PanelState {
    /// The tab the agent drives: from `?tabId=N`, or the active tab.
    pub tab: Option<TabId>,
    pub worker: WorkerLink,
    pub title: Lookup<String>,
    pub state_view: Lookup<StateView>,
    /// Why the last command was not understood.
    pub command_error: Option<String>,
    /// The id the next request will carry.
    pub next_request_id: u32,
    /// Requests decided on and not yet posted; the `App` posts them in order.
    pub outbox: Vec<PanelRequest>,
    /// Effects decided on and not yet carried out; the `App` runs them in order.
    pub effects: Vec<Effect>,
    /// Requests awaiting their answer, by id. A list, not a map: a few at a time, and each
    /// map type is a copy of the B-tree's code in the bundle.
    asked: Vec<(u32, Asked)>,
    /// What is typed in the chat box.
    pub draft: String,
    /// Why the last message could not be sent.
    pub send_error: Option<String>,
    pub task: TaskView,
    pub chat: Chat,
    /// The Tools area (title probe, page state) is folded away.
    pub tools_collapsed: bool,
    pub view: View,
    pub settings: SettingsForm,
    pub history: History,
    pub favourites: Favourites,
    /// `/run` requests waiting for their pipeline's result: (request id, pipeline name).
    pub pipeline_runs: Vec<(u32, String)>,
    pub recording: RecordingView,
    /// Starting a workflow replay, and the replay's progress.
    pub workflows: workflows::WorkflowMenu,
    /// Every job of every tab, as the worker last listed them.
    pub jobs: Jobs,
    /// The MCP server's state, for Settings: allowed, connected, its clients.
    pub mcp: protocol::mcp::McpStatus,
}

pub enum PanelAction {
    TabChosen(Option<TabId>),
    Worker(WorkerEvent),
    /// The port closed and the panel is connecting again; what was in flight is lost.
    PortInterrupted,
    /// The port closed for good.
    PortLost,
    /// The `App` posted every request up to this id.
    Posted {
        up_to: u32,
    },
    /// The `App` carried out every effect up to this id.
    EffectsRun {
        up_to: u32,
    },
    ReadTitle,
    DraftChanged(String),
    /// Enter or the Send button: a command, a task, steering, or an answer (see `send`).
    Send,
    /// Pause & Steer.
    Pause,
    /// Resume a paused task without a message.
    ResumeAnyway,
    Stop,
    NewChat,
    ToggleTools,
    ToggleSettings,
    OpenSettings,
    EditSetting(Field, String),
    /// Settings' "Add MCP server" and a server's "Remove".
    AddMcpServer,
    RemoveMcpServer(usize),
    /// A server row's "Test": a session and its tools, as typed.
    TestMcpServer(usize),
    SaveSettings,
    /// "Test connection" for a role's model as typed.
    TestConnection(ModelRole),
    /// Shows the History (and lists the conversations afresh), or goes back to the chat.
    ToggleHistory,
    /// Shows what happened in the task (and asks for it afresh), or goes back to the chat.
    ToggleTelemetry,
    /// Reopens a stored conversation in the chat.
    OpenSession(String),
    /// A row's delete button: asks for a confirm.
    AskDeleteSession(String),
    CancelDeleteSession,
    /// The confirm: deletes the conversation's chat history.
    DeleteSession(String),
    Favourite(FavouriteAction),
    /// The Record button and the Ctrl+I offer.
    Record(RecordAction),
    Workflow(workflows::WorkflowAction),
    Job(JobAction),
}

const LOST: &str = "Lost the connection to the agent. Reopen the panel.";
const INTERRUPTED: &str = "The connection to the agent was interrupted. Try again.";

impl PanelState {
    pub fn can_request(&self) -> bool {
        self.tab.is_some() && matches!(self.worker, WorkerLink::Connected { .. })
    }

    pub fn can_request_title(&self) -> bool {
        self.can_request() && !self.title.is_pending()
    }

    pub fn can_request_state(&self) -> bool {
        self.can_request() && !self.state_view.is_pending()
    }

    pub fn connected(&self) -> bool {
        matches!(self.worker, WorkerLink::Connected { .. })
    }

    pub fn phase(&self) -> Phase {
        self.task.phase()
    }

    pub fn settings_open(&self) -> bool {
        self.view == View::Settings
    }

    /// Whether History may reopen a conversation now: not while a task runs or starts.
    pub fn can_open_session(&self) -> bool {
        self.connected()
            && !matches!(self.phase(), Phase::Running | Phase::Starting)
            && !self.history.is_busy()
    }

    /// Why a conversation cannot be deleted now, if it cannot: its task is running.
    pub fn why_not_delete(
        &self,
        session: &protocol::agent::SessionSummary,
    ) -> Option<&'static str> {
        let shown_running = self.task.session_id.as_deref() == Some(session.session_id.as_str())
            && matches!(self.phase(), Phase::Running | Phase::Starting);
        (session.status == protocol::agent::SessionStatus::Running || shown_running)
            .then_some("Its task is running: stop the task first to delete this conversation.")
    }

    /// The favourite chips show: the chat is empty and no task is under way.
    pub fn shows_quick_start(&self) -> bool {
        self.chat.is_empty() && self.phase() == Phase::Idle
    }

    /// What Send will do now, for the button's label.
    pub fn send_label(&self) -> &'static str {
        match self.phase() {
            Phase::Running | Phase::Starting => "Steer",
            Phase::Paused { question: true } => "Answer",
            Phase::Paused { question: false } => "Send & resume",
            _ => "Send",
        }
    }

    fn take_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id += 1;
        id
    }

    /// Queues a request with a fresh id for the `App` to post.
    fn request(&mut self, make: impl FnOnce(u32) -> PanelRequest) -> u32 {
        let id = self.take_request_id();
        self.outbox.push(make(id));
        id
    }

    /// What request `id` asked, forgotten now that it is answered.
    fn take_asked(&mut self, id: u32) -> Option<Asked> {
        let at = self.asked.iter().position(|(asked, _)| *asked == id)?;
        Some(self.asked.remove(at).1)
    }

    fn ask(&mut self, asked: Asked, make: impl FnOnce(u32) -> PanelRequest) -> u32 {
        let id = self.request(make);
        self.asked.push((id, asked));
        id
    }

    fn request_state(&mut self) {
        if !self.can_request_state() {
            self.command_error = Some(if self.state_view.is_pending() {
                "Still reading the page state.".into()
            } else {
                "Wait until the agent is connected to a tab.".into()
            });
            return;
        }
        let Some(tab_id) = self.tab else { return };
        self.command_error = None;
        self.tools_collapsed = false;
        let id = self.request(|id| PanelRequest::PageState { id, tab_id });
        self.state_view = Lookup::Pending { id };
    }

    /// `/run`: the line goes in the chat, and the pipeline's result follows it there.
    fn run_pipeline(&mut self, line: &str, name: String, input: serde_json::Value) {
        let (Some(tab_id), true) = (self.tab, self.connected()) else {
            self.command_error = Some("Wait until the agent is connected to a tab.".into());
            return;
        };
        self.command_error = None;
        let id =
            self.request(|id| PanelRequest::RunPublished { id, name: name.clone(), input, tab_id });
        self.chat.note(Actor::User, EventKind::Message, line);
        self.pipeline_runs.push((id, name));
    }

    /// A `/run`'s result (or failure) as a chat message; false when `id` is not one.
    fn pipeline_answered(&mut self, id: u32, result: Result<&serde_json::Value, &str>) -> bool {
        let Some(at) = self.pipeline_runs.iter().position(|(run, _)| *run == id) else {
            return false;
        };
        let (_, name) = self.pipeline_runs.remove(at);
        let (kind, text) = match result {
            Err(message) => (EventKind::Error, format!("Pipeline {name}: {message}")),
            Ok(run) if run["status"] == "ok" => {
                let output = serde_json::to_string_pretty(&run["output"]).unwrap_or_default();
                (EventKind::Answer, format!("Pipeline **{name}**:\n\n```json\n{output}\n```"))
            }
            Ok(run) => {
                let error = &run["error"];
                let step =
                    error["step_id"].as_str().map(|s| format!(" at step {s}")).unwrap_or_default();
                let text = format!(
                    "Pipeline {name} {}{step}: {} ({}{})",
                    run["status"].as_str().unwrap_or("failed"),
                    error["message"].as_str().unwrap_or("no message"),
                    error["code"].as_str().unwrap_or("error"),
                    if error["recoverable"] == true { ", may work if run again" } else { "" }
                );
                (EventKind::Error, text)
            }
        };
        self.chat.note(Actor::System, kind, text);
        true
    }

    /// Enter in the chat box. By the state of the task:
    /// * `/…` is a command (`/state`);
    /// * no task, or the last one ended: start a task (in the same session after one ended,
    ///   a follow-up task; after "New chat" a new session);
    /// * running: steering (`FollowUp`), applied at the agent's next step;
    /// * paused: `FollowUp` with the answer or new instructions, then `Resume`.
    fn send(&mut self) {
        let text = self.draft.trim().to_owned();
        if text.is_empty() {
            return;
        }
        self.send_error = None;
        if text.starts_with('/') {
            self.draft.clear();
            match Command::parse(&text) {
                Ok(Command::State) => self.request_state(),
                Ok(Command::Run { name, input }) => self.run_pipeline(&text, name, input),
                Err(message) => self.command_error = Some(message),
            }
            return;
        }
        self.command_error = None;
        if !self.connected() {
            self.send_error = Some(match self.worker {
                WorkerLink::Lost => LOST.into(),
                _ => "Connecting to the agent; try again in a moment.".into(),
            });
            return;
        }
        let session = self.task.session_id.clone();
        match (self.phase(), session) {
            (Phase::Starting, _) => {
                self.send_error = Some("The task is starting; send this once it runs.".into());
                return;
            }
            (Phase::Running, Some(session_id)) => {
                let id = self.ask(Asked::FollowUp, |id| PanelRequest::FollowUp {
                    id,
                    session_id,
                    text: text.clone(),
                });
                self.chat.add_pending(id, PendingKind::Steering, text);
            }
            (Phase::Paused { .. }, Some(session_id)) => {
                let id = self.ask(Asked::FollowUp, |id| PanelRequest::FollowUp {
                    id,
                    session_id: session_id.clone(),
                    text: text.clone(),
                });
                self.ask(Asked::Resume, |id| PanelRequest::Resume { id, session_id });
                self.chat.add_pending(id, PendingKind::Answer, text);
            }
            (_, session_id) => {
                let Some(tab_id) = self.tab else {
                    self.send_error = Some("There is no tab for the agent to work in.".into());
                    return;
                };
                let id = self.ask(Asked::Start, |id| PanelRequest::StartTask {
                    id,
                    tab_id,
                    task: text.clone(),
                    session_id,
                });
                self.task.starting = Some(id);
                self.task.starting_from = self.task.run_id.clone();
                self.chat.add_pending(id, PendingKind::Task, text);
            }
        }
        self.draft.clear();
    }

    fn control(&mut self, asked: Asked) {
        let Some(session_id) = self.task.session_id.clone() else { return };
        if !self.connected() {
            return;
        }
        match (asked, self.phase()) {
            (Asked::Pause, Phase::Running) if !self.task.pause_requested => {
                self.task.pause_requested = true;
                self.ask(asked, |id| PanelRequest::Pause { id, session_id });
            }
            (Asked::Resume, Phase::Paused { .. }) => {
                self.ask(asked, |id| PanelRequest::Resume { id, session_id });
            }
            (Asked::Cancel, Phase::Running | Phase::Paused { .. }) => {
                self.ask(asked, |id| PanelRequest::Cancel { id, session_id });
            }
            _ => {}
        }
    }

    fn new_chat(&mut self) {
        if self.phase().is_active() {
            return;
        }
        self.forget_shown_session();
    }

    /// An empty chat; news of the session shown until now is not shown again.
    fn forget_shown_session(&mut self) {
        self.task = TaskView { dismissed: self.task.session_id.take(), ..TaskView::default() };
        self.chat = Chat::default();
        self.send_error = None;
    }

    fn toggle_history(&mut self) {
        if self.view == View::History {
            self.view = View::Chat;
            return;
        }
        self.view = View::History;
        self.history.confirming = None;
        self.list_sessions();
    }

    fn toggle_telemetry(&mut self) {
        if self.view == View::Telemetry {
            self.view = View::Chat;
            return;
        }
        self.view = View::Telemetry;
        self.ask_current_task();
    }

    /// Asks for the task this tab's panel shows: its answer, even "none", is about this tab,
    /// where a broadcast may be about any. Needs the worker and the tab both known.
    fn ask_current_task(&mut self) {
        let (Some(tab_id), true) = (self.tab, self.connected()) else { return };
        self.ask(Asked::CurrentTask, |id| PanelRequest::CurrentTask { id, tab_id: Some(tab_id) });
    }

    fn list_sessions(&mut self) {
        if self.connected() {
            let id = self.request(|id| PanelRequest::ListSessions { id });
            self.history.load(id);
        }
    }

    fn open_session(&mut self, session_id: String) {
        if !self.can_open_session() {
            self.history.error = Some(if self.connected() {
                "A task is running: stop it, or wait until it ends, to open another conversation."
                    .into()
            } else {
                LOST.into()
            });
            return;
        }
        // Shown again even if "New chat" put it away.
        if self.task.dismissed.as_deref() == Some(session_id.as_str()) {
            self.task.dismissed = None;
        }
        self.history.error = None;
        let (asked, tab_id) = (session_id.clone(), self.tab);
        let id = self.request(|id| PanelRequest::OpenSession { id, session_id: asked, tab_id });
        self.history.opening = Some((id, session_id));
    }

    fn delete_session(&mut self, session_id: String) {
        let summary =
            self.history.sessions.iter().flatten().find(|s| s.session_id == session_id).cloned();
        self.history.confirming = None;
        if let Some(why) = summary.as_ref().and_then(|s| self.why_not_delete(s)) {
            self.history.error = Some(why.into());
            return;
        }
        if !self.connected() || self.history.is_busy() {
            return;
        }
        self.history.error = None;
        let asked = session_id.clone();
        let id = self.request(|id| PanelRequest::DeleteSession { id, session_id: asked });
        self.history.deleting = Some((id, session_id));
    }

    fn save_favourites(&mut self, list: Vec<protocol::Favourite>) {
        let id = self.request(|id| PanelRequest::SaveFavourites { id, favourites: list });
        self.favourites.saving(id);
    }

    fn favourite(&mut self, action: FavouriteAction) {
        let connected = self.connected();
        let favourites = &mut self.favourites;
        match action {
            FavouriteAction::Use(id) => {
                if let Some(favourite) = favourites.get(&id) {
                    self.draft = favourite.prompt.clone();
                    self.send_error = None;
                }
            }
            FavouriteAction::Add => favourites.add(),
            FavouriteAction::Edit(id) => favourites.edit(&id),
            FavouriteAction::Title(text) => {
                if let Some(editor) = favourites.editor.as_mut() {
                    editor.title = text;
                    editor.problem = None;
                }
            }
            FavouriteAction::Prompt(text) => {
                if let Some(editor) = favourites.editor.as_mut() {
                    editor.prompt = text;
                    editor.problem = None;
                }
            }
            FavouriteAction::Cancel => favourites.cancel(),
            FavouriteAction::ToggleManage => favourites.managing = !favourites.managing,
            FavouriteAction::Save => {
                if !connected {
                    if let Some(editor) = favourites.editor.as_mut() {
                        editor.problem = Some(LOST.into());
                    }
                } else if let Some(list) = favourites.submit() {
                    self.save_favourites(list);
                }
            }
            FavouriteAction::Remove(id) => {
                if let Some(list) = favourites.without(&id).filter(|_| connected) {
                    self.save_favourites(list);
                }
            }
            FavouriteAction::SaveTask(text) => {
                if let Some(list) = favourites.with_prompt(&text).filter(|_| connected) {
                    self.save_favourites(list);
                }
            }
        }
    }

    fn test_connection(&mut self, role: ModelRole) {
        let sent = if self.connected() {
            self.settings.draft.model(role).connection_test(role).map(|(model, key)| {
                self.request(|id| PanelRequest::TestConnection {
                    id,
                    role,
                    model: Box::new(model),
                    key,
                })
            })
        } else {
            Err(LOST.into())
        };
        self.settings.testing(role, sent);
    }

    fn test_mcp_server(&mut self, index: usize) {
        let Some(row) = self.settings.draft.mcp_servers.get(index) else { return };
        let sent = if self.connected() {
            row.connection_test(index).map(|(server, token)| {
                self.request(|id| PanelRequest::TestMcpServer {
                    id,
                    server: Box::new(server),
                    token,
                })
            })
        } else {
            Err(LOST.into())
        };
        self.settings.testing_mcp(index, sent);
    }

    /// Shows another session than the one shown (a new task, or the panel reopened).
    fn adopt(&mut self, session_id: &str) {
        if self.task.session_id.as_deref() == Some(session_id) {
            return;
        }
        if self.task.session_id.is_some() {
            self.chat.reset();
        }
        self.task.session_id = Some(session_id.to_owned());
        self.task.dismissed = None;
        self.task.run_id = None;
        self.task.spend = Spend::default();
        self.task.step = 0;
    }

    fn set_status(&mut self, status: TaskStatus) {
        if status != TaskStatus::Running {
            self.task.pause_requested = false;
        }
        if status.is_finished() {
            self.chat.task_ended();
        }
        self.task.status = Some(status);
    }

    fn on_agent_event(&mut self, event: AgentEvent) {
        use ExecutionState::*;
        if self.task.dismissed.as_deref() == Some(event.session_id.as_str())
            && event.state != TaskStart
        {
            return;
        }
        self.adopt(&event.session_id);
        if event.state == TaskStart {
            self.task.starting = None;
        }
        self.task.run_id = Some(event.run_id.clone());
        self.task.step = event.step;
        let status = match event.state {
            TaskStart | TaskResume => Some(TaskStatus::Running),
            TaskPause => {
                let question = (event.kind == EventKind::Question).then(|| event.details.clone());
                let reason = if question.is_some() {
                    "The agent needs your input".to_owned()
                } else {
                    event.details.clone()
                };
                let by_user = event.actor == Actor::User;
                Some(TaskStatus::Paused { reason, question, since: event.at, by_user })
            }
            TaskOk => Some(TaskStatus::Done { answer: event.details.clone() }),
            TaskFail => Some(TaskStatus::Failed { error: event.details.clone() }),
            TaskCancel => Some(TaskStatus::Cancelled),
            _ => None,
        };
        self.chat.push(&event);
        if let Some(status) = status {
            self.set_status(status);
        }
    }

    /// Whether this panel shows what belongs to `panel_tab`'s panel (`None`: every panel's).
    /// Before the panel knows its tab it shows no other tab's news.
    fn is_mine(&self, panel_tab: Option<TabId>) -> bool {
        panel_tab.is_none_or(|tab| self.tab == Some(tab))
    }

    /// The worker says this tab has no task: an unfinished one shown here is gone.
    fn no_task(&mut self) {
        if self.task.starting.is_none()
            && matches!(self.task.status, Some(TaskStatus::Running | TaskStatus::Paused { .. }))
        {
            self.task.status = None;
            self.task.pause_requested = false;
        }
    }

    /// A `task` event. `ours`: it answers this panel's `current_task` or `open_session`, so
    /// "no snapshot" means no task in this tab; a broadcast without one says nothing of it.
    fn on_task(&mut self, ours: bool, snapshot: Option<TaskSnapshot>) {
        match snapshot {
            Some(snapshot) if self.tab.is_some_and(|tab| snapshot.shown_in(tab)) => {
                self.on_snapshot(snapshot)
            }
            // Another tab's task: its own panel shows it.
            Some(_) => {}
            None if ours => self.no_task(),
            None => {}
        }
    }

    fn on_snapshot(&mut self, snapshot: TaskSnapshot) {
        if self.task.dismissed.as_deref() == Some(snapshot.session_id.as_str())
            && snapshot.status.is_finished()
        {
            return;
        }
        let other_session = self.task.session_id.as_deref() != Some(snapshot.session_id.as_str());
        self.adopt(&snapshot.session_id);
        if self.task.starting.is_some()
            && (other_session
                || self.task.starting_from.as_deref() != Some(snapshot.run_id.as_str()))
        {
            self.task.starting = None;
        }
        if self.task.starting.is_some() {
            // The run before the one being started: nothing new to show.
            return;
        }
        self.task.run_id = Some(snapshot.run_id);
        self.task.step = snapshot.step;
        self.task.spend = snapshot.spend;
        self.task.telemetry = snapshot.telemetry;
        self.chat.replay(&snapshot.events);
        self.set_status(snapshot.status);
    }

    /// A request failed: say so where it matters.
    fn on_failed(&mut self, id: u32, message: String) {
        let Some(asked) = self.take_asked(id) else { return };
        match asked {
            Asked::Start => {
                if self.task.starting == Some(id) {
                    self.task.starting = None;
                }
                self.chat.drop_pending(id);
                self.chat.note(
                    Actor::System,
                    EventKind::Error,
                    format!("The task did not start: {message}"),
                );
            }
            Asked::FollowUp => {
                let text = self.chat.drop_pending(id).unwrap_or_default();
                self.chat.note(
                    Actor::System,
                    EventKind::Error,
                    format!("Your message did not reach the agent: {message}"),
                );
                if self.draft.trim().is_empty() {
                    // Give the text back, so it is not lost.
                    self.draft = text;
                }
            }
            Asked::Pause => {
                self.task.pause_requested = false;
                self.chat.note(
                    Actor::System,
                    EventKind::Error,
                    format!("Could not pause: {message}"),
                );
            }
            Asked::Resume => {
                self.chat.note(
                    Actor::System,
                    EventKind::Error,
                    format!("Could not resume: {message}"),
                );
            }
            Asked::Cancel => {
                self.chat.note(
                    Actor::System,
                    EventKind::Error,
                    format!("Could not stop: {message}"),
                );
            }
            Asked::SaveSettings => self.settings.save_failed(message),
            // The next snapshot tells; nothing to undo.
            Asked::CurrentTask => {}
        }
    }

    fn open_settings(&mut self) {
        self.view = View::Settings;
        if self.settings.needs_loading() && self.connected() {
            let id = self.request(|id| PanelRequest::GetSettings { id });
            self.settings.loading(id);
        }
    }

    fn on_worker_event(&mut self, event: WorkerEvent) {
        match event {
            WorkerEvent::Hello { version } => {
                self.worker = WorkerLink::Connected { version };
                if self.settings_open() {
                    self.open_settings();
                }
                if self.view == View::History {
                    self.list_sessions();
                }
                let id = self.request(|id| PanelRequest::GetFavourites { id });
                self.favourites.loading = Some(id);
                self.list_jobs();
                self.ask_current_task();
            }
            WorkerEvent::PageTitle { id, title, .. } if self.title.awaits(id) => {
                self.title = Lookup::Shown(title);
            }
            WorkerEvent::PageState { id, text, chars, ms } if self.state_view.awaits(id) => {
                self.state_view = Lookup::Shown(StateView { text, chars, ms });
            }
            WorkerEvent::Failed { id, message } if self.title.awaits(id) => {
                self.title = Lookup::Failed { message };
            }
            WorkerEvent::Failed { id, message } if self.state_view.awaits(id) => {
                self.state_view = Lookup::Failed { message };
            }
            WorkerEvent::Failed { id, message } if self.settings.awaits_load(id) => {
                self.settings.load = settings::Load::Failed { message };
            }
            WorkerEvent::Failed { id, message } if self.pipeline_answered(id, Err(&message)) => {}
            WorkerEvent::PipelineResult { id, run } => {
                self.pipeline_answered(id, Ok(&run));
            }
            WorkerEvent::Failed { id, message } if self.history.failed(id, &message) => {}
            WorkerEvent::Failed { id, message } if self.favourites.failed(id, &message) => {}
            WorkerEvent::Failed { id, message } if self.recording.failed(id, &message) => {}
            WorkerEvent::Failed { id, message } if self.workflows.failed(id, &message) => {}
            WorkerEvent::Failed { id, message } if self.jobs.failed(id, &message) => {}
            WorkerEvent::Failed { id, message } => {
                if !self.settings.tested(id, false, message.clone()) {
                    self.on_failed(id, message);
                }
            }
            WorkerEvent::Done { id } if self.recording.done(id) => {}
            WorkerEvent::Done { id } => {
                self.take_asked(id);
                self.jobs.done(id);
            }
            WorkerEvent::Agent { event, panel_tab } => {
                if self.is_mine(panel_tab) {
                    self.on_agent_event(event);
                }
            }
            WorkerEvent::Task { id, snapshot } => {
                let opened = id.is_some_and(|id| self.history.opened(id));
                let asked = id.and_then(|id| self.take_asked(id));
                self.on_task(opened || asked == Some(Asked::CurrentTask), snapshot.map(|s| *s));
                if opened {
                    self.view = View::Chat;
                }
            }
            WorkerEvent::Sessions { id, sessions } => {
                let deleted = self.history.listed(id, sessions);
                if deleted.is_some() && deleted == self.task.session_id {
                    self.forget_shown_session();
                }
            }
            WorkerEvent::Favourites { id, favourites } => {
                self.favourites.stored(id, favourites);
            }
            WorkerEvent::Connection { id, ok, message } => {
                self.settings.tested(id, ok, message);
            }
            WorkerEvent::Settings { id, settings, problems, variants } => {
                if !variants.is_empty() {
                    self.settings.variants = variants;
                }
                if self.settings.awaits_load(id) {
                    self.settings.loaded(settings.as_deref());
                } else if self.settings.saving == Some(id) {
                    self.take_asked(id);
                    self.settings.saved(settings.as_deref(), problems);
                }
            }
            WorkerEvent::Recording { id, status } => self.recording.on_status(id, status),
            // An answer to a request we no longer wait for, or the Prompt Studio's or the
            // annotation page's.
            WorkerEvent::PageTitle { .. }
            | WorkerEvent::ThoughtsDrafted { .. }
            | WorkerEvent::PageState { .. }
            | WorkerEvent::StudioResult { .. }
            | WorkerEvent::PromptOverrides { .. }
            | WorkerEvent::PipelineSaved { .. }
            | WorkerEvent::Pipelines { .. }
            | WorkerEvent::PipelineStep { .. } => {}
            // Reflection progress and tab lists are the Workflows page's. Read from the port,
            // these other pages' events all arrive as `Ignored`.
            WorkerEvent::Reflection { .. } | WorkerEvent::Tabs { .. } | WorkerEvent::Ignored => {}
            WorkerEvent::Replay { replay, .. } => self.workflows.on_replay(self.tab, replay),
            WorkerEvent::Workflows { id, workflows } => self.workflows.listed(id, workflows),
            WorkerEvent::Jobs { id, jobs } => self.jobs.listed(id, jobs),
            WorkerEvent::Mcp { status } => self.mcp = status,
        }
    }

    /// The port closed: what was in flight will get no answer. For good (`lost`), or while
    /// the panel connects again; then the worker's snapshot brings the task back.
    fn disconnected(&mut self, lost: bool) {
        let active = self.phase().is_active();
        let message = if lost { LOST } else { INTERRUPTED };
        self.worker = if lost { WorkerLink::Lost } else { WorkerLink::Reconnecting };
        self.outbox.clear();
        self.asked.retain(|(_, asked)| *asked == Asked::FollowUp);
        if self.title.is_pending() {
            self.title = Lookup::Failed { message: message.into() };
        }
        if self.state_view.is_pending() {
            self.state_view = Lookup::Failed { message: message.into() };
        }
        if matches!(self.settings.load, settings::Load::Loading { .. }) {
            self.settings.load = settings::Load::Failed { message: message.into() };
        }
        if self.settings.saving.is_some() {
            self.settings.save_failed(message.into());
        }
        self.settings.tests_interrupted(message);
        self.history.interrupted(message);
        self.favourites.interrupted(message);
        self.jobs.interrupted(message);
        self.recording.interrupted();
        if let Some(id) = self.task.starting.take() {
            // Whether it started, the worker's snapshot will tell; keep the text meanwhile.
            let text = self.chat.drop_pending(id).unwrap_or_default();
            if self.draft.trim().is_empty() {
                self.draft = text;
            }
        }
        self.task.pause_requested = false;
        if lost && active {
            self.chat.note(
                Actor::System,
                EventKind::Error,
                "Lost the connection to the agent. Reopen the panel to see where the task stands.",
            );
        }
    }

    fn reduce_owned(mut self, action: PanelAction) -> Self {
        match action {
            PanelAction::TabChosen(tab) => {
                let changed = self.tab != tab;
                self.tab = tab;
                if changed {
                    // Greeted before the tab was known: ask now what this tab shows.
                    self.ask_current_task();
                }
            }
            PanelAction::ReadTitle => {
                if let (true, Some(tab_id)) = (self.can_request_title(), self.tab) {
                    let id = self.request(|id| PanelRequest::PageTitle { id, tab_id });
                    self.title = Lookup::Pending { id };
                }
            }
            PanelAction::Posted { up_to } => self.outbox.retain(|r| r.id() > up_to),
            PanelAction::EffectsRun { up_to } => self.effects.retain(|e| e.id() > up_to),
            PanelAction::PortInterrupted => self.disconnected(false),
            PanelAction::PortLost => self.disconnected(true),
            PanelAction::Worker(event) => self.on_worker_event(event),
            PanelAction::DraftChanged(text) => self.draft = text,
            PanelAction::Send => self.send(),
            PanelAction::Pause => self.control(Asked::Pause),
            PanelAction::ResumeAnyway => self.control(Asked::Resume),
            PanelAction::Stop => self.control(Asked::Cancel),
            PanelAction::NewChat => self.new_chat(),
            PanelAction::ToggleTools => self.tools_collapsed = !self.tools_collapsed,
            PanelAction::ToggleSettings if self.settings_open() => self.view = View::Chat,
            PanelAction::ToggleSettings | PanelAction::OpenSettings => self.open_settings(),
            PanelAction::EditSetting(field, value) => self.settings.edit(field, value),
            PanelAction::AddMcpServer => self.settings.add_mcp_server(),
            PanelAction::RemoveMcpServer(index) => self.settings.remove_mcp_server(index),
            PanelAction::TestMcpServer(index) => self.test_mcp_server(index),
            PanelAction::SaveSettings => {
                if !self.connected() {
                    self.settings.save_failed(LOST.into());
                } else if let Some(settings) = self.settings.submit() {
                    let id = self
                        .ask(Asked::SaveSettings, |id| PanelRequest::save_settings(id, settings));
                    self.settings.saving = Some(id);
                }
            }
            PanelAction::TestConnection(role) => self.test_connection(role),
            PanelAction::ToggleHistory => self.toggle_history(),
            PanelAction::ToggleTelemetry => self.toggle_telemetry(),
            PanelAction::OpenSession(session_id) => self.open_session(session_id),
            PanelAction::AskDeleteSession(session_id) => {
                self.history.confirming = Some(session_id);
            }
            PanelAction::CancelDeleteSession => self.history.confirming = None,
            PanelAction::DeleteSession(session_id) => self.delete_session(session_id),
            PanelAction::Favourite(action) => self.favourite(action),
            PanelAction::Record(action) => self.record(action),
            PanelAction::Workflow(action) => self.workflow(action),
            PanelAction::Job(action) => self.job(action),
        }
        self
    }
}

impl Reducible for PanelState {
    type Action = PanelAction;

    fn reduce(self: Rc<Self>, action: PanelAction) -> Rc<Self> {
        Rc::new(Rc::unwrap_or_clone(self).reduce_owned(action))
    }
}

#[cfg(test)]
mod tests;
