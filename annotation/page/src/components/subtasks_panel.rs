use annotation_core::record::Subtask;
use yew::prelude::*;

use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    /// Bumped by the Alt+D shortcut: a divider before the selected step.
    pub divider_key: u32,
}

/// Splits the steps into subtasks at the given first-step indexes: one subtask per
/// divider, keeping the names of subtasks that start where they did.
pub fn split(old: &[Subtask], starts: &[u32], steps: u32) -> Vec<Subtask> {
    let mut starts: Vec<u32> = starts.iter().copied().filter(|s| *s < steps).collect();
    starts.push(0);
    lean::sort(&mut starts);
    starts.dedup();
    starts
        .iter()
        .enumerate()
        .map(|(i, first)| {
            let last = starts.get(i + 1).map_or(steps.saturating_sub(1), |next| next - 1);
            let kept = old.iter().find(|s| s.step_range[0] == *first);
            Subtask {
                id: kept.map_or_else(|| format!("subtask-{}", first + 1), |s| s.id.clone()),
                title: kept.map_or_else(String::new, |s| s.title.clone()),
                description: kept.map_or_else(String::new, |s| s.description.clone()),
                step_range: [*first, last],
                status: kept.map_or_else(|| "pending".into(), |s| s.status.clone()),
            }
        })
        .collect()
}

/// Subtask decomposition (seed §4): dividers between steps, a name and description for each.
#[function_component(SubtasksPanel)]
pub fn subtasks_panel(props: &Props) -> Html {
    let editor = &props.editor;
    let run = editor.merged_run();
    let steps = editor.steps.len() as u32;
    let subtasks = run.subtasks.clone();
    let starts: Vec<u32> = subtasks.iter().map(|s| s.step_range[0]).collect();
    let editable = editor.permissions().edit;
    let toggle = {
        let (dispatch, subtasks, starts) =
            (props.dispatch.clone(), subtasks.clone(), starts.clone());
        Callback::from(move |index: u32| {
            let mut next = starts.clone();
            if let Some(i) = next.iter().position(|s| *s == index) {
                next.remove(i);
            } else {
                next.push(index);
            }
            dispatch.dispatch(Action::SetSubtasks(split(&subtasks, &next, steps)));
        })
    };
    {
        let (toggle, index) = (toggle.clone(), editor.current().map(|s| s.index));
        use_effect_with(props.divider_key, move |key| {
            if *key > 0
                && let Some(index) = index
                && index > 0
            {
                toggle.emit(index);
            }
        });
    }
    let edit = |i: usize, title: bool| {
        let (dispatch, subtasks) = (props.dispatch.clone(), subtasks.clone());
        Callback::from(move |e: Event| {
            let mut next = subtasks.clone();
            if title {
                next[i].title = page_kit::value(&e)
            } else {
                next[i].description = page_kit::value(&e)
            }
            dispatch.dispatch(Action::SetSubtasks(next));
        })
    };
    html! {
        <div class="subtasks" data-testid="subtasks">
            <p class="muted">{ "Click between steps to add or remove a divider (or press Alt+D on a step). Name each part." }</p>
            <ol class="dividers">
                { for (0..steps).map(|index| {
                    let divider = index > 0 && starts.contains(&index);
                    html! {
                        <>
                            if index > 0 && editable {
                                <li class={classes!("gap", divider.then_some("on"))}>
                                    <button class="small ghost" data-testid="divider" data-before={index.to_string()}
                                        onclick={toggle.reform(move |_| index)}>{ if divider { "✂ divider — remove" } else { "＋ divider" } }</button>
                                </li>
                            }
                            <li class="step-slot">{ format!("Step {}", index + 1) }</li>
                        </>
                    }
                }) }
            </ol>
            { for subtasks.iter().enumerate().map(|(i, s)| html! {
                <div class="subtask-edit" data-testid="subtask-edit">
                    <strong>{ format!("Steps {}–{}", s.step_range[0] + 1, s.step_range[1] + 1) }</strong>
                    <input data-testid="subtask-title" placeholder="Name, e.g. Search for the product" value={s.title.clone()} readonly={!editable} onchange={edit(i, true)} />
                    <input data-testid="subtask-description" placeholder="What happens in these steps" value={s.description.clone()} readonly={!editable} onchange={edit(i, false)} />
                </div>
            }) }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dividers_make_contiguous_subtasks_and_keep_names() {
        let old = vec![Subtask {
            id: "a".into(),
            title: "Open".into(),
            step_range: [0, 9],
            ..Subtask::default()
        }];
        let parts = split(&old, &[0, 4, 7], 10);
        let ranges: Vec<[u32; 2]> = parts.iter().map(|s| s.step_range).collect();
        assert_eq!(ranges, [[0, 3], [4, 6], [7, 9]]);
        assert_eq!(parts[0].title, "Open");
        assert_eq!(split(&parts, &[0], 10).len(), 1);
        assert_eq!(split(&[], &[12], 10).len(), 1, "a divider past the end is ignored");
    }
}
