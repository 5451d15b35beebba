//! The open run: its saved steps, the edits not saved yet, the selected step, and what the
//! right panel shows. Switching steps keeps edits (as drafts per step) without touching
//! storage, so it is instant; a save writes every draft as one version.

use lean::SortedMap;

use annotation_core::history::Version;
use annotation_core::issues::{self, Draft as IssueDraft, IssueKind, Severity};
use annotation_core::record::{
    NavigatorNote, ReviewStatus, Run, Step, StepAction, Subtask, Thought, first_incomplete,
    update_subtasks,
};
use annotation_core::review::{ApprovalCheck, Comment, PassageRef, Suggestion};
use annotation_core::roles::{Permissions, User, allowed_targets, move_run, permissions};
use annotation_core::templates;

use super::drafts::{Restored, StoredDraft, restore};

/// What the right panel's tool area shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tool {
    #[default]
    Checks,
    Issues,
    Templates,
    Json,
    Review,
    History,
    Subtasks,
    /// How the annotators of an overlap run agree, and the reviewer's merge.
    Agreement,
}

impl Tool {
    pub const ALL: [Tool; 8] = [
        Tool::Checks,
        Tool::Issues,
        Tool::Templates,
        Tool::Json,
        Tool::Review,
        Tool::History,
        Tool::Subtasks,
        Tool::Agreement,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tool::Checks => "Checks",
            Tool::Issues => "Issues",
            Tool::Templates => "Templates",
            Tool::Json => "JSON",
            Tool::Review => "Review",
            Tool::History => "History",
            Tool::Subtasks => "Subtasks",
            Tool::Agreement => "Agreement",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Tool::Checks => "checks",
            Tool::Issues => "issues",
            Tool::Templates => "templates",
            Tool::Json => "json",
            Tool::Review => "review",
            Tool::History => "history",
            Tool::Subtasks => "subtasks",
            Tool::Agreement => "agreement",
        }
    }
}

/// Steps (1-based) that still hold template placeholders, each with the names left.
pub type Unfilled = Vec<(u32, Vec<String>)>;

