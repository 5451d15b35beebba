//! The Prompt Studio's requests: a Studio run (`agent_engine::studio_run`, in the authoring
//! module; its trace stored like an agent's) and saving prompt files as overrides, each save
//! kept as a numbered version in `promptVersions`.

use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use protocol::WorkerEvent;
use protocol::studio::{PromptEdits, StudioRun};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;

use crate::authoring;
use crate::store::Store;

/// One Studio run with the stored settings; the trace goes to the `traces` store.
pub async fn run(store: &Store, id: u32, request: StudioRun) -> Result<WorkerEvent, String> {
    let settings =
        store.settings().await?.ok_or("Choose a model and enter its API key in Settings first.")?;
    let request = json!({"settings": settings, "keys": settings.keys(), "run": request});
    let mut answer = authoring::studio_run(&request).await?;
    if let Some(trace) = traced(&mut answer) {
        store
            .put_trace_value(&trace)
            .await
            .map_err(|e| format!("The trace was not stored: {e}"))?;
    }
    let result = serde_json::from_value(answer["result"].take())
        .map_err(|e| format!("The Studio run's result could not be read: {e}"))?;
    Ok(WorkerEvent::StudioResult { id, result: Box::new(result) })
}

/// The trace of an authoring module's model call, when there was one.
pub fn traced(answer: &mut Value) -> Option<Value> {
    Some(answer["trace"].take()).filter(|trace| !trace.is_null())
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
