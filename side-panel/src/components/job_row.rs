use protocol::TabId;
use protocol::jobs::{JobStatus, JobSummary};
use yew::prelude::*;

use crate::components::run_info::spend_text;
use crate::state::jobs::tab_label;

#[derive(Properties, PartialEq)]
pub struct JobRowProps {
    pub job: JobSummary,
    /// The job works in this panel's tab.
    pub this_tab: bool,
    /// Its Stop was sent and not answered yet.
    pub stopping: bool,
    pub connected: bool,
    pub on_stop: Callback<String>,
    pub on_goto: Callback<TabId>,
}

/// One job in the Jobs view: what it is, where it works, where it stands and what it spent;
/// Stop while it is live, and "Go to tab" where its own panel shows it.
#[function_component(JobRow)]
pub fn job_row(props: &JobRowProps) -> Html {
    let job = &props.job;
    let live = job.status.is_live();
    let status = job.status.label();
    let kind = job.kind.label();
    let on_stop = {
        let (callback, id) = (props.on_stop.clone(), job.id.clone());
        Callback::from(move |_: MouseEvent| callback.emit(id.clone()))
    };
    let step = match job.step {
        0 => None,
        1 => Some("1 step".to_owned()),
        n => Some(format!("{n} steps")),
    };
    // A wait shows only while the job waits on it.
    let waiting = job.waiting.as_ref().filter(|_| live).map(|w| w.describe());
    html! {
        <li class={classes!("job", status, props.this_tab.then_some("this-tab"))} data-testid="job-row"
            data-job-id={job.id.clone()} data-kind={kind.to_ascii_lowercase()} data-status={status}
            data-tab={job.tab_id.map(|tab| tab.to_string())}
            data-needs-you={job.needs_user().to_string()}>
            <div class="job-head">
                <span class="job-kind" data-testid="job-kind">{ kind }</span>
                <span class="job-title" data-testid="job-title" title={job.title.clone()}>{ job.title.clone() }</span>
                <span class={classes!("job-status", status)} data-testid="job-status">{ status }</span>
            </div>
            <div class="job-meta">
                <span class="job-tab" data-testid="job-tab">
                    { tab_label(job) }
                    if props.this_tab { <span class="job-here">{ " · this tab" }</span> }
                </span>
                if let Some(step) = step {
                    <span data-testid="job-step">{ step }</span>
                }
                if let Some((text, title)) = spend_text(job.spend) {
                    <span class="spend" data-testid="job-spend" {title}>{ text }</span>
                }
            </div>
            if let Some(question) = &job.question {
                <p class="job-question" data-testid="job-question">
                    <span class="job-mark" aria-hidden="true">{ "?" }</span>
                    { format!("Asks: {question}") }
                </p>
            } else if let Some(why) = job.why.as_ref().filter(|_| job.status != JobStatus::Running) {
                <p class="job-why" data-testid="job-why">{ why.clone() }</p>
            }
            if let Some(wait) = waiting {
                <p class="job-wait" data-testid="job-wait" role="status">{ wait }</p>
            }
            <div class="job-actions">
                if let Some(tab) = job.tab_id {
                    <button type="button" class="ghost" data-testid="job-goto"
                        title="Show this tab, and its panel"
                        onclick={props.on_goto.reform(move |_: MouseEvent| tab)}>
                        { "Go to tab" }
                    </button>
                }
                if live {
                    <button type="button" class="danger" data-testid="job-stop"
                        disabled={props.stopping || !props.connected}
                        title={format!("Stop this {}", kind.to_ascii_lowercase())}
                        onclick={on_stop}>
                        { if props.stopping { "Stopping…" } else { "Stop" } }
                    </button>
                }
            </div>
        </li>
    }
}
