//! The page's state and its pure transitions. Components render it and emit actions; the
//! transitions decide, and queue the IO they need as [`Effect`]s, which `crate::effects`
//! carries out and reports back as actions.

pub mod drafting;
pub mod drafts;
pub mod editor;
pub mod effect;
pub mod list;
mod queue;
mod review;
mod runs;
mod sync;
pub mod team;

use lean::SortedMap;

use annotation_core::export::{Format, Options};
use annotation_core::history::Version;
use annotation_core::issues::Draft as IssueDraft;
use annotation_core::lint::TextIssue;
use annotation_core::query::RunSummary;
use annotation_core::record::{
    NavigatorNote, ReviewStatus, Run, Step, StepAction, Subtask, Thought,
};
use annotation_core::review::{Comment, CommentKind, Suggestion};
use annotation_core::roles::User;
use annotation_core::sync::{Conflict, Pending, SyncSettings, SyncState};
use annotation_core::templates::Template;
use run_contract::url::component_encode;

use editor::{EditorState, Loaded, Tool};
pub use effect::Effect;
use list::ListState;
pub use sync::{RoundDone, TeamRound};

/// How components hand actions to the reducer.
pub type Dispatch = yew::UseReducerDispatcher<Studio>;

/// The page's URL parameters (seed §3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    pub run_id: Option<String>,
    pub task_id: Option<String>,
    pub qa: bool,
    /// The step to open the run on, by its stored index (the Prompt Studio's links name the
    /// step a trace belongs to); without it, the first step not complete.
    pub step: Option<u32>,
}

impl Route {
    /// Reads `?agentRunId=…&taskId=…&qa=true|false&step=n`; anything else is ignored. `taskId`
    /// names the chat session the run belongs to: with no run it shows that session's runs,
    /// and a run it does not match, or one not found, is said so.
    pub fn parse(query: &str) -> Route {
        let mut route = Route::default();
        for (key, value) in run_contract::url::params(query) {
            match key {
                "agentRunId" if !value.is_empty() => route.run_id = Some(value),
                "taskId" if !value.is_empty() => route.task_id = Some(value),
                "qa" => route.qa = value == "true" || value == "1",
                "step" => route.step = value.parse().ok(),
                _ => {}
            }
        }
        route
    }

    /// The link a runs list row opens `run_id` by (a click opens it in place; a middle click
    /// opens a tab). The id is percent-encoded: an imported one may hold `&`, `#` or quotes.
    pub fn link(run_id: &str) -> String {
        let route = Route { run_id: Some(run_id.to_owned()), ..Route::default() };
        format!("annotation.html{}", route.query())
    }

    pub fn query(&self) -> String {
        match &self.run_id {
            None => String::new(),
            Some(run) => {
                let mut query = format!("?agentRunId={}", component_encode(run));
                if let Some(task) = &self.task_id {
                    query += &format!("&taskId={}", component_encode(task));
                }
                query += if self.qa { "&qa=true" } else { "&qa=false" };
                if let Some(step) = self.step {
                    query += &format!("&step={step}");
                }
                query
            }
        }
    }
}

/// The link to a captured page, `url` (a step's, which an import may have made anything),
/// if it is a web page's: `http:` or `https:` as the browser reads it (ignoring the spaces,
/// control characters, tabs and line breaks it ignores). A `javascript:` or `data:` URL
/// is no link.
pub fn web_link(url: &str) -> Option<&str> {
    let read: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    (read.starts_with("http://") || read.starts_with("https://")).then_some(url)
}

/// An edit applied to every step at once (a fix across all steps).
pub type StepsEdit = Box<dyn FnOnce(&mut [Step])>;

#[derive(Debug, Clone, PartialEq)]
pub enum Screen {
    Loading,
    List,
    Run,
    /// The run in the URL is not stored here.
    Missing(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub ok: bool,
    pub text: String,
}

/// Sync as the page shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncView {
    pub state: SyncState,
    /// Conflicts waiting for a person, each with the local body it would send.
    pub conflicts: Vec<(Conflict, serde_json::Value)>,
    /// Queued changes the server refused, with why.
    pub refused: Vec<(Pending, String)>,
    pub settings: SyncSettings,
    pub open: bool,
    /// Rounds that failed in a row.
    pub failures: u32,
    /// Bumped whenever there is something new to send; a round follows.
    pub kick: u32,
    /// The kick the last round started for: a kick during a round starts another after it.
    pub started: u32,
    pub running: bool,
}

