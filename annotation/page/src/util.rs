//! Small browser facts the page needs: the time, fresh ids, the URL.

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
