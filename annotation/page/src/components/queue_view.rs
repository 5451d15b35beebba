use annotation_core::team::QueueRow;
use yew::prelude::*;

use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The queue in due order (`annotation_core::team::queue_rows`).
    pub rows: Vec<QueueRow>,
    pub loaded: bool,
    pub dispatch: Dispatch,
}

/// "My queue": the runs assigned to the person and not handed in, oldest assignment first,
/// one dense row each like the list's, and a button to start on the next one.
#[function_component(QueueView)]
pub fn queue_view(props: &Props) -> Html {
    if !props.loaded {
        return html! { <p class="muted" data-testid="queue-loading">{ "Asking the server for your queue…" }</p> };
    }
    if props.rows.is_empty() {
        return html! { <p class="muted" data-testid="queue-empty">{ "Nothing is assigned to you right now." }</p> };
    }
    let open =
        props.dispatch.to_callback().reform(|run_id: String| Action::OpenRun { run_id, qa: false });
    let next = &props.rows[0].entry;
    html! {
        <div class="queue" data-testid="queue">
            <div class="queue-next">
                <button class="primary" data-testid="queue-start-next" title="Alt+R"
                    onclick={props.dispatch.to_callback().reform(|_| Action::NextRun)}>{ "Start next" }</button>
                <span class="muted">{ format!("Next up: {}", next.task_prompt) }</span>
            </div>
            <div class="run-table">
                <div class="run-row queue-row head">
                    <span title="Due order: oldest assignment first">{ "#" }</span><span>{ "Task" }</span>
                    <span>{ "Status" }</span><span>{ "Steps" }</span><span>{ "Assigned by" }</span><span>{ "Assigned" }</span>
                </div>
                { for props.rows.iter().map(|row| {
                    let id = row.entry.run_id.clone();
                    let percent = row.done.map(|d| (d * 100).checked_div(row.steps).unwrap_or(0));
                    let (steps_text, steps_title) = match row.done {
                        Some(done) => (format!("{done}/{}", row.steps), format!("{done} of {} steps complete", row.steps)),
                        None => (row.steps.to_string(), "Steps on the server; progress shows once the run is in this browser".to_owned()),
                    };
                    html! {
                        <div class="run-row queue-row" data-testid="queue-item" data-run={id.clone()}>
                            <span class="muted" data-testid="queue-position">{ row.position }</span>
                            <span class="task" title={row.entry.task_prompt.clone()}>
                                <button class="link" onclick={open.reform(move |_| id.clone())}>{ &row.entry.task_prompt }</button>
                            </span>
                            <span><span class={classes!("badge", row.status.as_str())} data-testid="queue-status">{ row.status.label() }</span></span>
                            <span class="progress-cell" data-testid="queue-steps" title={steps_title}>
                                if let Some(percent) = percent {
                                    <span class="bar"><span style={format!("width:{percent}%")} /></span>
                                }
                                { steps_text }
                            </span>
                            <span class="who">{ &row.entry.assigned_by }</span>
                            <span class="muted when">{ &row.assigned }</span>
                        </div>
                    }
                }) }
            </div>
        </div>
    }
}
