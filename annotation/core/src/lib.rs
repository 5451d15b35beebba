//! The annotation page's functional core (seed `000_…`, PromptGrid Studio).
//!
//! Plain Rust over the records the agent captures (`agent-engine::run`), tested natively.
//! It knows nothing of the browser: no `web_sys`, no IndexedDB, no `chrome.*`. The page
//! (`annotation/page`) stores, renders and downloads; everything it decides comes from here.
//!
//! - [`record`]: runs and steps as the worker stores them, read leniently and written back
//!   without losing fields this crate does not know.
//! - [`roles`]: roles, what each may do, and the review status flow (mirroring the sync
//!   server, which is the real judge).
//! - [`review`]: comments, suggestions (tracked changes) and their resolution.
//! - [`issues`]: the Issue Tracker: issues flagged on steps, resolved, counted per run.
//! - [`history`]: versions, what changed between two, word diffs, rollback.
//! - [`checklist`]: the live structure checklist (seed §5.D).
//! - [`collections`]: named run collections with a description and metadata (seed §7.D).
//! - [`patterns`]: missing-pattern detection with one-click fixes (seed §7.B).
//! - [`escape`]: JSON bracket escaping with validation before and after (seed §5.B).
//! - [`templates`]: the template files (seed §5.C), placeholders, filling, starred steps.
//! - [`lint`]: issues found in a thought's text, applying a fix here or in every step.
//! - [`spelling`]: offline spelling over a Hunspell dictionary.
//! - [`grammar`]: a LanguageTool-compatible endpoint's request and answer.
//! - [`quality`]: per-step and per-run quality scores (seed §7.H).
//! - [`telemetry`]: the run's log of decisions, pauses and questions beside its steps.
//! - [`metrics`]: per-run metrics (seed §7.H): time spent annotating, review iterations, issues.
//! - [`metrics_sync`]: a run's quality and time spent reported to the team's server, once each.
//! - [`query`]: search and filters over the runs list.
//! - [`export`]: JSON, JSONL, CSV, Markdown and ZIP, in chunks so a page can stream them.
//! - [`finetune`]: chat-format training data for the Navigator, a step an example, with a card.
//! - [`anonymize`]: names, addresses, phone numbers, URL tokens, typed text and times
//!   replaced or removed before an anonymized export is written.
//! - [`sync`]: the queue, bodies, answers, conflicts and state of syncing with the server.
//! - [`team`]: annotation for teams (issue 29): the project, queues and assignments,
//!   overlap versions, agreement and merges, notifications, the audit log, webhooks, figures.
//! - [`import`]: validated, all-or-nothing import with a reason for every rejected record.

pub mod anonymize;
pub mod checklist;
pub mod collections;
pub mod drafting;
pub mod escape;
pub mod export;
pub mod finetune;
pub mod grammar;
pub mod history;
pub mod import;
pub mod issues;
pub mod lint;
pub mod metrics;
pub mod metrics_sync;
pub mod patterns;
pub mod quality;
pub mod query;
pub mod record;
pub mod review;
pub mod roles;
pub mod spelling;
pub mod sync;
pub mod team;
pub mod telemetry;
pub mod templates;
#[cfg(test)]
mod test_support;
pub mod traces;
