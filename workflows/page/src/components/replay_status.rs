//! The replay under way, paused or last ended: subtask, steps, model calls and the calls
//! the fast path saved, extracts, and its controls.

use protocol::jobs::JobStatus;
use protocol::workflow::{ReplayControl, ReplayProgress};
use yew::prelude::*;

use crate::state::Action;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub replay: ReplayProgress,
    pub dispatch: Callback<Action>,
}

#[function_component(ReplayStatus)]
pub fn replay_status(props: &Props) -> Html {
    let r = &props.replay;
    let draft = use_state(String::new);
    let on_draft = page_kit::keep_text(&draft);
    let send = {
        let (draft, dispatch) = (draft.clone(), props.dispatch.clone());
        Callback::from(move |_| {
            dispatch.emit(Action::ReplayMessage((*draft).clone()));
            draft.set(String::new());
        })
    };
    let control =
        |action: ReplayControl| props.dispatch.reform(move |_| Action::ReplayControl(action));
    let subtask = (r.subtask + 1).min(r.subtasks);
    html! {
        <section class="replay-status" data-testid="replay-status" data-state={r.status.label()} data-run={r.run_id.clone()}>
            <h3>{ format!("Replay of {} (v{}): {}", r.workflow_name, r.version, r.status.label()) }</h3>
            <p data-testid="replay-progress">{ format!(
                "Subtask {subtask} of {} · {} steps · {} model calls · {}",
                r.subtasks, r.step, r.model_calls,
                if r.fast_path { format!("{} calls saved by the fast path", r.calls_saved) } else { "fast path off".into() }
            ) }</p>
            if let Some(why) = &r.why {
                <p class="why">{ why.clone() }</p>
            }
            if !r.extracts.is_empty() {
                <dl class="extracts">
                    { for r.extracts.iter().map(|(k, v)| html! {
                        <>
                            <dt>{ k.clone() }</dt>
                            <dd data-testid="replay-extract" data-name={k.clone()}>{ v.clone() }</dd>
                        </>
                    }) }
                </dl>
            }
            if let Some(question) = &r.question {
                <p class="question" data-testid="replay-question">{ question.clone() }</p>
            }
            if r.is_live() {
                <div class="steer">
                    <input data-testid="replay-message" value={(*draft).clone()} oninput={on_draft}
                        placeholder={if r.question.is_some() { "Your answer" } else { "Steer the replay" }} />
                    <button data-testid="replay-send" onclick={send}>
                        { if r.question.is_some() { "Answer" } else { "Send" } }
                    </button>
                </div>
            }
            <div class="actions">
                if r.status == JobStatus::Running {
                    <button data-testid="replay-pause" onclick={control(ReplayControl::Pause)}>{ "Pause" }</button>
                }
                if r.status == JobStatus::Paused {
                    <button data-testid="replay-resume" onclick={control(ReplayControl::Resume)}>{ "Resume" }</button>
                }
                if r.is_live() {
                    <button class="ghost" data-testid="replay-stop" onclick={control(ReplayControl::Cancel)}>{ "Stop" }</button>
                }
                <a href={format!("annotation.html?agentRunId={}", r.run_id)} data-testid="replay-run-link">{ "Open the run on the annotation page" }</a>
            </div>
        </section>
    }
}
