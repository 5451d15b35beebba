//! Decodes requests from pages, runs them against the engine and encodes the answers.

use agent_engine::actions::Action;
use agent_engine::cdp::CdpError;
use agent_engine::firewall::Firewall;
use agent_engine::observe::{Observation, ObserveOptions};
use agent_engine::page_info;
use agent_engine::pipeline::parsed;
use agent_engine::providers::{self, ChatMessage, ChatRequest, ModelConfig};
use agent_engine::screenshot;
use protocol::{DebugError, DebugRequest, PageStateReply, PanelRequest, WorkerEvent};
use wasm_bindgen::JsValue;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use crate::Worker;
use crate::chrome::{ChromeTabs, PerformanceClock, Port, to_js};
use crate::http::FetchHttp;
use crate::store::Store;
#[cfg(doc)]
use crate::tasks::Tasks;

/// Port requests, handled one at a time in arrival order (a follow-up must be applied
/// before the resume sent right after it).
#[derive(Default)]
pub struct Queue {
    waiting: RefCell<VecDeque<(Port, PanelRequest)>>,
    draining: Cell<bool>,
}

/// Decodes a port message once and queues it. A connection test runs beside the queue: it
/// can take as long as the model's timeout, and a Pause must not wait behind it; so can a
/// Prompt Studio run, a pipeline run (which a Cancel must be able to reach) or a draft of a
/// step's thoughts.
pub fn enqueue(worker: Rc<Worker>, port: Port, message: JsValue) {
    let request: PanelRequest = match capture_db::decode(message) {
        Ok(request) => request,
        Err(error) => {
            // Without an id there is no one to answer.
            return crate::chrome::log(&format!("ignored a malformed panel request: {error}"));
        }
    };
    if let PanelRequest::TestConnection { .. }
    | PanelRequest::TestMcpServer { .. }
    | PanelRequest::StudioRun { .. }
    | PanelRequest::RunPipeline { .. }
    | PanelRequest::RunPublished { .. }
    | PanelRequest::DraftThoughts { .. } = request
    {
        wasm_bindgen_futures::spawn_local(async move {
            port.post(&handle_panel_request(&worker, request).await);
        });
        return;
    }
    worker.requests.waiting.borrow_mut().push_back((port, request));
    if worker.requests.draining.replace(true) {
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        loop {
            let next = worker.requests.waiting.borrow_mut().pop_front();
            let Some((port, request)) = next else { break };
            port.post(&handle_panel_request(&worker, request).await);
        }
        worker.requests.draining.set(false);
    });
}

/// Answers one port request, decoded once by [`enqueue`]: the page requests here,
/// the task, session and settings requests through [`Tasks`] (whose rules are the engine's
/// `session` module). An `Err` from those is the sentence the panel shows.
pub async fn handle_panel_request(worker: &Rc<Worker>, request: PanelRequest) -> WorkerEvent {
    let id = request.id();
    let answer = answer_panel_request(worker, request).await;
    answer.unwrap_or_else(|message| WorkerEvent::Failed { id, message })
}

