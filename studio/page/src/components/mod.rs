//! One component per file: each renders props and emits actions.

pub mod app;
pub mod compare_panel;
pub mod file_editor;
pub mod json_view;
pub mod pipeline_diagram;
pub mod pipeline_run;
pub mod pipelines_view;
pub mod preview_panel;
pub mod prompt_list;
pub mod run_panel;
pub mod telemetry_view;
pub mod trace_detail;
pub mod traces_view;
pub mod versions_panel;

use yew::prelude::*;

use crate::state::{Action, Studio};

/// What every component gets: the state and a way to change it.
#[derive(Properties, Clone, PartialEq)]
pub struct StudioProps {
    pub state: std::rc::Rc<Studio>,
    pub dispatch: UseReducerDispatcher<Studio>,
}

/// A callback that reads an input's, textarea's or select's value.
pub fn on_value(
    dispatch: &UseReducerDispatcher<Studio>,
    make: impl Fn(String) -> Action + 'static,
) -> Callback<Event> {
    let dispatch = dispatch.clone();
    Callback::from(move |e: Event| {
        dispatch.dispatch(make(page_kit::value(&e)));
    })
}

/// As [`on_value`], on every keystroke.
pub fn on_input(
    dispatch: &UseReducerDispatcher<Studio>,
    make: impl Fn(String) -> Action + 'static,
) -> Callback<InputEvent> {
    on_value(dispatch, make).reform(Event::from)
}
