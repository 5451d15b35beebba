//! The IndexedDB shell: the stored traces and the saved prompt versions, read leniently
//! (an unreadable row is skipped).

use run_records::LlmTrace;
use studio_core::versions::PromptVersion;

/// Every stored trace.
pub async fn traces() -> Result<Vec<LlmTrace>, String> {
    all(capture_db::TRACES, "traces").await
}

/// Every saved prompt version (a few per file the Studio saved).
pub async fn prompt_versions() -> Result<Vec<PromptVersion>, String> {
    all(capture_db::PROMPT_VERSIONS, "prompt versions").await
}

/// Every row of `store` that reads as a `T`; `what` names them in messages.
async fn all<T: serde::de::DeserializeOwned>(store: &str, what: &str) -> Result<Vec<T>, String> {
    let db = capture_db::open().await?;
    let values = capture_db::all(&db, store)
        .await
        .map_err(|e| format!("IndexedDB: could not read the {what}: {e}"))?;
    Ok(values
        .into_iter()
        .filter_map(|value| match capture_db::decode(value) {
            Ok(row) => Some(row),
            Err(cause) => {
                web_sys::console::warn_1(
                    &format!("skipped an unreadable row of {what}: {cause}").into(),
                );
                None
            }
        })
        .collect())
}
