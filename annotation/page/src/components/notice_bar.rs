use yew::prelude::*;

use crate::state::Notice;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub notice: Notice,
    pub on_dismiss: Callback<()>,
}

/// The last thing that happened: a save, an export, or what went wrong and what to do.
#[function_component(NoticeBar)]
pub fn notice_bar(props: &Props) -> Html {
    let class = if props.notice.ok { "notice ok" } else { "notice bad" };
    html! {
        <div class={class} data-testid="notice" role={if props.notice.ok { "status" } else { "alert" }}>
            <span>{ &props.notice.text }</span>
            <button class="ghost" aria-label="Dismiss" onclick={props.on_dismiss.reform(|_| ())}>{ "×" }</button>
        </div>
    }
}
