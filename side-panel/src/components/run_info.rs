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

/// A cost as the panel shows it: to the cent, or to four places below a cent.
pub fn cost(usd: f64) -> String {
    if usd > 0.0 && usd < 0.01 { format!("${usd:.4}") } else { format!("${usd:.2}") }
}

/// Spend as the panel shows it, "1.5k tokens · $0.0042", and its tooltip; `None` before
/// any token was spent. The Jobs view shows each job's the same way.
pub fn spend_text(spend: Spend) -> Option<(String, String)> {
    let total = spend.input_tokens + spend.output_tokens;
    if total == 0 {
        return None;
    }
    let cost = cost(spend.cost);
    let title = format!(
        "{} input + {} output tokens; estimated cost {cost}",
        spend.input_tokens, spend.output_tokens
    );
    Some((format!("{} tokens · {cost}", tokens(total)), title))
}

/// The run's tokens and estimated cost, and its link to the annotation page; quietly.
#[function_component(RunInfo)]
pub fn run_info(props: &RunInfoProps) -> Html {
    html! {
        <span class="run-info">
            if let Some((text, title)) = spend_text(props.spend) {
                <span class="spend" data-testid="spend" {title}>{ text }</span>
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spend_reads_in_tokens_and_dollars() {
        assert_eq!(spend_text(Spend::default()), None);
        let spend = Spend { input_tokens: 1200, output_tokens: 300, cost: 0.0042 };
        let (text, title) = spend_text(spend).unwrap();
        assert_eq!(text, "1.5k tokens · $0.0042");
        assert_eq!(title, "1200 input + 300 output tokens; estimated cost $0.0042");
    }
}
