use annotation_core::record::{ActionKind, Step, StepState};
use yew::prelude::*;

use crate::components::screenshot_view::Thumbnail;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub step: Step,
    pub position: usize,
    pub selected: bool,
    /// Unresolved comment threads.
    pub threads: usize,
    /// Pending suggestions.
    pub pending: usize,
    /// Edited and not saved yet.
    pub drafted: bool,
    pub on_select: Callback<usize>,
}

/// The symbol for an action type, so a long list can be scanned by eye.
pub fn action_icon(kind: &ActionKind) -> &'static str {
    // Symbols from common text fonts (DejaVu, Segoe UI Symbol), not emoji, which a machine
    // without an emoji font shows as empty boxes.
    match kind {
        ActionKind::Click | ActionKind::DoubleClick | ActionKind::RightClick => "➚",
        ActionKind::Drag => "✥",
        ActionKind::SelectText | ActionKind::Copy | ActionKind::Paste => "⎘",
        ActionKind::SetSlider => "⇹",
        ActionKind::Type | ActionKind::Key => "⌨",
        ActionKind::Scroll => "↕",
        ActionKind::Wait => "◷",
        ActionKind::Select | ActionKind::ListOptions => "☰",
        ActionKind::Navigate | ActionKind::SwitchTab | ActionKind::CloseTab => "➜",
        ActionKind::Done => "✔",
        ActionKind::Extract => "≡",
        ActionKind::AskUser => "?",
        ActionKind::Hover | ActionKind::None | ActionKind::Other(_) => "•",
    }
}

#[function_component(StepRow)]
pub fn step_row(props: &Props) -> Html {
    let step = &props.step;
    let (state_class, state_label) = match step.state() {
        StepState::Done => ("done", "Done"),
        StepState::Flagged => ("flagged", "Flagged for review"),
        StepState::NeedsAnnotation => ("todo", "Needs annotation"),
    };
    let preview: String = step.thoughts.thought1.chars().take(50).collect();
    let open_issues = annotation_core::issues::open_count(step);
    let position = props.position;
    html! {
        <button class={classes!("step-row", props.selected.then_some("selected"))} data-testid="step-row"
            data-index={step.index.to_string()} data-state={state_class} data-draft={props.drafted.to_string()}
            onclick={props.on_select.reform(move |_| position)} aria-current={props.selected.then_some("step")}>
            <span class="number">{ step.index + 1 }</span>
            <span class="icon" title={step.action.kind.to_string()}>{ action_icon(&step.action.kind) }</span>
            <Thumbnail shot={step.screenshot.clone()} />
            <span class="summary">
                <span class="action-line">{ format!("{} {}", step.action.kind, step.action.target) }</span>
                <span class="muted">{ if preview.is_empty() { "(no thought 1 yet)".to_owned() } else { preview } }</span>
            </span>
            <span class="badges">
                if props.drafted { <span class="count unsaved" title="Unsaved edits">{ "unsaved" }</span> }
                if open_issues > 0 { <span class="count issues" data-testid="step-issues" title="Open issues">{ format!("⚑ {open_issues}") }</span> }
                if props.threads > 0 { <span class="count comments" title="Open comment threads">{ format!("✉ {}", props.threads) }</span> }
                if props.pending > 0 { <span class="count suggestions" title="Pending suggestions">{ format!("✎ {}", props.pending) }</span> }
                <span class={classes!("state-dot", state_class)} title={state_label} aria-label={state_label} />
            </span>
        </button>
    }
}
