//! The Jobs view: every task, replay, reflection, pipeline run and recording the worker runs
//! or holds, whichever tab it works in. The worker sends the whole list on connect, on every
//! change and when asked; this keeps the latest, and decides what Stop and "Go to tab" ask.

use protocol::jobs::{JobSummary, ProviderWait};
use protocol::{PanelRequest, TabId};

use super::{Effect, PanelState, View};

#[derive(Debug, Clone, PartialEq)]
pub enum JobAction {
    /// Shows the Jobs view (and lists the jobs afresh), or goes back to the chat.
    Toggle,
    /// Stops the job with this id, whatever its kind.
    Stop(String),
    /// Brings the job's tab to the front, where its own panel shows it.
    GoTo(TabId),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jobs {
    /// As the worker last listed them; `None` until it has.
    pub list: Option<Vec<JobSummary>>,
    /// The `list_jobs` awaiting its answer.
    pub loading: Option<u32>,
    /// `stop_job` requests awaiting their answer: (request, job id).
    pub stopping: Vec<(u32, String)>,
    /// Why the last request failed.
    pub error: Option<String>,
}

impl Jobs {
    fn all(&self) -> impl Iterator<Item = &JobSummary> {
        self.list.iter().flatten()
    }

    /// Jobs running or paused, in every tab.
    pub fn live(&self) -> usize {
        self.all().filter(|job| job.status.is_live()).count()
    }

    /// Jobs waiting for the person: a question, or a pause.
    pub fn needing_you(&self) -> usize {
        self.all().filter(|job| job.needs_user()).count()
    }

    /// Live jobs first (the worker's order kept within each), then those that ended.
    pub fn rows(&self) -> Vec<JobSummary> {
        let mut rows: Vec<JobSummary> = self.all().cloned().collect();
        lean::sort_by_key(&mut rows, |job| !job.status.is_live());
        rows
    }

    /// The provider wait of the live job working in `tab`, if it waits.
    pub fn provider_wait(&self, tab: Option<TabId>) -> Option<&ProviderWait> {
        let tab = tab?;
        self.all()
            .filter(|job| job.status.is_live() && job.tab_id == Some(tab))
            .find_map(|job| job.waiting.as_ref())
    }

    /// The live job in `tab` that an MCP client drives, if one does: its panel says so,
    /// with a Stop.
    pub fn driven_in(&self, tab: Option<TabId>) -> Option<&JobSummary> {
        let tab = tab?;
        self.all()
            .find(|job| job.status.is_live() && job.tab_id == Some(tab) && job.driven_by.is_some())
    }

    pub fn is_stopping(&self, job_id: &str) -> bool {
        self.stopping.iter().any(|(_, job)| job == job_id)
    }

    /// A list arrived: a broadcast (`id` none) or the answer to `list_jobs`.
    pub fn listed(&mut self, id: Option<u32>, jobs: Vec<JobSummary>) {
        if id.is_some() && id == self.loading {
            self.loading = None;
            self.error = None;
        }
        self.list = Some(jobs);
    }

    /// `done` answered a request; true when it was a Stop of this view.
    pub fn done(&mut self, id: u32) -> bool {
        let before = self.stopping.len();
        self.stopping.retain(|(asked, _)| *asked != id);
        before != self.stopping.len()
    }

    /// Whether `id` is a request of this view; if so, its failure is shown.
    pub fn failed(&mut self, id: u32, message: &str) -> bool {
        if self.loading == Some(id) {
            self.loading = None;
            self.error = Some(format!("Could not list the jobs: {message}"));
        } else if self.done(id) {
            self.error = Some(format!("Not stopped: {message}"));
        } else {
            return false;
        }
        true
    }

    /// The port closed: nothing in flight will be answered.
    pub fn interrupted(&mut self, message: &str) {
        if self.loading.take().is_some() || !self.stopping.is_empty() {
            self.stopping.clear();
            self.error = Some(message.to_owned());
        }
    }
}

/// The tab as the Jobs view names it: Chrome's title, else "Tab N" (none for a reflection).
pub fn tab_label(job: &JobSummary) -> String {
    match job.tab_id {
        _ if !job.tab_title.trim().is_empty() => job.tab_title.trim().to_owned(),
        Some(tab) => format!("Tab {tab}"),
        None => "No tab".to_owned(),
    }
}

impl PanelState {
    pub(super) fn list_jobs(&mut self) {
        if self.connected() {
            let id = self.request(|id| PanelRequest::ListJobs { id });
            self.jobs.loading = Some(id);
        }
    }

