//! The prompts and shared rules, with a mark on the edited ones; a new prompt by id.

use yew::prelude::*;

use crate::components::StudioProps;
use crate::state::Action;

#[function_component(PromptList)]
pub fn prompt_list(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let catalogue = state.catalogue();
    let new_id = use_state(String::new);
    let edited = |path: &str| state.is_overridden(path) || state.drafts.contains_key(path);
    let prompts = catalogue.prompts.iter().map(|prompt| {
        let id = prompt.id.clone();
        let dispatch = dispatch.clone();
        let class = if state.prompt == prompt.id { "item active" } else { "item" };
        let mark = prompt.files.iter().any(|f| edited(&f.path));
        html! {
            <li class={class} data-testid="prompt-item" data-prompt={prompt.id.clone()}
                onclick={Callback::from(move |_| dispatch.dispatch(Action::SelectPrompt(id.clone())))}>
                <span class="name">{ &prompt.id }</span>
                if mark { <span class="badge" title="edited">{ "edited" }</span> }
                if prompt.user_made { <span class="badge">{ "new" }</span> }
                <small>{ &prompt.description }</small>
            </li>
        }
    });
    let rules = catalogue.rules.iter().map(|rule| {
        let path = rule.path.clone();
        let dispatch = dispatch.clone();
        let class = if state.file.as_deref() == Some(rule.path.as_str()) { "item active" } else { "item" };
        let mark = edited(&rule.path);
        html! {
            <li class={class} data-testid="rule-item" data-path={rule.path.clone()}
                onclick={Callback::from(move |_| dispatch.dispatch(Action::OpenFile(path.clone())))}>
                <span class="name">{ rule.path.trim_start_matches("rules/") }</span>
                if mark { <span class="badge">{ "edited" }</span> }
            </li>
        }
    });
    let on_new = {
        let (dispatch, new_id) = (dispatch.clone(), new_id.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            dispatch.dispatch(Action::NewPrompt((*new_id).clone()));
            new_id.set(String::new());
        })
    };
    let on_id = page_kit::keep_text(&new_id);
    html! {
        <aside class="prompt-list" data-testid="prompt-list">
            <h3>{ "Prompts" }</h3>
            <ul>{ for prompts }</ul>
            <form class="new" onsubmit={on_new}>
                <input data-testid="new-prompt-id" placeholder="new_prompt_id" value={(*new_id).clone()} oninput={on_id} />
                <button data-testid="new-prompt">{ "New prompt" }</button>
            </form>
            <h3>{ "Shared rules" }</h3>
            <ul>{ for rules }</ul>
        </aside>
    }
}
