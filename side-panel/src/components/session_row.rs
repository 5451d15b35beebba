use page_port::local_time;
use protocol::agent::SessionSummary;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct SessionRowProps {
    pub session: SessionSummary,
    /// The chat shows this conversation now.
    pub current: bool,
    /// It was started from this panel's tab.
    pub this_tab: bool,
    /// Its delete button was pressed: ask to confirm.
    pub confirming: bool,
    pub deleting: bool,
    pub opening: bool,
    pub can_open: bool,
    /// Why it cannot be opened now, when it cannot.
    pub open_title: Option<AttrValue>,
    /// Why it cannot be deleted, when it cannot.
    pub not_deletable: Option<AttrValue>,
    pub on_open: Callback<String>,
    pub on_ask_delete: Callback<String>,
    pub on_cancel_delete: Callback<()>,
    pub on_delete: Callback<String>,
}

/// One conversation in the History: its first task, status and date; open it, or delete it
/// after a confirm.
#[function_component(SessionRow)]
pub fn session_row(props: &SessionRowProps) -> Html {
    let session = &props.session;
    let id = session.session_id.clone();
    let on_open = {
        let (callback, id) = (props.on_open.clone(), id.clone());
        Callback::from(move |_: MouseEvent| callback.emit(id.clone()))
    };
    let on_ask_delete = {
        let (callback, id) = (props.on_ask_delete.clone(), id.clone());
        Callback::from(move |_: MouseEvent| callback.emit(id.clone()))
    };
    let on_delete = {
        let (callback, id) = (props.on_delete.clone(), id.clone());
        Callback::from(move |_: MouseEvent| callback.emit(id.clone()))
    };
    let status = session.status.label();
    let runs = match session.runs {
        1 => "1 task".to_owned(),
        n => format!("{n} tasks"),
    };
    let continued = (session.task.trim() != session.title.trim()).then(|| session.task.clone());
    html! {
        <li class={classes!("session", props.current.then_some("current"))} data-testid="session"
            data-session-id={id.clone()} data-status={status} data-this-tab={props.this_tab.to_string()}>
            <button type="button" class="session-open" data-testid="session-open"
                disabled={!props.can_open || props.opening}
                title={props.open_title.clone().unwrap_or_else(|| AttrValue::from("Open this conversation in the chat"))}
                onclick={on_open}>
                <span class="session-title">{ session.title.clone() }</span>
                if let Some(task) = continued {
                    <span class="session-task">{ format!("Latest: {task}") }</span>
                }
                <span class="session-meta">
                    <span class={classes!("session-status", status)}>{ session.status.describe() }</span>
                    <time datetime={session.updated_at.clone()}>{ local_time(&session.updated_at) }</time>
                    <span>{ runs }</span>
                    if props.current { <span class="session-shown">{ "open in chat" }</span> }
                    else if props.this_tab { <span class="session-shown">{ "this tab" }</span> }
                    else if session.panel_tab.is_some() { <span>{ "another tab" }</span> }
                    if props.opening { <span class="session-shown">{ "opening…" }</span> }
                </span>
            </button>
            if props.confirming {
                <div class="session-confirm" role="group" aria-label="Confirm deleting">
                    <span>{ "Delete its chat history?" }</span>
                    <button type="button" class="danger" data-testid="session-delete-confirm"
                        onclick={on_delete}>{ "Delete" }</button>
                    <button type="button" class="ghost" data-testid="session-delete-cancel"
                        onclick={props.on_cancel_delete.reform(|_: MouseEvent| ())}>{ "Keep" }</button>
                </div>
            } else {
                <button type="button" class="ghost icon session-delete" data-testid="session-delete"
                    aria-label="Delete this conversation"
                    disabled={props.not_deletable.is_some() || props.deleting}
                    title={props.not_deletable.clone().unwrap_or_else(|| AttrValue::from("Delete this conversation (captured runs stay available for annotation)"))}
                    onclick={on_ask_delete}>
                    if props.deleting { { "…" } } else { <span aria-hidden="true">{ "×" }</span> }
                </button>
            }
        </li>
    }
}
