//! Starting a workflow replay from the panel: the Workflows menu lists every workflow's
//! latest version (asked of the worker), choosing one shows its parameters with the
//! examples prefilled, and Start replays it in the panel's tab. The replay's progress comes
//! from the worker's broadcasts, as a task's does; replays run in other tabs at the same time,
//! and only this tab's shows here.

use protocol::jobs::JobStatus;
use protocol::workflow::{ReplayControl, ReplayProgress, WorkflowSummary};
use protocol::{PanelRequest, TabId};

use super::PanelState;

#[derive(Debug, Clone, PartialEq)]
pub enum WorkflowAction {
    /// Opens the menu (and lists the workflows afresh), or closes it.
    Toggle,
    Choose(String),
    Param(String, String),
    /// The fast path for the next replay (on unless turned off).
    FastPath(bool),
    Start,
    Control(ReplayControl),
    /// The steering or answer being written for the replay.
    Draft(String),
    /// Sends it: steering while the replay runs, the answer (which resumes it) while paused.
    Send,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkflowMenu {
    pub open: bool,
    /// `None` until the worker answered.
    pub list: Option<Vec<WorkflowSummary>>,
    /// The chosen workflow and the form's values, by parameter.
    pub chosen: Option<(WorkflowSummary, Vec<(String, String)>)>,
    /// Off for the chosen workflow's next replay: every step asks the model. Choosing a
    /// workflow turns the fast path back on.
    pub fast_path_off: bool,
    pub replay: Option<ReplayProgress>,
    /// Pause & Steer: what the user is writing to the replay.
    pub draft: String,
    pub error: Option<String>,
    /// Requests whose failure is this menu's to show.
    asked: Vec<u32>,
}

impl WorkflowMenu {
    /// Takes a failure of one of the menu's requests; false if it is not one.
    pub fn failed(&mut self, id: u32, message: &str) -> bool {
        let ours = self.asked.contains(&id);
        if ours {
            self.asked.retain(|a| *a != id);
            self.error = Some(message.to_owned());
        }
        ours
    }

    /// What the header says of a live replay (the task pill would say "Idle").
    pub fn pill(&self) -> Option<String> {
        let replay = self.replay.as_ref().filter(|r| r.is_live())?;
        Some(match (replay.status, &replay.question) {
            (JobStatus::Paused, Some(_)) => "Replay needs you".to_owned(),
            (JobStatus::Paused, None) => "Replay paused".to_owned(),
            _ => format!(
                "Replaying · subtask {} of {}",
                (replay.subtask + 1).min(replay.subtasks),
                replay.subtasks
            ),
        })
    }

    /// A replay's progress, shown when it runs in `tab` (the panel's). Without a replay the
    /// broadcast says nothing of this tab: the last one shown stays.
    pub fn on_replay(&mut self, tab: Option<TabId>, replay: Option<Box<ReplayProgress>>) {
        if let Some(replay) = replay.filter(|r| Some(r.tab_id) == tab) {
            self.replay = Some(*replay);
        }
    }

