use protocol::agent::Spend;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct RunInfoProps {
    pub spend: Spend,
    /// The annotation page for the current run.
    pub annotation: Option<String>,
}

fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The run's tokens and estimated cost, and its link to the annotation page; quietly.
#[function_component(RunInfo)]
pub fn run_info(props: &RunInfoProps) -> Html {
    let spend = props.spend;
    let total = spend.input_tokens + spend.output_tokens;
    let cost = if spend.cost > 0.0 && spend.cost < 0.01 {
        format!("${:.4}", spend.cost)
    } else {
        format!("${:.2}", spend.cost)
    };
    html! {
        <span class="run-info">
            if total > 0 {
                <span class="spend" data-testid="spend"
                    title={format!("{} input + {} output tokens; estimated cost {cost}",
                        spend.input_tokens, spend.output_tokens)}>
                    { format!("{} tokens · {cost}", tokens(total)) }
                </span>
            }
            if let Some(href) = &props.annotation {
                <a class="annotate" data-testid="annotation-link" href={href.clone()}
                    target="_blank" rel="noopener" title="Review and annotate this run">
                    { "Annotate run ↗" }
                </a>
            }
        </span>
    }
}
