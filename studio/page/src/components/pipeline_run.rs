//! A test run of the pipeline: its input and tab, run and cancel, then each step's status,
//! input, output, error and trace (pipeline hash, prompt hash, attempts), and the result.

use serde_json::Value;
use yew::prelude::*;

use crate::components::StudioProps;
use crate::state::{Action, PipelineAction, PipelineRunState};

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[function_component(PipelineRun)]
pub fn pipeline_run(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let editor = &state.pipeline;
    let act = |make: fn(String) -> PipelineAction| {
        let dispatch = dispatch.clone();
        Callback::from(move |e: InputEvent| {
            dispatch.dispatch(Action::Pipeline(make(page_kit::value(&e))));
        })
    };
    let click = |action: PipelineAction| {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(Action::Pipeline(action.clone())))
    };
    let choose_tab = {
        let dispatch = dispatch.clone();
        Callback::from(move |e: Event| {
            dispatch.dispatch(Action::Pipeline(PipelineAction::Tab(page_kit::value(&e))));
        })
    };
    let running = matches!(editor.run, PipelineRunState::Running(_));
    let body = match &editor.run {
        PipelineRunState::Idle => html! {},
        PipelineRunState::Running(_) => html! {
            <div data-testid="pipeline-live">
                <p class="hint" data-testid="pipeline-running">{ format!("Running… {} step(s) done", editor.live.len()) }</p>
                { for editor.live.iter().map(step_view) }
            </div>
        },
        PipelineRunState::Failed(message) => {
            html! { <p class="error" data-testid="pipeline-error">{ message }</p> }
        }
        PipelineRunState::Done(run) => run_view(run),
    };
    html! {
        <section class="panel" data-testid="pipeline-run-panel">
            <h2>{ "Test run" }</h2>
            <label class="vars">
                <span>{ "Input (JSON)" }</span>
                <textarea class="code small" data-testid="pipeline-input" value={editor.input_text.clone()}
                    oninput={act(PipelineAction::Input)} />
            </label>
            <div class="buttons">
                // Chosen by title and address; a tab the list no longer has stays chosen.
                <label>{ "Tab " }
                    <select data-testid="pipeline-tab" onchange={choose_tab}>
                        <option value="" selected={editor.tab_text.is_empty()}>{ "none (the page tools have no tab)" }</option>
                        { for editor.tabs.iter().map(|t| html! {
                            <option value={t.id.to_string()} selected={editor.tab() == Some(t.id)}>
                                { format!("{} — {}", if t.title.is_empty() { "(untitled)" } else { &t.title }, t.url) }
                            </option>
                        }) }
                        if editor.tab().is_some_and(|id| editor.tabs.iter().all(|t| t.id != id)) {
                            <option value={editor.tab_text.clone()} selected=true>{ format!("tab {}", editor.tab_text) }</option>
                        }
                    </select>
                </label>
                <button class="ghost" data-testid="pipeline-tabs-refresh" title="List the open tabs again"
                    onclick={click(PipelineAction::ListTabs)}>{ "↻" }</button>
                <button data-testid="pipeline-run" disabled={running} onclick={click(PipelineAction::Run)}>{ "Run" }</button>
                if running {
                    <button data-testid="pipeline-cancel" onclick={click(PipelineAction::Cancel)}>{ "Cancel" }</button>
                }
            </div>
            <p class="hint">{ "The tab the page tools read: the side panel's /run uses its own tab." }</p>
            { body }
        </section>
    }
}

fn run_view(run: &Value) -> Html {
    let steps = run["steps"].as_array().cloned().unwrap_or_default();
    html! {
        <div data-testid="pipeline-result" data-status={run["status"].as_str().unwrap_or_default().to_owned()}>
            <p class="meta">{ format!("status {} · {} repair(s)", run["status"].as_str().unwrap_or_default(), run["repairs"]) }</p>
            if !run["error"].is_null() {
                <pre class="error" data-testid="pipeline-run-error">{ pretty(&run["error"]) }</pre>
            }
            if !run["output"].is_null() {
                <h3>{ "Output" }</h3>
                <pre class="raw" data-testid="pipeline-output">{ pretty(&run["output"]) }</pre>
            }
            { for steps.iter().map(step_view) }
        </div>
    }
}

/// One step's trace: status, timing, hashes, input, output, error.
fn step_view(step: &Value) -> Html {
    let llm = &step["llm"];
    html! {
        <details class="pipeline-step" data-testid="pipeline-step" data-step={step["step_id"].as_str().unwrap_or_default().to_owned()}
            data-status={step["status"].as_str().unwrap_or_default().to_owned()} open={step["status"] != "skipped"}>
            <summary>
                { format!("{} · {} · {} · {:.0} ms", step["step_id"].as_str().unwrap_or_default(),
                    // The engine's `StepTrace` writes its kind as `type`.
                    step["type"].as_str().unwrap_or_default(), step["status"].as_str().unwrap_or_default(),
                    step["timing_ms"].as_f64().unwrap_or_default()) }
            </summary>
            <p class="meta">{ format!("pipeline hash {}", step["pipeline_hash"].as_str().unwrap_or_default()) }</p>
            if !llm.is_null() {
                <p class="meta" data-testid="pipeline-step-llm">
                    { format!("prompt {}/{} · prompt hash {} · {} · {} answer(s), {} repair(s)",
                        llm["prompt_id"].as_str().unwrap_or_default(), llm["prompt_variant"].as_str().unwrap_or_default(),
                        llm["prompt_hash"].as_str().unwrap_or_default(), llm["model"].as_str().unwrap_or_default(),
                        llm["attempts"].as_array().map_or(0, Vec::len), llm["repairs"]) }
                </p>
            }
            <div class="side-by-side">
                <div><h4>{ "input" }</h4><pre class="raw">{ pretty(&step["input"]) }</pre></div>
                <div><h4>{ "output" }</h4><pre class="raw" data-testid="pipeline-step-output">{ pretty(&step["output"]) }</pre></div>
            </div>
            if !step["error"].is_null() {
                <pre class="error">{ pretty(&step["error"]) }</pre>
            }
        </details>
    }
}
