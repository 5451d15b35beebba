//! The page's own wasm modules that load when a feature first needs them, so the page's
//! bundle does not carry them: the spell checker (`dist/spelling/`, with the dictionary) and
//! the data in and out (`dist/transfer/`: the exports, reading imports, a sync round's push
//! and pull).
//! `modules.js` imports one; an object of one of its classes is built, or one of its
//! functions called, here.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// The spell checker (`annotation-spelling`), as the extension serves it.
pub const SPELLING: &str = "/spelling/annotation_spelling.js";
/// The files in and out (`annotation-transfer`).
pub const TRANSFER: &str = "/transfer/annotation_transfer.js";

#[wasm_bindgen(module = "/src/modules.js")]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn load_module(path: &str) -> Result<JsValue, JsValue>;
}

/// A new `class` object of the module at `path` ([`SPELLING`], [`TRANSFER`]), built from
/// `args`; what a constructor refuses with comes back as the error.
pub async fn construct(path: &str, class: &str, args: &js_sys::Array) -> Result<JsValue, String> {
    let constructor = export(path, class).await?;
    js_sys::Reflect::construct(&constructor, args).map_err(|e| failed(path, e))
}

/// What `function` of the module at `path` answers to `args`; an async one's answer once
/// it settles.
pub async fn call(path: &str, function: &str, args: &js_sys::Array) -> Result<JsValue, String> {
    let function = export(path, function).await?;
    let answer = function.apply(&JsValue::UNDEFINED, args).map_err(|e| failed(path, e))?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&answer))
        .await
        .map_err(|e| failed(path, e))
}

/// `value` as JSON text for a module (through `Value`, the page's one writer per type).
pub fn json(value: &impl serde::Serialize) -> Result<String, String> {
    lean::write_json(value).map_err(|e| e.to_string())
}

/// The function (or class) `name` the module at `path` exports, the module imported first.
async fn export(path: &str, name: &str) -> Result<js_sys::Function, String> {
    let module = load_module(path).await.map_err(|e| failed(path, e))?;
    js_sys::Reflect::get(&module, &JsValue::from_str(name))
        .ok()
        .and_then(|c| c.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("{path} has no {name}"))
}

/// What a module threw (its own sentence when it threw one), or that it did not load.
fn failed(path: &str, error: JsValue) -> String {
    error.as_string().unwrap_or_else(|| format!("{path} did not load: {error:?}"))
}
