//! What the page does with whole runs: opening, leaving, exporting, importing, batch moves,
//! copies, rollbacks, approving by shortcut, starring and grammar checks. Each decides here
//! and queues its IO.

use annotation_core::export::{Format, Options, Screenshots};
use annotation_core::import;
use annotation_core::lint::TextIssue;
use annotation_core::query::describe;
use annotation_core::record::{ReviewStatus, Thought};
use annotation_core::review::ApprovalCheck;
use annotation_core::templates;

use super::editor::{EditorState, Loaded};
use super::list::{self, ListAction};
use super::{Effect, Leave, LeaveChoice, Route, Screen, Studio};

impl Studio {
    pub(super) fn open_run(&mut self, run_id: String, qa: bool) {
        self.wanted = Some((run_id.clone(), qa));
        let sync = self.sync.settings.clone();
        self.queue(Effect::OpenRun { run_id, qa, user: self.user.clone(), sync });
    }

    /// The page's URL: its run, or with only a `taskId`, the runs of that chat session.
    pub(super) fn open_route(&mut self, route: Route) {
        self.task = route.task_id.clone();
        self.at_step = route.run_id.clone().zip(route.step);
        match (route.run_id, route.task_id) {
            (Some(run_id), _) => self.open_run(run_id, route.qa),
            (None, Some(task)) => {
                self.list.apply(ListAction::Text(task));
                self.queue(Effect::LoadList);
            }
            (None, None) => self.queue(Effect::LoadList),
        }
    }

    pub(super) fn run_loaded(&mut self, loaded: Loaded) {
        if let Some(task) = self.task.take()
            && task != loaded.data.run.task_id
        {
            self.notify(
                false,
                format!(
                    "The link names task {task}, but this run belongs to task {}.",
                    loaded.data.run.task_id
                ),
            );
        }
        self.wanted = None;
        let mut editor = EditorState::new(loaded);
        editor.issued = self.commands;
        editor.own_version = self.team.own.contains(&editor.run.id);
        let same = self.editor.as_ref().is_some_and(|e| e.run.id == editor.run.id);
        if let Some(before) = self.editor.take() {
            editor.keep_place(before);
            editor.own_version = self.team.own.contains(&editor.run.id);
        }
        // The link named a step (a trace's, from the Prompt Studio): open on it.
        if let Some((run, index)) = self.at_step.take()
            && run == editor.run.id
            && let Some(position) = editor.steps.iter().position(|s| s.index == index)
        {
            editor.select(position);
        }
        if let Some(restored) = &editor.restored {
            let steps: Vec<String> = restored.steps.iter().map(|n| n.to_string()).collect();
            let mut text = format!(
                "Unsaved edits restored (step{} {}). Save them, or discard them in the run header.",
                if steps.len() == 1 { "" } else { "s" },
                steps.join(", ")
            );
            if restored.stale {
                text += " The run was saved again after these edits were made: check them first.";
            }
            self.notify(!restored.stale, text);
        }
        self.editor = Some(editor);
        self.screen = Screen::Run;
        self.keep_queue();
        // A run read again after a round keeps its merge choices; a run opened anew reads
        // its team data.
        if !same {
            self.load_run_team();
        }
    }

    pub(super) fn back_to_list(&mut self) {
        self.editor = None;
        self.screen = Screen::List;
        self.queue(Effect::LoadList);
    }

    /// Opens the leave dialog. After back or forward (`by_history`) the URL already moved,
    /// so it is put back on the run while the person decides.
    pub(super) fn ask_to_leave(&mut self, to: Leave, by_history: bool) {
        if by_history && let Some(editor) = &self.editor {
            let task = (!editor.run.task_id.is_empty()).then(|| editor.run.task_id.clone());
            let route = Route {
                run_id: Some(editor.run.id.clone()),
                task_id: task,
                qa: editor.qa,
                step: None,
            };
            self.queue(Effect::SetQuery(route.query()));
        }
        self.leaving = Some(to);
    }