/// What the page must do in storage; the app carries it out and reports back.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Save the run with `steps` as one version, then select `then_select` if given.
    Save { run: Run, steps: Vec<Step>, then_select: Option<usize> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditorState {
    pub run: Run,
    /// As last saved.
    pub steps: Vec<Step>,
    /// Unsaved edits, by position in `steps`.
    pub drafts: SortedMap<usize, Step>,
    /// Unsaved edits to the run header (subtasks, tags).
    pub run_draft: Option<Run>,
    /// Position of the selected step in `steps`.
    pub at: usize,
    /// Opened with `qa=true`: review mode.
    pub qa: bool,
    pub user: User,
    pub versions: Vec<Version>,
    pub comments: Vec<Comment>,
    pub suggestions: Vec<Suggestion>,
    pub tool: Tool,
    pub zoom: bool,
    /// The thought whose JSON escaping is being previewed.
    pub escaping: Option<Thought>,
    /// A suggestion being written: the thought and the proposed text.
    pub suggesting: Option<(Thought, String)>,
    /// The passage the suggestion being written replaces, when it is on a selection.
    pub suggest_passage: Option<PassageRef>,
    /// The passage picked for the next comment.
    pub passage: Option<PassageRef>,
    /// The open run is the person's to annotate in a version of their own (an overlap run
    /// assigned to them): they edit and submit it as its annotator would.
    pub own_version: bool,
    /// Two version numbers to compare.
    pub compare: Option<(u32, u32)>,
    /// The storage work asked for, with a sequence number so it runs once.
    pub command: Option<(u32, Command)>,
    /// The last command number issued before this editor opened: numbers keep rising across
    /// runs, so a command of a run opened later is never taken for one already carried out.
    pub issued: u32,
    pub saving: bool,
    /// The flag form: the issue "Save & flag for review" (or Alt+F) will raise.
    pub flag: IssueDraft,
    /// A save held back because edited steps still hold template placeholders: the save,
    /// and for each such step its number (1-based) and the placeholders left.
    pub blocked: Option<(Command, Unfilled)>,
    /// Unsaved edits brought back from storage when the run opened.
    pub restored: Option<Restored>,
    /// Approve was asked for a run with open work: what the approver is asked to accept.
    pub approving: Option<String>,
    /// Model-drafted thoughts waiting for the annotator, and the drafting under way.
    pub drafting: super::drafting::Drafting,
}

/// A run with everything the editor shows, as stored.
pub struct RunData {
    pub run: Run,
    pub steps: Vec<Step>,
    pub versions: Vec<Version>,
    pub comments: Vec<Comment>,
    pub suggestions: Vec<Suggestion>,
}

impl RunData {
    /// A run and its steps, with no versions, comments or suggestions yet.
    pub fn new(run: Run, steps: Vec<Step>) -> RunData {
        RunData { run, steps, versions: vec![], comments: vec![], suggestions: vec![] }
    }
}

pub struct Loaded {
    pub data: RunData,
    pub qa: bool,
    pub user: User,
    /// Unsaved edits stored for this run, if any.
    pub draft: Option<StoredDraft>,
}

impl EditorState {
    pub fn new(loaded: Loaded) -> EditorState {
        let (drafts, run_draft, restored) = match loaded.draft {
            Some(stored) => restore(&loaded.data.run, &loaded.data.steps, stored),
            None => (SortedMap::new(), None, None),
        };
        // Back where the edits were, else the first step not complete.
        let at = drafts.keys().next().copied().unwrap_or_else(|| {
            first_incomplete(&loaded.data.steps)
                .and_then(|index| loaded.data.steps.iter().position(|s| s.index == index))
                .unwrap_or(0)
        });
        EditorState {
            run: loaded.data.run,
            steps: loaded.data.steps,
            drafts,
            run_draft,
            at,
            qa: loaded.qa,
            user: loaded.user,
            versions: loaded.data.versions,
            comments: loaded.data.comments,
            suggestions: loaded.data.suggestions,
            tool: if loaded.qa { Tool::Review } else { Tool::Checks },
            zoom: false,
            escaping: None,
            suggesting: None,
            suggest_passage: None,
            passage: None,
            own_version: false,
            compare: None,
            command: None,
            issued: 0,
            saving: false,
            flag: IssueDraft::default(),
            blocked: None,
            restored,
            approving: None,
            drafting: Default::default(),
        }
    }

    /// The same run loaded again (a sync round pulled a teammate's change while nothing was
    /// unsaved): the person stays where they were. The selected step (by its index), the tool,
    /// the zoom, a suggestion being written, the flag form, a version comparison, drafts
    /// waiting for review and an approval question still open all carry over from `before`;
    /// the question is asked anew from the new steps, and dropped if nothing is in doubt now.
    pub fn keep_place(&mut self, before: EditorState) {
        if before.run.id != self.run.id || before.qa != self.qa {
            return;
        }
        let selected = before.steps.get(before.at).map(|s| s.index);
        if let Some(at) = selected.and_then(|i| self.steps.iter().position(|s| s.index == i)) {
            self.at = at;
        }
        self.tool = before.tool;
        self.zoom = before.zoom;
        self.escaping = before.escaping;
        self.suggesting = before.suggesting;
        self.suggest_passage = before.suggest_passage;
        self.passage = before.passage;
        self.own_version = before.own_version;
        self.compare = before.compare;
        self.flag = before.flag;
        self.drafting = before.drafting;
        if before.approving.is_some() {
            self.approving = self.approval().doubts();
        }
    }

    /// The selected step with its unsaved edits.
    pub fn current(&self) -> Option<&Step> {
        self.drafts.get(&self.at).or_else(|| self.steps.get(self.at))
    }

    /// Every step with its unsaved edits, in order.
    pub fn merged_steps(&self) -> Vec<Step> {
        (0..self.steps.len())
            .map(|i| self.drafts.get(&i).unwrap_or(&self.steps[i]).clone())
            .collect()
    }

    pub fn merged_run(&self) -> &Run {
        self.run_draft.as_ref().unwrap_or(&self.run)
    }

    pub fn dirty(&self) -> bool {
        !self.drafts.is_empty() || self.run_draft.is_some()
    }

    pub fn is_final(&self, position: usize) -> bool {
        position + 1 == self.steps.len()
    }

    /// Whose run this is for the page's buttons: the person's own when it is their version
    /// of an overlap run.
    fn annotator(&self) -> Option<&str> {
        if self.own_version {
            Some(&self.user.name)
        } else {
            self.merged_run().annotator.as_deref()
        }
    }

    pub fn permissions(&self) -> Permissions {
        let run = self.merged_run();
        let mut p = permissions(&self.user, run.status, self.annotator());
        // Review mode reads; changes go through suggestions and comments.
        if self.qa {
            p.edit = false;
            p.rollback = false;
        }
        p
    }

    /// The tool tabs offered: review mode has no writing aids (templates, JSON escaping),
    /// since a reviewer changes text only through suggestions; agreement is a reviewer's,
    /// in review mode.
    pub fn tools(&self) -> Vec<Tool> {
        let writing = |t: &Tool| matches!(t, Tool::Templates | Tool::Json);
        let reviewer = self.qa && self.user.role != annotation_core::roles::Role::Annotator;
        Tool::ALL
            .into_iter()
            .filter(|t| !(self.qa && writing(t)))
            .filter(|t| *t != Tool::Agreement || reviewer)
            .collect()
    }

    /// The tab shown: the chosen one when offered, else Review.
    pub fn shown_tool(&self) -> Tool {
        if self.tools().contains(&self.tool) { self.tool } else { Tool::Review }
    }

    /// Where the run may move now. As on the server, a run is approved only once its author
    /// has decided every suggestion.
    pub fn targets(&self) -> Vec<ReviewStatus> {
        let run = self.merged_run();
        let mut targets = allowed_targets(&self.user, self.annotator(), run.status);
        // Only the suggestions decide this; the steps need not be merged on every render.
        if ApprovalCheck::of(&[], &self.suggestions).refusal().is_some() {
            targets.retain(|t| *t != ReviewStatus::Approved);
        }
        targets
    }

    /// The approval rule for the run as it stands, unsaved edits included.
    pub fn approval(&self) -> ApprovalCheck {
        ApprovalCheck::of(&self.merged_steps(), &self.suggestions)
    }

    fn draft_mut(&mut self) -> Option<&mut Step> {
        self.draft_at(self.at)
    }

    fn draft_at(&mut self, position: usize) -> Option<&mut Step> {
        let saved = self.steps.get(position)?.clone();
        Some(self.drafts.entry_or_insert_with(position, || saved))
    }

    /// Drops a draft that no longer differs from what is saved.
    fn tidy(&mut self) {
        self.tidy_at(self.at);
    }

    fn tidy_at(&mut self, position: usize) {
        if let Some(draft) = self.drafts.get(&position)
            && self.steps.get(position) == Some(draft)
        {
            self.drafts.remove(&position);
        }
    }

    fn next_command(&self) -> u32 {
        self.command.as_ref().map_or(self.issued + 1, |(n, _)| n + 1)
    }

    fn save(&mut self, then_select: Option<usize>) {
        let mut run = self.merged_run().clone();
        let steps = self.merged_steps();
        update_subtasks(&mut run, &steps);
        let command = Command::Save { run, steps, then_select };
        // Placeholders left in an edited step would go into the training data as `<name>`.
        let unfilled: Unfilled = self
            .drafts
            .values()
            .filter_map(|step| {
                let left = templates::unfilled(&step.thoughts);
                (!left.is_empty()).then_some((step.index + 1, left))
            })
            .collect();
        if unfilled.is_empty() {
            self.issue(command);
        } else {
            self.blocked = Some((command, unfilled));
        }
    }

    fn issue(&mut self, command: Command) {
        self.blocked = None;
        self.command = Some((self.next_command(), command));
        self.saving = true;
    }

    /// "Save anyway": the save held back for placeholders goes ahead.
    pub fn save_anyway(&mut self) {
        if let Some((command, _)) = self.blocked.take() {
            self.issue(command);
        }
    }

    pub fn cancel_blocked(&mut self) {
        self.blocked = None;
    }

    pub fn select(&mut self, position: usize) {
        if position < self.steps.len() {
            self.at = position;
            self.escaping = None;
            self.suggesting = None;
            self.zoom = false;
        }
    }

    /// Alt+N: the next step (after this one, wrapping round) not complete or with an open
    /// issue; false when every step is done.
    pub fn next_needing_work(&mut self) -> bool {
        self.next_where(|step| !step.verified || issues::open_count(step) > 0)
    }

    /// Alt+L: the next step with an open issue; false when none has one.
    pub fn next_flagged(&mut self) -> bool {
        self.next_where(|step| issues::open_count(step) > 0)
    }

    fn next_where(&mut self, wanted: impl Fn(&Step) -> bool) -> bool {
        let steps = self.merged_steps();
        let at = self.at.min(steps.len());
        // This step last: when it is the only one left, the selection stays on it.
        let found =
            (at + 1..steps.len()).chain(0..=at).find(|i| steps.get(*i).is_some_and(&wanted));
        match found {
            Some(position) => {
                self.select(position);
                true
            }
            None => false,
        }
    }

    /// Alt+T and Alt+V: the flag form's issue type and severity, one choice on.
    pub fn cycle_flag_kind(&mut self) {
        let kinds = IssueKind::ALL;
        let at = kinds.iter().position(|k| *k == self.flag.kind).unwrap_or(0);
        self.flag.kind = kinds[(at + 1) % kinds.len()];
    }

    pub fn cycle_flag_severity(&mut self) {
        let all = Severity::ALL;
        let at = all.iter().position(|s| *s == self.flag.severity).unwrap_or(0);
        self.flag.severity = all[(at + 1) % all.len()];
    }

    pub fn set_thought(&mut self, which: Thought, text: String) {
        if !self.permissions().edit {
            return;
        }
        if let Some(step) = self.draft_mut() {
            annotation_core::drafting::set_thought(step, which, text);
        }
        self.tidy();
    }

    /// One of the Navigator's notes (evaluation, memory, next goal), on a step that has them.
    pub fn set_note(&mut self, which: NavigatorNote, text: String) {
        if !self.permissions().edit {
            return;
        }
        if let Some(notes) = self.draft_mut().and_then(|step| step.navigator.as_mut()) {
            *notes.get_mut(which) = text;
        }
        self.tidy();
    }

    /// Extended thoughts as typed, a line each: blank lines go.
    pub fn set_extended(&mut self, thoughts: Vec<String>) {
        if !self.permissions().edit {
            return;
        }
        let thoughts = thoughts.into_iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
        if let Some(step) = self.draft_mut() {
            step.extended_thoughts = thoughts.collect();
        }
        self.tidy();
    }

    pub fn set_action(&mut self, action: StepAction) {
        if !self.permissions().edit {
            return;
        }
        if let Some(step) = self.draft_mut() {
            step.action = action;
        }
        self.tidy();
    }

    /// Replaces the step with an edited copy (a fix, a template, an escape).
    pub fn replace_step(&mut self, step: Step) {
        self.replace_step_at(self.at, step);
    }

    /// Replaces the step at `position`, selected or not (an accepted suggestion).
    pub fn replace_step_at(&mut self, position: usize, step: Step) {
        if !self.permissions().edit {
            return;
        }
        if let Some(draft) = self.draft_at(position) {
            let mut step = step;
            annotation_core::drafting::carry_marks(draft, &mut step);
            *draft = step;
        }
        self.tidy_at(position);
    }

    /// Edits the step at `position` (selected or not) in its unsaved copy: an accepted draft.
    pub fn edit_step_at(&mut self, position: usize, edit: impl FnOnce(&mut Step)) {
        if !self.permissions().edit {
            return;
        }
        if let Some(draft) = self.draft_at(position) {
            edit(draft);
        }
        self.tidy_at(position);
    }

    /// Applies `edit` to every step (a fix across all steps), keeping only real changes.
    pub fn edit_all(&mut self, edit: impl FnOnce(&mut [Step])) {
        if !self.permissions().edit {
            return;
        }
        let before = self.merged_steps();
        let mut merged = before.clone();
        edit(&mut merged);
        for (before, after) in before.iter().zip(&mut merged) {
            annotation_core::drafting::carry_marks(before, after);
        }
        self.drafts =
            merged.into_iter().enumerate().filter(|(i, step)| &self.steps[*i] != step).collect();
    }

    pub fn set_subtasks(&mut self, subtasks: Vec<Subtask>) {
        if !self.permissions().edit {
            return;
        }
        let mut run = self.merged_run().clone();
        run.subtasks = subtasks;
        self.run_draft = (run != self.run).then_some(run);
    }

    pub fn set_tags(&mut self, tags: Vec<String>) {
        let mut run = self.merged_run().clone();
        run.tags = tags;
        self.run_draft = (run != self.run).then_some(run);
    }

    /// Save & mark complete: the step is done (its issues stay, open or not); then the next
    /// step that is not.
    pub fn mark_complete(&mut self) {
        if !self.permissions().mark {
            return;
        }
        let at = self.at;
        if let Some(step) = self.draft_mut() {
            step.verified = true;
        }
        let merged = self.merged_steps();
        let next = (at + 1..merged.len())
            .chain(0..at)
            .find(|i| !merged[*i].verified || issues::open_count(&merged[*i]) > 0);
        self.save(next.or(Some(at)));
    }

    /// Save & flag for review: the step gets an open issue from the flag form, whose
    /// description and suggestion then clear (its type and severity stay for the next).
    pub fn flag(&mut self, at_time: &str) {
        if !self.permissions().mark {
            return;
        }
        let who = self.user.name.clone();
        let draft = self.flag.clone();
        if let Some(step) = self.draft_mut() {
            let issue = issues::raise(step, &draft, &who, at_time);
            step.verified = false;
            step.issues.push(issue);
        }
        self.flag.description.clear();
        self.flag.suggestion.clear();
        self.save(None);
    }

    /// Resolves (or reopens) the selected step's issue at `position`, saving at once.
    pub fn resolve_issue(&mut self, position: usize, resolved: bool, at_time: &str) {
        if !self.permissions().mark {
            return;
        }
        let who = self.user.name.clone();
        let changed = self
            .draft_mut()
            .is_some_and(|step| issues::set_resolved(step, position, resolved, &who, at_time));
        self.tidy();
        if changed {
            self.save(None);
        }
    }

    /// Forgets the unsaved edits: the run as last saved.
    pub fn discard(&mut self) {
        self.drafts.clear();
        self.run_draft = None;
        self.blocked = None;
        self.restored = None;
    }

    /// Moves the run to `to`, saving it (with any edits) as one version. The buttons offer
    /// only permitted moves; the sync server judges again.
    /// Moves the run to `to`. Approving a run with open issues or steps not complete asks
    /// first ([`EditorState::approving`]); [`EditorState::confirm_approval`] answers.
    pub fn transition(&mut self, to: ReviewStatus) {
        if to == ReviewStatus::Approved
            && let Some(doubts) = self.approval().doubts()
        {
            self.approving = Some(doubts);
            return;
        }
        self.move_to(to);
    }

    pub fn confirm_approval(&mut self, approve: bool) {
        if self.approving.take().is_some() && approve {
            self.move_to(ReviewStatus::Approved);
        }
    }

    fn move_to(&mut self, to: ReviewStatus) {
        let mut run = self.merged_run().clone();
        move_run(&mut run, to, &self.user);
        self.run_draft = Some(run);
        self.save(None);
    }

    pub fn save_now(&mut self) {
        if self.dirty() && self.permissions().edit {
            self.save(None);
        }
    }

    /// Storage wrote the version: what was saved becomes the saved state.
    pub fn saved(
        &mut self,
        run: Run,
        steps: Vec<Step>,
        versions: Vec<Version>,
        then_select: Option<usize>,
    ) {
        self.run = run;
        self.steps = steps;
        self.drafts.clear();
        self.run_draft = None;
        self.saving = false;
        self.restored = None;
        self.versions.extend(versions);
        if let Some(position) = then_select {
            self.select(position);
        }
    }

    /// Storage scored the run as it opened, having found none: the header shows it. A
    /// score a save brought meanwhile is newer and stays.
    pub fn scored(&mut self, quality: u8) {
        for run in std::iter::once(&mut self.run).chain(self.run_draft.as_mut()) {
            run.quality.get_or_insert(quality);
        }
    }

    pub fn save_failed(&mut self) {
        // The drafts stay, so nothing typed is lost; the notice says what failed.
        self.saving = false;
    }
}

#[cfg(test)]
#[path = "editor_tests.rs"]
mod tests;
