use yew::prelude::*;

use crate::state::chat::{StepGroup, StepOutcome};

#[derive(Properties, PartialEq)]
pub struct StepCardProps {
    pub group: StepGroup,
}

/// One Navigator step: its goal, the action under way as a live line, and the finished
/// actions folded away unless one failed.
#[function_component(StepCard)]
pub fn step_card(props: &StepCardProps) -> Html {
    let group = &props.group;
    let (outcome, badge) = match group.outcome {
        StepOutcome::Running => ("running", "working…"),
        StepOutcome::Ok => ("ok", "done"),
        StepOutcome::Failed => ("failed", "failed"),
        StepOutcome::Interrupted => ("interrupted", "interrupted"),
        StepOutcome::Asked => ("asked", "question"),
    };
    let finished: Vec<_> = group.acts.iter().filter(|act| act.result.is_some()).collect();
    let failed = group.failed_acts();
    let summary = match (finished.len(), failed) {
        (1, 0) => "1 action".to_owned(),
        (n, 0) => format!("{n} actions"),
        (n, f) => format!("{n} action{} · {f} failed", if n == 1 { "" } else { "s" }),
    };
    html! {
        <article
            class={classes!("msg", "actor-navigator", "step", outcome)}
            data-testid="message"
            data-actor="navigator"
            data-kind="progress"
            data-outcome={outcome}
        >
            <header class="msg-head">
                <span class="who">{ "Navigator" }</span>
                <span class="step-no">{ format!("Step {}", group.number) }</span>
                <span class={classes!("badge", outcome)}>{ badge }</span>
            </header>
            if let Some(goal) = &group.goal {
                <p class="goal">{ goal.clone() }</p>
            }
            if let Some(asked) = &group.asked {
                // The question itself shows once: below, when one is put to the person.
                <p class="asked" data-testid="step-asked">
                    if asked.question_follows {
                        { "Asked for your input instead of acting (the question is below)." }
                    } else {
                        { format!("Asked for your input instead of acting: {}", asked.need) }
                    }
                </p>
            }
            if let Some(live) = group.live() {
                <p class="live" data-testid="live-action">
                    <span class="spinner" aria-hidden="true"></span>{ live.label.clone() }
                </p>
            }
            if !finished.is_empty() {
                // Failures stay unfolded: why an action failed is what a person looks for.
                <details class="acts" open={failed > 0}>
                    <summary>{ summary }</summary>
                    <ol>
                        { for finished.iter().map(|act| {
                            let (class, mark, message) = match &act.result {
                                Some(Ok(message)) => ("ok", "✓", message.clone()),
                                Some(Err(message)) => ("failed", "✗", message.clone()),
                                None => ("running", "…", String::new()),
                            };
                            html! {
                                <li class={class}>
                                    <span class="mark" aria-hidden="true">{ mark }</span>
                                    <span class="label">{ act.label.clone() }</span>
                                    if !message.is_empty() {
                                        <span class="outcome">{ format!(" — {message}") }</span>
                                    }
                                </li>
                            }
                        }) }
                    </ol>
                </details>
            }
        </article>
    }
}
