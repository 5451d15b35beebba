//! Bindings to the few `chrome.*` and worker-global functions the shell uses, and the
//! [`Cdp`] implementation over `chrome.debugger`.

use agent_engine::actions::TabError;
use agent_engine::cdp::{Cdp, CdpError};
use js_sys::{Object, Promise, Reflect};
use protocol::TabId;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

pub use engine_web::{PerformanceClock, delay, error_message, now_ms, random_uuid};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = attach, catch)]
    fn debugger_attach(target: &JsValue, version: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = detach, catch)]
    fn debugger_detach(target: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = sendCommand, catch)]
    fn debugger_send(target: &JsValue, method: &str, params: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = getTargets, catch)]
    fn debugger_targets() -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create, catch)]
    fn tabs_create(properties: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update, catch)]
    fn tabs_update(tab: TabId, properties: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = remove, catch)]
    fn tabs_remove(tab: TabId) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query, catch)]
    fn tabs_query(query: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "declarativeNetRequest"], js_name = updateSessionRules, catch)]
    fn dnr_update_session_rules(options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = setInterval)]
    pub fn set_interval(callback: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearInterval)]
    pub fn clear_interval(interval: &JsValue);

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getPlatformInfo, catch)]
    fn platform_info() -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_namespace = console, js_name = info)]
    pub fn log(message: &str);

    /// A `chrome.runtime.Port`.
    #[derive(Clone)]
    pub type Port;
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method)]
    pub fn disconnect(this: &Port);

    /// `chrome.runtime.connectNative(host)` with the port's listeners registered, by
    /// `extension/background.js` (Rust registers no `chrome.*` listener itself).
    #[wasm_bindgen(js_name = alphascoutConnectMcp, catch)]
    pub fn connect_mcp(host: &str) -> Result<Port, JsValue>;
}

/// An extension API call that does nothing but tell Chrome the worker is busy.
pub async fn ping() {
    let _ = settle_js(platform_info()).await;
}

/// Converts to a JS value with plain objects (not `Map`s), as `postMessage` expects, by the
/// same JSON text path as stored records.
pub fn to_js<T: Serialize>(value: &T) -> JsValue {
    capture_db::encode(value).unwrap_or(JsValue::NULL)
}

impl Port {
    /// Posts `event`; a port that disconnected meanwhile is not an error worth raising.
    pub fn post<T: Serialize>(&self, event: &T) {
        if let Err(error) = self.post_message(&to_js(event)) {
            log(&format!("port closed before the answer: {}", error_message(&error)));
        }
    }
}

/// Tabs through `chrome.tabs` (no "tabs" permission needed to create, focus or close) and
/// `chrome.debugger.getTargets` (titles and URLs under the "debugger" permission).
pub struct ChromeTabs;

fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (key, value) in entries {
        let _ = Reflect::set(&object, &(*key).into(), value);
    }
    object.into()
}

/// Awaits a `chrome.*` promise; a throw or rejection becomes its message.
async fn settle_js(call: Result<Promise, JsValue>) -> Result<JsValue, String> {
    let promise = call.map_err(|e| error_message(&e))?;
    JsFuture::from(promise).await.map_err(|e| error_message(&e))
}

/// The id of every tab (no `tabs` permission needed for ids); `None` when Chrome cannot say.
async fn tab_list() -> Option<Vec<TabId>> {
    let tabs = settle_js(tabs_query(&Object::new().into())).await.ok()?;
    let tabs: Vec<Value> = capture_db::decode(tabs).ok()?;
    Some(tabs.iter().filter_map(|t| t["id"].as_i64()).map(|id| id as TabId).collect())
}

/// The id of every tab; none when Chrome cannot say.
pub async fn tab_ids() -> Vec<TabId> {
    tab_list().await.unwrap_or_default()
}

/// Whether `tab` is closed: a job that failed in it ended because it closed, even when its
/// own step noticed before the tab listener did. `false` when Chrome cannot say.
pub async fn tab_is_gone(tab: TabId) -> bool {
    tab_list().await.is_some_and(|tabs| !tabs.contains(&tab))
}

/// The session rule that holds new tabs' page loads (see `new_tabs`).
const HOLD_RULE: u32 = 1;

