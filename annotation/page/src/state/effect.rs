//! The IO the reducer asks for, as data. The reducer queues effects in `Studio::effects`;
//! `crate::effects` carries each out once and reports what happened back as actions. So
//! what to do is decided (and tested) here, and only how to do it is left to the browser.

use annotation_core::export::{Format, Options};
use annotation_core::history::Version;
use annotation_core::record::{ReviewStatus, Run, Step, Thought};
use annotation_core::review::{Comment, Suggestion};
use annotation_core::roles::User;
use annotation_core::sync::{Conflict, Pending, SyncSettings};
use annotation_core::templates::Template;

use super::drafts::StoredDraft;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Show the runs list: what is stored at once, then the check against the runs.
    LoadList,
    /// Open a run (review mode when `qa`), putting it in the URL; with its unsaved edits if
    /// any are stored. A run not stored here is asked of the sync server, when there is one.
    OpenRun {
        run_id: String,
        qa: bool,
        user: User,
        sync: SyncSettings,
    },
    /// Take the run out of the URL (back to the list by the page's own link).
    ClearQuery,
    /// Put this query in the URL (the run stays on screen while a leave is decided).
    SetQuery(String),
    /// Store the open run's unsaved edits (stamped with the time).
    PutDraft(Box<StoredDraft>),
    /// Forget a run's stored unsaved edits.
    DeleteDraft(String),
    /// Store the editor's drafts as one version; `before` is the run as saved.
    Save {
        before: Box<(Run, Vec<Step>)>,
        latest: Option<Box<Version>>,
        run: Box<Run>,
        steps: Vec<Step>,
        author: String,
        then_select: Option<usize>,
        /// Grammar issues found in the text being saved, by step index: they count in the
        /// run's quality beside the spelling the effect layer checks.
        grammar: Vec<(u32, usize)>,
    },
    /// Store a new version holding `target` again.
    Rollback {
        current: Box<(Run, Vec<Step>)>,
        target: Box<Version>,
        latest: Box<Version>,
        author: String,
    },
    Export {
        ids: Vec<String>,
        filter: String,
        format: Format,
        options: Options,
    },
    /// The fine-tuning export of the runs `ids` (those in the chosen statuses).
    Finetune {
        ids: Vec<String>,
        filter: String,
        options: annotation_core::finetune::Options,
    },
    ImportFile {
        file: web_sys::File,
        user: User,
    },
    /// Import `text`; with `as_copies`, runs whose ids exist here come in under new ids.
    ImportText {
        name: String,
        text: String,
        user: User,
        as_copies: bool,
    },
    /// Batch move, each run a saved version; runs that may not move are named.
    MoveRuns {
        ids: Vec<String>,
        to: ReviewStatus,
        user: User,
        /// With a server set, runs it holds move there in one batch.
        settings: annotation_core::sync::SyncSettings,
    },
    /// Add runs to a named collection, each change a saved version.
    Collect {
        ids: Vec<String>,
        name: String,
        user: User,
    },
    /// Store what is said of a collection.
    PutCollection(annotation_core::collections::Collection),
    /// Note now as when the collection was last exported.
    CollectionExported(String),
    /// Delete a collection (its runs stay); the server's copy goes on the next round.
    DeleteCollection(String),
    /// Store a copy of a run and open it.
    Duplicate {
        run: Box<Run>,
        steps: Vec<Step>,
        user: User,
    },
    PutUser(User),
    /// Store a comment, then reload the run's review.
    PutComment(Comment),
    /// Store a suggestion (new when `sent`), say `notice`, then reload the run's review.
    PutSuggestion {
        suggestion: Box<Suggestion>,
        notice: String,
        sent: bool,
    },
    /// A suggestion the server holds is decided there.
    DecideOnServer {
        suggestion: Box<Suggestion>,
        accept: bool,
        settings: SyncSettings,
        at: String,
    },
    LoadStarred,
    PutTemplate(Box<Template>),
    /// Store an edited starred template.
    SaveTemplate(Box<Template>),
    /// Take a starred template out of the library.
    DeleteTemplate(String),
    /// Ask the grammar server about the step's thoughts.
    CheckGrammar {
        endpoint: String,
        run_id: String,
        step_index: u32,
        thoughts: Vec<(Thought, String)>,
    },
    SaveSettings {
        settings: SyncSettings,
        grammar: String,
    },
    /// Keep my copy of a conflicting record (`mine`) or take the server's.
    ResolveConflict {
        conflict: Box<Conflict>,
        mine: bool,
    },
    /// Drop a queued change the server refused.
    Discard(Box<Pending>),
    /// Ask the worker for a draft of a step's thoughts, adding the step's screenshot (by
    /// its key) and the page state a trace of it kept.
    DraftThoughts {
        input: Box<protocol::drafting::DraftInput>,
        screenshot_key: Option<String>,
        trace_ids: Vec<String>,
    },
    /// A request to the server's team routes (`state/team.rs`).
    Team {
        settings: SyncSettings,
        request: super::team::TeamRequest,
    },
    /// One sync round; `open_run` is the run on screen when it starts.
    SyncRound {
        settings: SyncSettings,
        failures: u32,
        open_run: Option<String>,
    },
}
