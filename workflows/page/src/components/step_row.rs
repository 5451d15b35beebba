//! One step: the recorded screenshot beside its intent and action fields, and a move to
//! another subtask.

use workflow_format::edit::Edit;
use workflow_format::schema::{ActionKind, Problem, WorkflowStep};
use yew::prelude::*;

use crate::components::field_problems;
use crate::effects::use_screenshot;
use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub index: usize,
    pub step: WorkflowStep,
    /// Every subtask id, in order, for the move.
    pub subtasks: Vec<String>,
    pub problems: Vec<Problem>,
    pub dispatch: Callback<Action>,
}

#[function_component(StepRow)]
pub fn step_row(props: &Props) -> Html {
    let index = props.index;
    let shot = use_screenshot(props.step.screenshot.clone());
    // A click shows the screenshot at full size; another click, anywhere, puts it back.
    let zoomed = use_state(|| false);
    let zoom = {
        let zoomed = zoomed.clone();
        Callback::from(move |_: MouseEvent| zoomed.set(!*zoomed))
    };
    let update = |change: fn(&mut WorkflowStep, String)| {
        let step = props.step.clone();
        props.dispatch.reform(move |e: Event| {
            let mut step = step.clone();
            change(&mut step, page_kit::value(&e));
            Action::Edit(Edit::UpdateStep { index, step: Box::new(step) })
        })
    };
    let on_move = props.dispatch.reform(move |e: Event| {
        Action::Edit(Edit::MoveStep {
            from: index,
            to_subtask: page_kit::value(&e),
            position: usize::MAX,
        })
    });
    let delete = props.dispatch.reform(move |_| Action::Edit(Edit::DeleteStep { index }));
    let kind = &props.step.action.kind;
    let problems: Vec<&Problem> = props.problems.iter().collect();
    let has_value = props.step.action.value.is_some()
        || !matches!(
            kind,
            ActionKind::Click
                | ActionKind::Scroll
                | ActionKind::DoubleClick
                | ActionKind::RightClick
                | ActionKind::Drag
        );
    html! {
        <li class="step" data-testid="step-row" data-index={index.to_string()}>
            <div class="shot">
                if let Some(url) = shot {
                    <img data-testid="step-shot" src={url.clone()} alt="The screen when this step was recorded"
                        title="Click to enlarge" onclick={zoom.clone()} />
                    if *zoomed {
                        <div class="zoom" data-testid="step-shot-zoom" onclick={zoom.clone()} role="dialog" aria-label="The screenshot at full size">
                            <img src={url} alt="The screen when this step was recorded, full size" />
                        </div>
                    }
                } else {
                    <span class="no-shot">{ "No screenshot" }</span>
                }
            </div>
            <div class="fields">
                <label>{ "Intent " }
                    <input data-testid="step-intent" value={props.step.intent.clone()} onchange={update(|s, v| s.intent = v)} />
                </label>
                <div class="action">
                    <span class="kind">{ kind.as_str() }</span>
                    <span class="target">{ props.step.target.clone() }</span>
                    if has_value {
                        <input data-testid="step-value" value={props.step.action.value.clone().unwrap_or_default()}
                            aria-label="Value" onchange={update(|s, v| s.action.value = Some(v))} />
                    }
                    if *kind == ActionKind::Scroll {
                        <input data-testid="step-screens" type="number" step="0.5" aria-label="Screens (negative is up)"
                            value={props.step.action.screens.map(|s| s.to_string()).unwrap_or_default()}
                            onchange={update(|s, v| s.action.screens = v.trim().parse().ok())} />
                    }
                    if *kind == ActionKind::Extract {
                        <input data-testid="step-variable" value={props.step.action.variable.clone().unwrap_or_default()}
                            aria-label="Variable" onchange={update(|s, v| s.action.variable = Some(v.trim().to_owned()))} />
                    }
                </div>
                <div class="step-tools">
                    <select data-testid="step-move" onchange={on_move} aria-label="Subtask">
                        { for props.subtasks.iter().map(|id| html! {
                            <option value={id.clone()} selected={*id == props.step.subtask}>{ id.clone() }</option>
                        }) }
                    </select>
                    <button class="ghost" data-testid="step-delete" onclick={delete} title="Delete">{ "✕" }</button>
                </div>
                { field_problems(&problems) }
            </div>
        </li>
    }
}
