//! The engine's authoring side as a wasm module of its own (`authoring-engine`, in
//! `dist/authoring/`): pipelines (loading a file, running it, the publish gate), reflecting a
//! recording, Studio runs, AI drafts and Settings' MCP test. `extension/background.js`
//! imports its glue and instantiates it the first time it is asked for, so the worker's
//! bundle carries none of it. Values cross as JSON text; a run calls back into the worker
//! through a [`Host`]. Settings go as stored (keys masked) with `Settings::keys` beside them:
//! the keys stay in the extension's worker, in memory.

use std::any::Any;
use std::collections::BTreeMap;

use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::WasmClosure;
use wasm_bindgen::prelude::*;

use crate::chrome::error_message;

#[wasm_bindgen]
extern "C" {
    /// The module's exports, instantiated on the first call (`background.js`).
    #[wasm_bindgen(js_name = alphascoutAuthoringEngine, catch)]
    async fn module() -> Result<JsValue, JsValue>;
}

/// A pipeline file that loads: what the worker reads of it.
pub struct Loaded {
    pub id: String,
    pub description: String,
    /// Its `inputs.schema`.
    pub inputs: Option<Value>,
}

/// Checks the parsed pipeline `file` with the edited prompt files `overrides`; the error
/// says what is wrong with it.
pub async fn load(file: &Value, overrides: &BTreeMap<String, String>) -> Result<Loaded, String> {
    let args = [text(file), text(overrides)];
    let mut loaded = call("load", &args).await?;
    Ok(Loaded {
        id: loaded["id"].as_str().unwrap_or_default().to_owned(),
        description: loaded["description"].as_str().unwrap_or_default().to_owned(),
        inputs: Some(loaded["inputs"].take()).filter(|s| !s.is_null()),
    })
}

/// The publish gate's report on `file` with `runs` (stored runs' JSON):
/// `{errors, warnings, hash, id}`, the last two `null` when it does not load.
pub async fn check(
    file: &Value,
    overrides: &BTreeMap<String, String>,
    runs: &[Value],
) -> Result<Value, String> {
    call("check", &[text(file), text(overrides), text(&runs)]).await
}

/// Runs a pipeline: `request` is `{file, settings, keys, input, context, run_id}`, `host`
/// the object of functions the run calls back (see `authoring-engine`'s `Host`). Answers
/// `{run, traces, why}`.
pub async fn run(request: &Value, host: &Host) -> Result<Value, String> {
    call("run", &[text(request), host.object.clone().into()]).await
}

/// Reflects a stopped recording: `request` is `{recording, settings, keys, screenshots, done,
/// workflow_id, at}`, `host` has `tell` and `traces`. Answers `{done, workflow, task_name}`.
pub async fn reflect(request: &Value, host: &Host) -> Result<Value, String> {
    call("reflect", &[text(request), host.object.clone().into()]).await
}

/// A Prompt Studio run: `request` is `{settings, keys, run}`. Answers `{result, trace}`.
pub async fn studio_run(request: &Value) -> Result<Value, String> {
    call("studio_run", &[text(request)]).await
}

/// An AI draft of a step's thoughts: `request` is `{settings, keys, input}`. Answers
/// `{result, trace}`, `result` being `{"Ok": thoughts}` or `{"Err": why}`.
pub async fn draft_thoughts(request: &Value) -> Result<Value, String> {
    call("draft_thoughts", &[text(request)]).await
}

/// Lists an MCP server's tools for Settings' test: `request` is `{server, token}`. Answers
/// `{names, ms}`, or what went wrong.
pub async fn list_mcp_tools(request: &Value) -> Result<Value, String> {
    call("list_mcp_tools", &[text(request)]).await
}

/// An object of Rust functions a module's run calls back by name; they live as long as this.
pub struct Host {
    object: js_sys::Object,
    kept: Vec<Box<dyn Any>>,
}

impl Host {
    pub fn new() -> Host {
        Host { object: js_sys::Object::new(), kept: Vec::new() }
    }

    /// With `function` as the object's `name`.
    pub fn with<F: ?Sized + WasmClosure + 'static>(
        mut self,
        name: &str,
        function: Closure<F>,
    ) -> Host {
        let _ = js_sys::Reflect::set(&self.object, &JsValue::from_str(name), function.as_ref());
        self.kept.push(Box::new(function));
        self
    }
}

fn text(value: &impl serde::Serialize) -> JsValue {
    JsValue::from_str(&serde_json::to_string(value).unwrap_or_default())
}

/// `function`'s answer to `args`, parsed; what it threw, as its sentence.
async fn call(function: &str, args: &[JsValue]) -> Result<Value, String> {
    let failed = |e: JsValue| error_message(&e);
    let module = module().await.map_err(|e| {
        format!(
            "The authoring engine (pipelines, reflection, Studio runs) did not load: {}",
            failed(e)
        )
    })?;
    let export = js_sys::Reflect::get(&module, &JsValue::from_str(function))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("The authoring engine has no {function}."))?;
    let args: js_sys::Array = args.iter().collect();
    let answer = export.apply(&JsValue::UNDEFINED, &args).map_err(failed)?;
    let answer = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&answer))
        .await
        .map_err(failed)?;
    let answer = answer.as_string().unwrap_or_default();
    serde_json::from_str(&answer)
        .map_err(|e| format!("The authoring engine's answer is not JSON: {e}"))
}
