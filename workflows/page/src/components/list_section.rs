//! A titled list of what the page holds, with what to do when it holds nothing.

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub class: AttrValue,
    pub testid: AttrValue,
    pub title: AttrValue,
    /// Said instead of rows when there are none.
    pub empty_hint: AttrValue,
    pub empty: bool,
    /// The rows: `<li>`s.
    pub children: Html,
}

#[function_component(ListSection)]
pub fn list_section(props: &Props) -> Html {
    html! {
        <section class={props.class.clone()} data-testid={props.testid.clone()}>
            <h2>{ props.title.clone() }</h2>
            if props.empty {
                <p class="hint">{ props.empty_hint.clone() }</p>
            }
            <ul>{ props.children.clone() }</ul>
        </section>
    }
}
