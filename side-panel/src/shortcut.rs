//! A keyboard shortcut for the whole panel (Alt+P: Pause & Steer), on `window`, so it works
//! wherever the focus is. Dropping it removes the listener.

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;

pub struct Shortcut {
    _listener: EventListener,
}

impl Shortcut {
    /// Calls `action` on Alt + the key with `code` (e.g. `KeyP`, layout-independent, so
    /// Option+P on a Mac works too).
    pub fn alt(code: &'static str, action: impl Fn() + 'static) -> Option<Shortcut> {
        let window = web_sys::window()?;
        let listener = EventListener::new(&window, "keydown", move |event| {
            let Some(event) = event.dyn_ref::<KeyboardEvent>() else { return };
            if event.alt_key() && !event.ctrl_key() && !event.meta_key() && event.code() == code {
                event.prevent_default();
                action();
            }
        });
        Some(Shortcut { _listener: listener })
    }

    /// Calls `action` on Ctrl (or ⌘) + the key with `code` (Ctrl+I while recording).
    pub fn ctrl(code: &'static str, action: impl Fn() + 'static) -> Option<Shortcut> {
        let window = web_sys::window()?;
        let listener = EventListener::new(&window, "keydown", move |event| {
            let Some(event) = event.dyn_ref::<KeyboardEvent>() else { return };
            if (event.ctrl_key() || event.meta_key()) && !event.alt_key() && event.code() == code {
                event.prevent_default();
                action();
            }
        });
        Some(Shortcut { _listener: listener })
    }
}
