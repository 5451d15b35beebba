use protocol::TabId;
use yew::prelude::*;

use crate::components::job_row::JobRow;
use crate::components::list_status::list_status;
use crate::components::view_head::ViewHead;
use crate::state::jobs::Jobs;

#[derive(Properties, PartialEq)]
pub struct JobsViewProps {
    pub jobs: Jobs,
    /// This panel's tab: its jobs are marked.
    pub tab: Option<TabId>,
    pub connected: bool,
    pub on_stop: Callback<String>,
    pub on_goto: Callback<TabId>,
    pub on_close: Callback<()>,
}

/// Every job of every tab, live ones first: each tab's own panel shows its task or replay,
/// this is where they are seen together, stopped, or gone to.
#[function_component(JobsView)]
pub fn jobs_view(props: &JobsViewProps) -> Html {
    let jobs = &props.jobs;
    let rows = jobs.rows();
    html! {
        <section class="jobs" data-testid="jobs-view" aria-labelledby="jobs-title">
            <ViewHead name="jobs" title="Jobs" on_close={props.on_close.clone()} />
            <p class="section-hint">
                { "Tasks, replays, reflections, pipeline runs and recordings in every tab. Each tab's panel shows its own; go to the tab to answer or steer." }
            </p>
            { list_status(
                "jobs",
                jobs.list.is_none().then_some("Reading the jobs…"),
                jobs.error.as_ref(),
                (jobs.list.is_some() && rows.is_empty())
                    .then_some("No jobs yet. Tasks, replays and recordings show here while they run."),
            ) }
            <ul class="job-list" aria-busy={jobs.loading.is_some().to_string()}>
                { for rows.into_iter().map(|job| {
                    let key = job.id.clone();
                    let this_tab = job.tab_id.is_some() && job.tab_id == props.tab;
                    let stopping = jobs.is_stopping(&job.id);
                    html! {
                        <JobRow {key} {job} {this_tab} {stopping} connected={props.connected}
                            on_stop={props.on_stop.clone()} on_goto={props.on_goto.clone()} />
                    }
                }) }
            </ul>
        </section>
    }
}
