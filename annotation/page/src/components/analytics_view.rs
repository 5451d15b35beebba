use annotation_core::query::{RunSummary, by_annotator, quality_histogram};
use annotation_core::record::ReviewStatus;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The runs the list shows (its filters apply here too).
    pub summaries: Vec<RunSummary>,
}

const STATUS_COLOURS: [&str; 5] =
    ["var(--muted)", "var(--review)", "var(--ok)", "var(--bad)", "var(--line)"];

/// Per-annotator analytics (seed §7.H): quality and progress as bars, status as stacked
/// bars, and the spread of run quality, because a glance beats a table here.
#[function_component(AnalyticsView)]
pub fn analytics_view(props: &Props) -> Html {
    let rows = by_annotator(&props.summaries);
    let bins = quality_histogram(&props.summaries);
    let most = bins.iter().copied().max().unwrap_or(0).max(1);
    let widest = rows.iter().map(|r| r.runs).max().unwrap_or(0).max(1);
    html! {
        <section class="analytics" data-testid="analytics">
            <div class="chart">
                <h3>{ "Per annotator" }</h3>
                <table class="annotators">
                    <tr><th>{ "Annotator" }</th><th>{ "Average quality" }</th><th>{ "Steps complete" }</th><th>{ "Runs by status" }</th></tr>
                    { for rows.iter().map(|r| {
                        let done = (r.done * 100).checked_div(r.steps).unwrap_or(0);
                        let mut x = 0.0;
                        html! {
                            <tr data-testid="annotator-row" data-annotator={r.annotator.clone()}>
                                <td>{ &r.annotator }</td>
                                <td>
                                    <span class="bar wide"><span style={format!("width:{}%", r.average_quality.unwrap_or(0))} /></span>
                                    { r.average_quality.map_or("–".to_owned(), |q| q.to_string()) }
                                </td>
                                <td>
                                    <span class="bar wide"><span style={format!("width:{done}%")} /></span>
                                    { format!("{} of {} ({done}%), {} flagged", r.done, r.steps, r.flagged) }
                                </td>
                                <td>
                                    <svg width="220" height="16" role="img" aria-label={format!("{} runs", r.runs)}>
                                        { for r.by_status.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, n)| {
                                            let w = 220.0 * *n as f64 / widest as f64;
                                            let rect = html! {
                                                <rect x={x.to_string()} y="0" width={w.to_string()} height="16" style={format!("fill:{}", STATUS_COLOURS[i])}>
                                                    <title>{ format!("{}: {n}", ReviewStatus::ALL[i].label()) }</title>
                                                </rect>
                                            };
                                            x += w;
                                            rect
                                        }) }
                                    </svg>
                                    <span class="muted">{ format!(" {} runs", r.runs) }</span>
                                </td>
                            </tr>
                        }
                    }) }
                </table>
                <p class="legend">
                    { for ReviewStatus::ALL.iter().enumerate().map(|(i, s)| html! {
                        <span><span class="swatch" style={format!("background:{}", STATUS_COLOURS[i])} />{ s.label() }</span>
                    }) }
                </p>
            </div>
            <div class="chart">
                <h3>{ "Run quality" }</h3>
                <svg class="histogram" viewBox="0 0 300 120" width="300" height="120" role="img" aria-label="Runs by quality score">
                    { for bins.iter().enumerate().map(|(i, n)| {
                        let h = 100.0 * *n as f64 / most as f64;
                        html! {
                            <g>
                                <rect x={(i * 30 + 2).to_string()} y={(100.0 - h).to_string()} width="26" height={h.to_string()} style="fill:var(--accent)">
                                    <title>{ format!("{}–{}: {n} runs", i * 10, i * 10 + 9) }</title>
                                </rect>
                                <text x={(i * 30 + 15).to_string()} y="114" text-anchor="middle">{ i * 10 }</text>
                            </g>
                        }
                    }) }
                </svg>
            </div>
        </section>
    }
}
