//! Save (a new version), the version the draft started from, and rollback to an older one.

use yew::prelude::*;

use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// (version, saved at), oldest first.
    pub versions: Vec<(u32, String)>,
    pub base: u32,
    pub dirty: bool,
    pub can_save: bool,
    pub dispatch: Callback<Action>,
}

#[function_component(VersionBar)]
pub fn version_bar(props: &Props) -> Html {
    let chosen = use_state(|| None::<u32>);
    let on_choose = {
        let chosen = chosen.clone();
        Callback::from(move |e: Event| chosen.set(page_kit::value(&e).parse().ok()))
    };
    let rollback = {
        let (chosen, dispatch) = (chosen.clone(), props.dispatch.clone());
        Callback::from(move |_| {
            if let Some(version) = *chosen {
                dispatch.emit(Action::Rollback(version));
            }
        })
    };
    let latest = props.versions.last().map_or(0, |(v, _)| *v);
    let save_title = if !props.dirty {
        "Nothing changed since this version"
    } else if !props.can_save {
        "Fix the problems listed first"
    } else {
        "Save as a new version"
    };
    html! {
        <div class="versions">
            <span data-testid="workflow-current" class={classes!(props.dirty.then_some("dirty"))}>
                { format!("v{}{}", props.base, if props.dirty { " (edited)" } else { "" }) }
            </span>
            <button data-testid="workflow-save" disabled={!props.can_save} title={save_title}
                onclick={props.dispatch.reform(|_| Action::Save)}>{ "Save" }</button>
            <select data-testid="workflow-version" onchange={on_choose} aria-label="Version">
                <option value="" selected={chosen.is_none()}>{ "Versions…" }</option>
                { for props.versions.iter().rev().map(|(v, at)| html! {
                    <option value={v.to_string()} selected={*chosen == Some(*v)}>
                        { format!("v{v} · {at}{}", if *v == latest { " (latest)" } else { "" }) }
                    </option>
                }) }
            </select>
            <button class="ghost" data-testid="workflow-rollback" disabled={chosen.is_none_or(|v| v == latest)}
                onclick={rollback} title="Save the chosen version as the newest">{ "Roll back" }</button>
        </div>
    }
}
