use annotation_core::roles::{Role, User};
use annotation_core::team::badge;
use yew::prelude::*;

use crate::state::team::{TeamAction, TeamView};
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub user: User,
    pub unread: u32,
    pub view: Option<TeamView>,
    pub dispatch: Dispatch,
}

/// The team's buttons in the top bar: notifications with the unread count, the annotators'
/// figures, and the admin's audit log, webhooks and project settings.
#[function_component(TeamBar)]
pub fn team_bar(props: &Props) -> Html {
    let open = |view: TeamView| {
        let again = props.view == Some(view);
        props
            .dispatch
            .to_callback()
            .reform(move |_| Action::Team(TeamAction::Open((!again).then_some(view))))
    };
    let mut views = vec![TeamView::Figures];
    if props.user.role == Role::Admin {
        views.extend([TeamView::Audit, TeamView::Webhooks, TeamView::Project]);
    }
    html! {
        <nav class="team-bar" data-testid="team-bar">
            <button class="ghost bell" data-testid="notifications" title="Notifications" onclick={open(TeamView::Notifications)}>
                { "Notifications" }
                if let Some(count) = badge(props.unread) {
                    <span class="count" data-testid="notification-count">{ count }</span>
                }
            </button>
            { for views.into_iter().map(|view| html! {
                <button class={classes!("ghost", (props.view == Some(view)).then_some("on"))} data-testid={format!("open-{}", view.id())}
                    onclick={open(view)}>{ view.label() }</button>
            }) }
        </nav>
    }
}
