//! The engine's traits over what every wasm worker has: [`http`] over `fetch`, [`Clock`]
//! over `performance.now` and `setTimeout`. The service worker and its pipeline module
//! (`authoring-engine`) both run the engine's model calls; this is their one copy.
//!
//! It must not know `chrome.*`: the pipeline module runs no extension API.

pub mod http;

use agent_engine::Clock;
use agent_engine::executor::{CallContext, Control};
use agent_engine::prompts::PromptSet;
use js_sys::{Promise, Reflect};
use protocol::settings::Settings;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn now_ms() -> f64;
    #[wasm_bindgen(js_namespace = crypto, js_name = randomUUID)]
    pub fn random_uuid() -> String;
}

/// `performance.now()`, the engine's clock.
pub struct PerformanceClock;

impl Clock for PerformanceClock {
    fn now_ms(&self) -> f64 {
        now_ms()
    }

    async fn sleep(&self, ms: f64) {
        let _ = JsFuture::from(delay(ms)).await;
    }
}

/// What the engine's model calls need, over `fetch` and this clock, the page's time for traces.
pub fn call_context<'a>(
    control: &'a Control,
    prompts: &'a PromptSet,
    settings: &'a Settings,
) -> CallContext<'a, http::FetchHttp, PerformanceClock> {
    CallContext {
        http: &http::FetchHttp,
        clock: &PerformanceClock,
        control,
        prompts,
        settings,
        epoch_ms: &js_sys::Date::now,
    }
}

/// A promise that resolves after `ms`.
pub fn delay(ms: f64) -> Promise {
    Promise::new(&mut |resolve, _| {
        set_timeout(&resolve, ms.max(0.0) as i32);
    })
}

/// What a thrown JS value says: an `Error`'s message, a thrown string, or its debug form.
pub fn error_message(error: &JsValue) -> String {
    Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| format!("{error:?}"))
}
