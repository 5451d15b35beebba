use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ViewHeadProps {
    /// The view's name in ids and test ids: `{name}-title` and `{name}-close`.
    pub name: AttrValue,
    pub title: AttrValue,
    pub on_close: Callback<()>,
}

/// The heading of a view that stands in for the chat (Settings, History, Jobs), with the way
/// back to it.
#[function_component(ViewHead)]
pub fn view_head(props: &ViewHeadProps) -> Html {
    html! {
        <div class="settings-head">
            <h2 id={format!("{}-title", props.name)}>{ props.title.clone() }</h2>
            <button type="button" class="ghost" data-testid={format!("{}-close", props.name)}
                onclick={props.on_close.reform(|_: MouseEvent| ())}>
                { "← Back to chat" }
            </button>
        </div>
    }
}
