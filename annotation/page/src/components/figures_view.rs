use annotation_core::team::{Figure, Series, figure, percent, series_weeks};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub figures: Vec<Figure>,
    pub series: Vec<Series>,
}

/// Per-annotator figures computed by the server; peers are anonymised for all but admins.
/// Below them, agreement over time: a row per week, a column per annotator (or you and your
/// peers' mean), each cell the week's agreement with a bar and its overlap runs.
#[function_component(FiguresView)]
pub fn figures_view(props: &Props) -> Html {
    let weeks = series_weeks(&props.series);
    html! {
        <>
        <table class="figures" data-testid="figures">
            <thead><tr><th>{ "annotator" }</th><th>{ "runs" }</th><th>{ "average quality" }</th><th>{ "consistency" }</th><th>{ "agreement" }</th><th>{ "reviews completed" }</th></tr></thead>
            <tbody>
                { for props.figures.iter().map(|f| html! {
                    <tr data-testid="figure" class={classes!(f.you.then_some("you"))}>
                        <td>{ if f.you { format!("{} (you)", f.label) } else { f.label.clone() } }</td>
                        <td>{ f.runs }</td>
                        <td>{ figure(f.average_quality) }</td>
                        <td>{ figure(f.consistency) }</td>
                        <td>{ percent(f.agreement) }</td>
                        <td>{ percent(f.review_completion) }</td>
                    </tr>
                }) }
            </tbody>
        </table>
        <h3>{ "Agreement over time" }</h3>
        if props.series.is_empty() {
            <p class="muted" data-testid="series-empty">{ "No overlap run has been annotated by two people yet." }</p>
        } else {
            <table class="figures series" data-testid="agreement-series">
                <thead><tr><th>{ "week of" }</th>
                    { for props.series.iter().map(|s| html! {
                        <th data-testid="series-label" class={classes!(s.you.then_some("you"))}>
                            { if s.you { format!("{} (you)", s.label) } else { s.label.clone() } }
                        </th>
                    }) }
                </tr></thead>
                <tbody>
                    { for weeks.iter().map(|week| html! {
                        <tr data-testid="series-week" data-week={week.clone()}>
                            <td>{ week }</td>
                            { for props.series.iter().map(|s| {
                                match s.points.iter().find(|p| &p.week == week) {
                                    Some(p) => html! {
                                        <td data-testid="series-point" data-series={s.label.clone()}>
                                            <span class="bar" style={format!("width: {:.0}px", p.agreement * 80.0)} />
                                            { format!("{} · {} run{}", percent(Some(p.agreement)), p.runs, if p.runs == 1 { "" } else { "s" }) }
                                        </td>
                                    },
                                    None => html! { <td class="muted">{ "—" }</td> },
                                }
                            }) }
                        </tr>
                    }) }
                </tbody>
            </table>
        }
        </>
    }
}
