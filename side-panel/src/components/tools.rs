use yew::prelude::*;

use crate::components::state_view::StateView;
use crate::components::title_probe::TitleProbe;
use crate::state::{Lookup, StateView as View};

#[derive(Properties, PartialEq)]
pub struct ToolsProps {
    pub collapsed: bool,
    pub on_toggle: Callback<()>,
    pub title: Lookup<String>,
    pub can_read_title: bool,
    pub on_read_title: Callback<()>,
    pub state_view: Lookup<View>,
}

/// A small folding area with the probes: the driven tab's title, and the page state that
/// `/state` asks for.
#[function_component(Tools)]
pub fn tools(props: &ToolsProps) -> Html {
    let expanded = !props.collapsed;
    html! {
        <section class="tools">
            <button type="button" class="tools-toggle" aria-expanded={expanded.to_string()}
                aria-controls="tools-body" onclick={props.on_toggle.reform(|_: MouseEvent| ())}>
                <span class="chevron" aria-hidden="true">{ if expanded { "▾" } else { "▸" } }</span>
                { "Tools" }
            </button>
            if expanded {
                <div id="tools-body" class="tools-body">
                    <TitleProbe lookup={props.title.clone()} enabled={props.can_read_title}
                        on_read={props.on_read_title.clone()} />
                    <StateView lookup={props.state_view.clone()} />
                </div>
            }
        </section>
    }
}
