use yew::prelude::*;

use crate::state::Phase;

#[derive(Properties, PartialEq)]
pub struct StatusPillProps {
    pub phase: Phase,
    /// Steps taken so far.
    pub step: u32,
    pub pause_requested: bool,
    /// A live replay's own status, shown while no task is active.
    #[prop_or_default]
    pub replay: Option<String>,
}

/// Where the task stands, in colour and words.
#[function_component(StatusPill)]
pub fn status_pill(props: &StatusPillProps) -> Html {
    let label = match props.phase {
        Phase::Idle | Phase::Done | Phase::Failed | Phase::Cancelled if props.replay.is_some() => {
            props.replay.clone().unwrap_or_default()
        }
        Phase::Idle => "Idle".to_owned(),
        Phase::Starting => "Starting…".to_owned(),
        Phase::Running if props.pause_requested => "Pausing…".to_owned(),
        Phase::Running => format!("Running · step {}", props.step + 1),
        Phase::Paused { question: true } => "Needs you".to_owned(),
        Phase::Paused { question: false } => "Paused".to_owned(),
        Phase::Done => "Done".to_owned(),
        Phase::Failed => "Failed".to_owned(),
        Phase::Cancelled => "Cancelled".to_owned(),
    };
    let state = props.phase.name();
    html! {
        <span class={classes!("pill", state)} data-testid="status" data-state={state} role="status"
            aria-live="polite" aria-label={format!("Task status: {label}")}>
            <span class="dot" aria-hidden="true"></span>
            <span class="pill-label">{ label }</span>
        </span>
    }
}
