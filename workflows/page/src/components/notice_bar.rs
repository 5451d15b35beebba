//! A message the person must read, with a way to dismiss it.

use yew::prelude::*;

use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub notice: String,
    pub dispatch: Callback<Action>,
}

#[function_component(NoticeBar)]
pub fn notice_bar(props: &Props) -> Html {
    let dismiss = props.dispatch.reform(|_| Action::DismissNotice);
    html! {
        <div class="notice" role="alert" data-testid="notice">
            <span>{ props.notice.clone() }</span>
            <button class="ghost" onclick={dismiss}>{ "Dismiss" }</button>
        </div>
    }
}
