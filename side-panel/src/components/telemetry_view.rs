use protocol::agent::Telemetry;
use run_contract::telemetry::RoleSpend;
use yew::prelude::*;

use super::run_info::cost;
use crate::state::telemetry::{counts, when};

#[derive(Properties, PartialEq)]
pub struct TelemetryViewProps {
    pub telemetry: Telemetry,
    /// Whether a task has been shown at all.
    pub has_task: bool,
    /// Steps the run has taken, so an entry after the last one says so.
    pub steps: u32,
    pub on_close: Callback<()>,
}

fn spend_row(role: &str, spend: &RoleSpend) -> Html {
    html! {
        <tr data-testid="telemetry-spend" data-role={role.to_owned()}>
            <th scope="row">{ role.to_owned() }</th>
            <td>{ spend.calls }</td>
            <td>{ spend.input_tokens }</td>
            <td>{ spend.output_tokens }</td>
            <td>{ cost(spend.cost) }</td>
        </tr>
    }
}

/// "What happened": the task's telemetry (seed `001_…` §7): the ThinkingAgent's decisions
/// and why it was called, the questions, pauses and resumes, the steering applied, and what
/// each role's model calls spent.
#[function_component(TelemetryView)]
pub fn telemetry_view(props: &TelemetryViewProps) -> Html {
    let t = &props.telemetry;
    html! {
        <section class="telemetry" data-testid="telemetry" aria-label="What happened">
            <div class="view-head">
                <h2>{ "What happened" }</h2>
                <button type="button" class="ghost" data-testid="telemetry-close"
                    onclick={props.on_close.reform(|_: MouseEvent| ())}>{ "Back to chat" }</button>
            </div>
            if !props.has_task {
                <p class="muted">{ "No task yet." }</p>
            } else {
                <p class="telemetry-counts" data-testid="telemetry-counts">
                    { counts(t) }
                </p>
                <table class="telemetry-spend">
                    <caption>{ "Spend per role (every attempt counted)" }</caption>
                    <thead><tr>
                        <th scope="col">{ "Role" }</th><th scope="col">{ "Calls" }</th>
                        <th scope="col">{ "Input" }</th><th scope="col">{ "Output" }</th>
                        <th scope="col">{ "Cost" }</th>
                    </tr></thead>
                    <tbody>
                        { for t.spend.iter().map(|(role, spend)| spend_row(role, spend)) }
                    </tbody>
                    <tfoot>{ spend_row("total", &t.total()) }</tfoot>
                </table>
                if t.log.is_empty() {
                    <p class="muted">{ "No decisions, questions or pauses yet." }</p>
                } else {
                    // Newest first, so a running task's latest decision is at the top.
                    <h3 class="telemetry-log-head" data-testid="telemetry-log-head">{ "Log, newest first" }</h3>
                    <ol class="telemetry-log">
                        { for t.log.iter().rev().map(|entry| html! {
                            <li data-testid="telemetry-entry" data-kind={format!("{:?}", entry.kind).to_ascii_lowercase()}>
                                <span class="when">{ when(entry.step, props.steps) }</span>
                                <span class="kind">{ entry.kind.label() }</span>
                                <span class="what">{ entry.message.clone() }</span>
                            </li>
                        }) }
                    </ol>
                }
            }
        </section>
    }
}
