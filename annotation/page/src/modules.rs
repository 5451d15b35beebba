//! The page's own wasm modules that load when a feature first needs them, so the page's
//! bundle does not carry them: the spell checker (`dist/spelling/`, with the dictionary) and
//! the fine-tuning export (`dist/transfer/`). `modules.js` imports one; an object of one of
//! its classes is built here.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/modules.js")]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn load_module(path: &str) -> Result<JsValue, JsValue>;
}

/// A new `class` object of the module at `path` (as the extension serves it, e.g.
/// `/spelling/annotation_spelling.js`), built from `args`; what a constructor refuses with
/// comes back as the error.
pub async fn construct(path: &str, class: &str, args: &js_sys::Array) -> Result<JsValue, String> {
    let failed = |error: JsValue| {
        error.as_string().unwrap_or_else(|| format!("{path} did not load: {error:?}"))
    };
    let module = load_module(path).await.map_err(failed)?;
    let constructor = js_sys::Reflect::get(&module, &JsValue::from_str(class))
        .ok()
        .and_then(|c| c.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("{path} has no {class}"))?;
    js_sys::Reflect::construct(&constructor, args).map_err(failed)
}
