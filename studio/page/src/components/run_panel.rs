//! Run the rendered prompt with a configured model: the raw request (keys masked), each
//! answer with its violations highlighted (the first, then each repair), the accepted
//! output, tokens, cost and latency, and a link to the stored trace.

use protocol::settings::ModelRole;
use protocol::studio::StudioRunResult;
use yew::prelude::*;

use crate::components::json_view::JsonView;
use crate::components::{StudioProps, on_value};
use crate::state::{Action, Route, RunState};

#[function_component(RunPanel)]
pub fn run_panel(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let on_role = on_value(dispatch, |id| {
        Action::Role(
            ModelRole::ALL.into_iter().find(|r| r.id() == id).unwrap_or(ModelRole::Navigator),
        )
    });
    let roles = ModelRole::ALL.iter().map(|role| {
        html! { <option value={role.id()} selected={state.role == *role}>{ format!("{} model", role.id()) }</option> }
    });
    let run = {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::Run))
    };
    let running = matches!(state.run, RunState::Running(_));
    let body = match &state.run {
        RunState::Idle => html! {},
        RunState::Running(_) => {
            html! { <p class="hint" data-testid="run-running">{ "Asking the model…" }</p> }
        }
        RunState::Failed(message) => {
            html! { <p class="error" data-testid="run-error">{ message }</p> }
        }
        RunState::Done(result) => result_view(result),
    };
    html! {
        <section class="panel run-panel" data-testid="run-panel">
            <h2>{ "Run" }</h2>
            <div class="buttons">
                <select data-testid="run-role" onchange={on_role}>{ for roles }</select>
                <button data-testid="run-prompt" disabled={running} onclick={run}>
                    { format!("Run variant {}", state.variant) }
                </button>
            </div>
            { body }
        </section>
    }
}

pub fn result_view(result: &StudioRunResult) -> Html {
    let attempts = result.attempts.iter().enumerate().map(|(n, attempt)| {
        let title = if n == 0 { "First answer".to_owned() } else { format!("Repair {n}") };
        let verdict = if attempt.problems.is_empty() { "accepted" } else { "rejected" };
        html! {
            <div class={format!("attempt {verdict}")} data-testid="attempt" data-verdict={verdict}>
                <h4>{ format!("{title} · {} · {verdict} · {} in / {} out tokens", attempt.model, attempt.input_tokens, attempt.output_tokens) }</h4>
                if let Some(output) = &attempt.output {
                    <JsonView value={output.clone()} violations={attempt.violations.clone()} />
                } else {
                    <pre class="raw">{ &attempt.raw }</pre>
                }
                if !attempt.problems.is_empty() {
                    <ul class="problems" data-testid="attempt-problems">
                        { for attempt.problems.iter().map(|p| html! { <li>{ p }</li> }) }
                    </ul>
                }
            </div>
        }
    });
    let exchanges = result.exchanges.iter().enumerate().map(|(n, exchange)| {
        let headers: String = exchange.headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let body = serde_json::to_string_pretty(&exchange.body).unwrap_or_default();
        html! {
            <details class="exchange" data-testid="exchange">
                <summary>{ format!("HTTP exchange {} · {}", n + 1, exchange.status.map(|s| s.to_string()).unwrap_or_else(|| "no answer".into())) }</summary>
                <pre data-testid="raw-request">{ format!("POST {}\n{headers}\n{body}", exchange.url) }</pre>
                <pre data-testid="raw-response">{ &exchange.response }</pre>
            </details>
        }
    });
    let repairs = result.attempts.len().saturating_sub(1);
    html! {
        <div class="result" data-testid="run-result">
            <p class="meta" data-testid="run-meta">
                { format!("{} · {} in / {} out tokens · ${:.5} · {:.0} ms · {} repair(s)",
                    result.model, result.input_tokens, result.output_tokens, result.cost, result.latency_ms, repairs) }
                if !result.trace_id.is_empty() {
                    { " · " }<a data-testid="run-trace-link" href={Route::trace_link(&result.trace_id)}>{ "trace" }</a>
                }
            </p>
            if let Some(error) = &result.error {
                <p class="error" data-testid="run-error">{ error }</p>
            }
            if let Some(output) = &result.output {
                <h3>{ "Parsed output (valid)" }</h3>
                <div data-testid="run-output"><JsonView value={output.clone()} /></div>
            }
            <h3>{ "Answers" }</h3>
            { for attempts }
            { for exchanges }
        </div>
    }
}