/// Where the person asked to go from a run with unsaved edits.
#[derive(Debug, Clone, PartialEq)]
pub enum Leave {
    List,
    Run { run_id: String, qa: bool },
}

/// The answer to "leave with unsaved edits?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaveChoice {
    /// Save them as a version, then go.
    Save,
    /// Go; they stay as a draft in this browser and come back when the run opens again.
    Keep,
    /// Throw them away, then go.
    Discard,
    Stay,
}

/// An export or import under way.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub label: String,
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Studio {
    pub screen: Screen,
    pub user: User,
    pub list: ListState,
    pub editor: Option<EditorState>,
    pub notice: Option<Notice>,
    pub help: bool,
    pub progress: Option<Progress>,
    /// Import problems to show, one line each.
    pub rejections: Vec<String>,
    pub sync: SyncView,
    /// The LanguageTool-compatible server, empty when grammar checking is off.
    pub grammar: String,
    /// The last storage command number issued, by any editor.
    pub commands: u32,
    /// A refused import that would succeed as copies: (file name, text).
    pub copyable: Option<(String, String)>,
    /// IO asked for and not yet taken by the effect layer, each with a rising number.
    pub effects: Vec<(u32, Effect)>,
    /// The number of the last effect queued.
    pub queued: u32,
    /// Steps starred as templates, for the templates panel.
    pub starred: Vec<Template>,
    pub grammar_check: GrammarCheck,
    /// The leave dialog, open while the person decides.
    pub leaving: Option<Leave>,
    /// Where to go once the save asked for in the leave dialog is stored.
    pub after_save: Option<Leave>,
    /// The run (and mode) the URL asked for, until it opens: a pull that brings it opens it.
    pub wanted: Option<(String, bool)>,
    /// The URL's `taskId`, while the run it came with is open or missing.
    pub task: Option<String>,
    /// The URL's run and `step`, until that run opens on that step.
    pub at_step: Option<(String, u32)>,
    /// What is said of each collection (description, when made and exported).
    pub collections: Vec<annotation_core::collections::Collection>,
    /// The runs list's order (as filtered and sorted) when the open run was opened: "next
    /// run" follows it, so a run that leaves the filter on submit still has a next.
    pub run_queue: Vec<String>,
    /// Submit & next: the next run opens once the submit is stored.
    pub next_after_save: bool,
    /// "Next run" waits for the list (a run opened by its URL).
    pub next_after_load: bool,
    /// The team's side (issue 29): queue, notifications, agreement, admin views.
    pub team: team::TeamState,
}

/// Grammar answers, each counting only while its text is what was checked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GrammarCheck {
    pub checking: bool,
    /// (run id, step index, thought, the text checked, its issues).
    pub found: Vec<(String, u32, Thought, String, Vec<TextIssue>)>,
}

impl Default for Studio {
    fn default() -> Self {
        Studio {
            screen: Screen::Loading,
            user: User::default(),
            list: ListState::default(),
            editor: None,
            notice: None,
            help: false,
            progress: None,
            rejections: Vec::new(),
            sync: SyncView::default(),
            copyable: None,
            grammar: String::new(),
            commands: 0,
            effects: Vec::new(),
            queued: 0,
            starred: Vec::new(),
            grammar_check: GrammarCheck::default(),
            leaving: None,
            after_save: None,
            wanted: None,
            task: None,
            at_step: None,
            collections: Vec::new(),
            run_queue: Vec::new(),
            next_after_save: false,
            next_after_load: false,
            team: team::TeamState::default(),
        }
    }
}

