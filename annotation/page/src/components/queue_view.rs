use annotation_core::team::QueueEntry;
use yew::prelude::*;

use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub queue: Vec<QueueEntry>,
    pub loaded: bool,
    pub dispatch: Dispatch,
}

/// "My queue": the runs assigned to the person and not handed in, oldest assignment first.
#[function_component(QueueView)]
pub fn queue_view(props: &Props) -> Html {
    if !props.loaded {
        return html! { <p class="muted" data-testid="queue-loading">{ "Asking the server for your queue…" }</p> };
    }
    if props.queue.is_empty() {
        return html! { <p class="muted" data-testid="queue-empty">{ "Nothing is assigned to you right now." }</p> };
    }
    let open =
        props.dispatch.to_callback().reform(|run_id: String| Action::OpenRun { run_id, qa: false });
    html! {
        <ol class="queue" data-testid="queue">
            { for props.queue.iter().map(|q| {
                let id = q.run_id.clone();
                html! {
                    <li data-testid="queue-item" data-run={q.run_id.clone()}>
                        <button class="link" onclick={open.reform(move |_| id.clone())}>{ &q.task_prompt }</button>
                        <span class="muted">{ format!(" · {} · assigned by {} on {}", q.status, q.assigned_by, q.assigned_at.get(..10).unwrap_or(&q.assigned_at)) }</span>
                    </li>
                }
            }) }
        </ol>
    }
}
