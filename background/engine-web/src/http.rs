//! The engine's [`Http`] over the worker's `fetch`, with an `AbortController` for the
//! timeout and for cancellation: dropping the future aborts the request.

use agent_engine::providers::{Http, HttpFailure, HttpRequest, HttpResponse};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, RequestInit, RequestRedirect, Response, WorkerGlobalScope,
};

use crate::error_message;

pub struct FetchHttp;

/// [`FetchHttp`] that does not follow redirects: an MCP server's requests (and its token)
/// go to its configured URL only. A redirect answers with status 0, which the MCP client
/// reports as a redirect.
pub struct NoRedirectHttp;

impl Http for NoRedirectHttp {
    async fn post(
        &self,
        request: &HttpRequest,
        timeout_ms: u32,
    ) -> Result<HttpResponse, HttpFailure> {
        post(request, timeout_ms, RequestRedirect::Manual).await
    }
}

/// Aborts the request when dropped unless it finished.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Http for FetchHttp {
    async fn post(
        &self,
        request: &HttpRequest,
        timeout_ms: u32,
    ) -> Result<HttpResponse, HttpFailure> {
        post(request, timeout_ms, RequestRedirect::Follow).await
    }
}

async fn post(
    request: &HttpRequest,
    timeout_ms: u32,
    redirect: RequestRedirect,
) -> Result<HttpResponse, HttpFailure> {
    let failure = |error: JsValue| HttpFailure::Network(error_message(&error));
    let controller = AbortController::new().map_err(failure)?;
    let headers = Headers::new().map_err(failure)?;
    for (name, value) in &request.headers {
        headers.append(name, value).map_err(failure)?;
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&request.body.to_string()));
    init.set_signal(Some(&controller.signal()));
    init.set_redirect(redirect);
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let timer = {
        let controller = controller.clone();
        let abort = wasm_bindgen::closure::Closure::once_into_js(move || controller.abort());
        scope
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                abort.unchecked_ref(),
                timeout_ms as i32,
            )
            .unwrap_or_default()
    };
    let guard = AbortOnDrop(controller);
    let fetched = JsFuture::from(scope.fetch_with_str_and_init(&request.url, &init)).await;
    let response: Response = match fetched {
        Ok(response) => response.unchecked_into(),
        Err(_) if guard.0.signal().aborted() => return Err(HttpFailure::Timeout),
        Err(error) => return Err(failure(error)),
    };
    let body = match response.text() {
        Ok(text) => JsFuture::from(text).await,
        Err(error) => Err(error),
    };
    scope.clear_timeout_with_handle(timer);
    let body = match body {
        Ok(text) => text.as_string().unwrap_or_default(),
        Err(_) if guard.0.signal().aborted() => return Err(HttpFailure::Timeout),
        Err(error) => return Err(failure(error)),
    };
    std::mem::forget(guard); // finished: nothing left to abort
    let mut kept = Vec::new();
    // An MCP server's session id rides on a header (the server must expose it to CORS).
    for name in ["retry-after", "content-type", "mcp-session-id"] {
        if let Ok(Some(value)) = response.headers().get(name) {
            kept.push((name.to_owned(), value));
        }
    }
    Ok(HttpResponse { status: response.status(), headers: kept, body })
}
