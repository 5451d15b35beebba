use protocol::TabId;
use protocol::agent::Spend;
use yew::prelude::*;

use crate::components::run_info::RunInfo;
use crate::components::status_pill::StatusPill;
use crate::state::{Phase, View, WorkerLink};

#[derive(Properties, PartialEq)]
pub struct StatusBarProps {
    pub worker: WorkerLink,
    pub tab: Option<TabId>,
    pub phase: Phase,
    pub step: u32,
    pub pause_requested: bool,
    /// A live replay's status for the pill.
    pub replay: Option<String>,
    pub spend: Spend,
    pub annotation: Option<String>,
    pub view: View,
    /// Jobs running or paused in every tab, and how many of them wait for the person.
    pub live_jobs: usize,
    pub jobs_needing_you: usize,
    /// What this tab's job waits for from its model provider (a rate limit), if it waits.
    pub provider_wait: Option<String>,
    pub can_start_over: bool,
    pub on_new_chat: Callback<()>,
    pub on_toggle_history: Callback<()>,
    pub on_toggle_jobs: Callback<()>,
    pub on_toggle_telemetry: Callback<()>,
    pub on_toggle_settings: Callback<()>,
}

/// The header: product name, task status, New chat, Jobs, History and Settings; below, which
/// tab is driven, whether the agent is reachable, the run's cost and a provider's wait.
#[function_component(StatusBar)]
pub fn status_bar(props: &StatusBarProps) -> Html {
    let (state, label) = match &props.worker {
        WorkerLink::Connecting => ("connecting", "Connecting…".to_owned()),
        WorkerLink::Reconnecting => ("connecting", "Reconnecting…".to_owned()),
        WorkerLink::Connected { version } => ("connected", format!("Agent ready · v{version}")),
        WorkerLink::Lost => ("lost", "Agent unreachable — reopen the panel".to_owned()),
    };
    let tab = match props.tab {
        Some(tab) => format!("Tab {tab}"),
        None => "No tab".to_owned(),
    };
    let new_chat_title = if props.can_start_over {
        "Start a new conversation (forgets this one's context)"
    } else {
        "Stop the task first to start a new chat"
    };
    let history_open = props.view == View::History;
    let settings_open = props.view == View::Settings;
    let telemetry_open = props.view == View::Telemetry;
    let jobs_open = props.view == View::Jobs;
    let jobs_title = match (props.live_jobs, props.jobs_needing_you) {
        (0, _) => "Jobs: nothing runs now".to_owned(),
        (live, 0) => format!("Jobs: {live} running in your tabs"),
        (live, waiting) => format!("Jobs: {live} running in your tabs, {waiting} waiting for you"),
    };
    html! {
        <header class="status-bar">
            <div class="bar-row">
                <h1>{ "AlphaScout" }</h1>
                <StatusPill phase={props.phase} step={props.step} pause_requested={props.pause_requested} replay={props.replay.clone()} />
                <span class="spacer"></span>
                <button type="button" class="ghost" data-testid="new-chat" aria-label="New chat" title={new_chat_title}
                    disabled={!props.can_start_over} onclick={props.on_new_chat.reform(|_: MouseEvent| ())}>
                    <span class="plus" aria-hidden="true">{ "+" }</span>
                    <span class="new-chat-label">{ " New chat" }</span>
                </button>
                <span class="jobs-toggle">
                    <button type="button" class={classes!("ghost", "jobs-button", jobs_open.then_some("active"))}
                        data-testid="jobs-toggle" data-live={props.live_jobs.to_string()}
                        aria-label={jobs_title.clone()} title={jobs_title}
                        aria-pressed={jobs_open.to_string()}
                        onclick={props.on_toggle_jobs.reform(|_: MouseEvent| ())}>
                        <span class="jobs-word">{ "Jobs " }</span>
                        <span class="jobs-live">{ props.live_jobs }</span>
                    </button>
                    <span class="jobs-needs-you" data-testid="jobs-needs-you" aria-hidden="true"
                        hidden={props.jobs_needing_you == 0}
                        title="Waiting for you: a question or a pause">
                        { props.jobs_needing_you }
                    </span>
                </span>
                <button type="button" class={classes!("ghost", "icon", history_open.then_some("active"))}
                    data-testid="history-toggle" aria-label="History" title="History: earlier conversations"
                    aria-pressed={history_open.to_string()}
                    onclick={props.on_toggle_history.reform(|_: MouseEvent| ())}>
                    <svg class="clock" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
                        <circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5" />
                        <path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" stroke-width="1.5"
                            stroke-linecap="round" />
                    </svg>
                </button>
                <button type="button" class={classes!("ghost", "icon", settings_open.then_some("active"))}
                    data-testid="settings-toggle" aria-label="Settings" title="Settings"
                    aria-pressed={settings_open.to_string()}
                    onclick={props.on_toggle_settings.reform(|_: MouseEvent| ())}>
                    <span aria-hidden="true">{ "⚙" }</span>
                </button>
            </div>
            <div class="bar-row meta">
                <span class="tab" data-testid="target-tab">{ tab }</span>
                <span class={classes!("link", state)} data-testid="worker-link" data-state={state}>{ label }</span>
                <span class="provider-wait" data-testid="provider-wait" role="status"
                    hidden={props.provider_wait.is_none()}>
                    { props.provider_wait.clone().unwrap_or_default() }
                </span>
                <RunInfo spend={props.spend} annotation={props.annotation.clone()} />
                <button type="button" class={classes!("link-button", telemetry_open.then_some("active"))}
                    data-testid="telemetry-toggle" aria-pressed={telemetry_open.to_string()}
                    title="The agents' decisions, pauses and questions, and the spend per role"
                    onclick={props.on_toggle_telemetry.reform(|_: MouseEvent| ())}>
                    { "What happened" }
                </button>
                <a class="link-button" data-testid="open-studio" href="studio.html" target="_blank"
                    title="Edit, preview, run and trace the prompts">{ "Prompt Studio" }</a>
            </div>
        </header>
    }
}
