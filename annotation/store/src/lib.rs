//! The annotation page's IO that its wasm modules share, so that they reach the stores
//! themselves instead of passing thousands of runs across as JSON: reads of what the worker
//! captured (runs with their steps, traces, screenshots, the agent's settings, the secrets
//! exports mask), the writes the page and the sync both make ([`records`]: reviews,
//! collections, the queue for the server, what the server sent), `fetch` ([`http`]), the
//! clock and fresh ids. The page wraps a [`Store`] with its own writes; the transfer module
//! opens one of its own. `capture-db` has the stores; what the records mean is
//! `annotation-core`'s.

pub mod http;
pub mod records;

use std::collections::{BTreeMap, HashMap};

pub use records::{QueuedChange, stored_run, unqueued};

use annotation_core::record::{Run, Step};
use annotation_core::sync::SyncSettings;
use capture_db::{ANNOTATION, Cause, RUNS, SCREENSHOTS, SETTINGS, STEPS, TRACES};
use indexed_db_futures::database::Database;
use indexed_db_futures::object_store::ObjectStore;
use indexed_db_futures::prelude::*;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

/// The page's sync settings, under this key in the `annotation` store.
pub const SYNC_KEY: &str = "sync";

/// The extension's database, open.
pub struct Store {
    db: Database,
}

/// The records among `values` that read as `T`; the others are skipped with a warning.
pub fn decode<T: DeserializeOwned>(values: Vec<JsValue>, what: &str) -> Vec<T> {
    values
        .into_iter()
        .filter_map(|value| match capture_db::decode(value) {
            Ok(record) => Some(record),
            Err(cause) => {
                // One odd row must not hide the rest; it stays stored as it is.
                web_sys::console::warn_1(&format!("skipped an unreadable {what}: {cause}").into());
                None
            }
        })
        .collect()
}

/// The message of a failed `what`.
pub fn failed(what: &str) -> impl FnOnce(Cause) -> String + '_ {
    move |cause| format!("IndexedDB: could not {what}: {cause}")
}

impl Store {
    pub async fn open() -> Result<Store, String> {
        Ok(Store { db: capture_db::open().await? })
    }

    /// The database, for the page's writes.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Every value in `store`, as stored.
    pub async fn all(&self, store: &str) -> Result<Vec<JsValue>, Cause> {
        let tx = self.db.transaction(store).build()?;
        all_in(&tx.object_store(store)?).await
    }

    /// The values in `store` of the run `run_id`, as stored.
    pub async fn of_run(&self, store: &str, run_id: &str) -> Result<Vec<JsValue>, Cause> {
        let tx = self.db.transaction(store).build()?;
        of_run_in(&tx.object_store(store)?, run_id).await
    }

    /// The value under `key` in `store`, as stored.
    pub async fn get(&self, store: &str, key: &str) -> Result<Option<JsValue>, Cause> {
        let tx = self.db.transaction(store).build()?;
        Ok(tx.object_store(store)?.get::<JsValue, _, _>(key).await?)
    }

    /// The record under `key` in `store`, if stored and readable: what the page and the
    /// worker keep under fixed keys (settings, keys) is optional, so a failure reads as none.
    pub async fn read<T: DeserializeOwned>(&self, store: &str, key: &str) -> Option<T> {
        let value = self.get(store, key).await.ok().flatten()?;
        capture_db::decode(value).ok()
    }

