use annotation_core::team::{Delivery, WEBHOOK_EVENTS, Webhook};
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub hooks: Vec<Webhook>,
    pub deliveries: Option<(String, Vec<Delivery>)>,
    /// A new hook's secret, shown this once.
    pub secret: Option<(String, String)>,
    pub busy: bool,
    pub dispatch: Dispatch,
}

/// Webhooks (admins): register one (its secret shown once), pause or resume, and each
/// hook's deliveries with their status and attempts.
#[function_component(WebhooksView)]
pub fn webhooks_view(props: &Props) -> Html {
    let (url, description) = (use_node_ref(), use_node_ref());
    let events = use_state(|| WEBHOOK_EVENTS.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>());
    let team = props.dispatch.to_callback().reform(Action::Team);
    let create = {
        let (url, description, events, team) =
            (url.clone(), description.clone(), events.clone(), team.clone());
        Callback::from(move |_| {
            let value = |r: &NodeRef| {
                r.cast::<web_sys::HtmlInputElement>().map(|i| i.value()).unwrap_or_default()
            };
            team.emit(TeamAction::CreateHook {
                url: value(&url),
                events: (*events).clone(),
                description: value(&description),
            });
        })
    };
    html! {
        <div class="webhooks">
            if let Some((id, secret)) = &props.secret {
                <div class="secret" role="alert" data-testid="webhook-secret-box">
                    <p>{ format!("Hook {id} is registered. Its signing secret is shown this once: copy it now.") }</p>
                    <code class="select-all" data-testid="webhook-secret" title="One click selects it all">{ secret }</code>
                    <p class="hint">{ "Verify each delivery: X-AlphaScout-Signature is sha256= and the hex HMAC-SHA256 of the exact body, keyed with this secret." }</p>
                    <button class="small" data-testid="secret-done" onclick={team.reform(|_| TeamAction::ForgetSecret)}>{ "I have copied it" }</button>
                </div>
            }
            <div class="new-hook">
                <label class="hook-field">{ "Payload URL" }
                    <input data-testid="webhook-url" ref={url} size="40" placeholder="https://… (or http://localhost…)" />
                </label>
                <label class="hook-field">{ "Description" }
                    <input data-testid="webhook-description" ref={description} size="20" placeholder="What it is for" />
                </label>
                <span class="events-label">{ "Events" }</span>
                { for WEBHOOK_EVENTS.iter().map(|event| {
                    let on = events.contains(&event.to_string());
                    let toggle = { let events = events.clone(); move |_| {
                        let mut list = (*events).clone();
                        if on { list.retain(|e| e != event) } else { list.push((*event).to_owned()) }
                        events.set(list);
                    } };
                    html! { <label><input type="checkbox" checked={on} onchange={toggle} data-testid={format!("event-{event}")} />{ *event }</label> }
                }) }
                <button class="small primary" data-testid="webhook-create" disabled={props.busy} onclick={create}>{ "Register" }</button>
            </div>
            <table data-testid="webhooks">
                <thead><tr><th>{ "url" }</th><th>{ "events" }</th><th>{ "pending" }</th><th>{ "delivered" }</th><th>{ "failed" }</th><th></th></tr></thead>
                <tbody>
                    { for props.hooks.iter().map(|h| {
                        let (id, paused) = (h.id.clone(), h.paused);
                        let id2 = id.clone();
                        html! {
                            <tr data-testid="webhook" data-paused={h.paused.to_string()}>
                                <td>{ &h.url }{ if h.paused { " (paused)" } else { "" } }</td>
                                <td>{ h.events.join(", ") }</td>
                                <td>{ h.pending }</td><td data-testid="webhook-delivered">{ h.delivered }</td><td>{ h.failed }</td>
                                <td>
                                    <button class="small" data-testid="webhook-pause" onclick={team.reform(move |_| TeamAction::PauseHook { id: id.clone(), paused: !paused })}>
                                        { if h.paused { "Resume" } else { "Pause" } }
                                    </button>
                                    <button class="small ghost" data-testid="webhook-deliveries" onclick={team.reform(move |_| TeamAction::Deliveries(id2.clone()))}>{ "Deliveries" }</button>
                                </td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            if let Some((hook, list)) = &props.deliveries {
                <h3>{ format!("Deliveries of {hook}") }</h3>
                <table data-testid="deliveries">
                    <thead><tr><th>{ "event" }</th><th>{ "status" }</th><th>{ "attempts" }</th><th>{ "last answer" }</th><th>{ "next try" }</th></tr></thead>
                    <tbody>
                        { for list.iter().map(|d| html! {
                            <tr data-testid="delivery" data-status={d.status.clone()} data-attempts={d.attempts.to_string()}>
                                <td>{ &d.event }</td><td>{ &d.status }</td><td>{ d.attempts }</td>
                                <td>{ d.last_status_code.map(|c| c.to_string()).or(d.last_error.clone()).unwrap_or_default() }</td>
                                <td>{ d.next_attempt_at.clone().unwrap_or_default() }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            }
        </div>
    }
}
