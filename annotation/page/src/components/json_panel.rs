use annotation_core::escape;
use annotation_core::record::Thought;
use yew::prelude::*;

use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
}

/// JSON bracket escaping (seed §5.B): which thoughts hold brackets, JSON found before and
/// after, a preview, and the change only when confirmed; pasted JSON can be indented
/// (`escape::format_json`), escaped or not.
#[function_component(JsonPanel)]
pub fn json_panel(props: &Props) -> Html {
    let editor = &props.editor;
    let Some(step) = editor.current().cloned() else { return html! {} };
    let editable = editor.permissions().edit;
    let dispatch = props.dispatch.clone();
    html! {
        <div class="json-tool">
            <p class="muted">{ "Training data needs literal braces escaped: { becomes \\{ and } becomes \\}. JSON is checked before and after." }</p>
            { for Thought::ALL.iter().map(|which| {
                let which = *which;
                let text = step.thoughts.get(which).to_owned();
                let n = which.number();
                let blobs = escape::json_blobs(&text);
                let needs = escape::needs_escaping(&text);
                let previewing = editor.escaping == Some(which);
                html! {
                    <div class="json-row" data-testid={format!("json-thought{n}")}>
                        <strong>{ format!("Thought {n}") }</strong>
                        <span class="muted">{
                            if blobs.is_empty() { "no JSON".to_owned() }
                            else { format!("{} JSON block{}: {}", blobs.len(), if blobs.len() == 1 { "" } else { "s" },
                                blobs.iter().map(|b| if b.valid { "valid".to_owned() } else { format!("invalid ({})", b.error.clone().unwrap_or_default()) }).collect::<Vec<_>>().join(", ")) }
                        }</span>
                        if needs && editable && !previewing {
                            <button class="small" data-testid={format!("escape-preview{n}")} onclick={dispatch.to_callback().reform(move |_| Action::Escaping(Some(which)))}>{ "Escape brackets…" }</button>
                        }
                        if !needs { <span class="ok">{ "escaped" }</span> }
                        if editable && blobs.iter().any(|b| b.valid) && escape::format_json(&text) != text {
                            <button class="small" data-testid={format!("format-json{n}")} title="Indent the valid JSON in this thought"
                                onclick={{
                                    let (dispatch, step, formatted) = (dispatch.clone(), step.clone(), escape::format_json(&text));
                                    Callback::from(move |_| {
                                        let mut changed = step.clone();
                                        *changed.thoughts.get_mut(which) = formatted.clone();
                                        dispatch.dispatch(Action::ReplaceStep(Box::new(changed)));
                                    })
                                }}>{ "Format JSON" }</button>
                        }
                        if previewing {
                            { preview(&text, which, &step, &dispatch) }
                        }
                    </div>
                }
            }) }
        </div>
    }
}

fn preview(
    text: &str,
    which: Thought,
    step: &annotation_core::record::Step,
    dispatch: &Dispatch,
) -> Html {
    let p = escape::preview(text);
    let valid_before = p.before.iter().filter(|b| b.valid).count();
    let valid_after = p.after.iter().filter(|b| b.valid).count();
    let apply = {
        let (dispatch, step, escaped) = (dispatch.clone(), step.clone(), p.escaped.clone());
        Callback::from(move |_| {
            let mut changed = step.clone();
            *changed.thoughts.get_mut(which) = escaped.clone();
            dispatch.dispatch(Action::ReplaceStep(Box::new(changed)));
            dispatch.dispatch(Action::Escaping(None));
        })
    };
    html! {
        <div class="escape-preview" data-testid="escape-preview">
            <pre data-testid="escape-result">{ &p.escaped }</pre>
            <p class="muted" data-testid="escape-summary">{ format!(
                "{} bracket{} to escape · JSON valid before: {valid_before}/{} · after (unescaped): {valid_after}/{} · {}",
                p.changes, if p.changes == 1 { "" } else { "s" }, p.before.len(), p.after.len(),
                if p.round_trips { "unescaping gives back the original exactly" } else { "WARNING: unescaping would not give back the original" }
            ) }</p>
            <button class="primary small" data-testid="escape-apply" disabled={!p.round_trips} onclick={apply}>{ "Apply" }</button>
            <button class="small" onclick={dispatch.to_callback().reform(|_| Action::Escaping(None))}>{ "Cancel" }</button>
        </div>
    }
}
