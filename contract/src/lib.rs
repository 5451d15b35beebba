//! The one contract shared by the agent engine, the annotation page (`annotation-core`) and
//! the sync server: each fact that more than one of them writes or reads lives here once.
//!
//! - [`status`]: the review workflow's [`ReviewStatus`].
//! - [`roles`]: who a person is ([`Role`]) and the status transitions each may make.
//! - [`agreement`]: how far annotators of the same run agree (token F1, actions, weeks).
//! - [`passage`]: a range of a thought a comment or suggestion points at, found again
//!   after edits.
//! - [`action`]: the Navigator's [`Action`] union, and the shape of each variant on the wire.
//! - [`action_kind`]: the one vocabulary of step kinds ([`ActionKind`]) that recordings,
//!   workflows, replays and captured runs share.
//! - [`issue`]: a problem flagged on a step ([`Issue`]), with its type, severity and status.
//! - [`problem`]: what a checker finds wrong with a document ([`Problem`]), at a JSON Pointer.
//! - [`time`]: ISO 8601 UTC timestamps as every record stores them.
//! - [`digest`]: lowercase hex and the SHA-256 content address of screenshots.
//! - [`url`]: the two percent-encodings in use, form and component.
//! - [`limits`]: the sync server's request limits its clients split their queue by.
//! - [`telemetry`]: a run's log of decisions, pauses and questions, and spend per role.
//!
//! It knows serde and nothing else of its users: no browser, no CDP, no storage, no HTTP
//! server. Whatever is here must build for wasm32 and natively alike.

pub mod action;
pub mod action_kind;
pub mod agreement;
pub mod digest;
pub mod issue;
pub mod limits;
pub mod passage;
pub mod problem;
pub mod roles;
pub mod status;
pub mod telemetry;
pub mod time;
pub mod url;

pub use action::{Action, TabId};
pub use action_kind::ActionKind;
pub use issue::{Issue, IssueKind, IssueStatus, Severity};
pub use problem::Problem;
pub use roles::Role;
pub use status::ReviewStatus;