/// Blocks page loads (main frames) in every tab but `free`, until released.
pub async fn hold_page_loads(free: &[TabId]) -> Result<(), String> {
    let rule = serde_json::json!({
        "removeRuleIds": [HOLD_RULE],
        "addRules": [{
            "id": HOLD_RULE,
            "priority": 1,
            "action": {"type": "block"},
            "condition": {"resourceTypes": ["main_frame"], "excludedTabIds": free},
        }],
    });
    settle_js(dnr_update_session_rules(&to_js(&rule))).await.map(drop)
}

/// Lifts [`hold_page_loads`].
pub async fn release_page_loads() -> Result<(), String> {
    let rule = serde_json::json!({"removeRuleIds": [HOLD_RULE]});
    settle_js(dnr_update_session_rules(&to_js(&rule))).await.map(drop)
}

/// Loads `url` in `tab`, as the person's own navigation.
pub async fn load_in_tab(tab: TabId, url: &str) -> Result<(), String> {
    settle_js(tabs_update(tab, &object(&[("url", url.into())]))).await.map(drop)
}

/// A failed `chrome.tabs` call, telling a tab that is gone from other failures.
fn tab_error(message: String) -> TabError {
    // Chrome's wording for an unknown tab id: "No tab with id: 12."
    if message.starts_with("No tab with id") { TabError::Gone } else { TabError::Failed(message) }
}

impl agent_engine::actions::Tabs for ChromeTabs {
    async fn list(&self) -> Result<Vec<agent_engine::actions::TabInfo>, TabError> {
        let targets = settle_js(debugger_targets()).await.map_err(TabError::Failed)?;
        let targets: Vec<serde_json::Value> =
            capture_db::decode(targets).map_err(TabError::Failed)?;
        Ok(targets
            .iter()
            // Extension pages (this panel among them) are not the agent's to drive.
            .filter(|t| {
                t["type"] == "page"
                    && !t["url"].as_str().unwrap_or_default().starts_with("chrome-extension://")
            })
            .filter_map(|t| {
                Some(agent_engine::actions::TabInfo {
                    id: t["tabId"].as_i64()? as TabId,
                    url: t["url"].as_str().unwrap_or_default().to_owned(),
                    title: t["title"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect())
    }

    async fn open(&self, url: &str) -> Result<TabId, TabError> {
        let created =
            settle_js(tabs_create(&object(&[("url", url.into())]))).await.map_err(tab_error)?;
        Reflect::get(&created, &"id".into())
            .ok()
            .and_then(|id| id.as_f64())
            .map(|id| id as TabId)
            .ok_or_else(|| TabError::Failed("Chrome did not say which tab it opened".into()))
    }

    async fn activate(&self, tab: TabId) -> Result<(), TabError> {
        let update = tabs_update(tab, &object(&[("active", true.into())]));
        settle_js(update).await.map(drop).map_err(tab_error)
    }

    async fn close(&self, tab: TabId) -> Result<(), TabError> {
        settle_js(tabs_remove(tab)).await.map(drop).map_err(tab_error)
    }
}

/// `chrome.debugger`, one debuggee per tab.
pub struct ChromeDebugger;

/// A `chrome.debugger` target: the tab, or one of its flattened child sessions.
fn debuggee(tab: TabId, session: Option<&str>) -> JsValue {
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    if let Some(session) = session {
        let _ = Reflect::set(&target, &"sessionId".into(), &session.into());
    }
    target.into()
}

async fn settle(call: Result<Promise, JsValue>) -> Result<JsValue, CdpError> {
    settle_js(call).await.map_err(|message| CdpError::from_chrome_message(&message))
}

impl Cdp for ChromeDebugger {
    async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
        settle(debugger_attach(&debuggee(tab, None), "1.3")).await.map(drop)
    }

    async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
        settle(debugger_detach(&debuggee(tab, None))).await.map(drop)
    }

    async fn send(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let reply = settle(debugger_send(&debuggee(tab, session), method, &to_js(&params))).await?;
        capture_db::decode(reply).map_err(|e| CdpError::Protocol {
            detail: format!("unreadable reply to {method}: {e}"),
        })
    }
}
