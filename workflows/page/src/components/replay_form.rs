//! The replay form: a field per parameter (examples prefilled), the tab to run in, start.

use yew::prelude::*;

use crate::state::{Action, ReplayForm, TabChoice};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub form: ReplayForm,
    pub tabs: Vec<TabChoice>,
    pub dispatch: Callback<Action>,
}

#[function_component(ReplayFormView)]
pub fn replay_form(props: &Props) -> Html {
    let form = &props.form;
    let on_tab =
        props.dispatch.reform(|e: Event| Action::ReplayTab(page_kit::value(&e).parse().ok()));
    html! {
        <section class="replay-form" data-testid="replay-form">
            <h3>{ format!("Replay {} (v{})", form.name, form.version) }</h3>
            { for form.fields.iter().map(|f| {
                let name = f.name.clone();
                let on_input = props.dispatch.reform(move |e: InputEvent| {
                    let value = page_kit::value(&e);
                    Action::ReplayParam(name.clone(), value)
                });
                html! {
                    <label>{ format!("{} ", f.name) }
                        <input data-testid="replay-param" data-name={f.name.clone()} value={f.value.clone()}
                            type={if f.secret { "password" } else { "text" }} oninput={on_input}
                            placeholder={f.description.clone()} />
                    </label>
                }
            }) }
            <label>{ "In " }
                <select data-testid="replay-tab" onchange={on_tab}>
                    <option value="" selected={form.tab.is_none()}>{ format!("a new tab at {}", form.start_url) }</option>
                    { for props.tabs.iter().map(|t| html! {
                        <option value={t.id.to_string()} selected={form.tab == Some(t.id)}>
                            { if t.url.is_empty() { t.title.clone() } else { format!("{} — {}", t.title, t.url) } }
                        </option>
                    }) }
                </select>
            </label>
            <label class="check" title="Off: every step asks the model, which adapts to a changed page but takes longer">
                <input type="checkbox" data-testid="replay-fast-path" checked={form.fast_path}
                    onchange={props.dispatch.reform(|e: Event| Action::ReplayFastPath(
                        page_kit::checked(&e)))} />
                { " Fast path: replay recorded steps without the model while the page matches" }
            </label>
            <div class="actions">
                <button data-testid="replay-start" onclick={props.dispatch.reform(|_| Action::ReplayStart)}>{ "Start replay" }</button>
                <button class="ghost" onclick={props.dispatch.reform(|_| Action::ReplayCancelForm)}>{ "Cancel" }</button>
            </div>
        </section>
    }
}
