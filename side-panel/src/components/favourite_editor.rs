use yew::prelude::*;

use crate::state::FavouriteAction;
use crate::state::favourites::Editor;

#[derive(Properties, PartialEq)]
pub struct FavouriteEditorProps {
    pub editor: Editor,
    pub saving: bool,
    pub on_action: Callback<FavouriteAction>,
}

/// Adds or edits one favourite: a short title for its chip, and the prompt it fills in.
#[function_component(FavouriteEditor)]
pub fn favourite_editor(props: &FavouriteEditorProps) -> Html {
    let editor = &props.editor;
    let on_title =
        props.on_action.reform(|event: InputEvent| FavouriteAction::Title(page_kit::value(&event)));
    let on_prompt = props
        .on_action
        .reform(|event: InputEvent| FavouriteAction::Prompt(page_kit::value(&event)));
    let onsubmit = props.on_action.reform(|event: SubmitEvent| {
        event.prevent_default();
        FavouriteAction::Save
    });
    let heading = if editor.editing.is_some() { "Edit favourite" } else { "New favourite" };
    html! {
        <form class="favourite-editor" aria-label={heading} {onsubmit} novalidate=true>
            <div class="field">
                <label for="favourite-title">{ "Title" }</label>
                <input id="favourite-title" data-testid="favourite-title" type="text"
                    placeholder="e.g. Cheapest kettle" value={editor.title.clone()} oninput={on_title} />
            </div>
            <div class="field">
                <label for="favourite-prompt">{ "Prompt" }</label>
                <textarea id="favourite-prompt" data-testid="favourite-prompt" rows="3"
                    placeholder="The task it puts in the chat box"
                    value={editor.prompt.clone()} oninput={on_prompt} />
            </div>
            if let Some(problem) = &editor.problem {
                <p class="error" data-testid="favourite-error" role="alert">{ problem.clone() }</p>
            }
            <div class="editor-actions">
                <button type="submit" class="primary" data-testid="favourite-save" disabled={props.saving}>
                    { if props.saving { "Saving…" } else { "Save" } }
                </button>
                <button type="button" class="ghost" data-testid="favourite-cancel" disabled={props.saving}
                    onclick={props.on_action.reform(|_: MouseEvent| FavouriteAction::Cancel)}>
                    { "Cancel" }
                </button>
            </div>
        </form>
    }
}
