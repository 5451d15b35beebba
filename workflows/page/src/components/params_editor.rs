//! The workflow's parameters: add, delete, rename (every `{name}` follows), description and
//! example value.

use workflow_format::edit::Edit;
use workflow_format::schema::Param;
use yew::prelude::*;

use crate::components::param_row::ParamRow;
use crate::state::{Action, Editor};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: Editor,
    pub dispatch: Callback<Action>,
}

#[function_component(ParamsEditor)]
pub fn params_editor(props: &Props) -> Html {
    let params = &props.editor.draft.params;
    let add = {
        let name = (1..)
            .map(|n| format!("param{n}"))
            .find(|name| !params.iter().any(|p| &p.name == name))
            .unwrap_or_default();
        props.dispatch.reform(move |_| {
            Action::Edit(Edit::AddParam {
                param: Param {
                    name: name.clone(),
                    description: String::new(),
                    example: String::new(),
                    secret: false,
                },
            })
        })
    };
    html! {
        <section class="/params">
            <h3>{ "Parameters" }</h3>
            <table>
                <thead><tr><th>{ "Name" }</th><th>{ "Description" }</th><th>{ "Example" }</th><th></th></tr></thead>
                <tbody>
                    { for params.iter().enumerate().map(|(i, p)| html! {
                        <ParamRow key={i} index={i} param={p.clone()}
                            problems={props.editor.problems_at(&format!("/params/{i}")).into_iter().cloned().collect::<Vec<_>>()}
                            dispatch={props.dispatch.clone()} />
                    }) }
                </tbody>
            </table>
            <button class="ghost" data-testid="param-add" onclick={add}>{ "Add a parameter" }</button>
        </section>
    }
}
