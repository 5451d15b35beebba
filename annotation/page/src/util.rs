//! Small browser facts the page needs: the time, fresh ids, the URL.

pub use annotation_store::{new_id, now};

pub fn query_string() -> String {
    web_sys::window().and_then(|w| w.location().search().ok()).unwrap_or_default()
}

/// Changes the URL's query without reloading, so reload and back keep the open run.
pub fn set_query(query: &str) {
    let Some(window) = web_sys::window() else { return };
    let path = window.location().pathname().unwrap_or_default();
    if let Ok(history) = window.history() {
        let _ = history.push_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{query}")),
        );
    }
}

pub use annotation_store::yield_now;

/// Listens to a window event until the returned guard is dropped; events of another type
/// than `E` are ignored.
pub fn listen<E: wasm_bindgen::JsCast + 'static>(
    event: &'static str,
    mut f: impl FnMut(E) + 'static,
) -> Option<gloo::events::EventListener> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window()?;
    Some(gloo::events::EventListener::new(&window, event, move |event| {
        if let Ok(event) = event.clone().dyn_into::<E>() {
            f(event);
        }
    }))
}
