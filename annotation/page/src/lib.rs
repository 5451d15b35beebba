//! The annotation page (`annotation.html`, seed `000_…`): annotators review and correct the
//! runs the agent captured, reviewers suggest and approve, and everyone exports.
//!
//! Decisions live in `annotation-core` and in the pure transitions of [`state`] (tested
//! natively), which queue the IO they need as effects; [`effects`] carries them out over
//! [`db`] (the IndexedDB shell, over `annotation-store`'s reads and shared writes), [`sync`]
//! (`annotation-sync`), [`http`] and [`download`] (saving the files the modules build). What
//! loads later runs in the page's own wasm modules ([`modules`]): the spell checker, and the
//! transfer module with the exports, import checks and a sync round's push and pull. Each
//! component is one file under [`components`]: it renders props and emits actions.

pub mod components;
pub mod db;
pub mod download;
pub mod effects;
pub use annotation_store::http;
pub mod language;
pub mod modules;
pub mod spelling;
pub mod state;
pub use annotation_sync as sync;
pub mod util;

/// Entry point called by the wasm-bindgen glue when `annotation.js` instantiates the module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn main() {
    yew::Renderer::<components::app::App>::new().render();
}
