//! One parameter's fields, with its problems beside them.

use workflow_format::edit::Edit;
use workflow_format::schema::{Param, Problem};
use yew::prelude::*;

use crate::components::field_problems;
use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub index: usize,
    pub param: Param,
    pub problems: Vec<Problem>,
    pub dispatch: Callback<Action>,
}

#[function_component(ParamRow)]
pub fn param_row(props: &Props) -> Html {
    let index = props.index;
    let update = |change: fn(&mut Param, String)| {
        let param = props.param.clone();
        props.dispatch.reform(move |e: Event| {
            let mut param = param.clone();
            change(&mut param, page_kit::value(&e));
            Action::Edit(Edit::UpdateParam { index, param })
        })
    };
    let delete = props.dispatch.reform(move |_| Action::Edit(Edit::DeleteParam { index }));
    let problems: Vec<&Problem> = props.problems.iter().collect();
    html! {
        <tr data-testid="param-row" data-name={props.param.name.clone()}>
            <td>
                <input data-testid="param-name" value={props.param.name.clone()} aria-label="Parameter name"
                    onchange={update(|p, v| p.name = v.trim().to_owned())} />
                { field_problems(&problems) }
            </td>
            <td><input data-testid="param-description" value={props.param.description.clone()}
                aria-label="Description" onchange={update(|p, v| p.description = v)} /></td>
            <td><input data-testid="param-example" value={props.param.example.clone()}
                aria-label="Example value" disabled={props.param.secret}
                onchange={update(|p, v| p.example = v)} /></td>
            <td><button class="ghost" data-testid="param-delete" onclick={delete} title="Delete">{ "✕" }</button></td>
        </tr>
    }
}