    /// The page's own setting under `key` in the `annotation` store, if stored and readable.
    pub async fn setting<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.read(ANNOTATION, key).await
    }

    /// The traces of a run's model calls (the worker's `LlmTrace` records), as stored.
    pub async fn traces(&self, run_id: &str) -> Result<Vec<serde_json::Value>, String> {
        let read = async {
            let values = self.of_run(TRACES, run_id).await?;
            Ok::<_, Cause>(decode(values, "trace"))
        };
        read.await.map_err(failed("read the run's traces"))
    }

    /// The agent's settings as the worker stores them (keys masked), or null before any.
    pub async fn agent_settings(&self) -> serde_json::Value {
        self.read(SETTINGS, "settings").await.unwrap_or_default()
    }

    pub async fn sync_settings(&self) -> SyncSettings {
        self.setting(SYNC_KEY).await.unwrap_or_default()
    }

    /// Every secret this browser holds: the agent's API keys and the sync token. Exports
    /// mask them wherever they appear.
    pub async fn secrets(&self) -> Vec<String> {
        let keys: BTreeMap<String, String> = self.read(SETTINGS, "keys").await.unwrap_or_default();
        let mut out: Vec<String> = keys.into_values().collect();
        let token = self.sync_settings().await.token;
        out.push(token);
        out.retain(|s| !s.trim().is_empty());
        out
    }

    /// The screenshot blob stored under `key`.
    pub async fn screenshot(&self, key: &str) -> Option<web_sys::Blob> {
        use wasm_bindgen::JsCast;
        self.get(SCREENSHOTS, key).await.ok().flatten().and_then(|v| v.dyn_into().ok())
    }

    /// The bytes of the screenshot stored under `key`; none when it is not stored.
    pub async fn screenshot_bytes(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let Some(blob) = self.screenshot(key).await else { return Ok(None) };
        let buffer = wasm_bindgen_futures::JsFuture::from(blob.array_buffer())
            .await
            .map_err(|e| format!("could not read a screenshot: {e:?}"))?;
        Ok(Some(js_sys::Uint8Array::new(&buffer).to_vec()))
    }

    /// Every run with its steps, for exports: two reads in all, grouped here.
    pub async fn everything(&self) -> Result<Vec<(Run, Vec<Step>)>, String> {
        let read = async {
            let runs: Vec<Run> = decode(self.all(RUNS).await?, "run");
            Ok::<_, Cause>(with_steps(runs, decode(self.all(STEPS).await?, "step")))
        };
        read.await.map_err(failed("read the runs to export"))
    }
}

/// `steps` in their order.
pub fn sorted(mut steps: Vec<Step>) -> Vec<Step> {
    lean::sort_by_key(&mut steps, |s| s.index);
    steps
}

/// Each run with its own steps in order, from one read of every step (the list's first
/// summaries and the exports): far faster than a read per run over many runs.
pub fn with_steps(runs: Vec<Run>, steps: Vec<Step>) -> Vec<(Run, Vec<Step>)> {
    let mut by_run: HashMap<String, Vec<Step>> = HashMap::new();
    for step in steps {
        by_run.entry(step.run_id.clone()).or_default().push(step);
    }
    runs.into_iter()
        .map(|run| {
            let own = sorted(by_run.remove(&run.id).unwrap_or_default());
            (run, own)
        })
        .collect()
}

/// Every value in `store`, read in the caller's transaction.
pub async fn all_in(store: &ObjectStore<'_>) -> Result<Vec<JsValue>, Cause> {
    Ok(store.get_all::<JsValue>().await?.collect::<Result<Vec<_>, _>>()?)
}

/// The values in `store` of the run `run_id` (its `runId` index), read in the caller's
/// transaction.
pub async fn of_run_in(store: &ObjectStore<'_>, run_id: &str) -> Result<Vec<JsValue>, Cause> {
    let index = store.index("runId")?;
    let values = index.get_all::<JsValue>().with_query(run_id).await?;
    Ok(values.collect::<Result<Vec<_>, _>>()?)
}

/// Milliseconds on the page's clock, for pacing long work.
pub fn clock() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// Yields to the browser so it can paint and handle input during long work.
pub async fn yield_now() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Standard base64 with padding: how a screenshot goes into a data URL or a model request.
pub fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Now, as ISO 8601 UTC with milliseconds (the records' timestamp format).
pub fn now() -> String {
    String::from(js_sys::Date::new_0().to_iso_string())
}

/// A fresh random id (UUID v4 when the browser provides one).
pub fn new_id() -> String {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into()).ok();
    let uuid = crypto.and_then(|c| {
        let f = js_sys::Reflect::get(&c, &"randomUUID".into()).ok()?;
        let f: js_sys::Function = wasm_bindgen::JsCast::dyn_into(f).ok()?;
        f.call0(&c).ok()?.as_string()
    });
    uuid.unwrap_or_else(|| {
        format!("{:x}{:x}", js_sys::Date::now() as u64, (js_sys::Math::random() * 1e12) as u64)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }
}
