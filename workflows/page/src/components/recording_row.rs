//! One recording: reflect it into a workflow (with the reflection's progress, and why it
//! failed with a retry), or export it as JSONL.

use protocol::workflow::{ReflectProgress, ReflectStage};
use yew::prelude::*;

use crate::state::{Action, RecordingRow};
use page_kit::RecordingName;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub recording: RecordingRow,
    pub progress: Option<ReflectProgress>,
    /// This recording's name while it is being edited.
    pub renaming: Option<RecordingName>,
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
    let rename = {
        let id = r.id.clone();
        props.dispatch.reform(move |_| Action::RenameRecording(id.clone()))
    };
    let title = match &props.renaming {
        Some(renaming) => name_editor(renaming, &props.dispatch),
        None => html! {
            <div class="title">
                <span data-testid="recording-name">{ if r.name.is_empty() { r.id.clone() } else { r.name.clone() } }</span>
                <button class="ghost" data-testid="recording-rename" disabled={!stopped}
                    title="Name it for the task it shows" onclick={rename}>{ "Rename" }</button>
            </div>
        },
    };
    html! {
        <li class="recording" data-testid="recording-row" data-id={r.id.clone()}>
            { title }
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

/// The name being edited: Enter saves, Escape cancels.
fn name_editor(renaming: &RecordingName, dispatch: &Callback<Action>) -> Html {
    let oninput =
        dispatch.reform(|event: InputEvent| Action::RecordingName(page_kit::value(&event)));
    let onkeydown = {
        let dispatch = dispatch.clone();
        Callback::from(move |event: KeyboardEvent| match event.key().as_str() {
            "Enter" => dispatch.emit(Action::SaveRecordingName),
            "Escape" => dispatch.emit(Action::CancelRecordingName),
            _ => {}
        })
    };
    let saving = renaming.saving.is_some();
    html! {
        <div class="title renaming">
            <input data-testid="recording-name-input" aria-label="Recording name" maxlength="200"
                value={renaming.text.clone()} disabled={saving} autofocus=true {oninput} {onkeydown} />
            <button data-testid="recording-name-save" disabled={saving}
                onclick={dispatch.reform(|_| Action::SaveRecordingName)}>{ "Save" }</button>
            <button class="ghost" data-testid="recording-name-cancel" disabled={saving}
                onclick={dispatch.reform(|_| Action::CancelRecordingName)}>{ "Cancel" }</button>
            if let Some(problem) = &renaming.problem {
                <p class="problem" data-testid="recording-name-problem" role="alert">{ problem }</p>
            }
        </div>
    }
}
