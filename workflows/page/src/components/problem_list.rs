//! Every problem of the draft, live, by path; a workflow with problems cannot be saved.

use workflow_format::schema::Problem;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub problems: Vec<Problem>,
    pub refused: Option<String>,
}

#[function_component(ProblemList)]
pub fn problem_list(props: &Props) -> Html {
    html! {
        <div class="problems" data-testid="workflow-problems" data-count={props.problems.len().to_string()}>
            if let Some(refused) = &props.refused {
                <p class="problem">{ refused.clone() }</p>
            }
            if props.problems.is_empty() {
                <p class="ok">{ "No problems: this workflow can be saved and replayed." }</p>
            } else {
                <ul>
                    { for props.problems.iter().map(|p| html! {
                        <li data-path={p.path.clone()}><code>{ p.path.clone() }</code>{ format!(" {}", p.message) }</li>
                    }) }
                </ul>
            }
        </div>
    }
}
