//! The IndexedDB shell: the stored traces, read leniently (an unreadable row is skipped).

use indexed_db_futures::prelude::*;
use run_records::LlmTrace;
use wasm_bindgen::JsValue;

/// Every stored trace.
pub async fn traces() -> Result<Vec<LlmTrace>, String> {
    let db = capture_db::open().await?;
    let read = async {
        let tx = db.transaction(capture_db::TRACES).build()?;
        let values = tx.object_store(capture_db::TRACES)?.get_all::<JsValue>().await?;
        Ok::<_, Box<dyn std::error::Error>>(values.collect::<Result<Vec<_>, _>>()?)
    };
    let values = read.await.map_err(|e| format!("IndexedDB: could not read the traces: {e}"))?;
    Ok(values
        .into_iter()
        .filter_map(|value| match capture_db::decode(value) {
            Ok(trace) => Some(trace),
            Err(cause) => {
                web_sys::console::warn_1(&format!("skipped an unreadable trace: {cause}").into());
                None
            }
        })
        .collect())
}
