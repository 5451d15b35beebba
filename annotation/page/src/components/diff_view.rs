use annotation_core::history::{DiffOp, FieldDiff};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct TextProps {
    pub ops: Vec<DiffOp>,
}

/// Word-level changes: additions and deletions highlighted in running text.
#[function_component(DiffText)]
pub fn diff_text(props: &TextProps) -> Html {
    html! {
        <p class="diff" data-testid="diff">
            { for props.ops.iter().map(|op| match op {
                DiffOp::Same(t) => html! { { t.clone() } },
                DiffOp::Added(t) => html! { <ins>{ t.clone() }</ins> },
                DiffOp::Removed(t) => html! { <del>{ t.clone() }</del> },
            }) }
        </p>
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub fields: Vec<FieldDiff>,
}

/// Every field that differs between two versions.
#[function_component(DiffView)]
pub fn diff_view(props: &Props) -> Html {
    if props.fields.is_empty() {
        return html! { <p class="muted" data-testid="diff-empty">{ "These versions have the same content." }</p> };
    }
    html! {
        <div class="diff-view" data-testid="diff-view">
            { for props.fields.iter().map(|f| html! {
                <div class="diff-field">
                    <strong>{ &f.label }</strong>
                    <DiffText ops={f.ops.clone()} />
                </div>
            }) }
        </div>
    }
}
