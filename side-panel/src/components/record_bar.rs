use yew::prelude::*;

use crate::state::recording::RecordingView;

#[derive(Properties, PartialEq)]
pub struct RecordBarProps {
    pub recording: RecordingView,
    pub connected: bool,
    pub on_toggle: Callback<()>,
    /// The Ctrl+I offer, from the button.
    pub on_offer: Callback<()>,
}

/// Record / Stop, what is being recorded, and the Ctrl+I button while recording.
#[function_component(RecordBar)]
pub fn record_bar(props: &RecordBarProps) -> Html {
    let view = &props.recording;
    let recording = view.is_recording();
    let label = match (recording, view.pending.is_some()) {
        (true, true) => "Stopping…",
        (false, true) => "Starting…",
        (true, false) => "Stop",
        (false, false) => "Record",
    };
    html! {
        <div class={classes!("record-bar", recording.then_some("recording"))}>
            <button type="button" data-testid="record-toggle" data-recording={recording.to_string()}
                disabled={!props.connected || view.pending.is_some()}
                title={if recording { "Stop recording and save the steps" } else { "Record what you do in this tab" }}
                onclick={props.on_toggle.reform(|_: MouseEvent| ())}>
                <span class="record-dot" aria-hidden="true"></span>{ label }
            </button>
            if let Some(line) = view.line() {
                <span class="record-status" data-testid="record-status" role="status"
                    data-events={view.status.as_ref().map(|s| s.events.to_string())}
                    data-screenshots={view.status.as_ref().map(|s| s.screenshots.to_string())}
                    data-settled={view.status.as_ref().map(|s| s.settled.to_string())}
                    data-steps={view.status.as_ref().and_then(|s| s.steps).map(|n| n.to_string())}>
                    { line }
                </span>
            }
            if recording && view.offer.is_none() {
                <button type="button" class="record-offer-open" data-testid="record-offer-open"
                    title="Ctrl+I: extract something from the page, or add a note"
                    onclick={props.on_offer.reform(|_: MouseEvent| ())}>{ "Ctrl+I" }</button>
            }
            if let Some(error) = view.error.clone().or_else(|| view.status.as_ref().and_then(|s| s.error.clone())) {
                <span class="record-error" data-testid="record-error" role="alert">{ error }</span>
            }
        </div>
    }
}
