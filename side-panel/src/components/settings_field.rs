use run_contract::Problem;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::field_errors::FieldErrors;
use crate::state::settings::{Field, MASKED};

#[derive(Clone, Copy, PartialEq)]
pub enum InputKind {
    Text,
    Url,
    Password,
    /// A whole number; typed as text so a wrong entry can be shown and explained.
    Number,
}

#[derive(Properties, PartialEq)]
pub struct SettingsFieldProps {
    pub field: Field,
    pub label: AttrValue,
    pub value: AttrValue,
    #[prop_or(InputKind::Text)]
    pub kind: InputKind,
    #[prop_or_default]
    pub placeholder: Option<AttrValue>,
    /// A short explanation under the field.
    #[prop_or_default]
    pub hint: Option<AttrValue>,
    pub problems: Vec<Problem>,
    pub on_edit: Callback<(Field, String)>,
}

/// One labelled input of the Settings form, with its inline errors.
#[function_component(SettingsField)]
pub fn settings_field(props: &SettingsFieldProps) -> Html {
    let field = props.field;
    let testid = field.testid();
    let error_id = format!("{testid}-errors");
    let hint_id = format!("{testid}-hint");
    let oninput = props.on_edit.reform(move |event: InputEvent| (field, page_kit::value(&event)));
    let (kind, inputmode, autocomplete) = match props.kind {
        InputKind::Text => ("text", None, "off"),
        InputKind::Url => ("url", None, "off"),
        InputKind::Password => ("password", None, "new-password"),
        InputKind::Number => ("text", Some("numeric"), "off"),
    };
    // A stored key shows masked; focusing it selects the mask, so typing replaces it.
    let onfocus = (props.kind == InputKind::Password).then(|| {
        Callback::from(|event: FocusEvent| {
            let input = event.target_unchecked_into::<HtmlInputElement>();
            if input.value() == MASKED {
                input.select();
            }
        })
    });
    let invalid = !props.problems.is_empty();
    let described =
        [props.hint.is_some().then(|| hint_id.clone()), invalid.then(|| error_id.clone())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
    html! {
        <div class={classes!("field", invalid.then_some("invalid"))}>
            <label for={testid.clone()}>{ props.label.clone() }</label>
            <input
                id={testid.clone()}
                data-testid={testid}
                type={kind}
                {inputmode}
                {autocomplete}
                spellcheck="false"
                value={props.value.clone()}
                placeholder={props.placeholder.clone()}
                aria-invalid={invalid.to_string()}
                aria-describedby={(!described.is_empty()).then_some(described)}
                {oninput}
                {onfocus}
            />
            if let Some(hint) = &props.hint {
                <p class="field-hint" id={hint_id}>{ hint.clone() }</p>
            }
            <FieldErrors id={error_id} problems={props.problems.clone()} />
        </div>
    }
}
