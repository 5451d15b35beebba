//! The end-to-end suite: real Chromium with dist/ loaded, fixture sites and a scripted LLM.
//! One binary with a module per area, so the harness and its dependencies link once.

mod actions;
mod agent;
mod annotation;
mod annotation_drafts;
mod annotation_finetune;
mod annotation_quality;
mod annotation_sync;
mod annotation_teams;
mod annotation_work;
mod extension;
mod hands;
mod jobs;
mod mcp;
mod mcp_host;
mod mcp_server;
mod page_state;
mod page_text;
mod providers;
mod record_to_replay;
mod recording;
mod side_panel;
mod studio;
mod support;
mod vertical_slice;
mod workflows;
