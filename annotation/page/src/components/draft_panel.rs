use annotation_core::history::word_diff;
use annotation_core::record::{Step, Thought};
use yew::prelude::*;

use crate::components::diff_view::DiffText;
use crate::state::drafting::{DraftAction, Drafting};
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The selected step with its unsaved edits.
    pub step: Step,
    pub drafting: Drafting,
    /// Steps without any thought and no draft waiting: what a batch would draft.
    pub without_thoughts: usize,
    pub editable: bool,
    pub dispatch: Dispatch,
}

/// AI-drafted thoughts (seed §7.G): ask for a draft of this step or of every step without
/// thoughts, and decide on a draft as on tracked changes: each drafted thought shown as a
/// change to the thought as it is, editable, then accepted or rejected.
#[function_component(DraftPanel)]
pub fn draft_panel(props: &Props) -> Html {
    if !props.editable {
        return html! {};
    }
    let state = &props.drafting;
    let step = &props.step;
    let index = step.index;
    let send = |action: DraftAction| {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.dispatch(Action::Draft(action.clone())))
    };
    let busy = state.asking.is_some() || state.batch.is_some();
    let empty = Thought::ALL.iter().all(|t| step.thoughts.get(*t).trim().is_empty());
    let draft = state.pending.get(&index);
    html! {
        <div class="draft-panel" data-testid="draft-panel">
            <div class="draft-bar">
                <button class="small" data-testid="draft-step" disabled={busy}
                    title="The Navigator's model writes the three thoughts from the screenshot, the action, the page state and the task"
                    onclick={send(DraftAction::Ask)}>
                    { if state.asking == Some(index) && state.batch.is_none() { "Drafting…" } else if empty { "Draft thoughts with AI" } else { "Draft again with AI" } }
                </button>
                if let Some(batch) = state.batch {
                    <span class="muted" data-testid="draft-progress" role="status">
                        { format!("Drafting {} of {}…", (batch.done + 1).min(batch.total), batch.total) }
                    </span>
                    <button class="small" data-testid="draft-stop" disabled={batch.stopped} onclick={send(DraftAction::Stop)}>{ "Stop" }</button>
                } else if props.without_thoughts > 0 {
                    <button class="small ghost" data-testid="draft-batch" disabled={busy} onclick={send(DraftAction::Batch)}>
                        { format!("Draft thoughts for {} step{} without thoughts", props.without_thoughts, if props.without_thoughts == 1 { "" } else { "s" }) }
                    </button>
                }
            </div>
            if let Some(draft) = draft {
                <div class="draft" data-testid="draft" role="group" aria-label="AI draft">
                    <div class="draft-head">
                        <strong>{ "AI draft" }</strong>
                        <span class="muted">{ " — a suggestion: check it against the screenshot, edit, then accept or reject each thought." }</span>
                        <span class="spacer" />
                        <button class="primary small" data-testid="draft-accept-all" onclick={send(DraftAction::AcceptAll { step_index: index })}>{ "Accept all" }</button>
                        <button class="small" data-testid="draft-reject-all" onclick={send(DraftAction::RejectAll { step_index: index })}>{ "Reject all" }</button>
                    </div>
                    { for draft.thoughts.iter().map(|(which, text)| {
                        let (which, n) = (*which, which.number());
                        let on_input = props.dispatch.to_callback().reform(move |e: InputEvent| {
                            Action::Draft(DraftAction::Edit { step_index: index, which, text: page_kit::value(&e) })
                        });
                        html! {
                            <div class="draft-thought" data-testid={format!("draft-thought{n}")}>
                                <div class="draft-head">
                                    <span class="muted">{ format!("Thought {n}") }</span>
                                    <span class="spacer" />
                                    <button class="primary small" data-testid={format!("draft-accept{n}")} onclick={send(DraftAction::Accept { step_index: index, which })}>{ "Accept" }</button>
                                    <button class="small" data-testid={format!("draft-reject{n}")} onclick={send(DraftAction::Reject { step_index: index, which })}>{ "Reject" }</button>
                                </div>
                                // The change to the thought as it stands, then the draft to edit.
                                <DiffText ops={word_diff(step.thoughts.get(which), text)} />
                                <textarea data-testid={format!("draft-text{n}")} aria-label={format!("Drafted thought {n}")} rows="2" value={text.clone()} oninput={on_input} />
                            </div>
                        }
                    }) }
                </div>
            }
            if !step.drafted_thoughts.is_empty() {
                <p class="muted drafted-mark" data-testid="drafted-mark">
                    { format!("Drafted by AI and accepted: {}. Marked in exports; a thought typed over whole loses the mark.",
                        step.drafted_thoughts.iter().map(|t| format!("thought {}", t.number())).collect::<Vec<_>>().join(", ")) }
                </p>
            }
        </div>
    }
}
