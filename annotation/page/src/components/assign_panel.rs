use annotation_core::team::Assignees;
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub assignees: Option<Assignees>,
    /// Annotators per run, from the project's settings.
    pub overlap: u32,
    pub busy: bool,
    pub dispatch: Dispatch,
}

/// Who annotates the run, and assigning it by hand (reviewers, QA managers, admins).
#[function_component(AssignPanel)]
pub fn assign_panel(props: &Props) -> Html {
    let field = use_node_ref();
    let assign = {
        let (field, dispatch) = (field.clone(), props.dispatch.clone());
        Callback::from(move |_| {
            let typed =
                field.cast::<web_sys::HtmlInputElement>().map(|i| i.value()).unwrap_or_default();
            dispatch.dispatch(Action::Team(TeamAction::Assign(typed)));
        })
    };
    let current = props.assignees.as_ref().map(|a| {
        a.annotators
            .iter()
            .map(|(who, done)| if *done { format!("{who} (handed in)") } else { who.clone() })
            .collect::<Vec<_>>()
            .join(", ")
    });
    html! {
        <div class="assign" data-testid="assign-panel">
            <span data-testid="assignees">{ match current {
                Some(names) if !names.is_empty() => format!("Assigned to {names}"),
                Some(_) => "Not assigned".to_owned(),
                None => "Assignees: …".to_owned(),
            } }</span>
            <input data-testid="assign-to" ref={field} size="18"
                placeholder={format!("{} annotator id{}, comma-separated", props.overlap, if props.overlap == 1 { "" } else { "s" })} />
            <button class="small" data-testid="assign" disabled={props.busy} onclick={assign}>{ "Assign" }</button>
        </div>
    }
}
