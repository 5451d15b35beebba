//! The Workflows page (`workflows.html`, issue 14): the recordings and the workflows
//! reflected from them; one workflow's parameters, subtasks, dependencies and steps edited
//! with problems shown live; every save a version (rollback is a save of an old one);
//! export and import as one JSON file; and a form that starts a replay.
//!
//! Decisions are the pure transitions of [`state`] (tested natively), which queue the IO
//! they need as effects; [`effects`] carries them out over [`db`] (IndexedDB, shared with
//! the worker through `capture-db`) and [`port`] (the worker, for reflecting and replaying).
//! Each component is one file under [`components`].

pub mod components;
pub mod db;
pub mod effects;
pub mod port;
pub mod state;

/// Entry point called by the wasm-bindgen glue when `workflows.js` instantiates the module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn main() {
    yew::Renderer::<components::app::App>::new().render();
}
