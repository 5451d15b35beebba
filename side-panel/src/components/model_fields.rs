use run_contract::Problem;
use yew::prelude::*;

use crate::components::connection_test::ConnectionTestButton;
use crate::components::field_errors::FieldErrors;
use crate::components::settings_field::{InputKind, SettingsField};
use protocol::settings::{ModelRole, plain_http_host};

use crate::state::settings::{ConnectionTest, Field, MASKED, ModelDraft, PROVIDERS, provider_id};

#[derive(Properties, PartialEq)]
pub struct ModelFieldsProps {
    pub role: ModelRole,
    pub model: ModelDraft,
    /// Every problem of the form; this role's are picked out.
    pub problems: Vec<Problem>,
    pub on_edit: Callback<(Field, String)>,
    /// This role's "Test connection".
    pub test: ConnectionTest,
    pub connected: bool,
    pub on_test: Callback<ModelRole>,
}

/// One role's model: provider, base URL, API key, model name, timeout; and a test of it.
#[function_component(ModelFields)]
pub fn model_fields(props: &ModelFieldsProps) -> Html {
    let (role, model) = (props.role, &props.model);
    let of = |field: Field| -> Vec<Problem> {
        let path = field.path();
        props.problems.iter().filter(|p| p.path == path).cloned().collect()
    };
    let provider = Field::Provider(role);
    let onchange = props.on_edit.reform(move |event: Event| (provider, page_kit::value(&event)));
    let selected = provider_id(model.provider);
    let default_url = model.provider.default_base_url();
    let key_stored = model.api_key == MASKED;
    // With a key, plain http to another computer is a problem of the form; without one,
    // prompts and page content would still cross the network unencrypted.
    let base_hint = match plain_http_host(&model.base_url) {
        Some(host) => Some(AttrValue::from(format!(
            "Plain http://: prompts and page content travel unencrypted to {host}."
        ))),
        None => {
            (!default_url.is_empty()).then_some(AttrValue::from("Empty: the provider's default."))
        }
    };
    html! {
        <fieldset class="model" aria-label={format!("{} model", role.label())}>
            <legend>{ role.label() }</legend>
            <div class="field">
                <label for={provider.testid()}>{ "Provider" }</label>
                <select id={provider.testid()} data-testid={provider.testid()} {onchange}>
                    { for PROVIDERS.iter().map(|(_, id, label)| html! {
                        <option value={*id} selected={*id == selected}>{ *label }</option>
                    }) }
                </select>
                <FieldErrors id={format!("{}-errors", provider.testid())} problems={of(provider)} />
            </div>
            <SettingsField field={Field::Model(role)} label="Model" value={model.model.clone()}
                placeholder="e.g. gpt-4o-mini" problems={of(Field::Model(role))}
                on_edit={props.on_edit.clone()} />
            <SettingsField field={Field::ApiKey(role)} label="API key" kind={InputKind::Password}
                value={model.api_key.clone()}
                placeholder={if key_stored { "Stored" } else { "Paste the key" }}
                hint={key_stored.then_some(AttrValue::from("A key is stored; type a new one to replace it."))}
                problems={of(Field::ApiKey(role))} on_edit={props.on_edit.clone()} />
            <SettingsField field={Field::BaseUrl(role)} label="Base URL" kind={InputKind::Url}
                value={model.base_url.clone()}
                placeholder={(!default_url.is_empty()).then(|| AttrValue::from(default_url))}
                hint={base_hint}
                problems={of(Field::BaseUrl(role))} on_edit={props.on_edit.clone()} />
            <SettingsField field={Field::Timeout(role)} label="Timeout (ms)" kind={InputKind::Number}
                value={model.timeout_ms.clone()} problems={of(Field::Timeout(role))}
                on_edit={props.on_edit.clone()} />
            <ConnectionTestButton {role} test={props.test.clone()} connected={props.connected}
                on_test={props.on_test.clone()} />
        </fieldset>
    }
}
