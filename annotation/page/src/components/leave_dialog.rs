use yew::prelude::*;

use crate::state::LeaveChoice;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// Steps with unsaved edits (1-based), for the question.
    pub steps: Vec<u32>,
    /// Whether the person may save here (an annotator's own draft, say).
    pub can_save: bool,
    pub on_choice: Callback<LeaveChoice>,
}

/// "Leave with unsaved edits?": save them first, keep them as a draft in this browser,
/// throw them away, or stay.
#[function_component(LeaveDialog)]
pub fn leave_dialog(props: &Props) -> Html {
    let choose = |choice: LeaveChoice| props.on_choice.reform(move |_| choice);
    let steps: Vec<String> = props.steps.iter().map(u32::to_string).collect();
    let which = match steps.len() {
        0 => "the run header".to_owned(),
        1 => format!("step {}", steps[0]),
        _ => format!("steps {}", steps.join(", ")),
    };
    html! {
        <div class="overlay">
            <div class="dialog" role="alertdialog" aria-label="Unsaved edits" data-testid="leave-dialog">
                <h2>{ "Leave with unsaved edits?" }</h2>
                <p>{ format!("You have edits in {which} that are not saved as a version yet.") }</p>
                <p class="muted">{ "Kept as a draft, they stay in this browser and come back, marked unsaved, when you open this run again." }</p>
                <div class="row">
                    if props.can_save {
                        <button class="primary" data-testid="leave-save" onclick={choose(LeaveChoice::Save)}>{ "Save and leave" }</button>
                    }
                    <button data-testid="leave-keep" onclick={choose(LeaveChoice::Keep)}>{ "Keep as draft and leave" }</button>
                    <button class="danger" data-testid="leave-discard" onclick={choose(LeaveChoice::Discard)}>{ "Discard edits" }</button>
                    <button class="ghost" data-testid="leave-stay" onclick={choose(LeaveChoice::Stay)}>{ "Stay" }</button>
                </div>
            </div>
        </div>
    }
}
