//! One trace: hashes, the rendered prompt as sent (redactions applied), the parameters,
//! every answer and the usage; a link back to the captured run on the annotation page.

use run_records::LlmTrace;
use studio_core::traces::step_label;
use yew::prelude::*;

use crate::state::Route;

#[derive(Properties, PartialEq)]
pub struct TraceDetailProps {
    pub trace: LlmTrace,
}

#[function_component(TraceDetail)]
pub fn trace_detail(props: &TraceDetailProps) -> Html {
    let trace = &props.trace;
    let params = serde_json::to_string_pretty(&trace.params).unwrap_or_default();
    let attempts = trace.attempts.iter().enumerate().map(|(n, attempt)| {
        let verdict = if attempt.problems.is_empty() { "accepted" } else { "rejected" };
        html! {
            <div class={format!("attempt {verdict}")} data-testid="trace-attempt" data-verdict={verdict}>
                <h4>{ format!("{} · {} · {verdict}", if n == 0 { "First answer".to_owned() } else { format!("Repair {n}") }, attempt.model) }</h4>
                <pre class="raw">{ &attempt.raw }</pre>
                if !attempt.problems.is_empty() {
                    <ul class="problems">{ for attempt.problems.iter().map(|p| html! { <li>{ p }</li> }) }</ul>
                }
            </div>
        }
    });
    let captured = !trace.run_id.starts_with("studio:");
    html! {
        <section class="panel trace-detail" data-testid="trace-detail" data-trace={trace.id.clone()}>
            <h2>{ format!("Trace of {} / {}", trace.prompt_id, trace.variant) }</h2>
            <dl>
                <dt>{ "prompt hash" }</dt><dd data-testid="trace-prompt-hash"><code>{ &trace.prompt_hash }</code></dd>
                <dt>{ "revision hash" }</dt><dd data-testid="trace-revision-hash"><code>{ &trace.revision_hash }</code></dd>
                <dt>{ "model" }</dt><dd>{ format!("{} ({})", trace.model, trace.provider) }</dd>
                <dt>{ "run" }</dt>
                <dd><code>{ &trace.run_id }</code>{ format!(" · {}", step_label(trace.step)) }</dd>
                if captured {
                    <dt>{ "captured run" }</dt>
                    <dd><a class="button-link" data-testid="trace-annotation-link" href={Route::annotation_link(&trace.run_id, trace.step)}>{ format!("Open the run in Annotation at {}", step_label(trace.step)) }</a></dd>
                }
                <dt>{ "usage" }</dt>
                <dd data-testid="trace-usage">{ format!("{} in / {} out tokens · ${:.5} · {:.0} ms · started {}",
                    trace.usage.input_tokens, trace.usage.output_tokens, trace.cost, trace.duration_ms, trace.started_at) }</dd>
                if let Some(error) = &trace.error {
                    <dt>{ "error" }</dt><dd class="error">{ error }</dd>
                }
                if !trace.redacted.is_empty() {
                    <dt>{ "redacted" }</dt><dd>{ trace.redacted.join(", ") }</dd>
                }
            </dl>
            <details open=true>
                <summary>{ format!("Rendered prompt ({} characters)", trace.prompt.system.chars().count()) }</summary>
                <pre class="preview" data-testid="trace-prompt">{ &trace.prompt.system }</pre>
            </details>
            <details>
                <summary>{ "Parameters" }</summary>
                <pre data-testid="trace-params">{ params }</pre>
            </details>
            <h3>{ format!("Answers ({})", trace.attempts.len()) }</h3>
            { for attempts }
        </section>
    }
}
