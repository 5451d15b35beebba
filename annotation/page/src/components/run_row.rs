use annotation_core::query::RunSummary;
use yew::prelude::*;

use crate::state::Route;

/// What a run without a score says when pointed at (captured and never opened here, or
/// synced from another browser): opening it scores it.
pub const UNSCORED: &str = "not scored yet";
use crate::state::list::ListAction;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub summary: RunSummary,
    pub picked: bool,
    pub on_pick: Callback<ListAction>,
    /// (run id, review mode)
    pub on_open: Callback<(String, bool)>,
}

#[function_component(RunRow)]
pub fn run_row(props: &Props) -> Html {
    let s = &props.summary;
    let id = s.run_id.clone();
    let pick = {
        let (id, picked) = (id.clone(), props.picked);
        props.on_pick.reform(move |_| ListAction::Pick(id.clone(), !picked))
    };
    let open = {
        let id = id.clone();
        props.on_open.reform(move |e: MouseEvent| {
            e.prevent_default();
            (id.clone(), false)
        })
    };
    let review = {
        let id = id.clone();
        props.on_open.reform(move |_| (id.clone(), true))
    };
    let percent = (s.done * 100).checked_div(s.steps).unwrap_or(0);
    // One dense line: the task with its replay values and tags, then a column per figure.
    let title = match &s.replay {
        Some(replay) => format!("{}\n{replay}", s.task_prompt),
        None => s.task_prompt.clone(),
    };
    html! {
        <div class="run-row" data-testid="run-row" data-run={id.clone()}>
            <input type="checkbox" aria-label="Pick" checked={props.picked} onchange={pick} />
            <span class="task" {title}>
                <a href={Route::link(&id)} onclick={open} data-testid="open-run">{ &s.task_prompt }</a>
                if let Some(replay) = &s.replay {
                    <span class="replay-of muted" data-testid="run-replay">{ replay }</span>
                }
                { for s.tags.iter().map(|t| html! { <span class="tag">{ t }</span> }) }
            </span>
            <span><span class={classes!("badge", s.status.as_str())} data-testid="run-status">{ s.status.label() }</span></span>
            <span class="progress-cell" data-testid="run-steps" title={format!("{} of {} steps complete, {} flagged", s.done, s.steps, s.flagged)}>
                <span class="bar"><span style={format!("width:{percent}%")} /></span>
                { format!("{}/{}", s.done, s.steps) }
            </span>
            if s.open_issues > 0 {
                <span class="count issues" data-testid="run-issues" title={format!("{} open issue(s): {}", s.open_issues, s.issue_kinds.join(", "))}>
                    { format!("⚑ {}", s.open_issues) }
                </span>
            } else {
                <span class="muted" data-testid="run-issues-none">{ "–" }</span>
            }
            if let Some(q) = s.quality {
                <span data-testid="run-quality">{ q }</span>
            } else {
                <span class="muted" data-testid="run-quality" title={UNSCORED}>{ "—" }</span>
            }
            <span class="who">{ s.annotator.clone().unwrap_or_else(|| "–".into()) }</span>
            <span class="muted when">{ s.created_at.get(..10).unwrap_or(&s.created_at).to_owned() }
                <button class="ghost small" data-testid="review-run" onclick={review} title="Open in review mode">{ "Review" }</button>
            </span>
        </div>
    }
}
