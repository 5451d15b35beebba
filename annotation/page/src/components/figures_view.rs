use annotation_core::team::{Figure, figure, percent};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub figures: Vec<Figure>,
}

/// Per-annotator figures computed by the server; peers are anonymised for all but admins.
#[function_component(FiguresView)]
pub fn figures_view(props: &Props) -> Html {
    html! {
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
    }
}
