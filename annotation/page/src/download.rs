//! Files the page offers for download: the exports the transfer module builds, the team's
//! audit log.

use wasm_bindgen::JsCast;

/// Hands `blob` to the browser's download as `file_name`, as if a link to it were clicked.
pub fn save(blob: &web_sys::Blob, file_name: &str) -> Result<(), String> {
    let url = web_sys::Url::create_object_url_with_blob(blob)
        .map_err(|e| format!("could not offer the file: {e:?}"))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
    let link: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .dyn_into()
        .map_err(|_| "not a link")?;
    link.set_href(&url);
    link.set_download(file_name);
    link.click();
    // The download has its own reference; ours can go once the click is handled.
    let revoke = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    }
    Ok(())
}
