//! The pipeline editor, DSL first: the YAML, its problems as typed (with their paths), the
//! tool allowlist's warnings, the diagram, a test run, and save / publish through the gate.

use prompt_files::pipeline::BUNDLED_PIPELINES;
use studio_core::pipelines::{diagram, tool_warnings};
use yew::prelude::*;

use crate::components::StudioProps;
use crate::components::pipeline_diagram::PipelineDiagram;
use crate::components::pipeline_run::PipelineRun;
use crate::state::{Action, PipelineAction};

#[function_component(PipelinesView)]
pub fn pipelines_view(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let editor = &state.pipeline;
    let (errors, warnings) = match state.check() {
        Ok(prompts) => editor.problems(&prompts),
        Err(error) => (vec![prompt_files::pipeline::Problem::whole(error)], vec![]),
    };
    let drawn = diagram(&editor.text);
    let tools = tool_warnings(&editor.text);
    let on_text = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: InputEvent| {
            dispatch.dispatch(Action::Pipeline(PipelineAction::Text(page_kit::value(&e))));
        })
    };
    let save = |publish: bool| {
        let dispatch = dispatch.clone();
        Callback::from(move |_| {
            dispatch.dispatch(Action::Pipeline(PipelineAction::Save { publish }))
        })
    };
    let open = |name: String, text: String| {
        let dispatch = dispatch.clone();
        Callback::from(move |_| {
            let (name, text) = (name.clone(), text.clone());
            dispatch.dispatch(Action::Pipeline(PipelineAction::Open { name, text }))
        })
    };
    let examples = BUNDLED_PIPELINES.iter().map(|(name, text)| html! {
        <li class="item" data-testid="pipeline-example" onclick={open(format!("example: {name}"), (*text).to_owned())}>{ format!("example: {name}") }</li>
    });
    let stored = editor.stored.iter().rev().map(|row| html! {
        <li class="item" data-testid="pipeline-stored" data-id={row.id.clone()} data-version={row.version.to_string()}
            onclick={open(format!("{} v{}", row.id, row.version), row.text.clone())}>
            { format!("{} v{}", row.id, row.version) }
            if row.published { <span class="badge" data-testid="pipeline-published">{ "published" }</span> }
            <small>{ format!("{} run(s) · {}", row.runs.len(), row.saved_at) }</small>
        </li>
    });
    let problem_list = |class: &'static str, testid: &'static str, list: Vec<(String, String)>| {
        html! {
            <ul class={class} data-testid={testid}>
                { for list.into_iter().map(|(path, message)| html! {
                    <li><code>{ if path.is_empty() { "file".to_owned() } else { path } }</code>{ format!(" {message}") }</li>
                }) }
            </ul>
        }
    };
    let answer = |yes: bool| {
        let dispatch = dispatch.clone();
        Callback::from(move |_| {
            dispatch.dispatch(Action::Pipeline(PipelineAction::ConfirmOpen(yes)))
        })
    };
    // Asked in the page: opening another file would throw the unsaved YAML away.
    let confirm = editor.confirm_open.as_ref().map(|(name, _)| html! {
        <div class="confirm" data-testid="pipeline-confirm-open" role="alertdialog">
            <span>{ format!("The editor has unsaved YAML. Open {name} and discard it?") }</span>
            <button data-testid="pipeline-confirm-yes" onclick={answer(true)}>{ "Discard and open" }</button>
            <button data-testid="pipeline-confirm-no" onclick={answer(false)}>{ "Keep editing" }</button>
        </div>
    });
    let report = editor.report.as_ref().map(|report| {
        let headline = match (report.version, report.published) {
            (0, _) => "Refused".to_owned(),
            (v, true) => format!("Published as version {v}: run it from the side panel with /run <id> {{json}}."),
            (v, false) => format!("Saved as version {v} (not published)."),
        };
        html! {
            <div class="report" data-testid="pipeline-report" data-published={report.published.to_string()}>
                <p class={if report.version == 0 { "error" } else { "ok" }} data-testid="pipeline-report-headline">{ headline }</p>
                { problem_list("error", "pipeline-report-errors", report.errors.iter().map(|p| (p.path.clone(), p.message.clone())).collect()) }
                { problem_list("warn", "pipeline-report-warnings", report.warnings.iter().map(|p| (p.path.clone(), p.message.clone())).collect()) }
            </div>
        }
    });
    html! {
        <div class="prompts-layout" data-testid="pipelines-view">
            <aside class="prompt-list">
                <h3>{ "Pipelines" }</h3>
                <ul>{ for stored }{ for examples }</ul>
            </aside>
            <main class="workbench">
                <section class="panel">
                    <h2>{ "Pipeline file (YAML)" }{ if editor.unsaved() { " •" } else { "" } }</h2>
                    { confirm.unwrap_or_default() }
                    <textarea class={if errors.is_empty() { "code" } else { "code invalid" }} data-testid="pipeline-text"
                        spellcheck="false" value={editor.text.clone()} oninput={on_text} />
                    if !errors.is_empty() {
                        { problem_list("error", "pipeline-errors", errors.iter().map(|p| (p.path.clone(), p.message.clone())).collect()) }
                    }
                    if !warnings.is_empty() {
                        { problem_list("warn", "pipeline-warnings", warnings.iter().map(|p| (p.path.clone(), p.message.clone())).collect()) }
                    }
                    if !tools.is_empty() {
                        <ul class="warn" data-testid="pipeline-tool-warnings">{ for tools.iter().map(|t| html! { <li>{ t }</li> }) }</ul>
                    }
                    <div class="buttons">
                        <button data-testid="pipeline-save" disabled={editor.saving.is_some()} onclick={save(false)}>{ "Save version" }</button>
                        <button data-testid="pipeline-publish" disabled={editor.saving.is_some()} onclick={save(true)}>{ "Publish" }</button>
                    </div>
                    { report.unwrap_or_default() }
                </section>
                <section class="panel">
                    <h2>{ "Diagram" }</h2>
                    { match drawn {
                        Ok(drawn) => html! { <PipelineDiagram diagram={drawn} /> },
                        Err(error) => html! { <p class="error" data-testid="diagram-error">{ error }</p> },
                    } }
                </section>
                <PipelineRun ..props.clone() />
            </main>
        </div>
    }
}
