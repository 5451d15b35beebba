//! `fetch` for the page: one request, and its answer's body as text or a Blob. Callers say
//! what a failure means to a person; here a failure is only "no answer".

use wasm_bindgen::{JsCast, JsValue};

/// Sends one request; `Err` when no answer came (network down, server gone, CORS refused).
pub async fn fetch(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&JsValue>,
) -> Result<web_sys::Response, ()> {
    let window = web_sys::window().ok_or(())?;
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let header_map = web_sys::Headers::new().map_err(|_| ())?;
    for (name, value) in headers {
        header_map.set(name, value).map_err(|_| ())?;
    }
    init.set_headers(&header_map);
    if let Some(body) = body {
        init.set_body(body);
    }
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| ())?;
    response.dyn_into().map_err(|_| ())
}

/// The answer's body as text (empty when it has none or cannot be read).
pub async fn text(response: &web_sys::Response) -> String {
    let Ok(promise) = response.text() else { return String::new() };
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default()
}

/// The answer's body as a Blob, if it can be read.
pub async fn blob(response: &web_sys::Response) -> Option<web_sys::Blob> {
    let promise = response.blob().ok()?;
    wasm_bindgen_futures::JsFuture::from(promise).await.ok()?.dyn_into().ok()
}