    pub(super) fn confirm_leave(&mut self, choice: LeaveChoice) {
        let Some(to) = self.leaving.take() else { return };
        match choice {
            LeaveChoice::Stay => {}
            LeaveChoice::Keep => self.leave(to),
            LeaveChoice::Discard => {
                if let Some(editor) = &self.editor {
                    self.queue(Effect::DeleteDraft(editor.run.id.clone()));
                }
                self.leave(to);
            }
            LeaveChoice::Save => match &mut self.editor {
                Some(editor) if editor.dirty() && editor.permissions().edit => {
                    self.after_save = Some(to);
                    editor.save_now();
                    self.take_command();
                }
                _ => self.leave(to),
            },
        }
    }

    /// Goes where `to` says, dropping the editor (its stored draft stays).
    pub(super) fn leave(&mut self, to: Leave) {
        match to {
            Leave::List => {
                self.queue(Effect::ClearQuery);
                self.back_to_list();
            }
            Leave::Run { run_id, qa } => {
                self.editor = None;
                self.open_run(run_id, qa);
            }
        }
    }

    pub(super) fn export_list(&mut self, format: Format, options: Options) {
        let ids = if self.list.picked.is_empty() {
            self.list.shown().map(|s| s.run_id.clone()).collect()
        } else {
            self.list.picked.iter().cloned().collect()
        };
        let filter = describe(&self.list.filter);
        self.queue(Effect::Export { ids, filter, format, options });
        self.exported_collection();
    }

    /// An export of a collection (the list filtered by it) is noted on the collection.
    fn exported_collection(&mut self) {
        if let Some(name) = self.list.filter.collection.clone().filter(|c| !c.is_empty()) {
            self.queue(Effect::CollectionExported(name));
        }
    }

    /// Fine-tuning data from the runs picked, or those shown (the list's filter).
    pub(super) fn export_finetune(&mut self, options: annotation_core::finetune::Options) {
        let ids = if self.list.picked.is_empty() {
            self.list.shown().map(|s| s.run_id.clone()).collect()
        } else {
            self.list.picked.iter().cloned().collect()
        };
        let filter = describe(&self.list.filter);
        self.queue(Effect::Finetune { ids, filter, options });
        self.exported_collection();
    }

    pub(super) fn export_run(&mut self) {
        let Some(editor) = &self.editor else { return };
        let id = editor.merged_run().id.clone();
        let options = Options { anonymize: false, screenshots: Screenshots::Files };
        let filter = format!("run {id}");
        self.queue(Effect::Export { ids: vec![id], filter, format: Format::Zip, options });
    }

    /// Reads a picked file unless it is over the import cap: then it is refused before it is
    /// read, so nothing stored changes, and an earlier refused file is no longer offered as
    /// copies.
    pub(super) fn import_file(&mut self, name: String, bytes: u64, file: web_sys::File) {
        let Some(refused) = import::too_big(bytes) else {
            self.queue(Effect::ImportFile { file, user: self.user.clone() });
            return;
        };
        self.rejections = refused.iter().map(ToString::to_string).collect();
        self.copyable = None;
        let why: Vec<&str> = refused.iter().map(|r| r.problem.message.as_str()).collect();
        self.notify(false, format!("Nothing was imported from {name}: {}.", why.join("; ")));
    }

    pub(super) fn import_copies(&mut self) {
        let Some((name, text)) = self.copyable.clone() else { return };
        self.queue(Effect::ImportText { name, text, user: self.user.clone(), as_copies: true });
    }

    /// Moves the picked runs. Approving them asks first when some have open issues or steps
    /// not complete, as Approve on one run does; the effect refuses runs whose suggestions
    /// still wait for their author.
    pub(super) fn move_picked(&mut self, to: ReviewStatus) {
        let all: Vec<String> = self.list.picked.iter().cloned().collect();
        if to == ReviewStatus::Approved {
            let doubtful: Vec<String> = self
                .list
                .summaries
                .iter()
                .filter(|s| self.list.picked.contains(&s.run_id))
                .filter(|s| ApprovalCheck::of_summary(s, 0).doubts().is_some())
                .map(|s| s.run_id.clone())
                .collect();
            if !doubtful.is_empty() {
                self.list.approving = Some(list::BatchApproval { all, doubtful });
                return;
            }
        }
        let settings = self.sync.settings.clone();
        self.queue(Effect::MoveRuns { ids: all, to, user: self.user.clone(), settings });
    }

