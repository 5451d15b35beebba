//! The annotation page's data in and out, as a wasm module of its own (`dist/transfer/`).
//! The page imports it when an export, an import or a sync round first starts: the export
//! writers (JSON, JSONL, CSV, Markdown, ZIP), the anonymizer, the fine-tuning data with the
//! prompt files and their renderer, the import checker and a round's push and pull
//! ([`exchange`]) were a fifth of the page's bundle, and nothing else on the page needs them.
//!
//! An export reads the runs, traces, screenshots, settings and secrets from IndexedDB
//! itself (`annotation-store`), so thousands of runs never cross between the two modules.
//! It reports its progress through the page's callback and answers with the file as a
//! Blob, its name and the sentence the page shows; the page saves it. What goes in, and
//! how, is `annotation-core`'s (`export`, `finetune`, `import`), tested there natively.

mod finetune_export;
mod import;
mod runs_export;

use std::rc::Rc;

use annotation_core::sync::SyncSettings;
use annotation_core::team::OwnVersion;
use annotation_store::Store;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

/// The JSON text `json` read as a `T`, or which input could not be read.
fn read<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T, String> {
    lean::read_json(json).map_err(|e| format!("the {what} could not be read: {e}"))
}

/// The page's `progress(done, total)` callback.
struct Progress(js_sys::Function);

impl Progress {
    fn report(&self, done: usize, total: usize) {
        let _ = self.0.call2(&JsValue::UNDEFINED, &(done as f64).into(), &(total as f64).into());
    }
}

/// The file made of `parts` (text and byte arrays), typed `mime`: the browser keeps the
/// parts off the wasm heap.
fn blob(parts: &js_sys::Array, mime: &str) -> Result<web_sys::Blob, String> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    web_sys::Blob::new_with_blob_sequence_and_options(parts, &options)
        .map_err(|e| format!("could not assemble the file: {e:?}"))
}

fn bytes(data: &[u8]) -> JsValue {
    js_sys::Uint8Array::from(data).into()
}

/// What an export answers the page: `{blob, fileName, notice}`.
fn exported(blob: web_sys::Blob, file_name: &str, notice: &str) -> JsValue {
    let answer = js_sys::Object::new();
    for (key, value) in
        [("blob", JsValue::from(blob)), ("fileName", file_name.into()), ("notice", notice.into())]
    {
        let _ = js_sys::Reflect::set(&answer, &key.into(), &value);
    }
    answer.into()
}

thread_local! {
    /// The database, opened by the first call that needs it.
    static STORE: std::cell::RefCell<Option<Rc<Store>>> = const { std::cell::RefCell::new(None) };
}

/// The extension's database, opened once for the module's life.
async fn store() -> Result<Rc<Store>, String> {
    if let Some(store) = STORE.with_borrow(Clone::clone) {
        return Ok(store);
    }
    let store = Rc::new(Store::open().await?);
    STORE.set(Some(store.clone()));
    Ok(store)
}

/// A sync round's exchange with the server (`annotation_sync::exchange`: push, pull, the
/// team's versions) with the page's sync `settings` and the caller's versions of their own
/// (`own`), both JSON. Answers `annotation_sync::Exchanged` as JSON.
#[wasm_bindgen]
pub async fn exchange(settings: String, user: String, own: String) -> Result<String, String> {
    let settings: SyncSettings = read("sync settings", &settings)?;
    let own: Vec<OwnVersion> = read("team's versions", &own)?;
    let store = store().await?;
    Ok(annotation_sync::exchange(&store, &settings, &user, own).await.to_json())
}
