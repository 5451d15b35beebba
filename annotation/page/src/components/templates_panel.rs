use std::collections::BTreeMap;

use annotation_core::record::{ActionKind, Thought};
use annotation_core::templates::{self, Template};
use yew::prelude::*;

use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};
use crate::util::now;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    /// Steps starred as templates, loaded when the panel opens.
    pub starred: Vec<Template>,
}

/// Template quick-insert (seed §5.C, §7.F): the bundled templates and starred steps,
/// those for this step's action first; fill the `<placeholders>`, then insert.
#[function_component(TemplatesPanel)]
pub fn templates_panel(props: &Props) -> Html {
    let chosen = use_state(|| None::<String>);
    let values = use_state(BTreeMap::<String, String>::new);
    // A starred template being edited: its name and three thoughts as typed.
    let editing = use_state(|| None::<Template>);
    {
        let dispatch = props.dispatch.clone();
        use_effect_with((), move |_| dispatch.dispatch(Action::LoadStarred));
    }
    let editor = &props.editor;
    let Some(step) = editor.current().cloned() else { return html! {} };
    let mut library = templates::bundled();
    library.extend(props.starred.iter().cloned());
    let ordered = templates::suggest(&library, &step.action.kind);
    let template = chosen.as_ref().and_then(|id| library.iter().find(|t| &t.id == id)).cloned();
    let on_choose = {
        let (chosen, values, editing) = (chosen.clone(), values.clone(), editing.clone());
        Callback::from(move |e: Event| {
            let id = page_kit::value(&e);
            chosen.set((!id.is_empty()).then_some(id));
            values.set(BTreeMap::new());
            editing.set(None);
        })
    };
    let on_insert = {
        let (dispatch, values, template, step) =
            (props.dispatch.clone(), values.clone(), template.clone(), step.clone());
        Callback::from(move |_| {
            let Some(t) = &template else { return };
            let mut filled = step.clone();
            filled.thoughts.thought1 = templates::fill(&t.thoughts.thought1, &values);
            filled.thoughts.thought2 = templates::fill(&t.thoughts.thought2, &values);
            filled.thoughts.thought3 = templates::fill(&t.thoughts.thought3, &values);
            dispatch.dispatch(Action::ReplaceStep(Box::new(filled)));
        })
    };
    let on_star = props.dispatch.to_callback().reform(|_| Action::StarStep { at: now() });
    let starred = template.as_ref().filter(|t| t.starred_from.is_some()).cloned();
    let edit_field = |which: Option<Thought>| {
        let editing = editing.clone();
        Callback::from(move |e: InputEvent| {
            let Some(mut next) = (*editing).clone() else { return };
            let value = page_kit::value(&e);
            match which {
                Some(thought) => *next.thoughts.get_mut(thought) = value,
                None => next.name = value,
            }
            editing.set(Some(next));
        })
    };
    let on_save_template = {
        let (dispatch, editing) = (props.dispatch.clone(), editing.clone());
        Callback::from(move |_| {
            if let Some(edited) = (*editing).clone() {
                dispatch.dispatch(Action::SaveTemplate(Box::new(edited)));
                editing.set(None);
            }
        })
    };
    let editable = editor.permissions().edit;
    html! {
        <div class="templates">
            <label>{ "Template" }
                <select data-testid="template-select" onchange={on_choose}>
                    <option value="" selected={chosen.is_none()}>{ "Choose a template…" }</option>
                    { for ordered.iter().map(|t| {
                        let label = match &t.action_type {
                            Some(a) if ActionKind::parse(a) == step.action.kind => format!("★ {} ({a})", t.name),
                            _ => t.name.clone(),
                        };
                        html! { <option value={t.id.clone()} selected={chosen.as_deref() == Some(t.id.as_str())}>{ label }</option> }
                    }) }
                </select>
            </label>
            if let Some(t) = &starred {
                <div class="row starred-actions">
                    <span class="muted">{ "A step starred from a run: yours to rename, reword or remove." }</span>
                    <button class="small" data-testid="template-edit" onclick={{ let (editing, t) = (editing.clone(), t.clone()); move |_| editing.set(Some(t.clone())) }}>{ "Edit" }</button>
                    <button class="small danger" data-testid="template-delete" onclick={{ let (dispatch, chosen, id) = (props.dispatch.clone(), chosen.clone(), t.id.clone()); move |_| { dispatch.dispatch(Action::DeleteTemplate(id.clone())); chosen.set(None); } }}>{ "Delete" }</button>
                </div>
            }
            if let Some(edited) = &*editing {
                <div class="template-editor" data-testid="template-editor">
                    <label>{ "Name" }<input data-testid="template-name" value={edited.name.clone()} oninput={edit_field(None)} /></label>
                    { for Thought::ALL.iter().map(|which| html! {
                        <label>{ format!("Thought {}", which.number()) }
                            <textarea data-testid={format!("template-thought{}", which.number())} rows="3"
                                value={edited.thoughts.get(*which).to_owned()} oninput={edit_field(Some(*which))} />
                        </label>
                    }) }
                    <div class="row">
                        <button class="primary small" data-testid="template-save" disabled={edited.name.trim().is_empty()} onclick={on_save_template}>{ "Save template" }</button>
                        <button class="small" onclick={{ let editing = editing.clone(); move |_| editing.set(None) }}>{ "Cancel" }</button>
                    </div>
                </div>
            }
            if let Some(t) = &template {
                <div class="template-preview" data-testid="template-preview">
                    { for [&t.thoughts.thought1, &t.thoughts.thought2, &t.thoughts.thought3].iter().enumerate().map(|(i, text)| html! {
                        <p><strong>{ format!("Thought {}: ", i + 1) }</strong>{ templates::fill(text, &values) }</p>
                    }) }
                </div>
                <div class="placeholders">
                    { for templates::placeholders_of(t).into_iter().map(|name| {
                        let values2 = values.clone();
                        let key = name.clone();
                        let oninput = Callback::from(move |e: InputEvent| {
                            let mut next = (*values2).clone();
                            next.insert(key.clone(), page_kit::value(&e));
                            values2.set(next);
                        });
                        html! {
                            <label>{ format!("<{name}>") }
                                <input data-testid="placeholder" data-name={name.clone()} value={values.get(&name).cloned().unwrap_or_default()} {oninput} />
                            </label>
                        }
                    }) }
                </div>
                if editable {
                    <button class="primary" data-testid="template-insert" onclick={on_insert}>{ "Insert into thoughts 1–3" }</button>
                }
            }
            if editable {
                <button class="ghost" data-testid="star-step" onclick={on_star} title="Add this step's thoughts to the template library">{ "☆ Star this step as a template" }</button>
            }
        </div>
    }
}
