use protocol::TabId;
use yew::prelude::*;

use crate::state::WorkerLink;

#[derive(Properties, PartialEq)]
pub struct StatusBarProps {
    pub worker: WorkerLink,
    pub tab: Option<TabId>,
}

/// The header: product name, which tab is driven, and whether the agent is reachable.
#[function_component(StatusBar)]
pub fn status_bar(props: &StatusBarProps) -> Html {
    let (state, label) = match &props.worker {
        WorkerLink::Connecting => ("connecting", "Connecting…".to_owned()),
        WorkerLink::Connected { version } => ("connected", format!("Agent ready · v{version}")),
        WorkerLink::Lost => ("lost", "Agent unreachable — reopen the panel".to_owned()),
    };
    let tab = match props.tab {
        Some(tab) => format!("Tab {tab}"),
        None => "No tab".to_owned(),
    };
    html! {
        <header class="status-bar">
            <h1>{ "AlphaScout" }</h1>
            <span class="tab" data-testid="target-tab">{ tab }</span>
            <span class={classes!("link", state)} data-testid="worker-link" data-state={state}
                role="status">{ label }</span>
        </header>
    }
}
