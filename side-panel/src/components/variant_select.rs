use protocol::settings::ModelRole;
use run_contract::Problem;
use yew::prelude::*;

use crate::components::field_errors::FieldErrors;
use crate::state::settings::Field;

#[derive(Properties, PartialEq)]
pub struct VariantSelectProps {
    pub role: ModelRole,
    /// The variants the role's prompt has (see `SettingsForm::variant_choices`).
    pub choices: Vec<String>,
    /// As stored; empty means A.
    pub value: AttrValue,
    pub problems: Vec<Problem>,
    pub on_edit: Callback<(Field, String)>,
}

/// The prompt variant an agent uses: a choice of those its prompt has, so a typo cannot
/// name one that does not exist.
#[function_component(VariantSelect)]
pub fn variant_select(props: &VariantSelectProps) -> Html {
    let field = Field::Variant(props.role);
    let testid = field.testid();
    let onchange = props.on_edit.reform(move |event: Event| (field, page_kit::value(&event)));
    let selected = match props.value.trim() {
        "" => "A",
        value => value,
    }
    .to_owned();
    let invalid = !props.problems.is_empty();
    html! {
        <div class={classes!("field", invalid.then_some("invalid"))}>
            <label for={testid.clone()}>{ props.role.label() }</label>
            <select id={testid.clone()} data-testid={testid.clone()} aria-invalid={invalid.to_string()}
                {onchange}>
                { for props.choices.iter().map(|choice| html! {
                    <option value={choice.clone()} selected={*choice == selected}>{ choice.clone() }</option>
                }) }
            </select>
            <FieldErrors id={format!("{testid}-errors")} problems={props.problems.clone()} />
        </div>
    }
}
