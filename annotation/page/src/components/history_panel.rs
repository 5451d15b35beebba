use annotation_core::history::compare;
use yew::prelude::*;

use crate::components::diff_view::DiffView;
use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
}

/// Version history (seed §7.C): every save with who, when and what changed; compare any
/// two; roll back to any, which is itself a new version.
#[function_component(HistoryPanel)]
pub fn history_panel(props: &Props) -> Html {
    let confirm = use_state(|| None::<u32>);
    let editor = &props.editor;
    let versions = &editor.versions;
    let latest = versions.last().map(|v| v.number);
    let can_roll_back = editor.permissions().rollback && !editor.dirty();
    let on_rollback = {
        let (dispatch, confirm) = (props.dispatch.clone(), confirm.clone());
        // The first click asks to confirm; the second rolls back.
        Callback::from(move |number: u32| {
            if *confirm != Some(number) {
                confirm.set(Some(number));
                return;
            }
            confirm.set(None);
            dispatch.dispatch(Action::Rollback(number));
        })
    };
    let compared = editor.compare.and_then(|(a, b)| {
        let a = versions.iter().find(|v| v.number == a)?;
        let b = versions.iter().find(|v| v.number == b)?;
        Some((a.number, b.number, compare(a, b)))
    });
    // A first click shows what a version changed (v1: everything since, up to now); a click
    // on another version while comparing compares those two.
    let pick = |number: u32| {
        let (dispatch, current) = (props.dispatch.clone(), editor.compare);
        Callback::from(move |_| {
            let pair = match current {
                Some((a, _)) if a != number => (a.min(number), a.max(number)),
                _ if number > 1 => (number - 1, number),
                _ => (1, latest.unwrap_or(1)),
            };
            dispatch.dispatch(Action::Compare(Some(pair)));
        })
    };
    html! {
        <div class="history" data-testid="history">
            if versions.is_empty() {
                <p class="muted">{ "No versions yet: the first save records the run as captured (version 1) and your change (version 2)." }</p>
            }
            if editor.dirty() {
                <p class="muted">{ "Save or discard your edits before rolling back." }</p>
            }
            <ol class="versions" reversed=true>
                { for versions.iter().rev().map(|v| {
                    let n = v.number;
                    let picked = editor.compare.is_some_and(|(a, b)| a == n || b == n);
                    html! {
                        <li class={classes!("version", picked.then_some("picked"))} data-testid="version" data-number={n.to_string()}>
                            <div><strong>{ format!("v{n}") }</strong>{ " · " }{ &v.author }{ " · " }
                                <span class="muted">{ v.at.get(..19).unwrap_or(&v.at).replace('T', " ") }</span>
                                if Some(n) == latest { <span class="badge">{ "current" }</span> }
                            </div>
                            <div class="muted" data-testid="version-summary">{ &v.summary }</div>
                            <button class="small ghost" data-testid="compare" onclick={pick(n)}>{ "Compare" }</button>
                            if can_roll_back && Some(n) != latest {
                                <button class="small" data-testid="rollback" onclick={on_rollback.reform(move |_| n)}>
                                    { if *confirm == Some(n) { format!("Confirm roll back to v{n}") } else { "Roll back".to_owned() } }
                                </button>
                            }
                        </li>
                    }
                }) }
            </ol>
            if let Some((a, b, fields)) = compared {
                <h3 data-testid="compare-title">{ format!("Changes from v{a} to v{b}") }</h3>
                <DiffView fields={fields} />
            }
        </div>
    }
}
