//! The page's link to the worker: the port (`page-port`'s), for reflecting, replaying and
//! listing the open tabs, and the tab calls of its own. The only module here that knows
//! `chrome.*`.

use js_sys::{Object, Promise, Reflect};
use protocol::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// The port itself is `page-port`'s, shared with the other extension pages.
pub use page_port::Link;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update)]
    fn tabs_update(tab: TabId, properties: &JsValue) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create)]
    fn tabs_create(properties: &JsValue) -> Promise;
}

/// Opens `url` in a new tab and gives its id.
pub async fn open_tab(url: &str) -> Result<TabId, String> {
    let properties = Object::new();
    let _ = Reflect::set(&properties, &"url".into(), &url.into());
    let tab = JsFuture::from(tabs_create(&properties))
        .await
        .map_err(|e| format!("The tab could not be opened: {e:?}"))?;
    Reflect::get(&tab, &"id".into())
        .ok()
        .and_then(|id| id.as_f64())
        .map(|id| id as TabId)
        .ok_or_else(|| "The new tab has no id.".to_owned())
}

/// `?tabId=N`: the tab the side panel opened this page for.
pub fn tab_from_url() -> Option<TabId> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get("tabId")?.parse().ok()
}

/// Brings `tab` to the front: the person watches the replay there, and Chrome may not paint
/// a page in a background tab (its steps would be recorded without screenshots).
pub async fn show_tab(tab: TabId) {
    let properties = Object::new();
    let _ = Reflect::set(&properties, &"active".into(), &true.into());
    let _ = JsFuture::from(tabs_update(tab, &properties)).await;
}