async fn answer_panel_request(
    worker: &Rc<Worker>,
    request: PanelRequest,
) -> Result<WorkerEvent, String> {
    let tasks = &worker.tasks;
    // What the stored prompts, pipelines and drafts are asked for, when it cannot be opened.
    let store = async || -> Result<Rc<Store>, String> {
        tasks.store().await.map_err(|error| format!("Storage is unavailable: {error}"))
    };
    match request {
        PanelRequest::PageTitle { id, tab_id } => {
            match page_info::title(&worker.sessions, tab_id).await {
                Ok(title) => Ok(WorkerEvent::PageTitle { id, tab_id, title }),
                Err(error) => Err(error.to_string()),
            }
        }
        PanelRequest::PageState { id, tab_id } => {
            match observe(worker, tab_id, ObserveOptions::default()).await {
                Ok(observation) => Ok(WorkerEvent::PageState {
                    id,
                    chars: observation.text.chars().count(),
                    text: observation.text,
                    ms: observation.timings.total,
                }),
                Err(error) => Err(error.to_string()),
            }
        }
        PanelRequest::CurrentTask { id, tab_id } => {
            Ok(WorkerEvent::Task { id: Some(id), snapshot: tasks.snapshot(tab_id) })
        }
        PanelRequest::StartTask { id, tab_id, task, session_id } => tasks
            .start_job(worker, tab_id, &task, session_id.as_deref(), None, None)
            .await
            .map(|_| WorkerEvent::Done { id }),
        PanelRequest::FollowUp { id, session_id, text } => {
            tasks.follow_up(worker, &session_id, &text).await.map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::Pause { id, session_id } => {
            tasks.pause(&session_id).map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::Resume { id, session_id } => {
            tasks.resume(worker, &session_id).await.map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::Cancel { id, session_id } => {
            tasks.cancel(worker, &session_id).await.map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::GetSettings { id } => tasks.get_settings(id).await,
        PanelRequest::SaveSettings { id, settings, keys } => {
            let saved = tasks.save_settings(id, *settings, &keys).await;
            if let Ok(WorkerEvent::Settings { settings: Some(settings), problems, .. }) = &saved
                && problems.is_empty()
            {
                crate::mcp_host::McpHost::apply(worker, settings.allow_mcp_clients);
            }
            saved
        }
        PanelRequest::ListSessions { id } => tasks.list_sessions(id).await,
        PanelRequest::OpenSession { id, session_id, tab_id } => {
            tasks.open_session(worker, id, &session_id, tab_id).await
        }
        PanelRequest::DeleteSession { id, session_id } => {
            tasks.delete_session(worker, id, &session_id).await
        }
        PanelRequest::GetFavourites { id } => tasks.favourites(id).await,
        PanelRequest::SaveFavourites { id, favourites } => {
            tasks.save_favourites(id, favourites).await
        }
        PanelRequest::TestConnection { id, role, model, key } => {
            Ok(crate::connection::test(store().await?.as_ref(), id, role, *model, key).await)
        }
        PanelRequest::TestMcpServer { id, server, token } => {
            Ok(crate::connection::test_mcp(store().await?.as_ref(), id, *server, token).await)
        }
        PanelRequest::StudioRun { id, run } => {
            crate::studio::run(store().await?.as_ref(), id, *run).await
        }
        PanelRequest::SavePrompts { id, edits } => {
            crate::studio::save(store().await?.as_ref(), id, edits).await
        }
        PanelRequest::RunPipeline { id, text, pipeline, input, tab_id } => {
            let store = store().await?;
            let file = parsed(&text, pipeline.as_ref());
            let ran = crate::pipelines::run(worker, &store, id, file, input, tab_id, None).await;
            ran.map(|ran| ran.event(id))
        }
        PanelRequest::RunPublished { id, name, input, tab_id } => crate::pipelines::run_published(
            worker,
            store().await?.as_ref(),
            id,
            &name,
            input,
            tab_id,
            None,
        )
        .await
        .map(|ran| ran.event(id)),
        PanelRequest::CancelPipeline { id, run } => crate::pipelines::cancel(worker, id, run),
        PanelRequest::DraftThoughts { id, input } => {
            Ok(crate::drafting::run(store().await?.as_ref(), id, *input).await)
        }
        PanelRequest::SavePipeline { id, text, pipeline, publish } => {
            let store = store().await?;
            crate::pipelines::save(worker, &store, id, &text, pipeline.as_ref(), publish).await
        }
        PanelRequest::ListPipelines { id } => {
            crate::pipelines::list(store().await?.as_ref(), id).await
        }
        PanelRequest::StartRecording { id, tab_id } => {
            worker.recorder.start(worker, id, tab_id).await
        }
        PanelRequest::StopRecording { id } => worker.recorder.stop(worker, id).await,
        PanelRequest::RecordingNote { id, note } => worker.recorder.note(worker, id, note).await,
        PanelRequest::NameRecording { id, recording_id, name } => worker
            .recorder
            .name(worker, &recording_id, &name, true)
            .await
            .map(|()| WorkerEvent::Done { id }),
        PanelRequest::CurrentRecording { id } => Ok(worker.recorder.answer(Some(id))),
        PanelRequest::ReflectRecording { id, recording_id } => {
            worker.workflows.reflect(worker, &recording_id).await.map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::WorkflowSaved { id, .. } => {
            // A saved version may rename the workflow or change its parameters: its tool's.
            worker.mcp.tools_changed();
            Ok(WorkerEvent::Done { id })
        }
        PanelRequest::StartReplay { id, workflow_id, version, tab_id, params, fast_path } => {
            let flows = &worker.workflows;
            flows.start_replay(worker, id, &workflow_id, version, tab_id, &params, fast_path).await
        }
        PanelRequest::ReplayControl { id, run_id, action } => worker
            .workflows
            .control(worker, &run_id, action)
            .await
            .map(|()| WorkerEvent::Done { id }),
        PanelRequest::ReplayMessage { id, run_id, text } => {
            worker.workflows.message(worker, &run_id, text).await.map(|()| WorkerEvent::Done { id })
        }
        PanelRequest::CurrentReplay { id } => Ok(worker.workflows.event(Some(id))),
        PanelRequest::ListWorkflows { id } => worker.workflows.list(worker, id).await,
        PanelRequest::ListJobs { id } => Ok(worker.jobs.event(Some(id)).await),
        PanelRequest::ListTabs { id } => agent_engine::actions::Tabs::list(&ChromeTabs)
            .await
            .map(|tabs| WorkerEvent::Tabs { id, tabs })
            .map_err(|e| format!("The open tabs could not be listed: {e}")),
        PanelRequest::StopJob { id, job_id } => worker.jobs.stop(worker, id, &job_id).await,
    }
}

/// Answers one `chrome.runtime.sendMessage` debug request.
pub async fn handle_debug_request(worker: &Worker, message: JsValue) -> JsValue {
    match capture_db::decode::<DebugRequest>(message) {
        Ok(DebugRequest::WorkerTimings) => to_js(&worker.timings()),
        Ok(DebugRequest::PageState { tab_id, margin }) => {
            let mut options = ObserveOptions::default();
            if let Some(margin) = margin {
                options.margin_px = margin;
            }
            match observe(worker, tab_id, options).await {
                Ok(observation) => to_js(&PageStateReply {
                    chars: observation.text.chars().count(),
                    text: observation.text,
                    elements: json(&observation.snapshot.elements),
                    comparison: observation.comparison.map(|c| json(&c)),
                    timings_ms: json(&observation.timings),
                }),
                Err(error) => to_js(&DebugError { error: error.to_string() }),
            }
        }
        Ok(DebugRequest::Screenshot { tab_id, marks }) => {
            let mut elements = None;
            if marks {
                if worker.observer.last_elements(tab_id).is_none()
                    && let Err(error) = observe(worker, tab_id, ObserveOptions::default()).await
                {
                    return to_js(&DebugError { error: error.to_string() });
                }
                elements = worker.observer.last_elements(tab_id);
            }
            match screenshot::capture(&worker.sessions, tab_id, elements.as_deref(), 70).await {
                Ok(data) => to_js(&serde_json::json!({"data": data, "format": "jpeg",
                    "marks": elements.map_or(0, |e| e.len())})),
                Err(error) => to_js(&DebugError { error: error.to_string() }),
            }
        }
        Ok(DebugRequest::Llm { config, prompt, schema }) => {
            let config: ModelConfig = match serde_json::from_value(config) {
                Ok(config) => config,
                Err(error) => {
                    return to_js(&DebugError { error: format!("bad model settings: {error}") });
                }
            };
            let chat = ChatRequest {
                system: "You are AlphaScout's connection test.".into(),
                messages: vec![ChatMessage::user(prompt)],
                schema: schema.map(|s| ("answer".to_owned(), s)),
                ..Default::default()
            };
            match providers::complete(&FetchHttp, &PerformanceClock, &config, &chat).await {
                Ok(reply) => to_js(&reply),
                Err(error) => {
                    to_js(&serde_json::json!({"error": error.to_string(), "kind": error}))
                }
            }
        }
        Ok(DebugRequest::Act { tab_id, action }) => {
            match serde_json::from_value::<Action>(action) {
                Ok(action) => {
                    // Debug requests come from the extension's own tests and tools.
                    let firewall = Firewall::default();
                    to_js(&crate::tasks::hands(worker, &firewall).perform(tab_id, &action).await)
                }
                Err(error) => to_js(&DebugError { error: format!("not an action: {error}") }),
            }
        }
        Ok(DebugRequest::Recording { id }) => crate::recorder::debug(worker, id).await,
        Err(error) => to_js(&DebugError { error: format!("unknown request: {error}") }),
    }
}

fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// One observation of `tab` with the worker's browser, clock and tabs.
async fn observe(
    worker: &Worker,
    tab: protocol::TabId,
    options: ObserveOptions,
) -> Result<Observation, CdpError> {
    worker.observer.observe(&worker.sessions, &PerformanceClock, &ChromeTabs, tab, options).await
}
