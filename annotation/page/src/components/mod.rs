//! One component per file. `app` owns the state and runs the effect layer; the rest render
//! slices of it and emit actions, never doing IO themselves.

pub mod analytics_view;
pub mod app;
pub mod checks_panel;
pub mod collection_panel;
pub mod diff_view;
pub mod draft_panel;
pub mod export_dialog;
pub mod finetune_dialog;
pub mod help_overlay;
pub mod history_panel;
pub mod issues_panel;
pub mod json_panel;
pub mod leave_dialog;
pub mod navigator_notes;
pub mod notice_bar;
pub mod review_panel;
pub mod run_filters;
pub mod run_header;
pub mod run_row;
pub mod run_view;
pub mod runs_list;
pub mod screenshot_view;
pub mod step_editor;
pub mod step_list;
pub mod step_row;
pub mod step_telemetry;
pub mod subtasks_panel;
pub mod sync_panel;
pub mod templates_panel;
pub mod thought_field;
pub mod tool_panel;
pub mod user_bar;
pub mod virtual_rows;
