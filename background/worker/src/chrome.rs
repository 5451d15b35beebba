//! Bindings to the few `chrome.*` and worker-global functions the shell uses, and the
//! [`Cdp`] implementation over `chrome.debugger`.

use agent_engine::cdp::{Cdp, CdpError};
use js_sys::{Object, Promise, Reflect};
use protocol::TabId;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = attach, catch)]
    fn debugger_attach(target: &JsValue, version: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = detach, catch)]
    fn debugger_detach(target: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = sendCommand, catch)]
    fn debugger_send(target: &JsValue, method: &str, params: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn now_ms() -> f64;
    #[wasm_bindgen(js_namespace = console, js_name = info)]
    pub fn log(message: &str);

    /// A `chrome.runtime.Port`.
    pub type Port;
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;
}

/// Converts to a JS value with plain objects (not `Map`s), as `postMessage` expects.
pub fn to_js<T: Serialize>(value: &T) -> JsValue {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

impl Port {
    /// Posts `event`; a port that disconnected meanwhile is not an error worth raising.
    pub fn post<T: Serialize>(&self, event: &T) {
        if let Err(error) = self.post_message(&to_js(event)) {
            log(&format!("port closed before the answer: {}", error_message(&error)));
        }
    }
}

/// `performance.now()`, the engine's clock.
pub struct PerformanceClock;

impl agent_engine::Clock for PerformanceClock {
    fn now_ms(&self) -> f64 {
        now_ms()
    }
}

/// `chrome.debugger`, one debuggee per tab.
pub struct ChromeDebugger;

fn debuggee(tab: TabId) -> JsValue {
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    target.into()
}

/// The text of a thrown value or rejected promise.
pub fn error_message(error: &JsValue) -> String {
    Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| format!("{error:?}"))
}

async fn settle(call: Result<Promise, JsValue>) -> Result<JsValue, CdpError> {
    let promise = call.map_err(|e| CdpError::from_chrome_message(&error_message(&e)))?;
    JsFuture::from(promise).await.map_err(|e| CdpError::from_chrome_message(&error_message(&e)))
}

impl Cdp for ChromeDebugger {
    async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
        settle(debugger_attach(&debuggee(tab), "1.3")).await.map(drop)
    }

    async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
        settle(debugger_detach(&debuggee(tab))).await.map(drop)
    }

    async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError> {
        let reply = settle(debugger_send(&debuggee(tab), method, &to_js(&params))).await?;
        serde_wasm_bindgen::from_value(reply).map_err(|e| CdpError::Protocol {
            detail: format!("unreadable reply to {method}: {e}"),
        })
    }
}
