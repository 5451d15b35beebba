//! The Prompt Studio's requests: a Studio run (`agent_engine::studio_run` over `FetchHttp`, its
//! trace stored like an agent's) and saving prompt files as overrides, each save kept as a
//! numbered version in `promptVersions`.

use agent_engine::studio_run::{StudioShell, run_prompt};
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use protocol::WorkerEvent;
use protocol::studio::{PromptEdits, StudioRun};
use wasm_bindgen::JsValue;

use crate::chrome::{self, PerformanceClock};
use crate::http::FetchHttp;
use crate::store::Store;

/// The worker's shell for one traced model call (a Studio run, an AI draft): `fetch`, the
/// performance clock, the page's time and uuids.
pub fn call_shell() -> StudioShell<'static, FetchHttp, PerformanceClock> {
    StudioShell {
        http: &FetchHttp,
        clock: &PerformanceClock,
        epoch_ms: &js_sys::Date::now,
        new_id: &chrome::random_uuid,
    }
}

/// One Studio run with the stored settings; the trace goes to the `traces` store.
pub async fn run(store: &Store, id: u32, request: StudioRun) -> Result<WorkerEvent, String> {
    let settings =
        store.settings().await?.ok_or("Choose a model and enter its API key in Settings first.")?;
    let (result, trace) = run_prompt(&call_shell(), &settings, &request).await;
    if let Some(trace) = &trace {
        store.put_trace(trace).await.map_err(|e| format!("The trace was not stored: {e}"))?;
    }
    Ok(WorkerEvent::StudioResult { id, result: Box::new(result) })
}

/// Applies `edits` to the stored overrides if the prompts still load with them, and keeps
/// each saved text as the next version of its path. Tasks started afterwards use them.
pub async fn save(store: &Store, id: u32, edits: PromptEdits) -> Result<WorkerEvent, String> {
    let mut settings = store
        .settings()
        .await?
        .ok_or("Save Settings once (a model and its key) before editing prompts.")?;
    for (path, text) in &edits {
        match text {
            Some(text) => settings.prompt_overrides.insert(path.clone(), text.clone()),
            None => settings.prompt_overrides.remove(path),
        };
    }
    agent_engine::prompts::PromptSet::with_overrides(&settings.prompt_overrides)
        .map_err(|error| format!("Not saved: {error}"))?;
    store.put_settings(&settings).await?;
    // In the edits' order, which is the paths'.
    let saved: Vec<(&String, &String)> =
        edits.iter().filter_map(|(path, text)| Some((path, text.as_ref()?))).collect();
    if !saved.is_empty() {
        keep_versions(store, saved).await?;
    }
    Ok(WorkerEvent::PromptOverrides { id, overrides: settings.prompt_overrides })
}

/// `{path, number, text, savedAt}` rows, numbered per path from 1.
async fn keep_versions(store: &Store, saved: Vec<(&String, &String)>) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("The prompt versions were not kept: {e}");
    let db = store.database();
    let saved_at = agent_engine::run::iso8601(js_sys::Date::now());
    let write = async {
        let tx = db
            .transaction([capture_db::PROMPT_VERSIONS])
            .with_mode(TransactionMode::Readwrite)
            .build()?;
        let versions = tx.object_store(capture_db::PROMPT_VERSIONS)?;
        for (path, text) in saved {
            let index = versions.index("path")?;
            let count = index.count().with_query(path.as_str()).await?;
            let row = serde_json::json!({"path": path, "number": count + 1, "text": text,
                "savedAt": saved_at});
            let value: JsValue = capture_db::encode(&row)?;
            versions.put(value).await?;
        }
        tx.commit().await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    write.await.map_err(|e| failed(&e))
}
