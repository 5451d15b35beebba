//! One workflow: its name and description, parameters, subtasks with their steps, the
//! problems (live), versions, save, export and import, and the way to replay it.

use wasm_bindgen::JsCast;
use workflow_format::edit::Edit;
use workflow_format::schema::{Workflow, WorkflowSubtask};
use yew::prelude::*;

use crate::components::params_editor::ParamsEditor;
use crate::components::problem_list::ProblemList;
use crate::components::subtask_editor::SubtaskEditor;
use crate::components::version_bar::VersionBar;
use crate::state::{Action, Editor};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: Editor,
    /// The stored versions, oldest first.
    pub versions: Vec<Workflow>,
    pub dispatch: Callback<Action>,
}

#[function_component(WorkflowEditor)]
pub fn workflow_editor(props: &Props) -> Html {
    let editor = &props.editor;
    let draft = &editor.draft;
    let dispatch = &props.dispatch;
    let on_name = dispatch.reform(|e: Event| Action::SetName(page_kit::value(&e)));
    let on_description = dispatch.reform(|e: Event| Action::SetDescription(page_kit::value(&e)));
    let add_subtask = {
        let at = draft.subtasks.len();
        let id = (1..)
            .map(|n| format!("subtask-{n}"))
            .find(|id| !draft.subtasks.iter().any(|s| &s.id == id))
            .unwrap_or_default();
        dispatch.reform(move |_| {
            Action::Edit(Edit::AddSubtask {
                at,
                subtask: WorkflowSubtask {
                    id: id.clone(),
                    text: "New subtask".into(),
                    expected_outcome: String::new(),
                    depends_on: Vec::new(),
                },
            })
        })
    };
    let on_import = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: Event| {
            let input: Option<web_sys::HtmlInputElement> =
                e.target().and_then(|t| t.dyn_into().ok());
            let Some(file) = input.as_ref().and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                return;
            };
            let dispatch = dispatch.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match wasm_bindgen_futures::JsFuture::from(file.text()).await {
                    Ok(text) => dispatch.emit(Action::Import(text.as_string().unwrap_or_default())),
                    Err(_) => dispatch.emit(Action::Notice("The file could not be read.".into())),
                }
            });
            if let Some(input) = input {
                input.set_value("");
            }
        })
    };
    html! {
        <section class="editor" data-testid="workflow-editor" data-id={draft.id.clone()}>
            <div class="editor-head">
                <input class="name" data-testid="workflow-name" value={draft.name.clone()} onchange={on_name} aria-label="Name" />
                <VersionBar versions={props.versions.iter().map(|w| (w.version, w.updated_at.clone())).collect::<Vec<_>>()}
                    base={editor.base.version} dirty={editor.dirty()} can_save={editor.can_save()} dispatch={dispatch.clone()} />
            </div>
            <textarea data-testid="workflow-description" value={draft.description.clone()} onchange={on_description}
                aria-label="Description" rows="2" />
            <ProblemList problems={editor.problems.clone()} refused={editor.refused.clone()} />
            <ParamsEditor editor={editor.clone()} dispatch={dispatch.clone()} />
            <h3>{ "Subtasks" }</h3>
            <ol class="subtasks">
                { for draft.subtasks.iter().enumerate().map(|(i, s)| html! {
                    <SubtaskEditor key={s.id.clone()} index={i} editor={editor.clone()} dispatch={dispatch.clone()} />
                }) }
            </ol>
            <button class="ghost" data-testid="subtask-add" onclick={add_subtask}>{ "Add a subtask" }</button>
            <div class="editor-foot">
                <button data-testid="replay-open" onclick={dispatch.reform(|_| Action::ReplayOpen)}
                    title="Replay the saved version">{ "Replay…" }</button>
                <button class="ghost" data-testid="workflow-export" onclick={dispatch.reform(|_| Action::Export)}>
                    { "Export JSON" }
                </button>
                <label class="ghost file">{ "Import JSON " }
                    <input type="file" accept=".json,application/json" data-testid="workflow-import" onchange={on_import} />
                </label>
                <button class="ghost" onclick={dispatch.reform(|_| Action::Close)}>{ "Close" }</button>
            </div>
        </section>
    }
}
