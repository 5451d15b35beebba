//! Runs variants side by side on the newest captured steps of this prompt, a row per step
//! (its run's task, the run, the step 1-based): per cell the validity, repairs, tokens and
//! latency, and how it differs from the baseline's cell on that step.

use yew::prelude::*;

use crate::components::StudioProps;
use crate::state::{Action, CompareCell, RunState, Studio};

#[function_component(ComparePanel)]
pub fn compare_panel(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let variants_text = use_state(|| "A, B".to_owned());
    let samples = use_state(|| 3usize);
    let start = {
        let (dispatch, variants_text, samples) =
            (dispatch.clone(), variants_text.clone(), samples.clone());
        Callback::from(move |_| {
            let variants = variants_text
                .split(',')
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect();
            dispatch.dispatch(Action::Compare { variants, samples: *samples });
        })
    };
    let on_variants = page_kit::keep_text(&variants_text);
    let on_samples = {
        let samples = samples.clone();
        Callback::from(move |e: InputEvent| {
            samples.set(page_kit::value(&e).parse().unwrap_or(1).clamp(1, 20));
        })
    };
    let mut variants: Vec<&str> = Vec::new();
    let mut samples_of: Vec<(&str, &str)> = Vec::new();
    for cell in &state.compare {
        if !variants.contains(&cell.variant.as_str()) {
            variants.push(&cell.variant);
        }
        if !samples_of.iter().any(|(id, _)| *id == cell.sample) {
            samples_of.push((&cell.sample, &cell.label));
        }
    }
    let cell_of = |variant: &str, sample: &str| {
        state.compare.iter().find(|c| c.variant == variant && c.sample == sample)
    };
    let header = variants.iter().map(|variant| {
        let is_base = state.baseline.as_deref() == Some(*variant);
        let dispatch = dispatch.clone();
        let name = variant.to_string();
        html! {
            <th class={if is_base { "baseline" } else { "" }} data-testid="compare-variant" data-variant={variant.to_string()}>
                { match variant.split_once('@') {
                    Some((v, role)) => format!("variant {v} · {role} model"),
                    None => format!("variant {variant}"),
                } }
                if is_base { <span class="badge" data-testid="baseline">{ "baseline" }</span> }
                else { <button class="small" data-testid="make-baseline" onclick={Callback::from(move |_| dispatch.dispatch(Action::Baseline(name.clone())))}>{ "use as baseline" }</button> }
            </th>
        }
    });
    let rows = samples_of.iter().map(|(sample, label)| {
        let cells = variants.iter().map(|variant| cell_view(state, cell_of(variant, sample)));
        html! { <tr><th class="sample" data-testid="compare-sample" data-trace={sample.to_string()}>{ *label }</th>{ for cells }</tr> }
    });
    let totals = variants.iter().map(|variant| {
        let done: Vec<_> = state.compare.iter().filter(|c| c.variant == *variant).filter_map(|c| match &c.state {
            RunState::Done(r) => Some(r.clone()),
            _ => None,
        }).collect();
        let valid = done.iter().filter(|r| r.output.is_some()).count();
        let repairs: usize = done.iter().map(|r| r.attempts.len().saturating_sub(1)).sum();
        let tokens: u64 = done.iter().map(|r| r.input_tokens + r.output_tokens).sum();
        let ms: f64 = done.iter().map(|r| r.latency_ms).sum::<f64>() / (done.len().max(1) as f64);
        html! {
            <td data-testid="compare-total" data-variant={variant.to_string()}>
                { format!("{valid}/{} valid · {repairs} repairs · {tokens} tokens · {ms:.0} ms avg", done.len()) }
            </td>
        }
    });
    html! {
        <section class="panel compare-panel" data-testid="compare-panel">
            <h2>{ "Compare" }</h2>
            <div class="buttons">
                <label title="A, B; or A@planner to run variant A with the planner's model">{ "Variants (or variant@role) " }<input data-testid="compare-variants" value={(*variants_text).clone()} oninput={on_variants} /></label>
                <label>{ "on the last " }<input type="number" min="1" max="20" data-testid="compare-samples" value={samples.to_string()} oninput={on_samples} />{ " captured steps" }</label>
                <button data-testid="compare-run" onclick={start}>{ "Compare" }</button>
            </div>
            if !state.compare.is_empty() {
                <table class="compare" data-testid="compare-table">
                    <thead><tr><th></th>{ for header }</tr></thead>
                    <tbody>{ for rows }<tr><th>{ "all" }</th>{ for totals }</tr></tbody>
                </table>
            }
        </section>
    }
}

fn cell_view(state: &Studio, cell: Option<&CompareCell>) -> Html {
    let Some(cell) = cell else { return html! { <td /> } };
    let is_base = state.baseline.as_deref() == Some(cell.variant.as_str());
    let class = if is_base { "baseline" } else { "" };
    match &cell.state {
        RunState::Idle | RunState::Running(_) => {
            html! { <td {class} data-testid="compare-cell" data-state="running">{ "…" }</td> }
        }
        RunState::Failed(message) => {
            html! { <td class={format!("error {class}")} data-testid="compare-cell" data-state="failed">{ message }</td> }
        }
        RunState::Done(result) => {
            let valid = result.output.is_some();
            let repairs = result.attempts.len().saturating_sub(1);
            let output = result
                .output
                .as_ref()
                .map(|o| o.to_string())
                .unwrap_or_else(|| result.error.clone().unwrap_or_default());
            let versus = state.against_baseline(cell).map(|delta| {
                let changed = delta.validity.is_some() || delta.answer_differs;
                html! {
                    <div class={if changed { "delta changed" } else { "delta" }} data-testid="compare-delta">
                        { format!("vs baseline: {}", delta.phrases().join(" · ")) }
                    </div>
                }
            });
            html! {
                <td {class} data-testid="compare-cell" data-state={if valid { "valid" } else { "invalid" }}>
                    <div class="meta">{ format!("{} · {repairs} repair(s) · {} tokens · ${:.5} · {:.0} ms",
                        if valid { "valid" } else { "invalid" }, result.input_tokens + result.output_tokens, result.cost, result.latency_ms) }</div>
                    { versus.unwrap_or_default() }
                    <code class="clip">{ output }</code>
                </td>
            }
        }
    }
}
