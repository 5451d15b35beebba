//! One subtask: its text, expected outcome and dependencies (upstream extract variables,
//! checked live), reorder and delete, and its steps.

use workflow_format::edit::Edit;
use workflow_format::schema::Problem;
use yew::prelude::*;

use crate::components::field_problems;
use crate::components::step_row::StepRow;
use crate::state::{Action, Editor};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub index: usize,
    pub editor: Editor,
    pub dispatch: Callback<Action>,
}

#[function_component(SubtaskEditor)]
pub fn subtask_editor(props: &Props) -> Html {
    let index = props.index;
    let draft = &props.editor.draft;
    let subtask = &draft.subtasks[index];
    let dispatch = &props.dispatch;
    let (text, outcome) = (subtask.text.clone(), subtask.expected_outcome.clone());
    let on_text = {
        let outcome = outcome.clone();
        dispatch.reform(move |e: Event| {
            Action::Edit(Edit::UpdateSubtask {
                index,
                text: page_kit::value(&e),
                expected_outcome: outcome.clone(),
            })
        })
    };
    let on_outcome = dispatch.reform(move |e: Event| {
        Action::Edit(Edit::UpdateSubtask {
            index,
            text: text.clone(),
            expected_outcome: page_kit::value(&e),
        })
    });
    let on_depends = dispatch.reform(move |e: Event| {
        let depends_on = page_kit::value(&e)
            .split(',')
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty())
            .collect();
        Action::Edit(Edit::SetDependencies { index, depends_on })
    });
    let count = draft.subtasks.len();
    let up = dispatch.reform(move |_| {
        Action::Edit(Edit::MoveSubtask { from: index, to: index.saturating_sub(1) })
    });
    let down =
        dispatch.reform(move |_| Action::Edit(Edit::MoveSubtask { from: index, to: index + 1 }));
    let delete = dispatch.reform(move |_| Action::Edit(Edit::DeleteSubtask { index }));
    let path = format!("/subtasks/{index}");
    let own: Vec<&Problem> = props
        .editor
        .problems_at(&path)
        .into_iter()
        .filter(|p| !p.path.contains("dependsOn"))
        .collect();
    let depends_problems = props.editor.problems_at(&format!("{path}/dependsOn"));
    let upstream = props.editor.upstream_variables(index);
    let ids: Vec<String> = draft.subtasks.iter().map(|s| s.id.clone()).collect();
    html! {
        <li class="subtask" data-testid="subtask-row" data-id={subtask.id.clone()}>
            <div class="subtask-head">
                <span class="id">{ subtask.id.clone() }</span>
                <button class="ghost" data-testid="subtask-up" disabled={index == 0} onclick={up} title="Move up">{ "↑" }</button>
                <button class="ghost" data-testid="subtask-down" disabled={index + 1 == count} onclick={down} title="Move down">{ "↓" }</button>
                <button class="ghost" data-testid="subtask-delete" onclick={delete} title="Delete with its steps">{ "✕" }</button>
            </div>
            <label>{ "Does " }
                <input data-testid="subtask-text" value={subtask.text.clone()} onchange={on_text} />
            </label>
            <label>{ "Done when " }
                <input data-testid="subtask-outcome" value={subtask.expected_outcome.clone()} onchange={on_outcome} />
            </label>
            <label>{ "Needs " }
                <input data-testid="subtask-depends" value={subtask.depends_on.join(", ")} onchange={on_depends}
                    placeholder="extract variables from earlier subtasks, comma-separated" />
                <span class="hint" data-testid="upstream-vars">{
                    if upstream.is_empty() { "(no extract upstream)".to_owned() } else { format!("upstream: {}", upstream.join(", ")) }
                }</span>
            </label>
            { field_problems(&depends_problems) }
            { field_problems(&own) }
            <ol class="/steps">
                { for draft.steps.iter().enumerate().filter(|(_, s)| s.subtask == subtask.id).map(|(i, s)| html! {
                    <StepRow key={i} index={i} step={s.clone()} subtasks={ids.clone()}
                        problems={props.editor.problems_at(&format!("/steps/{i}")).into_iter().cloned().collect::<Vec<_>>()}
                        dispatch={dispatch.clone()} />
                }) }
            </ol>
        </li>
    }
}
