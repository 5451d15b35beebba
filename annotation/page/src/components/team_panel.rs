use yew::prelude::*;

use crate::components::audit_view::AuditView;
use crate::components::figures_view::FiguresView;
use crate::components::notifications_view::NotificationsView;
use crate::components::project_view::ProjectView;
use crate::components::webhooks_view::WebhooksView;
use crate::state::team::{TeamAction, TeamState, TeamView};
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub team: TeamState,
    pub dispatch: Dispatch,
}

/// The team view open from the top bar, over the page.
#[function_component(TeamPanel)]
pub fn team_panel(props: &Props) -> Html {
    let Some(view) = props.team.view else { return html! {} };
    let team = &props.team;
    let dispatch = props.dispatch.clone();
    let body = match view {
        TeamView::Notifications => {
            html! { <NotificationsView items={team.notifications.clone()} dispatch={dispatch.clone()} /> }
        }
        TeamView::Audit => {
            html! { <AuditView entries={team.audit.clone()} filter={team.audit_filter.clone()} dispatch={dispatch.clone()} /> }
        }
        TeamView::Webhooks => html! {
            <WebhooksView hooks={team.webhooks.clone()} deliveries={team.deliveries.clone()} secret={team.secret.clone()}
                busy={team.busy.is_some()} dispatch={dispatch.clone()} />
        },
        TeamView::Figures => {
            html! { <FiguresView figures={team.figures.clone()} series={team.series.clone()} /> }
        }
        TeamView::Project => {
            html! { <ProjectView project={team.project.clone()} busy={team.busy.is_some()} dispatch={dispatch.clone()} /> }
        }
    };
    html! {
        <section class="team-panel" data-testid={format!("team-{}", view.id())} role="dialog" aria-label={view.label()}>
            <header>
                <h2>{ view.label() }</h2>
                <button class="ghost" data-testid="team-close" onclick={dispatch.to_callback().reform(|_| Action::Team(TeamAction::Open(None)))}>{ "Close" }</button>
            </header>
            { body }
        </section>
    }
}
