use annotation_core::team::Project;
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub project: Option<Project>,
    pub busy: bool,
    pub dispatch: Dispatch,
}

/// The project's settings (admins): annotators per run, and the guidelines' link and text.
#[function_component(ProjectView)]
pub fn project_view(props: &Props) -> Html {
    let (overlap, url, markdown) = (use_node_ref(), use_node_ref(), use_node_ref());
    let save = {
        let (overlap, url, markdown, dispatch) =
            (overlap.clone(), url.clone(), markdown.clone(), props.dispatch.clone());
        Callback::from(move |_| {
            let input = |r: &NodeRef| {
                r.cast::<web_sys::HtmlInputElement>().map(|i| i.value()).unwrap_or_default()
            };
            let text = markdown
                .cast::<web_sys::HtmlTextAreaElement>()
                .map(|t| t.value())
                .unwrap_or_default();
            dispatch.dispatch(Action::Team(TeamAction::SaveProject {
                overlap: input(&overlap),
                url: input(&url),
                markdown: text,
            }));
        })
    };
    let Some(project) = &props.project else {
        return html! { <p class="muted">{ "Reading the settings…" }</p> };
    };
    html! {
        <div class="project-form">
            <label>{ "Annotators per run (overlap)" }
                <input data-testid="project-overlap" type="number" min="1" max="10" ref={overlap} value={project.overlap.to_string()} />
            </label>
            <label>{ "Guidelines link" }
                <input data-testid="project-url" ref={url} size="50" value={project.guidelines_url.clone().unwrap_or_default()} placeholder="https://…" />
            </label>
            <label>{ "Guidelines (markdown, shown as text)" }
                <textarea data-testid="project-markdown" ref={markdown} rows="6" value={project.guidelines_markdown.clone().unwrap_or_default()} />
            </label>
            <button class="primary small" data-testid="project-save" disabled={props.busy} onclick={save}>{ "Save settings" }</button>
        </div>
    }
}
