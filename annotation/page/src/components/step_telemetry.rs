use annotation_core::telemetry;
use run_contract::telemetry::LogEntry;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// What the agents logged since the step before this one.
    pub before: Vec<LogEntry>,
    /// What they logged after the last step (given with the last step only).
    pub after: Vec<LogEntry>,
}

/// The run's telemetry beside a step (seed `001_…` §7): the ThinkingAgent's decisions and
/// why, pauses, questions and steering, so an annotator reads a thought with what led to it.
#[function_component(StepTelemetry)]
pub fn step_telemetry(props: &Props) -> Html {
    if props.before.is_empty() && props.after.is_empty() {
        return html! {};
    }
    let list = |label: &str, testid: &str, entries: &[LogEntry]| {
        if entries.is_empty() {
            return html! {};
        }
        html! {
            <div data-testid={testid.to_owned()}>
                <h3>{ label }</h3>
                <ol>
                    { for entries.iter().map(|entry| html! {
                        <li data-testid="step-telemetry-entry" data-kind={entry.kind.label()}
                            title={telemetry::line(entry)}>
                            <span class={classes!("kind", entry.kind.label().replace(' ', "-"))}>{ entry.kind.label() }</span>
                            if entry.at > 0.0 {
                                <time class="muted">{ clock(entry.at) }</time>
                            }
                            <span class="message">{ &entry.message }</span>
                        </li>
                    }) }
                </ol>
            </div>
        }
    };
    html! {
        <section class="step-telemetry" data-testid="step-telemetry" aria-label="What the agents logged">
            { list("What happened before this step", "telemetry-before", &props.before) }
            { list("After the last step", "telemetry-after", &props.after) }
        </section>
    }
}

/// "09:41:07 UTC" from milliseconds since the epoch.
fn clock(ms: f64) -> String {
    let iso = run_contract::time::format_ms(ms as i64);
    format!("{} UTC", iso.get(11..19).unwrap_or(&iso))
}