    pub(super) fn job(&mut self, action: JobAction) {
        match action {
            JobAction::Toggle if self.view == View::Jobs => self.view = View::Chat,
            JobAction::Toggle => {
                self.view = View::Jobs;
                self.jobs.error = None;
                self.list_jobs();
            }
            JobAction::Stop(job_id) => {
                let live = self.jobs.all().any(|job| job.id == job_id && job.status.is_live());
                if !live || self.jobs.is_stopping(&job_id) {
                    return;
                }
                if !self.connected() {
                    self.jobs.error = Some(super::LOST.into());
                    return;
                }
                self.jobs.error = None;
                let asked = job_id.clone();
                let id = self.request(|id| PanelRequest::StopJob { id, job_id: asked });
                self.jobs.stopping.push((id, job_id));
            }
            JobAction::GoTo(tab_id) => {
                let id = self.take_request_id();
                self.effects.push(Effect::ShowTab { id, tab_id });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use protocol::WorkerEvent;
    use protocol::agent::Spend;
    use protocol::jobs::{JobKind, JobStatus};

    use super::*;
    use crate::state::PanelAction;

    /// Tab 3's panel, greeted: its greeting's requests (0 to 2) drained.
    fn panel() -> PanelState {
        let mut state = PanelState::default()
            .reduce_owned(PanelAction::TabChosen(Some(3)))
            .reduce_owned(PanelAction::Worker(WorkerEvent::Hello { version: "t".into() }));
        assert!(state.outbox.contains(&PanelRequest::ListJobs { id: 1 }), "{:?}", state.outbox);
        state.outbox.clear();
        state
    }

    fn job(id: &str, kind: JobKind, tab: Option<TabId>, status: JobStatus) -> JobSummary {
        JobSummary::new(id, kind, tab, format!("{} {id}", kind.label()), status)
    }

    fn wait() -> ProviderWait {
        ProviderWait { status: 429, wait_ms: 3_200.0, attempt: 2, since: 0.0 }
    }

    fn listed(state: PanelState, id: Option<u32>, jobs: Vec<JobSummary>) -> PanelState {
        state.reduce_owned(PanelAction::Worker(WorkerEvent::Jobs { id, jobs }))
    }

    fn act(state: PanelState, action: JobAction) -> PanelState {
        state.reduce_owned(PanelAction::Job(action))
    }

    /// A task in this tab waiting on the provider, a replay in tab 5 asking a question, a
    /// reflection done, and a finished pipeline in this tab that still says it waited.
    fn four_jobs() -> Vec<JobSummary> {
        let task = JobSummary {
            tab_title: "Kettles – Shop".into(),
            step: 4,
            spend: Spend { input_tokens: 1200, output_tokens: 300, cost: 0.0042 },
            waiting: Some(wait()),
            ..job("s1", JobKind::Task, Some(3), JobStatus::Running)
        };
        let replay = JobSummary {
            question: Some("Which size?".into()),
            ..job("run-9", JobKind::Replay, Some(5), JobStatus::Paused)
        };
        let reflection = job("rec-1", JobKind::Reflection, None, JobStatus::Done);
        let pipeline = JobSummary {
            waiting: Some(wait()),
            ..job("pipeline:4", JobKind::Pipeline, Some(3), JobStatus::Done)
        };
        vec![reflection, task, pipeline, replay]
    }

    #[test]
    fn a_tab_whose_live_job_an_mcp_client_drives_says_so() {
        let mut jobs = four_jobs();
        assert!(listed(panel(), None, jobs.clone()).jobs.driven_in(Some(3)).is_none());
        jobs[1].driven_by = Some("Claude Desktop".into());
        // The finished pipeline in the same tab is no longer driven.
        jobs[2].driven_by = Some("old agent".into());
        let state = listed(panel(), None, jobs.clone());
        let driven = state.jobs.driven_in(Some(3)).unwrap();
        assert_eq!(
            (driven.id.as_str(), driven.driven_by.as_deref()),
            ("s1", Some("Claude Desktop"))
        );
        assert!(state.jobs.driven_in(Some(5)).is_none(), "another tab's job is its own panel's");
        jobs[1].status = JobStatus::Done;
        assert!(listed(panel(), None, jobs).jobs.driven_in(Some(3)).is_none());
    }

    #[test]
    fn the_list_counts_live_jobs_and_those_waiting_for_the_person() {
        let state = listed(panel(), None, four_jobs());
        assert_eq!((state.jobs.live(), state.jobs.needing_you()), (2, 1));
        let order: Vec<String> = state.jobs.rows().into_iter().map(|j| j.id).collect();
        assert_eq!(order, ["s1", "run-9", "rec-1", "pipeline:4"], "live first, in order");
        let labels: Vec<String> = state.jobs.rows().iter().map(tab_label).collect();
        assert_eq!(labels, ["Kettles – Shop", "Tab 5", "No tab", "Tab 3"]);
        // A job the person paused themselves waits on nobody else.
        let mut jobs = four_jobs();
        jobs.push(JobSummary {
            paused_by_user: true,
            ..job("s2", JobKind::Task, Some(6), JobStatus::Paused)
        });
        let paused = listed(panel(), None, jobs);
        assert_eq!((paused.jobs.live(), paused.jobs.needing_you()), (3, 1));
        // A later broadcast replaces the list whole.
        let state = listed(state, None, vec![]);
        assert_eq!((state.jobs.live(), state.jobs.needing_you()), (0, 0));
        assert_eq!(state.jobs.list, Some(vec![]));
    }

    #[test]
    fn the_provider_wait_shown_is_the_live_job_of_this_tab() {
        let state = listed(panel(), None, four_jobs());
        let shown = state.jobs.provider_wait(state.tab).map(ProviderWait::describe);
        assert_eq!(shown.as_deref(), Some("Waiting for the provider (rate limit, HTTP 429), 4 s"));
        assert_eq!(state.jobs.provider_wait(Some(5)), None, "tab 5's job does not wait");
        assert_eq!(state.jobs.provider_wait(None), None);
        // The task's wait over, nothing shows: the ended pipeline's wait is stale.
        let mut jobs = four_jobs();
        jobs[1].waiting = None;
        let state = listed(state, None, jobs);
        assert_eq!(state.jobs.provider_wait(state.tab), None);
    }

    #[test]
    fn the_view_opens_with_a_fresh_list_and_closes_back_to_the_chat() {
        let state = act(panel(), JobAction::Toggle);
        assert_eq!(state.view, View::Jobs);
        let [PanelRequest::ListJobs { id }] = state.outbox[..] else {
            panic!("{:?}", state.outbox)
        };
        assert_eq!(state.jobs.loading, Some(id));
        let state = listed(state, Some(id), four_jobs());
        assert_eq!(state.jobs.loading, None);
        assert_eq!(state.jobs.rows().len(), 4);
        let state = act(state, JobAction::Toggle);
        assert_eq!(state.view, View::Chat);
        // A failed list says so in the view.
        let mut state = act(state, JobAction::Toggle);
        let Some(PanelRequest::ListJobs { id }) = state.outbox.pop() else { panic!() };
        let state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Failed {
            id,
            message: "No worker".into(),
        }));
        assert_eq!(state.jobs.error.as_deref(), Some("Could not list the jobs: No worker"));
    }

    #[test]
    fn stop_asks_once_and_only_for_a_live_job() {
        let state = listed(panel(), None, four_jobs());
        let state = act(state, JobAction::Stop("rec-1".into()));
        assert!(state.outbox.is_empty(), "an ended job is not stopped");
        let state = act(state, JobAction::Stop("gone".into()));
        assert!(state.outbox.is_empty(), "nor one not listed");
        let state = act(state, JobAction::Stop("run-9".into()));
        let state = act(state, JobAction::Stop("run-9".into()));
        let [PanelRequest::StopJob { id, ref job_id }] = state.outbox[..] else {
            panic!("{:?}", state.outbox)
        };
        assert_eq!(job_id, "run-9");
        assert!(state.jobs.is_stopping("run-9"));
        let mut state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Failed {
            id,
            message: "No such job is running".into(),
        }));
        assert!(!state.jobs.is_stopping("run-9"));
        assert_eq!(state.jobs.error.as_deref(), Some("Not stopped: No such job is running"));
        assert!(state.chat.is_empty(), "not a chat error");
        state.outbox.clear();
        let state = act(state, JobAction::Stop("s1".into()));
        let Some(PanelRequest::StopJob { id, .. }) = state.outbox.last().cloned() else { panic!() };
        assert_eq!(state.jobs.error, None);
        let state = state.reduce_owned(PanelAction::Worker(WorkerEvent::Done { id }));
        assert!(state.jobs.stopping.is_empty());
        // Cut off by a reconnect, a stop is not left hanging.
        let state = act(state, JobAction::Stop("s1".into()));
        let state = state.reduce_owned(PanelAction::PortInterrupted);
        assert!(state.jobs.stopping.is_empty());
        assert!(state.jobs.error.as_deref().unwrap().contains("interrupted"));
    }

    #[test]
    fn go_to_tab_is_an_effect_carried_out_once() {
        let state = act(listed(panel(), None, four_jobs()), JobAction::GoTo(5));
        assert!(state.outbox.is_empty(), "not the worker's to do");
        let [Effect::ShowTab { id, tab_id: 5 }] = state.effects[..] else {
            panic!("{:?}", state.effects)
        };
        let state = act(state, JobAction::GoTo(3));
        assert_eq!(state.effects.len(), 2);
        let state = state.reduce_owned(PanelAction::EffectsRun { up_to: id });
        assert!(matches!(state.effects[..], [Effect::ShowTab { tab_id: 3, .. }]));
        // The port going away does not drop it: it needs no worker.
        let state = state.reduce_owned(PanelAction::PortLost);
        assert_eq!(state.effects.len(), 1);
    }
}
