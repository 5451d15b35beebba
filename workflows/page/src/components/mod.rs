//! One component per file: each renders its props and emits [`crate::state::Action`]s.

pub mod app;
pub mod list_section;
pub mod notice_bar;
pub mod param_row;
pub mod params_editor;
pub mod problem_list;
pub mod recording_list;
pub mod recording_row;
pub mod replay_form;
pub mod replay_status;
pub mod step_row;
pub mod subtask_editor;
pub mod version_bar;
pub mod workflow_editor;
pub mod workflow_list;

/// The messages of `problems`, for showing beside a field.
pub fn field_problems(problems: &[&workflow_format::schema::Problem]) -> yew::Html {
    use yew::html;
    problems
        .iter()
        .map(|p| {
            html! {
                <p class="problem" data-testid="field-problem" data-path={p.path.clone()}>{ p.message.clone() }</p>
            }
        })
        .collect()
}
