use yew::prelude::*;

use crate::state::{Lookup, StateView as View};

#[derive(Properties, PartialEq)]
pub struct StateViewProps {
    pub lookup: Lookup<View>,
}

/// The page state exactly as the agent reads it, with its size and cost.
#[function_component(StateView)]
pub fn state_view(props: &StateViewProps) -> Html {
    match &props.lookup {
        Lookup::Idle => html! {},
        Lookup::Pending { .. } => html! {
            <p class="pending" aria-busy="true">{ "Reading the page…" }</p>
        },
        Lookup::Shown(view) => html! {
            <section class="state-view" aria-label="Page state">
                <p class="meta" data-testid="page-state-meta">
                    { format!("{} characters · {:.0} ms", view.chars, view.ms) }
                </p>
                <pre data-testid="page-state">{ &view.text }</pre>
            </section>
        },
        Lookup::Failed { message } => html! {
            <p class="error" data-testid="page-state-error" role="alert">{ message }</p>
        },
    }
}