    pub fn listed(&mut self, id: u32, workflows: Vec<WorkflowSummary>) {
        self.asked.retain(|a| *a != id);
        self.list = Some(workflows);
    }
}

impl PanelState {
    pub(super) fn workflow(&mut self, action: WorkflowAction) {
        let connected = self.connected();
        let menu = &mut self.workflows;
        match action {
            WorkflowAction::Toggle => {
                menu.open = !menu.open;
                menu.error = None;
                if menu.open && connected {
                    let id = self.request(|id| PanelRequest::ListWorkflows { id });
                    self.workflows.asked.push(id);
                }
            }
            WorkflowAction::Choose(id) => {
                let found = menu.list.iter().flatten().find(|w| w.id == id).cloned();
                menu.fast_path_off = false;
                menu.chosen = found.map(|w| {
                    let values =
                        w.params.iter().map(|p| (p.name.clone(), p.example.clone())).collect();
                    (w, values)
                });
            }
            WorkflowAction::Param(name, value) => {
                if let Some((_, values)) = &mut menu.chosen
                    && let Some(field) = values.iter_mut().find(|(n, _)| *n == name)
                {
                    field.1 = value;
                }
            }
            WorkflowAction::FastPath(on) => menu.fast_path_off = !on,
            WorkflowAction::Start => {
                let Some((workflow, values)) = menu.chosen.clone() else { return };
                let Some(tab_id) = self.tab else {
                    menu.error = Some("There is no tab for the replay to run in.".into());
                    return;
                };
                let empty: Vec<&str> = values
                    .iter()
                    .filter(|(_, v)| v.trim().is_empty())
                    .map(|(n, _)| n.as_str())
                    .collect();
                if !empty.is_empty() {
                    menu.error = Some(format!("Give a value for {}.", empty.join(", ")));
                    return;
                }
                if !connected {
                    menu.error = Some(super::LOST.into());
                    return;
                }
                menu.error = None;
                menu.chosen = None;
                menu.open = false;
                let fast_path = !menu.fast_path_off;
                let id = self.request(|id| PanelRequest::StartReplay {
                    id,
                    workflow_id: workflow.id,
                    version: workflow.version,
                    tab_id,
                    params: values.into_iter().collect(),
                    fast_path,
                });
                self.workflows.asked.push(id);
            }
            WorkflowAction::Draft(text) => menu.draft = text,
            WorkflowAction::Send => {
                let Some(run_id) =
                    menu.replay.as_ref().filter(|r| r.is_live()).map(|r| r.run_id.clone())
                else {
                    return;
                };
                let text = menu.draft.trim().to_owned();
                if text.is_empty() {
                    return;
                }
                if !connected {
                    menu.error = Some(super::LOST.into());
                    return;
                }
                menu.draft.clear();
                menu.error = None;
                let id = self.request(|id| PanelRequest::ReplayMessage { id, run_id, text });
                self.workflows.asked.push(id);
            }
            WorkflowAction::Control(action) => {
                let Some(run_id) = menu.replay.as_ref().map(|r| r.run_id.clone()) else { return };
                let id = self.request(|id| PanelRequest::ReplayControl { id, run_id, action });
                self.workflows.asked.push(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use protocol::WorkerEvent;
    use protocol::workflow::ParamSummary;

    use super::*;
    use crate::state::PanelAction;

    fn panel() -> PanelState {
        let state = PanelState::default().reduce_owned(PanelAction::TabChosen(Some(3)));
        state.reduce_owned(PanelAction::Worker(WorkerEvent::Hello { version: "t".into() }))
    }

    fn act(state: PanelState, action: WorkflowAction) -> PanelState {
        state.reduce_owned(PanelAction::Workflow(action))
    }

    #[test]
    fn a_workflow_is_chosen_from_the_list_and_replayed_in_the_panels_tab() {
        let state = act(panel(), WorkflowAction::Toggle);
        let Some(PanelRequest::ListWorkflows { id }) = state.outbox.last().cloned() else {
            panic!("{:?}", state.outbox)
        };
        let shop = WorkflowSummary {
            id: "wf".into(),
            version: 2,
            name: "Cheapest".into(),
            params: vec![ParamSummary {
                name: "product".into(),
                description: "".into(),
                example: "grinder".into(),
                secret: false,
            }],
        };
        let state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Workflows {
            id,
            workflows: vec![shop],
        }));
        let state = act(state, WorkflowAction::Choose("wf".into()));
        assert_eq!(
            state.workflows.chosen.as_ref().unwrap().1,
            [("product".into(), "grinder".into())]
        );
        let state = act(state, WorkflowAction::Param("product".into(), " ".into()));
        let state = act(state, WorkflowAction::Start);
        assert!(state.workflows.error.as_ref().unwrap().contains("product"));
        let state = act(state, WorkflowAction::Param("product".into(), "tea".into()));
        let state = act(state, WorkflowAction::FastPath(false));
        let state = act(state, WorkflowAction::Start);
        let Some(PanelRequest::StartReplay { id, tab_id, version, params, fast_path, .. }) =
            state.outbox.last().cloned()
        else {
            panic!()
        };
        assert_eq!((tab_id, version, params["product"].as_str()), (3, 2, "tea"));
        assert!(!fast_path, "turned off in the form, every step asks the model");
        assert!(!state.workflows.open);
        // Choosing a workflow again starts with the fast path on.
        let again = act(state.clone(), WorkflowAction::Choose("wf".into()));
        assert!(!again.workflows.fast_path_off);
        // A refusal (a task runs) is shown in the menu, not lost.
        let state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Failed {
            id,
            message: "A task is running".into(),
        }));
        assert_eq!(state.workflows.error.as_deref(), Some("A task is running"));
    }

    #[test]
    fn the_answer_to_a_replays_question_is_sent_as_its_message() {
        let progress = ReplayProgress {
            run_id: "run-9".into(),
            workflow_id: "wf".into(),
            version: 1,
            workflow_name: "Cheapest".into(),
            tab_id: 3,
            subtask: 1,
            subtasks: 2,
            step: 4,
            model_calls: 1,
            calls_saved: 3,
            fast_path: true,
            status: JobStatus::Paused,
            why: None,
            extracts: Default::default(),
            question: Some("Which size?".into()),
        };
        let state = panel().reduce_owned(PanelAction::Worker(WorkerEvent::Replay {
            id: None,
            replay: Some(Box::new(progress.clone())),
        }));
        // Nothing to send yet.
        let before = state.outbox.len();
        let state = act(state, WorkflowAction::Send);
        assert_eq!(state.outbox.len(), before);
        let state = act(state, WorkflowAction::Draft("  The large one ".into()));
        let state = act(state, WorkflowAction::Send);
        assert_eq!(state.workflows.pill().as_deref(), Some("Replay needs you"));
        let Some(PanelRequest::ReplayMessage { run_id, text, .. }) = state.outbox.last().cloned()
        else {
            panic!("{:?}", state.outbox)
        };
        assert_eq!((run_id.as_str(), text.as_str()), ("run-9", "The large one"));
        assert!(state.workflows.draft.is_empty());
        // An ended replay takes no message.
        let ended = ReplayProgress { status: JobStatus::Done, question: None, ..progress };
        let state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Replay {
            id: None,
            replay: Some(Box::new(ended)),
        }));
        assert_eq!(state.workflows.pill(), None, "an ended replay leaves the task's pill");
        let state = act(state, WorkflowAction::Draft("more".into()));
        let before = state.outbox.len();
        assert_eq!(act(state, WorkflowAction::Send).outbox.len(), before);
    }
}
