use yew::prelude::*;

use crate::components::list_status::list_status;
use crate::components::session_row::SessionRow;
use crate::components::view_head::ViewHead;
use crate::state::history::History;

#[derive(Properties, PartialEq)]
pub struct HistoryViewProps {
    pub history: History,
    /// The conversation the chat shows now.
    pub shown: Option<String>,
    /// Whether a conversation can be opened now (no task running).
    pub can_open: bool,
    /// The panel's tab: each conversation says whether it was started here.
    pub tab: Option<protocol::TabId>,
    /// Per listed session, why it cannot be deleted (its task runs), if it cannot.
    pub not_deletable: Vec<(String, AttrValue)>,
    pub on_open: Callback<String>,
    pub on_ask_delete: Callback<String>,
    pub on_cancel_delete: Callback<()>,
    pub on_delete: Callback<String>,
    pub on_close: Callback<()>,
}

/// The stored conversations, newest first: reopen one in the chat, or delete its history.
#[function_component(HistoryView)]
pub fn history_view(props: &HistoryViewProps) -> Html {
    let history = &props.history;
    let sessions = history.sessions.as_deref().unwrap_or_default();
    let deleting = history.deleting.as_ref().map(|(_, session)| session.as_str());
    let opening = history.opening.as_ref().map(|(_, session)| session.as_str());
    let open_title = if props.can_open {
        None
    } else {
        Some(AttrValue::from(
            "A task is running: stop it, or wait until it ends, to open another conversation.",
        ))
    };
    html! {
        <section class="history" data-testid="history" aria-labelledby="history-title">
            <ViewHead name="history" title="History" on_close={props.on_close.clone()} />
            <p class="section-hint">
                { "Open a conversation to see it again or continue it. Deleting one removes its chat history. Captured runs stay available for annotation." }
            </p>
            { list_status(
                "history",
                (history.loading.is_some() && history.sessions.is_none())
                    .then_some("Loading your conversations…"),
                history.error.as_ref(),
                (history.sessions.is_some() && sessions.is_empty())
                    .then_some("No conversations yet. Tasks you give the agent show here."),
            ) }
            <ul class="sessions" aria-busy={history.loading.is_some().to_string()}>
                { for sessions.iter().map(|session| {
                    let id = session.session_id.clone();
                    let not_deletable = props
                        .not_deletable
                        .iter()
                        .find(|(s, _)| *s == id)
                        .map(|(_, why)| why.clone());
                    html! {
                        <SessionRow
                            key={id.clone()}
                            session={session.clone()}
                            current={props.shown.as_deref() == Some(id.as_str())}
                            this_tab={props.tab.is_some() && session.panel_tab == props.tab}
                            confirming={history.confirming.as_deref() == Some(id.as_str())}
                            deleting={deleting == Some(id.as_str())}
                            opening={opening == Some(id.as_str())}
                            can_open={props.can_open}
                            open_title={open_title.clone()}
                            {not_deletable}
                            on_open={props.on_open.clone()}
                            on_ask_delete={props.on_ask_delete.clone()}
                            on_cancel_delete={props.on_cancel_delete.clone()}
                            on_delete={props.on_delete.clone()}
                        />
                    }
                }) }
            </ul>
        </section>
    }
}
