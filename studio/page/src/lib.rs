//! The Prompt Studio (`studio.html`, issue 15): every prompt file bundled and edited side
//! by side, edits checked as they are typed and saved as overrides, previews with a
//! captured step's variables, runs through the worker with violations and repairs shown,
//! comparisons of variants, and the stored traces with repair telemetry.
//!
//! Decisions live in `studio-core` and in the pure transitions of [`state`] (tested
//! natively); [`effects`] carries out the IO they ask for over `page-port` (the worker) and
//! [`db`] (IndexedDB). Each component is one file under [`components`].

pub mod components;
pub mod db;
pub mod effects;
pub mod state;

/// Entry point called by the wasm-bindgen glue when `studio.js` instantiates the module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn main() {
    yew::Renderer::<components::app::App>::new().render();
}
