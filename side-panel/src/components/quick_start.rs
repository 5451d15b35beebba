use yew::prelude::*;

use crate::components::favourite_editor::FavouriteEditor;
use crate::state::FavouriteAction;
use crate::state::favourites::Favourites;

#[derive(Properties, PartialEq)]
pub struct QuickStartProps {
    pub favourites: Favourites,
    pub connected: bool,
    /// Every change to the favourites, and using one.
    pub on_action: Callback<FavouriteAction>,
}

/// The favourite prompts as chips on an empty chat: a click puts the prompt in the chat box
/// to look over before sending. Add, edit and remove them here too.
#[function_component(QuickStart)]
pub fn quick_start(props: &QuickStartProps) -> Html {
    let favourites = &props.favourites;
    let act = |action: FavouriteAction| {
        let on_action = props.on_action.clone();
        Callback::from(move |_: MouseEvent| on_action.emit(action.clone()))
    };
    let busy = favourites.saving.is_some() || !props.connected;
    let managing = favourites.managing && !favourites.list.is_empty();
    html! {
        <section class="quick-start" data-testid="favourites" aria-labelledby="quick-start-title">
            <div class="quick-head">
                <h2 id="quick-start-title">{ "★ Favourites" }</h2>
                <span class="spacer"></span>
                if !favourites.list.is_empty() {
                    <button type="button" class="link-button" data-testid="favourites-manage"
                        aria-pressed={managing.to_string()} onclick={act(FavouriteAction::ToggleManage)}>
                        { if managing { "Done" } else { "Edit" } }
                    </button>
                }
                if favourites.editor.is_none() {
                    <button type="button" class="link-button" data-testid="favourite-add"
                        disabled={!props.connected} onclick={act(FavouriteAction::Add)}>
                        { "+ Add" }
                    </button>
                }
            </div>
            if favourites.list.is_empty() && favourites.editor.is_none() && favourites.loaded {
                <p class="hint">{ "Save prompts you use often: they show here, and a click puts one in the box below." }</p>
            }
            if !favourites.list.is_empty() {
                <ul class="chips">
                    { for favourites.list.iter().map(|favourite| html! {
                        <li key={favourite.id.clone()} class="chip-item">
                            <button type="button" class="chip" data-testid="favourite"
                                data-favourite-id={favourite.id.clone()} title={favourite.prompt.clone()}
                                onclick={act(FavouriteAction::Use(favourite.id.clone()))}>
                                { favourite.title.clone() }
                            </button>
                            if managing {
                                <button type="button" class="ghost icon chip-action" data-testid="favourite-edit"
                                    aria-label={format!("Edit “{}”", favourite.title)} title="Edit"
                                    disabled={busy} onclick={act(FavouriteAction::Edit(favourite.id.clone()))}>
                                    { "✎" }
                                </button>
                                <button type="button" class="ghost icon chip-action" data-testid="favourite-remove"
                                    aria-label={format!("Remove “{}”", favourite.title)} title="Remove"
                                    disabled={busy} onclick={act(FavouriteAction::Remove(favourite.id.clone()))}>
                                    { "×" }
                                </button>
                            }
                        </li>
                    }) }
                </ul>
            }
            if let Some(editor) = &favourites.editor {
                <FavouriteEditor editor={editor.clone()} saving={favourites.saving.is_some()}
                    on_action={props.on_action.clone()} />
            }
            if let Some(error) = &favourites.error {
                <p class="error" data-testid="favourites-error" role="alert">{ error.clone() }</p>
            }
        </section>
    }
}
