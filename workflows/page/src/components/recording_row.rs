//! One recording: reflect it into a workflow (with the reflection's progress, and why it
//! failed with a retry), or export it as JSONL.

use protocol::workflow::{ReflectProgress, ReflectStage};
use yew::prelude::*;

use crate::state::{Action, RecordingRow};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub recording: RecordingRow,
    pub progress: Option<ReflectProgress>,
    pub dispatch: Callback<Action>,
}

#[function_component(RecordingRowView)]
pub fn recording_row(props: &Props) -> Html {
    let r = &props.recording;
    let stopped = r.status != "recording";
    let busy = props
        .progress
        .as_ref()
        .is_some_and(|p| matches!(p.stage, ReflectStage::Step { .. } | ReflectStage::Task));
    let reflect = {
        let id = r.id.clone();
        props.dispatch.reform(move |_| Action::Reflect(id.clone()))
    };
    let export = {
        let id = r.id.clone();
        props.dispatch.reform(move |_| Action::ExportRecording(id.clone()))
    };
    let progress = props.progress.as_ref().map(|p| match &p.stage {
        ReflectStage::Step { of: 0, .. } => ("busy", "Starting…".to_owned()),
        ReflectStage::Step { step, of } => ("busy", format!("Pass A: step {} of {of}", step + 1)),
        ReflectStage::Task => ("busy", "Pass B: the whole task".to_owned()),
        ReflectStage::Done { .. } => ("done", "Reflected: the workflow is open".to_owned()),
        ReflectStage::Failed { why, .. } => ("failed", format!("Failed: {why}")),
    });
    let failed = progress.as_ref().is_some_and(|(kind, _)| *kind == "failed");
    html! {
        <li class="recording" data-testid="recording-row" data-id={r.id.clone()}>
            <div class="title">{ if r.name.is_empty() { r.id.clone() } else { r.name.clone() } }</div>
            <div class="meta">{ format!("{} steps · {} · {}", r.steps, r.status, page_port::local_time(&r.created_at)) }</div>
            <div class="actions">
                <button data-testid="reflect" disabled={!stopped || busy} onclick={reflect}
                    title={if stopped { "Make a workflow of it" } else { "Stop the recording first" }}>
                    { if failed { "Retry reflect" } else { "Reflect" } }
                </button>
                <button class="ghost" data-testid="recording-export" disabled={!stopped} onclick={export}>
                    { "Export JSONL" }
                </button>
            </div>
            if let Some((kind, text)) = progress {
                <p class={classes!("progress", kind)} data-testid="reflect-progress" data-state={kind}>{ text }</p>
            }
            // What the model's answer got wrong, folded: the sentence above says enough.
            if let Some(ReflectStage::Failed { details: Some(details), .. }) = props.progress.as_ref().map(|p| &p.stage) {
                <details class="reflect-details" data-testid="reflect-details">
                    <summary>{ "Details" }</summary>
                    <pre>{ details }</pre>
                </details>
            }
        </li>
    }
}
