//! One component per file, as in yew's `function_todomvc`.

pub mod app;
pub mod status_bar;
pub mod title_probe;
