//! The stored workflows, each with its latest version.

use std::collections::BTreeMap;

use workflow_format::schema::Workflow;
use yew::prelude::*;

use crate::components::list_section::list_section;
use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub workflows: BTreeMap<String, Vec<Workflow>>,
    pub open: Option<String>,
    pub dispatch: Callback<Action>,
}

#[function_component(WorkflowList)]
pub fn workflow_list(props: &Props) -> Html {
    let rows = props.workflows.iter().filter_map(|(id, versions)| {
        let latest = versions.last()?;
        let open = {
            let id = id.clone();
            props.dispatch.reform(move |_| Action::Open(id.clone()))
        };
        let current = props.open.as_deref() == Some(id.as_str());
        Some(html! {
            <li key={id.clone()} class={classes!("workflow", current.then_some("open"))}>
                <button class="link" data-testid="workflow-row" data-id={id.clone()} onclick={open}>
                    { format!("{} (v{})", latest.name, latest.version) }
                </button>
            </li>
        })
    });
    list_section(
        "workflows",
        "workflow-list",
        "Workflows",
        props.workflows.is_empty(),
        "No workflows yet: reflect a recording, or import a file.",
        rows.collect(),
    )
}