pub enum Action {
    /// The team's views and requests (`team.rs`).
    Team(team::TeamAction),
    /// A team write the server took, with its answer.
    TeamWritten {
        then: team::Then,
        answer: serde_json::Value,
    },
    /// The passage of a thought picked for the next comment (`None` forgets it).
    SelectPassage(Option<annotation_core::review::PassageRef>),
    /// Suggest a replacement for a passage of a thought.
    SuggestPassage(annotation_core::review::PassageRef),
    UserLoaded(User),
    UserChanged(User),
    /// The person picked another user: it is stored too.
    ChooseUser(User),
    /// Load the runs list (the page opened on it).
    LoadList,
    ListLoaded(Vec<RunSummary>),
    List(list::ListAction),
    /// Open a run from the list, the URL or a pull.
    OpenRun {
        run_id: String,
        qa: bool,
    },
    /// Open the URL: its run (checked against its `taskId`), or with only a `taskId`, the
    /// list of that session's runs.
    OpenRoute(Route),
    RunLoaded(Box<Loaded>),
    /// A run without a score was scored as it opened.
    Scored {
        run_id: String,
        quality: u8,
    },
    RunMissing(String),
    /// Back to the list (by the browser's history: the URL already says so).
    BackToList,
    /// Back to the list by the page's own link.
    LeaveRun,
    /// The answer to the leave dialog.
    ConfirmLeave(LeaveChoice),
    /// Forget the open run's unsaved edits.
    DiscardDrafts,
    /// Export the runs picked, or those shown when none are.
    ExportList(Format, Options),
    /// Export the open run as a ZIP with its screenshots.
    ExportRun,
    /// The fine-tuning export of the runs picked, or those shown when none are.
    ExportFinetune(annotation_core::finetune::Options),
    /// Import a picked file: its name and size in bytes (known before it is read), and the
    /// file.
    ImportFile {
        name: String,
        bytes: u64,
        file: web_sys::File,
    },
    /// Import the refused file again, as copies.
    ImportCopies,
    /// Move the picked runs (batch approve or submit).
    MovePicked(ReviewStatus),
    /// Add the picked runs to a named collection.
    CollectPicked(String),
    Collections(Vec<annotation_core::collections::Collection>),
    /// A collection's description as edited.
    DescribeCollection {
        name: String,
        description: String,
    },
    /// Delete the collection the list is filtered by (its runs stay).
    DeleteCollection(String),
    // ---- the open run ----
    Select(usize),
    Next,
    Prev,
    /// Alt+N: the next step not complete or with an open issue.
    NextNeedingWork,
    /// Alt+L: the next step with an open issue.
    NextFlagged,
    /// Alt+T / Alt+V: the flag form's issue type and severity, one choice on.
    CycleFlagKind,
    CycleFlagSeverity,
    /// Alt+R: the next run in the list's order (the leave dialog first, with unsaved edits).
    NextRun,
    /// Ctrl+Shift+Enter: submit the run for review, then open the next run.
    SubmitAndNext,
    SetThought(Thought, String),
    /// One of the Navigator's notes beside the thoughts.
    SetNote(NavigatorNote, String),
    /// AI-drafted thoughts: asking, and deciding on a draft (`drafting.rs`).
    Draft(drafting::DraftAction),
    /// The step's extended thoughts, one a line.
    SetExtended(Vec<String>),
    SetAction(StepAction),
    ReplaceStep(Box<Step>),
    EditAll(StepsEdit),
    SetSubtasks(Vec<Subtask>),
    SetTags(Vec<String>),
    MarkComplete,
    Transition(ReviewStatus),
    /// The approver's answer when Approve asked about open issues or unfinished steps.
    ConfirmApproval(bool),
    ConfirmBatchApproval(list::BatchAnswer),
    /// Alt+A: approve when approving is possible now.
    Approve,
    /// The flag form as typed and chosen.
    EditFlag(IssueDraft),
    /// Save & flag for review (Alt+F) with the flag form, at this time.
    Flag(String),
    /// Resolve (or reopen) the selected step's issue at `position`.
    ResolveIssue {
        position: usize,
        resolved: bool,
        at: String,
    },
    Save,
    /// Save although edited steps still hold template placeholders.
    SaveAnyway,
    CancelBlocked,
    Saved {
        run: Box<Run>,
        steps: Vec<Step>,
        versions: Vec<Version>,
        then_select: Option<usize>,
    },
    SaveFailed(String),
    /// Roll back to version `n`, itself a new version.
    Rollback(u32),
    /// Store a copy of the open run under `id`, then open it.
    Duplicate {
        id: String,
    },
    ShowTool(Tool),
    ToggleZoom,
    /// Esc: the zoomed screenshot closes.
    Unzoom,
    Escaping(Option<Thought>),
    StartSuggest(Thought),
    SuggestText(String),
    CancelSuggest,
    /// Send the suggestion being written, as typed (`text`), under a fresh `id`.
    SubmitSuggestion {
        id: String,
        text: String,
        at: String,
    },
    /// The author accepts or rejects a suggestion.
    Resolve {
        suggestion: Box<Suggestion>,
        accept: bool,
        at: String,
    },
    /// The server decided a suggestion.
    Decided {
        decided: Box<Suggestion>,
        accept: bool,
        at: String,
    },
    PostComment {
        id: String,
        text: String,
        kind: CommentKind,
        reply_to: Option<String>,
        at: String,
    },
    ToggleResolved(Box<Comment>),
    Compare(Option<(u32, u32)>),
    /// Review data changed in storage.
    Review {
        comments: Vec<Comment>,
        suggestions: Vec<Suggestion>,
    },
    LoadStarred,
    Starred(Vec<Template>),
    /// Star the selected step as a template.
    StarStep {
        at: String,
    },
    /// A starred template as edited.
    SaveTemplate(Box<Template>),
    DeleteTemplate(String),
    CheckGrammar,
    GrammarChecked {
        run_id: String,
        step_index: u32,
        result: Result<Vec<(Thought, String, Vec<TextIssue>)>, String>,
    },
    // ---- page-wide ----
    Notify(Notice),
    DismissNotice,
    Help(bool),
    Progress(Option<Progress>),
    Rejections(Vec<String>),
    CopyableImport(Option<(String, String)>),
    Grammar(String),
    SyncSettings(SyncSettings),
    /// Save the sync dialog as typed; an empty token keeps the stored one.
    SaveSyncSettings {
        endpoint: String,
        token: String,
        grammar: String,
    },
    SyncOpen(bool),
    SyncKick,
    RoundDone(Box<RoundDone>),
    ResolveConflict {
        conflict: Box<Conflict>,
        mine: bool,
    },
    DiscardRefused(Box<Pending>),
    /// The effect layer took every effect up to this number.
    EffectsTaken {
        up_to: u32,
    },
}

