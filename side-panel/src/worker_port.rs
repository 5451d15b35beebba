//! The panel's link to the background worker: the `chrome.runtime` port (`page-port`'s,
//! carrying `PanelRequest`s out and `WorkerEvent`s in), the tab the panel drives, and
//! bringing a tab to the front. The only module here that knows `chrome.*`.

use js_sys::{Object, Promise, Reflect};
use protocol::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// The port itself is `page-port`'s, shared with the other extension pages.
pub use page_port::{WorkerPort, extension_alive};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update)]
    fn tabs_update(tab: TabId, properties: &JsValue) -> Promise;
}

/// The tab this panel drives: `?tabId=N` when opened as a tab (tests, benchmarks, bookmarks),
/// otherwise the active tab of the window the side panel belongs to.
pub async fn target_tab() -> Option<TabId> {
    let search = web_sys::window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    if let Some(tab) = params.get("tabId") {
        return tab.parse().ok();
    }
    let query = Object::new();
    let _ = Reflect::set(&query, &"active".into(), &true.into());
    let _ = Reflect::set(&query, &"currentWindow".into(), &true.into());
    let tabs = JsFuture::from(tabs_query(&query)).await.ok()?;
    let first = Reflect::get(&tabs, &0.into()).ok()?;
    Reflect::get(&first, &"id".into()).ok()?.as_f64().map(|id| id as TabId)
}

/// Makes `tab` the active tab of its window, where its own panel shows its job. Needs no
/// permission; a tab closed meanwhile is nothing to report.
pub fn show_tab(tab: TabId) {
    let properties = Object::new();
    let _ = Reflect::set(&properties, &"active".into(), &true.into());
    let update = tabs_update(tab, &properties);
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(update).await;
    });
}
