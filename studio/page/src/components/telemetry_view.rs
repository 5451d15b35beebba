//! Repair counts and rates per prompt and per model, from the stored traces.

use std::collections::BTreeMap;

use studio_core::traces::{RepairStats, telemetry};
use yew::prelude::*;

use crate::components::StudioProps;

#[function_component(TelemetryView)]
pub fn telemetry_view(props: &StudioProps) -> Html {
    let Some(traces) = &props.state.traces else {
        return html! { <p class="loading">{ "Reading the traces…" }</p> };
    };
    let figures = telemetry(traces.iter());
    let table = |title: &str, testid: &'static str, rows: &BTreeMap<String, RepairStats>| {
        let rows = rows.iter().map(|(name, stats)| {
            html! {
                <tr data-testid={testid} data-name={name.clone()}>
                    <td>{ name }</td><td>{ stats.calls }</td><td>{ stats.repaired_calls }</td>
                    <td>{ stats.repairs }</td><td>{ stats.failed }</td>
                    <td>{ format!("{:.0}%", stats.rate() * 100.0) }</td>
                </tr>
            }
        });
        html! {
            <section class="panel">
                <h2>{ title }</h2>
                <table class="telemetry">
                    <thead><tr><th></th><th>{ "calls" }</th><th>{ "repaired calls" }</th><th>{ "repairs" }</th><th>{ "failed" }</th><th>{ "repair rate" }</th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </section>
        }
    };
    html! {
        <div data-testid="telemetry-view">
            { table("Per prompt", "telemetry-prompt", &figures.by_prompt) }
            { table("Per model", "telemetry-model", &figures.by_model) }
        </div>
    }
}
