//! The panel's state and its reducer. Pure: no DOM, no `chrome.*`, so every transition is
//! tested natively.

use std::rc::Rc;

use protocol::{TabId, WorkerEvent};
use yew::Reducible;

/// Whether the panel can reach the background worker.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum WorkerLink {
    #[default]
    Connecting,
    Connected {
        version: String,
    },
    /// The port closed (extension reloaded or updated); the panel must be reopened.
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

/// What the person can type in the command box.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `/state`: show the page state the agent would read now.
    State,
}

impl Command {
    /// Parses a line typed in the command box; `Err` explains what is understood.
    pub fn parse(line: &str) -> Result<Command, String> {
        match line.trim() {
            "/state" => Ok(Command::State),
            "" => Err("Type a command, for example /state.".into()),
            other => Err(format!("Unknown command {other:?}. Try /state.")),
        }
    }
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
}

pub enum PanelAction {
    TabChosen(Option<TabId>),
    /// A title request with `next_request_id` was posted.
    TitleRequested,
    /// A page-state request with `next_request_id` was posted.
    StateRequested,
    CommandRejected(String),
    Worker(WorkerEvent),
    PortLost,
}

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

    fn take_request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id += 1;
        id
    }

    fn reduce_owned(mut self, action: PanelAction) -> Self {
        match action {
            PanelAction::TabChosen(tab) => self.tab = tab,
            PanelAction::TitleRequested => {
                self.title = Lookup::Pending { id: self.take_request_id() };
            }
            PanelAction::StateRequested => {
                self.command_error = None;
                self.state_view = Lookup::Pending { id: self.take_request_id() };
            }
            PanelAction::CommandRejected(message) => self.command_error = Some(message),
            PanelAction::PortLost => {
                self.worker = WorkerLink::Lost;
                let message = "Lost the connection to the agent. Reopen the panel.";
                if self.title.is_pending() {
                    self.title = Lookup::Failed { message: message.into() };
                }
                if self.state_view.is_pending() {
                    self.state_view = Lookup::Failed { message: message.into() };
                }
            }
            PanelAction::Worker(event) => match event {
                WorkerEvent::Hello { version } => self.worker = WorkerLink::Connected { version },
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
                // An answer to a request we no longer wait for.
                WorkerEvent::PageTitle { .. }
                | WorkerEvent::PageState { .. }
                | WorkerEvent::Failed { .. } => {}
            },
        }
        self
    }
}

impl Reducible for PanelState {
    type Action = PanelAction;

    fn reduce(self: Rc<Self>, action: PanelAction) -> Rc<Self> {
        Rc::new((*self).clone().reduce_owned(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(state: PanelState, actions: impl IntoIterator<Item = PanelAction>) -> PanelState {
        actions.into_iter().fold(state, PanelState::reduce_owned)
    }

    fn connected_on_tab(tab: TabId) -> PanelState {
        reduce(
            PanelState::default(),
            [
                PanelAction::TabChosen(Some(tab)),
                PanelAction::Worker(WorkerEvent::Hello { version: "0.1.0".into() }),
            ],
        )
    }

    #[test]
    fn requests_can_be_made_once_the_worker_greets_and_a_tab_is_known() {
        assert!(!PanelState::default().can_request_title());
        assert!(connected_on_tab(3).can_request_title());
        assert!(connected_on_tab(3).can_request_state());
    }

    #[test]
    fn the_matching_answer_shows_the_title() {
        let state = reduce(
            connected_on_tab(3),
            [
                PanelAction::TitleRequested,
                PanelAction::Worker(WorkerEvent::PageTitle {
                    id: 0,
                    tab_id: 3,
                    title: "Shop".into(),
                }),
            ],
        );
        assert_eq!(state.title, Lookup::Shown("Shop".into()));
        assert!(state.can_request_title());
    }

    #[test]
    fn a_stale_answer_is_ignored() {
        let state = reduce(
            connected_on_tab(3),
            [
                PanelAction::TitleRequested,
                PanelAction::Worker(WorkerEvent::Failed { id: 41, message: "old".into() }),
            ],
        );
        assert_eq!(state.title, Lookup::Pending { id: 0 });
        assert!(!state.can_request_title(), "one request at a time");
    }

    #[test]
    fn title_and_state_requests_are_told_apart_by_id() {
        let state = reduce(
            connected_on_tab(3),
            [
                PanelAction::TitleRequested,
                PanelAction::StateRequested,
                PanelAction::Worker(WorkerEvent::Failed { id: 1, message: "no state".into() }),
                PanelAction::Worker(WorkerEvent::PageTitle { id: 0, tab_id: 3, title: "T".into() }),
            ],
        );
        assert_eq!(state.title, Lookup::Shown("T".into()));
        assert_eq!(state.state_view, Lookup::Failed { message: "no state".into() });
    }

    #[test]
    fn the_state_command_shows_the_text_the_agent_reads() {
        assert_eq!(Command::parse(" /state "), Ok(Command::State));
        let state = reduce(
            connected_on_tab(3),
            [
                PanelAction::CommandRejected("Unknown".into()),
                PanelAction::StateRequested,
                PanelAction::Worker(WorkerEvent::PageState {
                    id: 0,
                    text: "[1]<a>Home".into(),
                    chars: 10,
                    ms: 4.0,
                }),
            ],
        );
        assert_eq!(state.command_error, None, "a good command clears the last complaint");
        let Lookup::Shown(view) = &state.state_view else { panic!("{:?}", state.state_view) };
        assert_eq!(view.text, "[1]<a>Home");
    }

    #[test]
    fn unknown_commands_say_what_is_understood() {
        assert!(Command::parse("/stat").unwrap_err().contains("Try /state"));
        assert!(Command::parse("").is_err());
    }

    #[test]
    fn losing_the_port_fails_pending_requests_with_a_next_step() {
        let state = reduce(
            connected_on_tab(3),
            [PanelAction::TitleRequested, PanelAction::StateRequested, PanelAction::PortLost],
        );
        assert_eq!(state.worker, WorkerLink::Lost);
        let Lookup::Failed { message } = state.title else { panic!("{:?}", state.title) };
        assert!(message.contains("Reopen"));
        assert!(matches!(state.state_view, Lookup::Failed { .. }));
    }
}