page_kit::reducible_by_apply!(Studio, Action);

impl Studio {
    pub fn apply(&mut self, action: Action) {
        let before =
            self.editor.as_ref().map(|e| (e.run.id.clone(), e.drafts.clone(), e.run_draft.clone()));
        self.decide(action);
        self.persist_drafts(before);
        // The one place a round starts: after a kick, after the round before it ended, or
        // once no version is being written (the write ended, or its run was closed).
        self.start_round();
    }

    /// Stores the open run's unsaved edits whenever they change (or drops the stored ones
    /// once there are none), so a reload or a crash loses nothing typed. A run just opened
    /// has nothing new to store: its drafts came from storage.
    fn persist_drafts(&mut self, before: Option<(String, SortedMap<usize, Step>, Option<Run>)>) {
        let Some(editor) = &self.editor else { return };
        let Some((run_id, drafts, run)) = before else { return };
        if run_id != editor.run.id || (drafts == editor.drafts && run == editor.run_draft) {
            return;
        }
        let effect = match drafts::to_store(&editor.run, &editor.drafts, &editor.run_draft) {
            Some(draft) => Effect::PutDraft(Box::new(draft)),
            None => Effect::DeleteDraft(editor.run.id.clone()),
        };
        self.queue(effect);
    }

    fn decide(&mut self, action: Action) {
        match action {
            Action::Team(action) => self.team(action),
            Action::TeamWritten { then, answer } => self.team_written(then, answer),
            Action::ShowTool(tool) => {
                if let Some(editor) = &mut self.editor {
                    editor.tool = tool;
                }
                if tool == Tool::Agreement {
                    self.load_run_team();
                }
            }
            Action::SelectPassage(passage) => {
                if let Some(editor) = &mut self.editor {
                    editor.passage = passage;
                    editor.tool = Tool::Review;
                }
            }
            Action::SuggestPassage(passage) => {
                if let Some(editor) = &mut self.editor {
                    editor.suggesting = Some((passage.field, passage.quote.clone()));
                    editor.suggest_passage = Some(passage);
                    editor.tool = Tool::Review;
                }
            }
            Action::UserLoaded(user) | Action::UserChanged(user) => self.set_user(user),
            Action::ChooseUser(user) => {
                self.set_user(user.clone());
                self.queue(Effect::PutUser(user));
            }
            Action::LoadList => self.queue(Effect::LoadList),
            Action::ListLoaded(summaries) => {
                self.list.load(summaries);
                self.list_arrived();
                if self.editor.is_none() {
                    self.screen = Screen::List;
                }
            }
            Action::List(action) => self.list.apply(action),
            Action::OpenRun { run_id, qa } => match &self.editor {
                Some(editor) if editor.dirty() && (editor.run.id != run_id || editor.qa != qa) => {
                    self.ask_to_leave(Leave::Run { run_id, qa }, true)
                }
                _ => self.open_run(run_id, qa),
            },
            Action::OpenRoute(route) => self.open_route(route),
            Action::RunLoaded(loaded) => self.run_loaded(*loaded),
            Action::Scored { run_id, quality } => {
                if let Some(editor) = self.editor.as_mut().filter(|e| e.run.id == run_id) {
                    editor.scored(quality);
                }
            }
            Action::RunMissing(id) => self.screen = Screen::Missing(id),
            Action::BackToList => match &self.editor {
                Some(editor) if editor.dirty() => self.ask_to_leave(Leave::List, true),
                _ => self.back_to_list(),
            },
            Action::LeaveRun => match &self.editor {
                Some(editor) if editor.dirty() => self.ask_to_leave(Leave::List, false),
                _ => self.leave(Leave::List),
            },
            Action::ConfirmLeave(choice) => self.confirm_leave(choice),
            Action::ExportList(format, options) => self.export_list(format, options),
            Action::ExportRun => self.export_run(),
            Action::ImportFile { name, bytes, file } => self.import_file(name, bytes, file),
            Action::ExportFinetune(options) => self.export_finetune(options),
            Action::ImportCopies => self.import_copies(),
            Action::MovePicked(to) => self.move_picked(to),
            Action::ConfirmBatchApproval(answer) => {
                let Some(asked) = self.list.approving.take() else { return };
                let ids = match answer {
                    list::BatchAnswer::All => asked.all,
                    list::BatchAnswer::Finished => {
                        asked.all.into_iter().filter(|id| !asked.doubtful.contains(id)).collect()
                    }
                    list::BatchAnswer::Cancel => return,
                };
                let to = ReviewStatus::Approved;
                let settings = self.sync.settings.clone();
                self.queue(Effect::MoveRuns { ids, to, user: self.user.clone(), settings });
            }
            Action::CollectPicked(name) => {
                let ids = self.list.picked.iter().cloned().collect();
                let name = name.trim().to_owned();
                self.queue(Effect::Collect { ids, name, user: self.user.clone() });
            }
            Action::Collections(collections) => self.collections = collections,
            Action::DescribeCollection { name, description } => {
                let mut collection =
                    self.collections.iter().find(|c| c.name == name).cloned().unwrap_or_else(
                        || annotation_core::collections::Collection {
                            name: name.clone(),
                            created_by: self.user.name.clone(),
                            ..Default::default()
                        },
                    );
                collection.description = description.trim().to_owned();
                self.queue(Effect::PutCollection(collection));
            }
            Action::DeleteCollection(name) => {
                self.list.filter.collection = None;
                self.queue(Effect::DeleteCollection(name));
            }
            Action::Notify(notice) => self.notice = Some(notice),
            Action::DismissNotice => self.notice = None,
            Action::Help(open) => self.help = open,
            Action::Progress(progress) => self.progress = progress,
            Action::Rejections(lines) => {
                self.rejections = lines;
                self.copyable = None;
            }
            Action::CopyableImport(copyable) => self.copyable = copyable,
            Action::Grammar(endpoint) => self.grammar = endpoint,
            Action::SyncSettings(settings) => {
                self.sync.state =
                    if settings.enabled() { SyncState::Syncing } else { SyncState::LocalOnly };
                self.sync.settings = settings;
                self.kick_sync();
            }
            Action::SaveSyncSettings { endpoint, token, grammar } => {
                self.save_sync_settings(&endpoint, &token, &grammar)
            }
            Action::SyncOpen(open) => self.sync.open = open,
            Action::SyncKick => self.kick_sync(),
            Action::RoundDone(round) => self.round_done(*round),
            Action::ResolveConflict { conflict, mine } => {
                self.queue(Effect::ResolveConflict { conflict, mine })
            }
            Action::DiscardRefused(pending) => self.queue(Effect::Discard(pending)),
            Action::LoadStarred => self.queue(Effect::LoadStarred),
            Action::Starred(templates) => self.starred = templates,
            Action::SaveTemplate(template) => {
                // Only starred steps are the library's to change; bundled files are not.
                if template.starred_from.is_some() && !template.name.trim().is_empty() {
                    self.queue(Effect::SaveTemplate(template));
                }
            }
            Action::DeleteTemplate(id) => {
                if self.starred.iter().any(|t| t.id == id) {
                    self.queue(Effect::DeleteTemplate(id));
                }
            }
            Action::GrammarChecked { run_id, step_index, result } => {
                self.grammar_checked(run_id, step_index, result)
            }
            Action::EffectsTaken { up_to } => self.effects.retain(|(n, _)| *n > up_to),
            Action::NextRun => self.next_run(),
            Action::SubmitAndNext => self.submit_and_next(),
            action => {
                // A save that made a version has something to send.
                let saved = matches!(action, Action::Saved { .. });
                if let Action::Saved { versions, .. } = &action
                    && !versions.is_empty()
                {
                    self.kick_sync();
                }
                if matches!(action, Action::SaveFailed(_) | Action::CancelBlocked) {
                    self.after_save = None;
                    self.next_after_save = false;
                }
                self.apply_to_run(action);
                self.take_command();
                if saved && let Some(leave) = self.after_save.take() {
                    // Stored: the draft goes now, as the editor does.
                    if let Some(editor) = self.editor.as_ref().filter(|e| !e.dirty()) {
                        self.queue(Effect::DeleteDraft(editor.run.id.clone()));
                    }
                    self.leave(leave);
                } else if saved && std::mem::take(&mut self.next_after_save) {
                    self.next_run();
                }
            }
        }
    }

