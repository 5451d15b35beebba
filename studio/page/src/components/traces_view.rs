//! Every stored trace, filtered by prompt, variant, model, run, outcome and date; one
//! opened beside the list.

use studio_core::traces::{Outcome, TraceFilter, repairs, step_label};
use yew::prelude::*;

use crate::components::StudioProps;
use crate::components::trace_detail::TraceDetail;
use crate::state::Action;

#[function_component(TracesView)]
pub fn traces_view(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let Some(all) = &state.traces else {
        return html! { <p class="loading" data-testid="traces-loading">{ "Reading the traces…" }</p> };
    };
    let field = |name: &'static str, value: String, set: fn(&mut TraceFilter, String)| {
        let (dispatch, filter) = (dispatch.clone(), state.filter.clone());
        let oninput = Callback::from(move |e: InputEvent| {
            let mut filter = filter.clone();
            set(&mut filter, page_kit::value(&e));
            dispatch.dispatch(Action::Filter(filter));
        });
        html! { <input placeholder={name} data-testid={format!("filter-{name}")} {value} {oninput} /> }
    };
    let on_outcome = {
        let (dispatch, filter) = (dispatch.clone(), state.filter.clone());
        Callback::from(move |e: Event| {
            let mut filter = filter.clone();
            filter.outcome = Outcome::parse(&page_kit::value(&e));
            dispatch.dispatch(Action::Filter(filter));
        })
    };
    let listed = state.listed();
    let rows = listed.iter().map(|trace| {
        let id = trace.id.clone();
        let dispatch = dispatch.clone();
        let outcome = Outcome::of(trace);
        let open = state.open_trace.as_deref() == Some(trace.id.as_str());
        html! {
            <tr class={if open { "open" } else { "" }} data-testid="trace-row" data-trace={trace.id.clone()}
                onclick={Callback::from(move |_| dispatch.dispatch(Action::OpenTrace(Some(id.clone()))))}>
                <td>{ &trace.started_at }</td>
                <td>{ &trace.prompt_id }</td>
                <td>{ &trace.variant }</td>
                <td>{ &trace.model }</td>
                <td><code>{ &trace.run_id }</code>{ format!(" · {}", step_label(trace.step)) }</td>
                <td class={outcome.name()} data-testid="trace-outcome">{ format!("{}{}", outcome.name(),
                    if repairs(trace) > 0 { format!(" ({})", repairs(trace)) } else { String::new() }) }</td>
            </tr>
        }
    });
    let open = state.open_trace.as_ref().map(|id| match all.iter().find(|t| &t.id == id) {
        Some(trace) => html! { <TraceDetail trace={trace.clone()} /> },
        None => html! { <p class="error" data-testid="trace-missing">{ format!("No stored trace has the id {id}.") }</p> },
    });
    let clear_step = {
        let dispatch = dispatch.clone();
        let filter = state.filter.clone();
        Callback::from(move |_| {
            dispatch.dispatch(Action::Route(Default::default()));
            dispatch.dispatch(Action::Filter(TraceFilter { run: String::new(), ..filter.clone() }));
        })
    };
    html! {
        <div class="traces-layout" data-testid="traces-view">
            <section class="panel">
                <div class="filters">
                    { field("prompt", state.filter.prompt.clone(), |f, v| f.prompt = v) }
                    { field("variant", state.filter.variant.clone(), |f, v| f.variant = v) }
                    { field("model", state.filter.model.clone(), |f, v| f.model = v) }
                    { field("run", state.filter.run.clone(), |f, v| f.run = v) }
                    { field("date", state.filter.date.clone(), |f, v| f.date = v) }
                    <select data-testid="filter-outcome" onchange={on_outcome}>
                        <option value="" selected={state.filter.outcome.is_none()}>{ "any outcome" }</option>
                        { for [Outcome::Ok, Outcome::Repaired, Outcome::Failed].into_iter().map(|o| html! {
                            <option value={o.name()} selected={state.filter.outcome == Some(o)}>{ o.name() }</option>
                        }) }
                    </select>
                    if let Some(step) = state.step {
                        <button data-testid="step-filter" onclick={clear_step}>{ format!("{} ×", step_label(step)) }</button>
                    }
                </div>
                <p class="meta" data-testid="traces-count">{ format!("{} of {} traces", listed.len(), all.len()) }</p>
                <table class="traces">
                    <thead><tr><th>{ "started" }</th><th>{ "prompt" }</th><th>{ "variant" }</th><th>{ "model" }</th><th>{ "run · step" }</th><th>{ "outcome" }</th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </section>
            { open.unwrap_or_default() }
        </div>
    }
}
