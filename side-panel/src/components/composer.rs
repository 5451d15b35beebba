use yew::prelude::*;

use crate::state::Phase;

#[derive(Properties, PartialEq)]
pub struct ComposerProps {
    pub draft: AttrValue,
    pub phase: Phase,
    pub connected: bool,
    pub pause_requested: bool,
    /// What Send does now: Send, Steer, Answer, Send & resume.
    pub send_label: AttrValue,
    pub command_error: Option<AttrValue>,
    pub send_error: Option<AttrValue>,
    pub input: NodeRef,
    pub on_input: Callback<String>,
    pub on_send: Callback<()>,
    pub on_pause: Callback<()>,
    pub on_stop: Callback<()>,
}

/// The chat box and the task's controls. The box is never disabled: while the agent works,
/// what is typed steers it.
#[function_component(Composer)]
pub fn composer(props: &ComposerProps) -> Html {
    let oninput = props.on_input.reform(|event: InputEvent| page_kit::value(&event));
    let onkeydown = {
        let on_send = props.on_send.clone();
        Callback::from(move |event: KeyboardEvent| {
            // Enter sends; Shift+Enter (and Enter while composing with an IME) is a newline.
            if event.key() == "Enter" && !event.shift_key() && !event.is_composing() {
                event.prevent_default();
                on_send.emit(());
            }
        })
    };
    let placeholder = match props.phase {
        Phase::Idle => "Give the agent a task for this tab…",
        Phase::Starting | Phase::Running => "Steer the agent: it reads this at its next step…",
        Phase::Paused { question: true } => "Type your answer…",
        Phase::Paused { question: false } => "Adjust the instructions, then send to resume…",
        Phase::Done | Phase::Failed | Phase::Cancelled => "Ask a follow-up in this conversation…",
    };
    let running = matches!(props.phase, Phase::Running);
    let stoppable = matches!(props.phase, Phase::Running | Phase::Paused { .. });
    let can_send = props.connected && !props.draft.trim().is_empty();
    html! {
        <footer class="composer">
            if let Some(error) = &props.command_error {
                <p class="error" data-testid="command-error" role="alert">{ error.clone() }</p>
            }
            if let Some(error) = &props.send_error {
                <p class="error" data-testid="chat-error" role="alert">{ error.clone() }</p>
            }
            <div class="compose-row">
                <textarea
                    ref={props.input.clone()}
                    data-testid="chat-input"
                    aria-label="Message to the agent"
                    aria-describedby="compose-hint"
                    rows="2"
                    {placeholder}
                    value={props.draft.clone()}
                    {oninput}
                    {onkeydown}
                />
                <button type="button" class="primary" data-testid="send" title="Send (Enter)"
                    disabled={!can_send} onclick={props.on_send.reform(|_: MouseEvent| ())}>
                    { props.send_label.clone() }
                </button>
            </div>
            <div class="controls">
                if running {
                    <button type="button" class="secondary" data-testid="pause"
                        title="Pause & Steer (Alt+P): the agent stops at a safe point and waits for your instructions"
                        aria-keyshortcuts="Alt+P" disabled={props.pause_requested}
                        onclick={props.on_pause.reform(|_: MouseEvent| ())}>
                        { if props.pause_requested { "Pausing…" } else { "Pause & Steer" } }
                    </button>
                }
                if stoppable {
                    <button type="button" class="danger" data-testid="stop" title="Stop the task"
                        onclick={props.on_stop.reform(|_: MouseEvent| ())}>
                        { "Stop" }
                    </button>
                }
                <span class="hint" id="compose-hint">
                    { "Enter to send · Shift+Enter for a new line" }
                    if running { { " · Alt+P to pause" } }
                </span>
            </div>
        </footer>
    }
}
