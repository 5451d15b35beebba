//! The page's root: owns the state, runs the effect layer's hooks, and lays out the views.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::StudioProps;
use crate::components::compare_panel::ComparePanel;
use crate::components::file_editor::FileEditor;
use crate::components::pipelines_view::PipelinesView;
use crate::components::preview_panel::PreviewPanel;
use crate::components::prompt_list::PromptList;
use crate::components::run_panel::RunPanel;
use crate::components::telemetry_view::TelemetryView;
use crate::components::traces_view::TracesView;
use crate::components::versions_panel::VersionsPanel;
use crate::effects::{use_effects, use_port, use_route};
use crate::state::{Action, Studio, Tab};

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(Studio::default);
    use_port(state.dispatcher());
    use_route(state.dispatcher());
    use_effects(&state);
    let dispatch = state.dispatcher();
    let props = StudioProps { state: Rc::new((*state).clone()), dispatch: dispatch.clone() };
    let tab = |tab: Tab, label: &'static str, testid: &'static str| {
        let dispatch = dispatch.clone();
        let class = if state.tab == tab { "tab active" } else { "tab" };
        html! {
            <button class={class} data-testid={testid}
                onclick={Callback::from(move |_| dispatch.dispatch(Action::Tab(tab)))}>{ label }</button>
        }
    };
    let body = match (state.tab, &state.overrides) {
        (Tab::Prompts, None) => html! {
            <p class="loading" data-testid="studio-loading">{ "Reading the prompts and settings from the extension…" }</p>
        },
        (Tab::Prompts, Some(_)) => html! {
            <div class="prompts-layout">
                <PromptList ..props.clone() />
                <main class="workbench">
                    <FileEditor ..props.clone() />
                    <VersionsPanel ..props.clone() />
                    <PreviewPanel ..props.clone() />
                    <RunPanel ..props.clone() />
                    <ComparePanel ..props.clone() />
                </main>
            </div>
        },
        (Tab::Traces, _) => html! { <TracesView ..props.clone() /> },
        (Tab::Telemetry, _) => html! { <TelemetryView ..props.clone() /> },
        (Tab::Pipelines, _) => html! { <PipelinesView ..props.clone() /> },
    };
    let dismiss = {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::DismissNotice))
    };
    html! {
        <div class="studio-page" data-testid="studio">
            <header class="topbar">
                <span class="brand">{ "AlphaScout · Prompt Studio" }</span>
                <nav>
                    { tab(Tab::Prompts, "Prompts", "tab-prompts") }
                    { tab(Tab::Traces, "Traces", "tab-traces") }
                    { tab(Tab::Pipelines, "Pipelines", "tab-pipelines") }
                    { tab(Tab::Telemetry, "Repair telemetry", "tab-telemetry") }
                </nav>
                <a href="annotation.html" data-testid="open-annotation">{ "Annotation" }</a>
                <span class={if state.connected { "link ok" } else { "link down" }} data-testid="worker-link">
                    { if state.connected { "connected" } else { "connecting…" } }
                </span>
            </header>
            if let Some(notice) = state.notice() {
                <div class="notice" data-testid="notice">
                    <span>{ notice }</span>
                    <button onclick={dismiss}>{ "×" }</button>
                </div>
            }
            { body }
        </div>
    }
}
