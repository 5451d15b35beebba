//! The sample variables (a captured step's, or typed JSON) and the fully rendered prompt:
//! shared rules expanded, inserted values highlighted, unresolved variables flagged.

use studio_core::preview::Segment;
use studio_core::traces::step_label;
use yew::prelude::*;

use crate::components::{StudioProps, on_input, on_value};
use crate::state::Action;

#[function_component(PreviewPanel)]
pub fn preview_panel(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let samples = state.samples();
    let options = samples.iter().map(|t| {
        let selected = state.sample_trace.as_deref() == Some(t.id.as_str());
        html! {
            <option value={t.id.clone()} {selected}>
                { format!("run {} · {} · {}", t.run_id, step_label(t.step), t.started_at) }
            </option>
        }
    });
    let on_sample = on_value(dispatch, Action::UseTrace);
    let preview = state.preview();
    let body = match &preview {
        Err(error) => html! { <p class="error" data-testid="preview-error">{ error }</p> },
        Ok(preview) => {
            let segments = preview.segments.iter().map(|s| match s {
                Segment::Text(text) => html! { { text } },
                Segment::Value(text) => html! { <mark class="var" data-testid="preview-var">{ text }</mark> },
                Segment::Unresolved(path) => html! {
                    <mark class="unresolved" data-testid="preview-unresolved" title="not in the sample">{ format!("{{{{{path}}}}}") }</mark>
                },
            });
            html! {
                <>
                    <p class="meta" data-testid="preview-meta">
                        { format!("{} characters", preview.chars) }
                        { match &preview.prompt_hash {
                            Some(hash) => format!(" · prompt hash {}", &hash[..hash.len().min(12)]),
                            None => " · not sendable as is".to_owned(),
                        } }
                        if !preview.unresolved.is_empty() {
                            <span class="warn" data-testid="unresolved-count">
                                { format!(" · {} unresolved: {}", preview.unresolved.len(), preview.unresolved.join(", ")) }
                            </span>
                        }
                    </p>
                    <pre class="preview" data-testid="preview-text">{ for segments }</pre>
                </>
            }
        }
    };
    html! {
        <section class="panel preview-panel" data-testid="preview-panel">
            <h2>{ "Preview" }</h2>
            <label>
                { "Variables from a captured step: " }
                <select data-testid="sample-select" onchange={on_sample}>
                    <option value="" selected={state.sample_trace.is_none()}>
                        { if samples.is_empty() { "no captured step for this prompt yet" } else { "choose a run and step…" } }
                    </option>
                    { for options }
                </select>
            </label>
            <label class="vars">
                <span>{ "…or type them as JSON" }</span>
                <textarea class="code small" data-testid="vars-text" spellcheck="false"
                    value={state.vars_text.clone()} oninput={on_input(dispatch, Action::VarsText)} />
            </label>
            { body }
        </section>
    }
}