    /// Queues IO for the effect layer.
    fn queue(&mut self, effect: Effect) {
        self.queued += 1;
        self.effects.push((self.queued, effect));
    }

    fn set_user(&mut self, user: User) {
        if let Some(editor) = &mut self.editor {
            editor.user = user.clone();
        }
        self.user = user;
    }

    fn notify(&mut self, ok: bool, text: impl Into<String>) {
        self.notice = Some(Notice { ok, text: text.into() });
    }

    /// Turns the editor's newest storage command, if not carried out yet, into an effect.
    fn take_command(&mut self) {
        let Some(editor) = &self.editor else { return };
        let Some((n, editor::Command::Save { run, steps, then_select })) = editor.command.clone()
        else {
            return;
        };
        if n <= self.commands {
            return;
        }
        self.commands = n;
        // Grammar answers still about the text being saved count in its quality.
        let grammar = steps
            .iter()
            .map(|step| {
                let found =
                    self.grammar_check.found.iter().filter(|(run_id, index, which, text, _)| {
                        *run_id == run.id
                            && *index == step.index
                            && step.thoughts.get(*which) == text
                    });
                (step.index, found.map(|(.., issues)| issues.len()).sum())
            })
            .filter(|(_, count)| *count > 0)
            .collect();
        let effect = Effect::Save {
            before: Box::new((editor.run.clone(), editor.steps.clone())),
            latest: editor.versions.last().cloned().map(Box::new),
            run: Box::new(run),
            steps,
            author: editor.user.name.clone(),
            then_select,
            grammar,
        };
        self.queue(effect);
    }

