use yew::prelude::*;

use crate::state::Lookup;

#[derive(Properties, PartialEq)]
pub struct TitleProbeProps {
    pub lookup: Lookup<String>,
    pub enabled: bool,
    pub on_read: Callback<()>,
}

/// Asks the agent for the driven tab's title over CDP and shows the answer.
#[function_component(TitleProbe)]
pub fn title_probe(props: &TitleProbeProps) -> Html {
    let onclick = props.on_read.reform(|_: MouseEvent| ());
    let result = match &props.lookup {
        Lookup::Idle => html! {},
        Lookup::Pending { .. } => {
            html! { <p class="pending" data-testid="page-title" aria-busy="true">{ "Reading…" }</p> }
        }
        Lookup::Shown(title) => html! {
            <p class="result" data-testid="page-title">{ title }</p>
        },
        Lookup::Failed { message } => html! {
            <p class="error" data-testid="page-title-error" role="alert">{ message }</p>
        },
    };
    html! {
        <section class="title-probe">
            <button data-testid="read-title" disabled={!props.enabled} {onclick}>
                { "Read page title" }
            </button>
            { result }
        </section>
    }
}