    /// Alt+A approves when the run's buttons would offer it, and says why not otherwise.
    pub(super) fn approve(&mut self) {
        let Some(editor) = &mut self.editor else { return };
        if editor.targets().contains(&ReviewStatus::Approved) {
            editor.transition(ReviewStatus::Approved);
        } else {
            self.notify(false, "Approving needs a reviewer or QA manager, and the run in review.");
        }
    }

    pub(super) fn rollback(&mut self, number: u32) {
        let Some(editor) = &self.editor else { return };
        let (Some(target), Some(latest)) =
            (editor.versions.iter().find(|v| v.number == number), editor.versions.last())
        else {
            return;
        };
        let effect = Effect::Rollback {
            current: Box::new((editor.run.clone(), editor.steps.clone())),
            target: Box::new(target.clone()),
            latest: Box::new(latest.clone()),
            author: editor.user.name.clone(),
        };
        self.queue(effect);
    }

    /// A copy of the run with its edits, as a new draft of the person making it.
    pub(super) fn duplicate(&mut self, id: String) {
        let Some(editor) = &self.editor else { return };
        let user = editor.user.clone();
        let mut run = editor.merged_run().clone();
        run.id = id.clone();
        run.status = ReviewStatus::Draft;
        run.annotator = Some(user.name.clone());
        run.reviewed_by = None;
        run.server_version = None;
        run.task_prompt = format!("{} (copy)", run.task_prompt);
        let steps = editor
            .merged_steps()
            .into_iter()
            .map(|mut s| {
                s.run_id = id.clone();
                s
            })
            .collect();
        self.queue(Effect::Duplicate { run: Box::new(run), steps, user });
    }

    pub(super) fn star_step(&mut self, at: String) {
        let Some(editor) = &self.editor else { return };
        let Some(step) = editor.current() else { return };
        let name = format!(
            "{} · {}",
            step.action.kind,
            step.thoughts.thought3.chars().take(40).collect::<String>()
        );
        let template = templates::star(step, &name, &editor.user.name, &at);
        self.queue(Effect::PutTemplate(Box::new(template)));
    }

    /// Asks the grammar server about the selected step's thoughts, one check at a time.
    pub(super) fn check_grammar(&mut self) {
        let Some(editor) = &self.editor else { return };
        let Some(step) = editor.current() else { return };
        if self.grammar.is_empty() || self.grammar_check.checking {
            return;
        }
        let thoughts =
            Thought::ALL.iter().map(|t| (*t, step.thoughts.get(*t).to_owned())).collect();
        let effect = Effect::CheckGrammar {
            endpoint: self.grammar.clone(),
            run_id: editor.run.id.clone(),
            step_index: step.index,
            thoughts,
        };
        self.grammar_check.checking = true;
        self.queue(effect);
    }

    pub(super) fn grammar_checked(
        &mut self,
        run_id: String,
        step_index: u32,
        result: Result<Vec<(Thought, String, Vec<TextIssue>)>, String>,
    ) {
        self.grammar_check.checking = false;
        match result {
            Ok(found) => {
                let count: usize = found.iter().map(|(_, _, issues)| issues.len()).sum();
                self.grammar_check.found = found
                    .into_iter()
                    .map(|(thought, text, issues)| {
                        (run_id.clone(), step_index, thought, text, issues)
                    })
                    .collect();
                self.notify(
                    true,
                    format!("Grammar: {count} issue{} found.", if count == 1 { "" } else { "s" }),
                );
            }
            Err(why) => self.notify(false, why),
        }
    }
}
