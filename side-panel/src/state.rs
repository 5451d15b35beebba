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

/// The page-title round trip, the first thing the panel asks the worker.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TitleLookup {
    #[default]
    Idle,
    Pending {
        id: u32,
    },
    Shown {
        title: String,
    },
    Failed {
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PanelState {
    /// The tab the agent drives: from `?tabId=N`, or the active tab.
    pub tab: Option<TabId>,
    pub worker: WorkerLink,
    pub title: TitleLookup,
    /// The id the next request will carry.
    pub next_request_id: u32,
}

pub enum PanelAction {
    TabChosen(Option<TabId>),
    /// A request with `next_request_id` was posted for the title.
    TitleRequested,
    Worker(WorkerEvent),
    PortLost,
}

impl PanelState {
    pub fn can_request_title(&self) -> bool {
        self.tab.is_some()
            && matches!(self.worker, WorkerLink::Connected { .. })
            && !matches!(self.title, TitleLookup::Pending { .. })
    }

    fn reduce_owned(mut self, action: PanelAction) -> Self {
        match action {
            PanelAction::TabChosen(tab) => self.tab = tab,
            PanelAction::TitleRequested => {
                self.title = TitleLookup::Pending { id: self.next_request_id };
                self.next_request_id += 1;
            }
            PanelAction::PortLost => {
                self.worker = WorkerLink::Lost;
                if matches!(self.title, TitleLookup::Pending { .. }) {
                    self.title = TitleLookup::Failed {
                        message: "Lost the connection to the agent. Reopen the panel.".into(),
                    };
                }
            }
            PanelAction::Worker(event) => match event {
                WorkerEvent::Hello { version } => self.worker = WorkerLink::Connected { version },
                WorkerEvent::PageTitle { id, title, .. } if self.is_pending(id) => {
                    self.title = TitleLookup::Shown { title };
                }
                WorkerEvent::Failed { id, message } if self.is_pending(id) => {
                    self.title = TitleLookup::Failed { message };
                }
                // An answer to a request we no longer wait for.
                WorkerEvent::PageTitle { .. } | WorkerEvent::Failed { .. } => {}
            },
        }
        self
    }

    fn is_pending(&self, answer: u32) -> bool {
        self.title == TitleLookup::Pending { id: answer }
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
    fn the_title_can_be_requested_once_the_worker_greets_and_a_tab_is_known() {
        assert!(!PanelState::default().can_request_title());
        assert!(connected_on_tab(3).can_request_title());
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
        assert_eq!(state.title, TitleLookup::Shown { title: "Shop".into() });
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
        assert_eq!(state.title, TitleLookup::Pending { id: 0 });
        assert!(!state.can_request_title(), "one request at a time");
    }

    #[test]
    fn losing_the_port_fails_the_pending_request_with_a_next_step() {
        let state =
            reduce(connected_on_tab(3), [PanelAction::TitleRequested, PanelAction::PortLost]);
        assert_eq!(state.worker, WorkerLink::Lost);
        let TitleLookup::Failed { message } = state.title else { panic!("{:?}", state.title) };
        assert!(message.contains("Reopen"));
    }
}
