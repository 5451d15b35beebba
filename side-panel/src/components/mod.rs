//! One component per file, as in yew's `function_todomvc`. Components are pure views of
//! slices of [`crate::state::PanelState`]; they report what the person does through
//! callbacks, and [`app::App`] turns those into reducer actions.

pub mod app;
pub mod chat_log;
pub mod composer;
pub mod connection_test;
pub mod driven_banner;
pub mod favourite_editor;
pub mod field_errors;
pub mod final_answer;
pub mod history_view;
pub mod job_row;
pub mod jobs_view;
pub mod list_status;
pub mod markdown;
pub mod mcp_clients;
pub mod mcp_servers;
pub mod message;
pub mod model_fields;
pub mod paused_banner;
pub mod quick_start;
pub mod record_bar;
pub mod record_name;
pub mod record_offer;
pub mod run_info;
pub mod session_row;
pub mod settings_field;
pub mod settings_view;
pub mod state_view;
pub mod status_bar;
pub mod status_pill;
pub mod step_card;
pub mod telemetry_view;
pub mod title_probe;
pub mod tools;
pub mod variant_select;
pub mod view_head;
pub mod workflow_menu;
