use annotation_core::record::{Run, Step, StepState, subtask_status};
use annotation_core::review::{Comment, Suggestion, SuggestionState, open_threads};
use yew::prelude::*;

use crate::components::step_row::StepRow;
use crate::components::virtual_rows::use_window;
use crate::state::{Action, Dispatch};

const ROW_PX: f64 = 64.0;
const VIEW_PX: f64 = 1000.0;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub steps: Vec<Step>,
    pub run: Run,
    pub at: usize,
    pub comments: Vec<Comment>,
    pub suggestions: Vec<Suggestion>,
    /// Indexes of the steps with unsaved edits.
    pub drafted: Vec<u32>,
    pub dispatch: Dispatch,
}

/// A line of the list: a subtask's heading or a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Line {
    /// Subtask index, or `None` for steps in no subtask.
    Heading(Option<usize>),
    Step(usize),
}

/// The list's lines: each subtask's heading, then its steps unless it is folded.
pub fn lines(run: &Run, steps: &[Step], folded: &lean::SortedSet<Option<usize>>) -> Vec<Line> {
    let mut out = Vec::with_capacity(steps.len() + run.subtasks.len() + 1);
    let mut placed = vec![false; steps.len()];
    for (i, subtask) in run.subtasks.iter().enumerate() {
        out.push(Line::Heading(Some(i)));
        let [first, last] = subtask.step_range;
        for (pos, step) in steps.iter().enumerate() {
            if step.index >= first && step.index <= last && !placed[pos] {
                placed[pos] = true;
                if !folded.contains(&Some(i)) {
                    out.push(Line::Step(pos));
                }
            }
        }
    }
    if placed.iter().any(|p| !p) {
        if !run.subtasks.is_empty() {
            out.push(Line::Heading(None));
        }
        if !folded.contains(&None) {
            out.extend(
                placed.iter().enumerate().filter(|(_, p)| !**p).map(|(pos, _)| Line::Step(pos)),
            );
        }
    }
    out
}

/// The left panel's steps, grouped by subtask (an accordion) and virtualized.
#[function_component(StepList)]
pub fn step_list(props: &Props) -> Html {
    let folded = use_state(lean::SortedSet::<Option<usize>>::new);
    let lines = lines(&props.run, &props.steps, &folded);
    let window = use_window(lines.len(), ROW_PX, VIEW_PX);
    let on_select = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |pos: usize| dispatch.dispatch(Action::Select(pos)))
    };
    let heading = |subtask: Option<usize>| {
        let (title, range, steps): (String, String, Vec<&Step>) = match subtask {
            Some(i) => {
                let s = &props.run.subtasks[i];
                let [a, b] = s.step_range;
                let title =
                    if s.title.is_empty() { format!("Subtask {}", i + 1) } else { s.title.clone() };
                (
                    title,
                    format!("steps {}–{}", a + 1, b + 1),
                    props.steps.iter().filter(|st| st.index >= a && st.index <= b).collect(),
                )
            }
            None => ("Steps in no subtask".into(), String::new(), Vec::new()),
        };
        let done = steps.iter().filter(|s| s.state() == StepState::Done).count();
        let status =
            subtask.map(|i| subtask_status(&props.run.subtasks[i], &props.steps, props.run.status));
        let percent = if steps.is_empty() { 0 } else { done * 100 / steps.len() };
        let is_folded = folded.contains(&subtask);
        let toggle = {
            let folded = folded.clone();
            Callback::from(move |_| {
                let mut next = (*folded).clone();
                if !next.remove(&subtask) {
                    next.insert(subtask);
                }
                folded.set(next);
            })
        };
        html! {
            <button class="subtask-heading" data-testid="subtask-heading" onclick={toggle} aria-expanded={(!is_folded).to_string()}>
                <span class="caret">{ if is_folded { "▸" } else { "▾" } }</span>
                <span class="title">{ title }</span>
                <span class="muted">{ range }</span>
                if subtask.is_some() { <span class="muted">{ format!("{percent}%") }</span> }
                if let Some(status) = status {
                    <span class={classes!("badge", "subtask-status", status)} data-testid="subtask-status" data-state={status}>{ status }</span>
                }
            </button>
        }
    };
    html! {
        <div class="step-list" onscroll={window.onscroll.clone()} data-testid="step-list">
            <div style={format!("height:{}px", window.before)} />
            { for lines[window.range.clone()].iter().map(|line| match *line {
                Line::Heading(subtask) => heading(subtask),
                Line::Step(pos) => {
                    let step = &props.steps[pos];
                    let pending = props.suggestions.iter()
                        .filter(|s| s.step_index == step.index && s.state == SuggestionState::Pending)
                        .count();
                    html! {
                        <StepRow key={step.index} step={step.clone()} position={pos} selected={pos == props.at}
                            drafted={props.drafted.contains(&step.index)}
                            threads={open_threads(&props.comments, Some(step.index))} pending={pending}
                            on_select={on_select.clone()} />
                    }
                }
            }) }
            <div style={format!("height:{}px", window.after)} />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use annotation_core::record::Subtask;

    use super::*;

    #[test]
    fn steps_fall_under_their_subtask_and_folding_hides_them() {
        let steps: Vec<Step> = (0..5).map(|index| Step { index, ..Step::default() }).collect();
        let mut run = Run {
            subtasks: vec![
                Subtask { step_range: [0, 1], ..Subtask::default() },
                Subtask { step_range: [2, 3], ..Subtask::default() },
            ],
            ..Run::default()
        };
        let all = lines(&run, &steps, &lean::SortedSet::new());
        assert_eq!(
            all,
            [
                Line::Heading(Some(0)),
                Line::Step(0),
                Line::Step(1),
                Line::Heading(Some(1)),
                Line::Step(2),
                Line::Step(3),
                Line::Heading(None),
                Line::Step(4)
            ]
        );
        let folded = lines(&run, &steps, &[Some(0)].into_iter().collect());
        assert_eq!(folded[..2], [Line::Heading(Some(0)), Line::Heading(Some(1))]);
        run.subtasks.clear();
        assert_eq!(
            lines(&run, &steps, &lean::SortedSet::new()).len(),
            5,
            "no headings without subtasks"
        );
    }
}
