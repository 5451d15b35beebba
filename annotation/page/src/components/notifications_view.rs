use annotation_core::team::Notification;
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch, Route};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub items: Vec<Notification>,
    pub dispatch: Dispatch,
}

/// The person's notifications, newest first: each links to its run and is marked read one
/// at a time or all at once.
#[function_component(NotificationsView)]
pub fn notifications_view(props: &Props) -> Html {
    let team = props.dispatch.to_callback().reform(Action::Team);
    html! {
        <div class="notifications">
            <button class="small" data-testid="read-all" onclick={team.reform(|_| TeamAction::MarkRead(None))}>{ "Mark all read" }</button>
            if props.items.is_empty() { <p class="muted">{ "Nothing yet." }</p> }
            <ul data-testid="notification-list">
                { for props.items.iter().map(|n| {
                    let id = n.id.clone();
                    html! {
                        <li class={classes!("notification", (!n.read).then_some("unread"))} data-testid="notification"
                            data-kind={n.kind.clone()} data-read={n.read.to_string()}>
                            <span class="muted">{ n.created_at.get(..16).unwrap_or(&n.created_at).replace('T', " ") }</span>
                            { " " }
                            if let Some(run) = &n.run_id {
                                <a href={Route::link(run)} data-testid="notification-run">{ &n.text }</a>
                            } else {
                                <span>{ &n.text }</span>
                            }
                            if !n.read {
                                <button class="small ghost" data-testid="mark-read" onclick={team.reform(move |_| TeamAction::MarkRead(Some(id.clone())))}>{ "Mark read" }</button>
                            }
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}
