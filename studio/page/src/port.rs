//! The Studio's link to the background worker: a `chrome.runtime` port, as the side panel
//! has. The only module here that knows `chrome.*`.

use js_sys::{Object, Reflect};
use protocol::{PANEL_PORT, PanelRequest, WorkerEvent};
use serde::Serialize;
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
}

/// An open port; dropping it drops its listeners.
pub struct WorkerPort {
    port: Port,
    _on_message: Closure<dyn FnMut(JsValue)>,
    _on_disconnect: Closure<dyn FnMut(JsValue)>,
}

impl WorkerPort {
    pub fn connect(
        on_event: impl Fn(WorkerEvent) + 'static,
        on_lost: impl Fn() + 'static,
    ) -> Option<Self> {
        let info = Object::new();
        let _ = Reflect::set(&info, &"name".into(), &PANEL_PORT.into());
        let port = runtime_connect(&info).ok()?;
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| {
            match serde_wasm_bindgen::from_value::<WorkerEvent>(message) {
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

    pub fn send(&self, request: &PanelRequest) -> bool {
        let value = request
            .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .unwrap_or(JsValue::NULL);
        self.port.post_message(&value).is_ok()
    }
}
