//! A keyboard shortcut for the whole panel (Alt+P: Pause & Steer), on `window`, so it works
//! wherever the focus is. Dropping it removes the listener.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::KeyboardEvent;

pub struct Shortcut {
    listener: Closure<dyn FnMut(KeyboardEvent)>,
}

impl Shortcut {
    /// Calls `action` on Alt + the key with `code` (e.g. `KeyP`, layout-independent, so
    /// Option+P on a Mac works too).
    pub fn alt(code: &'static str, action: impl Fn() + 'static) -> Option<Shortcut> {
        let listener = Closure::<dyn FnMut(KeyboardEvent)>::new(move |event: KeyboardEvent| {
            if event.alt_key() && !event.ctrl_key() && !event.meta_key() && event.code() == code {
                event.prevent_default();
                action();
            }
        });
        web_sys::window()?
            .add_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref())
            .ok()?;
        Some(Shortcut { listener })
    }
}

impl Drop for Shortcut {
    fn drop(&mut self) {
        if let Some(window) = web_sys::window() {
            let _ = window.remove_event_listener_with_callback(
                "keydown",
                self.listener.as_ref().unchecked_ref(),
            );
        }
    }
}
