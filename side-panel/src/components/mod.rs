//! One component per file, as in yew's `function_todomvc`.

pub mod app;
pub mod command_bar;
pub mod state_view;
pub mod status_bar;
pub mod title_probe;
