//! An extension page's link to the background worker: a `chrome.runtime` port carrying
//! requests out and events in, `protocol::PanelRequest`s and `protocol::WorkerEvent`s or a
//! narrower pair of the same wire (the annotation page's drafts: a page compiles a
//! deserializer only for what it reads). The side panel, the Prompt Studio, the Workflows
//! page and the annotation page talk to the worker through it; it knows `chrome.runtime` and
//! nothing of what the pages do.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Reflect};
use protocol::PANEL_PORT;
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    type Port;
    type Event;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connect, catch)]
    fn runtime_connect(info: &JsValue) -> Result<Port, JsValue>;
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    fn on_message(this: &Port) -> Event;
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    fn on_disconnect(this: &Port) -> Event;
    #[wasm_bindgen(method, js_name = addListener)]
    fn add_listener(this: &Event, listener: &JsValue);

    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &JsValue, ms: i32) -> JsValue;
}

/// An open port. Dropping it drops the listeners' closures, so keep it as long as the page.
pub struct WorkerPort {
    port: Port,
    _on_message: Closure<dyn FnMut(JsValue)>,
    _on_disconnect: Closure<dyn FnMut(JsValue)>,
}

impl WorkerPort {
    /// Connects and calls `on_event` for every event, `on_lost` once if the port closes.
    /// `None` when the extension can no longer connect (it was reloaded or removed).
    pub fn connect<E: DeserializeOwned>(
        on_event: impl Fn(E) + 'static,
        on_lost: impl Fn() + 'static,
    ) -> Option<WorkerPort> {
        let info = Object::new();
        let _ = Reflect::set(&info, &"name".into(), &PANEL_PORT.into());
        let port = runtime_connect(&info).ok()?;
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| {
            // Through JSON text and a `Value`: one deserializer for every page type, where
            // reading the JS object directly compiled a second copy of every Deserialize.
            let text = js_sys::JSON::stringify(&message).ok().and_then(|t| t.as_string());
            match lean::read_json::<E>(text.as_deref().unwrap_or("null")) {
                Ok(event) => on_event(event),
                Err(error) => {
                    web_sys::console::warn_1(&format!("unreadable worker event: {error}").into())
                }
            }
        });
        let on_disconnect = Closure::<dyn FnMut(JsValue)>::new(move |_| on_lost());
        port.on_message().add_listener(on_message.as_ref());
        port.on_disconnect().add_listener(on_disconnect.as_ref());
        Some(WorkerPort { port, _on_message: on_message, _on_disconnect: on_disconnect })
    }

    /// Posts a request; returns false if the port is already closed.
    pub fn send(&self, request: &impl Serialize) -> bool {
        let value = serde_json::to_string(request)
            .ok()
            .and_then(|text| js_sys::JSON::parse(&text).ok())
            .unwrap_or(JsValue::NULL);
        self.port.post_message(&value).is_ok()
    }
}

/// A page's port that connects again after it closes (Chrome stops an idle worker, and
/// connecting starts it again). Clones share the one port.
#[derive(Clone, Default)]
pub struct Link(Rc<RefCell<Option<WorkerPort>>>);

impl Link {
    /// Connects now and again `retry_ms` after each close; `on_link` hears `true` on each
    /// connection and `false` on each close. While the extension cannot be reached, the link
    /// stays closed.
    pub fn keep_connected<E: DeserializeOwned + 'static>(
        &self,
        retry_ms: i32,
        on_event: Rc<dyn Fn(E)>,
        on_link: Rc<dyn Fn(bool)>,
    ) {
        let link = self.clone();
        let events = on_event.clone();
        let on_lost = {
            let on_link = on_link.clone();
            move || {
                link.0.borrow_mut().take();
                on_link(false);
                let (link, on_event, on_link) = (link.clone(), on_event.clone(), on_link.clone());
                let again = Closure::once_into_js(move || {
                    link.keep_connected(retry_ms, on_event, on_link);
                });
                set_timeout(&again, retry_ms);
            }
        };
        let port = WorkerPort::connect(move |event| events(event), on_lost);
        let connected = port.is_some();
        *self.0.borrow_mut() = port;
        if connected {
            on_link(true);
        }
    }

    /// Posts a request; false when the port is closed.
    pub fn send(&self, request: &impl Serialize) -> bool {
        self.0.borrow().as_ref().is_some_and(|port| port.send(request))
    }
}

/// Whether this page still belongs to a live extension. A port also closes when Chrome stops
/// an idle worker, and then connecting again starts it; after the extension is reloaded or
/// updated, `chrome.runtime.id` is gone and only reopening the page helps.
pub fn extension_alive() -> bool {
    let get = |object: &JsValue, key: &str| Reflect::get(object, &key.into()).ok();
    get(&js_sys::global(), "chrome")
        .and_then(|chrome| get(&chrome, "runtime"))
        .and_then(|runtime| get(&runtime, "id"))
        .is_some_and(|id| id.is_string())
}

/// `iso` in the reader's own locale and time zone ("2 Jan 2025, 14:03"), or as it is when
/// it is not a date.
pub fn local_time(iso: &str) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_str(iso));
    if date.get_time().is_nan() {
        return iso.to_owned();
    }
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"dateStyle".into(), &"medium".into());
    let _ = js_sys::Reflect::set(&options, &"timeStyle".into(), &"short".into());
    js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &options)
        .format()
        .call1(&wasm_bindgen::JsValue::UNDEFINED, &date)
        .ok()
        .and_then(|text| text.as_string())
        .unwrap_or_else(|| iso.to_owned())
}
