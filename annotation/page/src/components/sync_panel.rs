use annotation_core::sync::{Conflict, SyncSettings, SyncState};
use serde_json::Value;
use yew::prelude::*;

use crate::state::{Action, Dispatch, SyncView};

#[derive(Properties, PartialEq)]
pub struct PillProps {
    pub state: SyncState,
    pub on_open: Callback<()>,
}

/// The sync state, always in view (the design card: a visible sync state).
#[function_component(SyncPill)]
pub fn sync_pill(props: &PillProps) -> Html {
    html! {
        <button class={classes!("sync-pill", props.state.class())} data-testid="sync-state" data-state={props.state.class()}
            onclick={props.on_open.reform(|_| ())} title="Sync settings and conflicts">
            { props.state.label() }
        </button>
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub sync: SyncView,
    pub grammar: String,
    pub dispatch: Dispatch,
}

/// Sync settings (server and token, the token never shown back) and the conflicts to
/// resolve: for each, what differs between my copy and the server's, and the choice.
#[function_component(SyncPanel)]
pub fn sync_panel(props: &Props) -> Html {
    let endpoint = use_state(|| props.sync.settings.endpoint.clone());
    let token = use_state(String::new);
    let grammar = use_state(|| props.grammar.clone());
    // Save reads the fields themselves: a click can come before the re-render that would
    // hand it the latest text.
    let fields = (use_node_ref(), use_node_ref(), use_node_ref());
    let problems = SyncSettings {
        endpoint: (*endpoint).clone(),
        token: if token.is_empty() { props.sync.settings.token.clone() } else { (*token).clone() },
    }
    .problems();
    let on_save = {
        let (dispatch, endpoint, token, grammar) =
            (props.dispatch.clone(), endpoint.clone(), token.clone(), grammar.clone());
        let fields = fields.clone();
        Callback::from(move |_| {
            let read = |field: &NodeRef, fallback: &str| {
                field
                    .cast::<web_sys::HtmlInputElement>()
                    .map_or_else(|| fallback.to_owned(), |input| input.value())
            };
            dispatch.dispatch(Action::SaveSyncSettings {
                endpoint: read(&fields.0, &endpoint),
                token: read(&fields.1, &token),
                grammar: read(&fields.2, &grammar),
            });
        })
    };
    let resolve = props.dispatch.to_callback().reform(|(conflict, mine): (Conflict, bool)| {
        Action::ResolveConflict { conflict: Box::new(conflict), mine }
    });
    let has_token = !props.sync.settings.token.is_empty();
    html! {
        <div class="overlay" onclick={props.dispatch.to_callback().reform(|_| Action::SyncOpen(false))}>
            <div class="dialog sync-dialog" role="dialog" aria-label="Sync" data-testid="sync-dialog"
                onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2>{ "Sync & checks" }</h2>
                <p class="muted">{ "Runs stay in this browser and sync to your team's server when one is set. Leave the address empty to work locally only." }</p>
                <label>{ "Server" }
                    <input data-testid="sync-endpoint" placeholder="http://127.0.0.1:8787" value={(*endpoint).clone()} oninput={page_kit::keep_text(&endpoint)} ref={fields.0.clone()} />
                </label>
                <label>{ "Token" }
                    <input data-testid="sync-token" type="password" autocomplete="off"
                        placeholder={if has_token { "•••••• (stored; type to replace)" } else { "from `sync-server user add`" }}
                        value={(*token).clone()} oninput={page_kit::keep_text(&token)} ref={fields.1.clone()} />
                </label>
                { for problems.iter().map(|p| html! { <p class="field-error" data-testid="sync-problem">{ p }</p> }) }
                <label title="Optional: a LanguageTool-compatible server for grammar checks">{ "Grammar" }
                    <input data-testid="grammar-endpoint" placeholder="http://localhost:8081 (LanguageTool; optional)" value={(*grammar).clone()} oninput={page_kit::keep_text(&grammar)} ref={fields.2.clone()} />
                </label>
                <div class="row">
                    <button class="primary" data-testid="sync-save" disabled={!problems.is_empty()} onclick={on_save}>{ "Save & sync now" }</button>
                    <button data-testid="sync-now" onclick={props.dispatch.to_callback().reform(|_| Action::SyncKick)}>{ "Sync now" }</button>
                    <button data-testid="sync-close" onclick={props.dispatch.to_callback().reform(|_| Action::SyncOpen(false))}>{ "Close" }</button>
                </div>
                <p data-testid="sync-status" class={classes!("sync-status", props.sync.state.class())}>{ props.sync.state.label() }</p>
                if !props.sync.refused.is_empty() {
                    <h3>{ "Refused by the server" }</h3>
                    <p class="muted">{ "These changes stay here, unsent, until the record is fixed and saved again, or you discard the change (your copy in this browser stays as it is)." }</p>
                    <ul class="conflicts">
                        { for props.sync.refused.iter().map(|(pending, why)| {
                            let pending2 = Box::new(pending.clone());
                            let discard = props.dispatch.to_callback().reform(move |_| Action::DiscardRefused(pending2.clone()));
                            html! {
                                <li class="conflict" data-testid="refused">
                                    <strong>{ pending.describe() }</strong>
                                    <p class="field-error">{ why }</p>
                                    <button class="small" data-testid="discard-change" onclick={discard}>{ "Discard this change" }</button>
                                </li>
                            }
                        }) }
                    </ul>
                }
                if !props.sync.conflicts.is_empty() {
                    <h3>{ "Conflicts" }</h3>
                    <p class="muted">{ "Someone saved these on the server after your copy was synced. Nothing was overwritten: choose which copy stays." }</p>
                    <ul class="conflicts">
                        { for props.sync.conflicts.iter().map(|(conflict, mine)| conflict_item(conflict, mine, &resolve)) }
                    </ul>
                }
            </div>
        </div>
    }
}

fn conflict_item(conflict: &Conflict, mine: &Value, resolve: &Callback<(Conflict, bool)>) -> Html {
    let differences = conflict.differences(mine);
    let (keep, take) = (conflict.clone(), conflict.clone());
    html! {
        <li class="conflict" data-testid="conflict">
            <strong>{ conflict.pending.describe() }</strong>
            <table class="merge">
                <tr><th>{ "Field" }</th><th>{ "Yours" }</th><th>{ "Server's" }</th></tr>
                { for differences.iter().map(|(path, mine, theirs)| html! {
                    <tr><td>{ path }</td><td data-testid="conflict-mine">{ mine }</td><td data-testid="conflict-theirs">{ theirs }</td></tr>
                }) }
            </table>
            <button class="primary small" data-testid="keep-mine" onclick={resolve.reform(move |_| (keep.clone(), true))}>{ "Keep mine" }</button>
            <button class="small" data-testid="take-theirs" onclick={resolve.reform(move |_| (take.clone(), false))}>{ "Take the server's" }</button>
        </li>
    }
}
