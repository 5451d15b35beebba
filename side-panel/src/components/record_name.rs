use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::state::recording::RecordAction;
use page_kit::RecordingName;

#[derive(Properties, PartialEq)]
pub struct RecordNameProps {
    pub naming: RecordingName,
    pub on_action: Callback<RecordAction>,
}

/// Asked at Stop: what the recording does. Recordings are told apart by this name on the
/// Workflows page, and the reflection reads it as the task.
#[function_component(RecordName)]
pub fn record_name(props: &RecordNameProps) -> Html {
    let input = use_node_ref();
    {
        // Selected, so typing replaces the page title it is prefilled with.
        let input = input.clone();
        use_effect_with((), move |_| {
            if let Some(input) = input.cast::<HtmlInputElement>() {
                let _ = input.focus();
                input.select();
            }
        });
    }
    let naming = &props.naming;
    let oninput = props.on_action.reform(|event: InputEvent| {
        let value = page_kit::value(&event);
        RecordAction::Name(value)
    });
    let onkeydown = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: KeyboardEvent| match event.key().as_str() {
            "Enter" => {
                event.prevent_default();
                on_action.emit(RecordAction::SaveName);
            }
            "Escape" => on_action.emit(RecordAction::SkipName),
            _ => {}
        })
    };
    let saving = naming.saving.is_some();
    html! {
        <div class="record-name" data-testid="record-name" role="dialog" aria-label="Name the recording">
            <label>{ "What does this recording do?" }
                <input ref={input} data-testid="record-name-input" value={naming.text.clone()}
                    placeholder="Order a pizza" maxlength="200" disabled={saving} {oninput} {onkeydown} />
            </label>
            if let Some(problem) = &naming.problem {
                <p class="field-error" data-testid="record-name-problem" role="alert">{ problem }</p>
            }
            <div class="actions">
                <button type="button" data-testid="record-name-save" disabled={saving}
                    onclick={props.on_action.reform(|_: MouseEvent| RecordAction::SaveName)}>
                    { if saving { "Saving…" } else { "Save name" } }
                </button>
                <button type="button" class="ghost" data-testid="record-name-skip" disabled={saving}
                    title="Keep the page title; reflecting it names it for its task"
                    onclick={props.on_action.reform(|_: MouseEvent| RecordAction::SkipName)}>{ "Later" }</button>
            </div>
        </div>
    }
}
