//! The page's link to the worker: the port (`page-port`'s), for reflecting and replaying,
//! and the open tabs a replay can run in. The only module here that knows `chrome.*`.

use js_sys::{Object, Promise, Reflect};
use protocol::TabId;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::state::TabChoice;

/// The port itself is `page-port`'s, shared with the other extension pages.
pub use page_port::WorkerPort;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = getCurrent)]
    fn tabs_get_current() -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update)]
    fn tabs_update(tab: TabId, properties: &JsValue) -> Promise;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create)]
    fn tabs_create(properties: &JsValue) -> Promise;
}

/// The open tabs but this page's. Without the `tabs` permission (which the extension does
/// not ask for) Chrome gives no title or URL, so a tab is named by its id and window.
pub async fn web_tabs() -> Vec<TabChoice> {
    let get = |tab: &JsValue, key: &str| Reflect::get(tab, &key.into()).ok();
    let own = JsFuture::from(tabs_get_current())
        .await
        .ok()
        .and_then(|tab| get(&tab, "id")?.as_f64())
        .map(|id| id as TabId);
    let Ok(tabs) = JsFuture::from(tabs_query(&Object::new())).await else { return Vec::new() };
    js_sys::Array::from(&tabs)
        .iter()
        .filter_map(|tab| {
            let id = get(&tab, "id")?.as_f64()? as TabId;
            let url = get(&tab, "url").and_then(|u| u.as_string()).unwrap_or_default();
            let title = get(&tab, "title").and_then(|t| t.as_string()).unwrap_or_else(|| {
                let window = get(&tab, "windowId").and_then(|w| w.as_f64()).unwrap_or_default();
                let active = get(&tab, "active").and_then(|a| a.as_bool()).unwrap_or_default();
                format!("Tab {id} in window {window}{}", if active { " (active)" } else { "" })
            });
            let web = url.is_empty() || url.starts_with("http");
            (Some(id) != own && web).then_some(TabChoice { id, title, url })
        })
        .collect()
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
