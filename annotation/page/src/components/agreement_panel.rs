use annotation_core::record::Thought;
use annotation_core::team::{ActionWords, Agreement, Merge, percent};
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub agreement: Option<Agreement>,
    pub merge: Merge,
    /// The selected step's index: its versions are shown side by side.
    pub step: Option<u32>,
    pub busy: bool,
    pub dispatch: Dispatch,
}

/// How an overlap run's annotators agree (per step: the action, each thought's token F1;
/// the run's score; each annotator's), their versions of the selected step side by side,
/// and the reviewer's resolution: one annotator's version, or a choice per step.
#[function_component(AgreementPanel)]
pub fn agreement_panel(props: &Props) -> Html {
    let team = props.dispatch.to_callback().reform(Action::Team);
    let Some(agreement) = &props.agreement else {
        return html! { <p class="muted" data-testid="agreement-none">{ "Reading the annotators' versions from the server…" }</p> };
    };
    if agreement.annotators.len() < 2 {
        return html! { <p class="muted" data-testid="agreement-none">{ "This run has fewer than two annotators' versions: there is nothing to compare." }</p> };
    }
    let selected = props.step.and_then(|i| agreement.steps.iter().find(|s| s.index == i));
    html! {
        <div class="agreement" data-testid="agreement">
            <p>
                <strong data-testid="agreement-run">{ format!("Run agreement {}", percent(agreement.score)) }</strong>
                { for agreement.per_annotator().into_iter().map(|(who, score)| html! {
                    <span class="chip" data-testid="agreement-annotator" data-annotator={who.clone()}>{ format!("{who} {}", percent(score)) }</span>
                }) }
            </p>
            <table class="agreement-steps">
                <thead><tr><th>{ "step" }</th><th>{ "action" }</th><th>{ "thought 1" }</th><th>{ "thought 2" }</th><th>{ "thought 3" }</th><th>{ "score" }</th><th>{ "take" }</th></tr></thead>
                <tbody>
                    { for agreement.steps.iter().map(|s| {
                        let index = s.index;
                        html! {
                            <tr data-testid="agreement-step" data-index={index.to_string()} class={classes!((Some(index) == props.step).then_some("on"))}>
                                <td>{ index + 1 }</td>
                                <td data-testid="agreement-action">{ if s.action_equal { "same" } else { "differs" } }</td>
                                { for s.thoughts.iter().map(|t| html! { <td>{ percent(Some(*t)) }</td> }) }
                                <td data-testid="agreement-score">{ percent(Some(s.score)) }</td>
                                <td>{ props.merge.source(index).unwrap_or("—") }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            if let Some(step) = selected {
                <p class="step-scores" data-testid="step-scores">
                    <strong>{ format!("Step {} · {}", step.index + 1, percent(Some(step.score))) }</strong>
                    <span class={classes!("chip", (!step.action_equal).then_some("differs"))}>
                        { if step.action_equal { "action same" } else { "action differs" } }
                    </span>
                    { for Thought::ALL.iter().zip(step.thoughts).map(|(which, score)| html! {
                        <span class="chip">{ format!("thought {} {}", which.number(), percent(Some(score))) }</span>
                    }) }
                </p>
                <div class="versions" data-testid="versions" data-index={step.index.to_string()}>
                    { for step.versions.iter().map(|(who, text)| {
                        let chosen = props.merge.source(step.index) == Some(who.as_str());
                        let choose = team.reform({ let (who, index) = (who.clone(), step.index); move |_| TeamAction::Choose { index, annotator: who.clone() } });
                        let diff = step.differences(who);
                        let action = ActionWords::read(&text.action);
                        let mark = |differs: bool| classes!(differs.then_some("differs"));
                        html! {
                            <div class={classes!("version", chosen.then_some("chosen"))} data-testid="version" data-annotator={who.clone()}>
                                <h4>{ who }</h4>
                                <dl class={classes!("version-action", mark(diff.action()))} data-testid="version-action" data-differs={diff.action().to_string()}>
                                    <dt>{ "type" }</dt><dd class={mark(diff.kind)}>{ &action.kind }</dd>
                                    <dt>{ "target" }</dt><dd class={mark(diff.target)}>{ &action.target }</dd>
                                    <dt>{ "value" }</dt><dd class={mark(diff.value)}>{ action.value.clone().unwrap_or_else(|| "—".into()) }</dd>
                                </dl>
                                { for Thought::ALL.iter().zip(&text.thoughts).zip(diff.thoughts).map(|((which, t), differs)| html! {
                                    <p class={classes!("version-thought", mark(differs))} data-testid="version-thought" data-differs={differs.to_string()}>
                                        <span class="muted">{ format!("{} · ", which.number()) }</span>{ t }
                                    </p>
                                }) }
                                <button class="small" data-testid="take-step" onclick={choose}>{ "Take this step" }</button>
                            </div>
                        }
                    }) }
                </div>
                <p class="muted hint">{ "Marked in amber: where this annotator wrote something the others did not." }</p>
            }
            <div class="merge-actions">
                { for agreement.annotators.iter().map(|who| {
                    let pick = team.reform({ let who = who.clone(); move |_| TeamAction::PickAll(who.clone()) });
                    html! { <button class="small" data-testid="pick-all" data-annotator={who.clone()} onclick={pick}>{ format!("Take all of {who}") }</button> }
                }) }
                <button class="primary small" data-testid="resolve-merge" disabled={props.busy || props.merge.body().is_none()}
                    onclick={team.reform(|_| TeamAction::Resolve)}>{ "Save merge as a new version" }</button>
            </div>
        </div>
    }
}
