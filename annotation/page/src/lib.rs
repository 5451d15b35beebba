//! The annotation page (`annotation.html`, seed `000_…`): annotators review and correct the
//! runs the agent captured, reviewers suggest and approve, and everyone exports.
//!
//! Decisions live in `annotation-core` and in the pure transitions of [`state`] (tested
//! natively); [`db`] is the IndexedDB shell, [`download`] builds export files in the page,
//! and each component is one file under [`components`].

pub mod components;
pub mod db;
pub mod download;
pub mod http;
pub mod state;
pub mod sync;
pub mod util;

/// Entry point called by the wasm-bindgen glue when `annotation.js` instantiates the module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn main() {
    yew::Renderer::<components::app::App>::new().render();
}
