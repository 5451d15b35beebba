//! The Workflows menu: a link to the Workflows page, the workflows to replay in this
//! panel's tab with their parameter form (examples prefilled), and the replay's progress.

use protocol::TabId;
use protocol::jobs::JobStatus;
use protocol::workflow::ReplayControl;
use yew::prelude::*;

use crate::state::workflows::{WorkflowAction, WorkflowMenu};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub menu: WorkflowMenu,
    pub tab: Option<TabId>,
    pub connected: bool,
    pub on_action: Callback<WorkflowAction>,
}

#[function_component(WorkflowMenuView)]
pub fn workflow_menu(props: &Props) -> Html {
    let menu = &props.menu;
    let act = |action: WorkflowAction| props.on_action.reform(move |_| action.clone());
    let on_draft =
        props.on_action.reform(|e: InputEvent| WorkflowAction::Draft(page_kit::value(&e)));
    let send = props.on_action.clone();
    let on_draft_key = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" {
            send.emit(WorkflowAction::Send);
        }
    });
    // The page's replay form then offers this tab first.
    let page = match props.tab {
        Some(tab) => format!("workflows.html?tabId={tab}"),
        None => "workflows.html".to_owned(),
    };
    html! {
        <section class="workflow-menu">
            <div class="workflow-bar">
                <button class="ghost" data-testid="workflows-menu" disabled={!props.connected}
                    aria-expanded={menu.open.to_string()} onclick={act(WorkflowAction::Toggle)}>
                    { "Workflows ▾" }
                </button>
                <a data-testid="open-workflows" href={page} target="_blank">{ "Edit workflows" }</a>
            </div>
            if menu.open {
                <div class="workflow-list" data-testid="panel-workflows">
                    { match &menu.list {
                        None => html! { <p class="hint">{ "Reading the workflows…" }</p> },
                        Some(list) if list.is_empty() => html! {
                            <p class="hint">{ "No workflows yet: reflect a recording on the Workflows page." }</p>
                        },
                        Some(list) => list.iter().map(|w| html! {
                            <button class="ghost" data-testid="panel-workflow" data-id={w.id.clone()}
                                onclick={act(WorkflowAction::Choose(w.id.clone()))}>
                                { format!("{} (v{})", w.name, w.version) }
                            </button>
                        }).collect::<Html>(),
                    } }
                </div>
            }
            if let Some((workflow, values)) = &menu.chosen {
                <div class="workflow-form" data-testid="panel-replay-form">
                    <strong>{ format!("Replay {} in this tab", workflow.name) }</strong>
                    { for values.iter().map(|(name, value)| {
                        let secret = workflow.params.iter().any(|p| &p.name == name && p.secret);
                        let name_for = name.clone();
                        let on_input = props.on_action.reform(move |e: InputEvent| {
                            WorkflowAction::Param(name_for.clone(), page_kit::value(&e))
                        });
                        html! {
                            <label>{ format!("{name} ") }
                                <input data-testid="panel-replay-param" data-name={name.clone()} value={value.clone()}
                                    type={if secret { "password" } else { "text" }} oninput={on_input} />
                            </label>
                        }
                    }) }
                    <label class="check" title="Off: every step asks the model, which adapts to a changed page but takes longer">
                        <input type="checkbox" data-testid="panel-replay-fast-path" checked={!props.menu.fast_path_off}
                            onchange={props.on_action.reform(|e: Event| WorkflowAction::FastPath(
                                page_kit::checked(&e)))} />
                        { " Fast path (recorded steps without the model)" }
                    </label>
                    <button data-testid="panel-replay-start" onclick={act(WorkflowAction::Start)}>{ "Start replay" }</button>
                </div>
            }
            if let Some(error) = &menu.error {
                <p class="error" role="alert" data-testid="panel-workflow-error">{ error.clone() }</p>
            }
            if let Some(r) = &menu.replay {
                <div class="replay-card" data-testid="panel-replay-status" data-state={r.status.label()}>
                    <div>{ format!("Replay of {}: {}", r.workflow_name, r.status.label()) }</div>
                    <div class="hint" data-testid="panel-replay-progress">{ format!(
                        "Subtask {} of {} · {} steps · {} model calls · {}",
                        (r.subtask + 1).min(r.subtasks), r.subtasks, r.step, r.model_calls,
                        if r.fast_path { format!("{} saved by the fast path", r.calls_saved) } else { "fast path off".into() }
                    ) }</div>
                    if let Some(why) = &r.why {
                        <div class="error">{ why.clone() }</div>
                    }
                    { for r.extracts.iter().map(|(k, v)| html! {
                        <div data-testid="panel-replay-extract" data-name={k.clone()}>{ format!("{k}: {v}") }</div>
                    }) }
                    if let Some(question) = &r.question {
                        <div class="replay-question" data-testid="panel-replay-question">{ question.clone() }</div>
                    }
                    if r.is_live() {
                        <div class="replay-steer">
                            <input data-testid="panel-replay-message" value={menu.draft.clone()}
                                placeholder={if r.question.is_some() { "Your answer" } else { "Steer the replay" }}
                                oninput={on_draft} onkeydown={on_draft_key} />
                            <button data-testid="panel-replay-send" onclick={act(WorkflowAction::Send)}>
                                { if r.question.is_some() { "Answer" } else { "Send" } }
                            </button>
                        </div>
                    }
                    <div class="actions">
                        if r.status == JobStatus::Running {
                            <button data-testid="panel-replay-pause" onclick={act(WorkflowAction::Control(ReplayControl::Pause))}>{ "Pause" }</button>
                        }
                        if r.status == JobStatus::Paused {
                            <button data-testid="panel-replay-resume" onclick={act(WorkflowAction::Control(ReplayControl::Resume))}>{ "Resume" }</button>
                        }
                        if r.is_live() {
                            <button class="ghost" data-testid="panel-replay-stop" onclick={act(WorkflowAction::Control(ReplayControl::Cancel))}>{ "Stop" }</button>
                        }
                    </div>
                </div>
            }
        </section>
    }
}
