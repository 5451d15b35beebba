use annotation_core::team::{Assignees, toggle_user, user_list};
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub assignees: Option<Assignees>,
    /// Annotators per run, from the project's settings.
    pub overlap: u32,
    /// The annotators the page has seen, to pick from (`Studio::assign_choices`).
    pub choices: Vec<String>,
    pub busy: bool,
    pub dispatch: Dispatch,
}

/// Who annotates the run, and assigning it by hand (reviewers, QA managers, admins): pick
/// from the annotators the page knows, or type ids it has not seen.
#[function_component(AssignPanel)]
pub fn assign_panel(props: &Props) -> Html {
    let typed = use_state(String::new);
    let assign = {
        let (typed, dispatch) = (typed.clone(), props.dispatch.clone());
        Callback::from(move |_| {
            dispatch.dispatch(Action::Team(TeamAction::Assign((*typed).clone())))
        })
    };
    let current = props.assignees.as_ref().map(|a| {
        a.annotators
            .iter()
            .map(|(who, done)| if *done { format!("{who} (handed in)") } else { who.clone() })
            .collect::<Vec<_>>()
            .join(", ")
    });
    let picked = user_list(&typed);
    let wanted = props.overlap.max(1);
    html! {
        <div class="assign" data-testid="assign-panel">
            <span data-testid="assignees">{ match current {
                Some(names) if !names.is_empty() => format!("Assigned to {names}"),
                Some(_) => "Not assigned".to_owned(),
                None => "Assignees: …".to_owned(),
            } }</span>
            if !props.choices.is_empty() {
                <div class="assign-choices" role="group" aria-label="Annotators">
                    { for props.choices.iter().map(|who| {
                        let on = picked.contains(who);
                        let toggle = { let (typed, who) = (typed.clone(), who.clone()); move |_| typed.set(toggle_user(&typed, &who)) };
                        html! {
                            <button class={classes!("toggle", "small", on.then_some("on"))} aria-pressed={on.to_string()}
                                data-testid="assign-choice" data-user={who.clone()} onclick={toggle}>{ who }</button>
                        }
                    }) }
                </div>
            }
            <div class="assign-row">
                <input data-testid="assign-to" size="18" value={(*typed).clone()} oninput={page_kit::keep_text(&typed)}
                    aria-label="Annotator ids"
                    placeholder={format!("{wanted} annotator id{}, comma-separated", if wanted == 1 { "" } else { "s" })} />
                <button class="small" data-testid="assign" disabled={props.busy || picked.is_empty()} onclick={assign}>
                    { match picked.len() { 0 | 1 => "Assign".to_owned(), n => format!("Assign {n}") } }
                </button>
            </div>
            if !picked.is_empty() && picked.len() as u32 != wanted {
                <p class="muted hint" data-testid="assign-overlap">{ format!(
                    "The project asks for {wanted} annotator{} per run; {} picked.", if wanted == 1 { "" } else { "s" }, picked.len()) }</p>
            }
        </div>
    }
}