    fn apply_to_run(&mut self, action: Action) {
        match action {
            Action::Approve => return self.approve(),
            Action::Rollback(number) => return self.rollback(number),
            Action::Duplicate { id } => return self.duplicate(id),
            Action::SubmitSuggestion { id, text, at } => {
                return self.submit_suggestion(id, text, at);
            }
            Action::Resolve { suggestion, accept, at } => {
                return self.resolve(*suggestion, accept, at);
            }
            Action::Decided { decided, accept, at } => return self.decided(*decided, accept, at),
            Action::PostComment { id, text, kind, reply_to, at } => {
                return self.post_comment(id, text, kind, reply_to, at);
            }
            Action::ToggleResolved(comment) => return self.toggle_resolved(*comment),
            Action::StarStep { at } => return self.star_step(at),
            Action::CheckGrammar => return self.check_grammar(),
            Action::Draft(action) => return self.drafting(action),
            _ => {}
        }
        let Some(editor) = &mut self.editor else { return };
        match action {
            Action::Select(position) => editor.select(position),
            Action::Next => editor.select(editor.at + 1),
            Action::Prev => editor.select(editor.at.saturating_sub(1)),
            // The guards move the selection; only a step not found is said.
            Action::NextNeedingWork if !editor.next_needing_work() => self.notify(
                true,
                "Every step is complete. Ctrl+Shift+Enter submits the run and opens the next one.",
            ),
            Action::NextFlagged if !editor.next_flagged() => {
                self.notify(true, "No step of this run has an open issue.")
            }
            Action::NextNeedingWork | Action::NextFlagged => {}
            Action::CycleFlagKind => editor.cycle_flag_kind(),
            Action::CycleFlagSeverity => editor.cycle_flag_severity(),
            Action::SetThought(which, text) => editor.set_thought(which, text),
            Action::SetNote(which, text) => editor.set_note(which, text),
            Action::SetExtended(thoughts) => editor.set_extended(thoughts),
            Action::SetAction(action) => editor.set_action(action),
            Action::ReplaceStep(step) => editor.replace_step(*step),
            Action::EditAll(edit) => editor.edit_all(edit),
            Action::SetSubtasks(subtasks) => editor.set_subtasks(subtasks),
            Action::SetTags(tags) => editor.set_tags(tags),
            Action::MarkComplete => editor.mark_complete(),
            Action::Transition(to) => editor.transition(to),
            Action::ConfirmApproval(yes) => editor.confirm_approval(yes),
            Action::EditFlag(draft) => editor.flag = draft,
            Action::Flag(at) => editor.flag(&at),
            Action::ResolveIssue { position, resolved, at } => {
                editor.resolve_issue(position, resolved, &at)
            }
            Action::Save => editor.save_now(),
            Action::SaveAnyway => editor.save_anyway(),
            Action::CancelBlocked => editor.cancel_blocked(),
            Action::DiscardDrafts => {
                editor.discard();
                self.notice = Some(Notice {
                    ok: true,
                    text: "Unsaved edits discarded: this is the run as last saved.".into(),
                });
            }
            Action::Saved { run, steps, versions, then_select } => {
                let number = versions.last().map(|v| v.number);
                let moved = (run.status != editor.run.status).then_some(run.status);
                editor.saved(*run, steps, versions, then_select);
                let text = match (moved, number) {
                    (Some(to), Some(n)) => {
                        format!(
                            "The run is now {}, saved as version {n}.",
                            to.label().to_ascii_lowercase()
                        )
                    }
                    (None, Some(n)) => format!("Saved as version {n}."),
                    (_, None) => "Nothing changed since the last version.".into(),
                };
                self.notice = Some(Notice { ok: true, text });
            }
            Action::SaveFailed(why) => {
                editor.save_failed();
                self.notice = Some(Notice { ok: false, text: why });
            }
            Action::ToggleZoom => editor.zoom = !editor.zoom,
            Action::Unzoom => editor.zoom = false,
            Action::Escaping(thought) => editor.escaping = thought,
            Action::StartSuggest(which) => {
                let text = editor.current().map(|s| s.thoughts.get(which).to_owned());
                editor.suggesting = text.map(|t| (which, t));
                editor.suggest_passage = None;
            }
            Action::SuggestText(text) => {
                if let Some((_, draft)) = &mut editor.suggesting {
                    *draft = text;
                }
            }
            Action::CancelSuggest => {
                editor.suggesting = None;
                editor.suggest_passage = None;
            }
            Action::Compare(pair) => editor.compare = pair,
            // A round may bring these while someone types a suggestion: the draft stays.
            Action::Review { comments, suggestions } => {
                editor.comments = comments;
                editor.suggestions = suggestions;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod decisions_tests;

#[cfg(test)]
mod team_tests;
