//! The side panel. State changes live in the pure reducer in [`state`] (tested natively);
//! [`worker_port`] is the only module that touches `chrome.*`; each component is one file
//! under [`components`]. [`markdown`] reads agent answers into a tree the `markdown`
//! component renders as nodes (never as HTML).

pub mod components;
pub mod markdown;
pub mod shortcut;
pub mod state;
pub mod worker_port;

/// Entry point called by the wasm-bindgen glue when `side-panel.js` instantiates the module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn main() {
    yew::Renderer::<components::app::App>::new().render();
}
