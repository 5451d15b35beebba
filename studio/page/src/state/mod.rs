//! The Studio's state and its pure transitions. IO is asked for as [`Effect`]s, which
//! `crate::effects` carries out and answers with [`Action`]s; so every decision here is
//! tested natively (`tests.rs`).

pub mod pipeline;
pub mod route;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::rc::Rc;

use prompt_files::prompts::PromptSet;
use protocol::settings::ModelRole;
use protocol::studio::StudioEvent;
use protocol::studio::{PromptEdits, StudioRequest};
use protocol::studio::{StudioRun, StudioRunResult};
use run_records::LlmTrace;
use serde_json::Value;
use studio_core::catalogue::{self, Catalogue, FileKind, PromptEntry};
use studio_core::compare::{self, Delta};
use studio_core::preview::{self, Preview};
use studio_core::traces::{TraceFilter, sample_label};
use studio_core::versions::{self, PromptVersion};

pub use pipeline::{PipelineAction, PipelineEditor, PipelineRunState};
pub use route::Route;

/// The page's views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Prompts,
    Traces,
    Telemetry,
    Pipelines,
}

/// IO the page needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(StudioRequest),
    LoadTraces,
    /// The saved prompt versions (`promptVersions`).
    LoadVersions,
    SetHash(String),
}

/// Where the person is: the view, and in the prompts view the open file.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub tab: Tab,
    pub file: Option<String>,
}

/// A message at the top of the page. One about a view (a save, a restore) shows only
/// there, and goes when the person moves away or edits again; one about the page (the
/// traces could not be read) stays until dismissed.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub text: String,
    pub view: Option<View>,
}

/// A save on its way to the worker: the view it was asked from, and the version it
/// restores, if it is a restore.
#[derive(Debug, Clone, PartialEq)]
struct PendingSave {
    id: u32,
    view: View,
    restoring: Option<(String, u32)>,
}

/// Where a Studio run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    Idle,
    Running(u32),
    Done(Rc<StudioRunResult>),
    Failed(String),
}

/// One cell of a comparison: an arm (a variant, at the chosen role's model or, written
/// `B@planner`, at another role's) on one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareCell {
    /// The arm as typed: `A`, or `A@thinking`.
    pub variant: String,
    /// Which sample (the trace it came from).
    pub sample: String,
    /// The sample as a person knows it: its run's task, the run and the step (1-based).
    pub label: String,
    pub state: RunState,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Connected,
    Disconnected,
    Worker(StudioEvent),
    TracesLoaded(Result<Vec<LlmTrace>, String>),
    Route(Route),
    Tab(Tab),
    SelectPrompt(String),
    SelectVariant(String),
    OpenFile(String),
    Edit(String),
    Save,
    /// Back to the bundled file (drops the draft and the stored override).
    Revert(String),
    DiscardDraft,
    NewVariant(String),
    NewPrompt(String),
    VarsText(String),
    /// Sample variables from a stored trace's params.
    UseTrace(String),
    Role(ModelRole),
    Run,
    /// Runs each of `variants` (arms: `A`, or `A@planner` for another role's model) on the
    /// `samples` newest captured steps of this prompt.
    Compare {
        variants: Vec<String>,
        samples: usize,
    },
    Baseline(String),
    VersionsLoaded(Result<Vec<PromptVersion>, String>),
    /// Shows the diff of the open file's version `n` against its text in the editor.
    ShowDiff(Option<u32>),
    /// Restores the open file's version `n`: saved again as the newest version. Asks first
    /// when the file has unsaved edits.
    Restore(u32),
    /// The answer to "discard the unsaved edits and restore?".
    ConfirmRestore(bool),
    Filter(TraceFilter),
    OpenTrace(Option<String>),
    DismissNotice,
    EffectsTaken(u32),
    Pipeline(PipelineAction),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Studio {
    pub tab: Tab,
    pub connected: bool,
    /// The stored overrides, once the worker has sent the settings.
    pub overrides: Option<BTreeMap<String, String>>,
    /// Unsaved edits: path → text.
    pub drafts: BTreeMap<String, String>,
    pub prompt: String,
    pub variant: String,
    /// The file in the editor.
    pub file: Option<String>,
    pub vars_text: String,
    /// The trace the sample came from.
    pub sample_trace: Option<String>,
    pub role: ModelRole,
    pub run: RunState,
    pub compare: Vec<CompareCell>,
    pub baseline: Option<String>,
    pub traces: Option<Vec<LlmTrace>>,
    pub filter: TraceFilter,
    /// `#run=…&step=n` narrows the list to one step.
    pub step: Option<u32>,
    pub open_trace: Option<String>,
    notice: Option<Notice>,
    pub pipeline: PipelineEditor,
    /// Every saved prompt version, once read.
    pub versions: Option<Vec<PromptVersion>>,
    /// The version whose diff is shown: path and number.
    pub diff_version: Option<(String, u32)>,
    /// A restore waiting for the person to agree to lose the file's unsaved edits.
    pub confirm_restore: Option<(String, u32)>,
    pending_save: Option<PendingSave>,
    next_id: u32,
    next_effect: u32,
    pub effects: Vec<(u32, Effect)>,
}

impl Default for Studio {
    fn default() -> Self {
        Studio {
            tab: Tab::Prompts,
            connected: false,
            overrides: None,
            drafts: BTreeMap::new(),
            prompt: "navigator".into(),
            variant: "A".into(),
            file: Some("navigator/A.md".into()),
            vars_text: "{}".into(),
            sample_trace: None,
            role: ModelRole::Navigator,
            run: RunState::Idle,
            compare: vec![],
            baseline: None,
            traces: None,
            filter: TraceFilter::default(),
            step: None,
            open_trace: None,
            notice: None,
            pipeline: PipelineEditor::default(),
            versions: None,
            diff_version: None,
            confirm_restore: None,
            pending_save: None,
            next_id: 1,
            next_effect: 0,
            effects: vec![],
        }
    }
}

page_kit::reducible_by_apply!(Studio, Action);

impl Studio {
    /// Stored overrides with the drafts on top: what the editor shows and runs use.
    pub fn working_overrides(&self) -> BTreeMap<String, String> {
        let mut all = self.overrides.clone().unwrap_or_default();
        all.extend(self.drafts.clone());
        all
    }

    pub fn catalogue(&self) -> Catalogue {
        catalogue::catalogue(&self.working_overrides())
    }

    /// The prompts as the worker would load them with the drafts saved.
    pub fn check(&self) -> Result<PromptSet, String> {
        catalogue::check(&self.working_overrides())
    }

    /// Why the drafts cannot be saved: they do not load, or a strict prompt would read a
    /// variable its agent never supplies (every task would fall back to the bundled file).
    pub fn save_problem(&self) -> Option<String> {
        match self.check() {
            Ok(prompts) => self.unknown_variables(&prompts),
            Err(error) => Some(error),
        }
    }

    /// [`Studio::save_problem`] for drafts that load as `prompts`.
    pub fn unknown_variables(&self, prompts: &PromptSet) -> Option<String> {
        let overrides = self.working_overrides();
        let unknown = preview::unknown_variables(prompts, &self.catalogue().prompts, &overrides);
        let (path, names) = unknown.into_iter().next()?;
        let names: Vec<String> = names.iter().map(|n| format!("{{{{{n}}}}}")).collect();
        Some(format!(
            "{path} reads {}, which its agent never supplies: a task could not use it. Use the \
             variables the bundled variants use, or give it a default ({{{{name | default:\"…\"}}}}).",
            names.join(", ")
        ))
    }

    pub fn entry(&self) -> Option<PromptEntry> {
        self.catalogue().prompts.into_iter().find(|p| p.id == self.prompt)
    }

    /// The sample variables, or why they are not JSON.
    pub fn vars(&self) -> Result<Value, String> {
        let value: Value = serde_json::from_str(&self.vars_text)
            .map_err(|e| format!("The sample variables are not JSON: {e}"))?;
        if value.is_object() {
            Ok(value)
        } else {
            Err("The sample variables must be a JSON object.".into())
        }
    }

    pub fn preview(&self) -> Result<Preview, String> {
        let prompts = self.check()?;
        let vars = self.vars()?;
        let entry = self.entry().ok_or("Choose a prompt.")?;
        let files = catalogue::merged(&self.working_overrides());
        let path = entry.variant_path(&self.variant).ok_or("Choose a variant.")?;
        let source = files.get(path).cloned().unwrap_or_default();
        preview::preview(&prompts, &files, &source, &self.prompt, &self.variant, &vars)
    }

    /// The traces whose variables can be a sample for the open prompt, newest first.
    pub fn samples(&self) -> Vec<&LlmTrace> {
        TraceFilter::default()
            .apply(self.traces.as_deref().unwrap_or_default())
            .into_iter()
            .filter(|t| t.prompt_id == self.prompt && !t.run_id.starts_with("studio:"))
            .collect()
    }

    /// The traces the list shows.
    pub fn listed(&self) -> Vec<&LlmTrace> {
        self.filter
            .apply(self.traces.as_deref().unwrap_or_default())
            .into_iter()
            .filter(|t| self.step.is_none_or(|s| t.step == s))
            .collect()
    }

    /// Where the person is now.
    pub fn view(&self) -> View {
        let file = if self.tab == Tab::Prompts { self.file.clone() } else { None };
        View { tab: self.tab, file }
    }

    /// The notice to show here: the page's, or this view's.
    pub fn notice(&self) -> Option<&str> {
        let notice = self.notice.as_ref()?;
        let here = notice.view.as_ref().is_none_or(|view| *view == self.view());
        here.then_some(notice.text.as_str())
    }

    /// Says `text` in the view the person is in.
    fn notify(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice { text: text.into(), view: Some(self.view()) });
    }

    /// The open file's saved versions, newest first.
    pub fn file_versions(&self) -> Vec<&PromptVersion> {
        match (&self.versions, &self.file) {
            (Some(all), Some(path)) => versions::of_file(all, path),
            _ => vec![],
        }
    }

    /// The text the editor shows for `path`: the draft, else the stored override, else the
    /// bundled file.
    pub fn current_text(&self, path: &str) -> Option<String> {
        self.drafts.get(path).cloned().or_else(|| self.stored_text(path))
    }

    /// How a finished comparison cell differs from the baseline's cell on the same sample;
    /// `None` for the baseline's own cells and cells not both answered.
    pub fn against_baseline(&self, cell: &CompareCell) -> Option<Delta> {
        let baseline = self.baseline.as_deref().filter(|b| *b != cell.variant)?;
        let base =
            self.compare.iter().find(|c| c.variant == baseline && c.sample == cell.sample)?;
        match (&base.state, &cell.state) {
            (RunState::Done(base), RunState::Done(this)) => Some(compare::delta(base, this)),
            _ => None,
        }
    }

    pub fn apply(&mut self, action: Action) {
        let before = self.view();
        let edit = matches!(action, Action::Edit(_));
        self.act(action);
        // A view's notice goes when the person leaves the view or edits again.
        let left = self.view() != before || edit;
        if left && self.notice.as_ref().is_some_and(|n| n.view.as_ref() == Some(&before)) {
            self.notice = None;
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Connected => {
                self.connected = true;
                self.request(|id| StudioRequest::GetSettings { id });
                // The samples for previews and comparisons are the stored traces.
                if self.traces.is_none() {
                    self.effect(Effect::LoadTraces);
                }
                if self.versions.is_none() {
                    self.effect(Effect::LoadVersions);
                }
            }
            Action::Disconnected => {
                self.connected = false;
                if let RunState::Running(_) = self.run {
                    self.run = RunState::Failed("The extension's worker went away.".into());
                }
            }
            Action::Worker(event) => self.on_event(event),
            Action::TracesLoaded(Ok(traces)) => self.traces = Some(traces),
            Action::TracesLoaded(Err(error)) => {
                self.traces = Some(vec![]);
                self.notice = Some(Notice { text: error, view: None });
            }
            Action::VersionsLoaded(Ok(versions)) => self.versions = Some(versions),
            Action::VersionsLoaded(Err(error)) => {
                self.versions = Some(vec![]);
                self.notice = Some(Notice { text: error, view: None });
            }
            Action::ShowDiff(number) => {
                self.diff_version = number.and_then(|n| Some((self.file.clone()?, n)));
            }
            Action::Restore(number) => self.restore(number),
            Action::ConfirmRestore(yes) => {
                let Some((path, number)) = self.confirm_restore.take() else { return };
                if yes && self.file.as_deref() == Some(path.as_str()) {
                    self.drafts.remove(&path);
                    self.restore(number);
                }
            }
            Action::Route(route) => self.follow(route),
            Action::Tab(tab) => {
                self.tab = tab;
                match tab {
                    Tab::Traces | Tab::Telemetry => self.effect(Effect::LoadTraces),
                    Tab::Pipelines => {
                        let id = self.request(|id| StudioRequest::ListPipelines { id });
                        self.pipeline.listing = Some(id);
                        self.request(|id| StudioRequest::ListTabs { id });
                    }
                    Tab::Prompts => {}
                }
            }
            Action::Pipeline(action) => {
                let mut next = self.next_id;
                let request = self.pipeline.apply(action, &mut || {
                    next += 1;
                    next - 1
                });
                self.next_id = next;
                if let Some(request) = request {
                    self.effect(Effect::Send(request));
                }
            }
            Action::SelectPrompt(id) => {
                self.prompt = id;
                self.variant = "A".into();
                self.file = self.entry().and_then(|e| e.variant_path("A").map(str::to_owned));
                self.run = RunState::Idle;
                self.compare.clear();
                self.sample_trace = None;
                if let Some(role) = ModelRole::AGENTS.into_iter().find(|r| r.id() == self.prompt) {
                    self.role = role;
                }
            }
            Action::SelectVariant(variant) => {
                self.file = self.entry().and_then(|e| e.variant_path(&variant).map(str::to_owned));
                self.variant = variant;
                self.run = RunState::Idle;
            }
            Action::OpenFile(path) => self.file = Some(path),
            Action::Edit(text) => {
                if let Some(path) = &self.file {
                    let stored = self.stored_text(path);
                    if stored.as_deref() == Some(text.as_str()) {
                        self.drafts.remove(path);
                    } else {
                        self.drafts.insert(path.clone(), text);
                    }
                }
            }
            Action::DiscardDraft => {
                if let Some(path) = &self.file {
                    self.drafts.remove(path);
                }
            }
            Action::Save => {
                if let Some(problem) = self.save_problem() {
                    self.notify(format!("Not saved: {problem}"));
                    return;
                }
                let edits = self.drafts.iter().map(|(p, t)| (p.clone(), Some(t.clone()))).collect();
                self.save(edits, None);
            }
            Action::Revert(path) => {
                self.drafts.remove(&path);
                self.save(PromptEdits::from([(path, None)]), None);
            }
            Action::NewVariant(name) => {
                let Some(entry) = self.entry() else { return };
                match catalogue::new_variant(&entry, &self.variant, &name) {
                    Ok(edits) => {
                        self.drafts.extend(edits);
                        self.variant = name.trim().to_owned();
                        self.file = Some(format!("{}/{}.md", entry.folder, self.variant));
                    }
                    Err(error) => self.notify(error),
                }
            }
            Action::NewPrompt(id) => match catalogue::new_prompt(&id, &self.catalogue()) {
                Ok(files) => {
                    self.drafts.extend(files);
                    self.prompt = id.trim().to_owned();
                    self.variant = "A".into();
                    self.file = Some(format!("{}/A.md", self.prompt));
                    self.vars_text = "{\n  \"question\": \"\"\n}".into();
                }
                Err(error) => self.notify(error),
            },
            Action::VarsText(text) => {
                self.vars_text = text;
                self.sample_trace = None;
            }
            Action::UseTrace(id) => {
                let found = self.traces.as_deref().unwrap_or_default().iter().find(|t| t.id == id);
                if let Some(trace) = found {
                    self.vars_text =
                        serde_json::to_string_pretty(&trace.params).unwrap_or_default();
                    self.sample_trace = Some(id);
                }
            }
            Action::Role(role) => self.role = role,
            Action::Run => match self.run_request(&self.variant.clone(), None) {
                Ok(run) => {
                    let id = self.request(|id| StudioRequest::StudioRun { id, run: Box::new(run) });
                    self.run = RunState::Running(id);
                }
                Err(error) => self.run = RunState::Failed(error),
            },
            Action::Compare { variants, samples } => self.compare(variants, samples),
            Action::Baseline(variant) => self.baseline = Some(variant),
            Action::Filter(filter) => self.filter = filter,
            Action::OpenTrace(id) => {
                let hash = match &id {
                    Some(id) => format!("trace={}", route::encode(id)),
                    None => String::new(),
                };
                self.open_trace = id;
                self.effect(Effect::SetHash(hash));
            }
            Action::DismissNotice => self.notice = None,
            Action::EffectsTaken(up_to) => self.effects.retain(|(n, _)| *n > up_to),
        }
    }

    /// Sends `edits` to be saved, remembering where the person asked from.
    fn save(&mut self, edits: PromptEdits, restoring: Option<(String, u32)>) {
        let view = self.view();
        let id = self.request(|id| StudioRequest::SavePrompts { id, edits });
        self.pending_save = Some(PendingSave { id, view, restoring });
    }

    /// Restores the open file's version `number` by saving its text again (a new version;
    /// the history stays as it was). Unsaved edits of the file are asked about first.
    fn restore(&mut self, number: u32) {
        let Some(path) = self.file.clone() else { return };
        let found = self.file_versions().into_iter().find(|v| v.number == number);
        let Some(text) = found.map(|v| v.text.clone()) else {
            self.notify(format!("No saved version {number} of {path}."));
            return;
        };
        if self.drafts.get(&path).is_some_and(|draft| *draft != text) {
            self.confirm_restore = Some((path, number));
            return;
        }
        self.drafts.remove(&path);
        if self.overrides.as_ref().and_then(|o| o.get(&path)) == Some(&text) {
            self.notify(format!("Version {number} is already the text of {path} in force."));
            return;
        }
        let mut restored = self.overrides.clone().unwrap_or_default();
        restored.insert(path.clone(), text.clone());
        if let Err(error) = catalogue::check(&restored) {
            self.notify(format!("Not restored: {error}"));
            return;
        }
        self.save(PromptEdits::from([(path.clone(), Some(text))]), Some((path, number)));
    }

    fn stored_text(&self, path: &str) -> Option<String> {
        let stored = self.overrides.as_ref().and_then(|o| o.get(path).cloned());
        stored.or_else(|| catalogue::merged(&BTreeMap::new()).get(path).cloned())
    }

    fn follow(&mut self, route: Route) {
        if let Some(prompt) = route.prompt {
            self.apply(Action::SelectPrompt(prompt));
        }
        if route.trace.is_some() || route.run.is_some() {
            self.tab = Tab::Traces;
            self.open_trace = route.trace;
            self.filter =
                TraceFilter { run: route.run.unwrap_or_default(), ..TraceFilter::default() };
            self.step = route.step;
            self.effect(Effect::LoadTraces);
        }
    }

    fn run_request(&self, variant: &str, vars: Option<Value>) -> Result<StudioRun, String> {
        let (variant, role) = match variant.split_once('@') {
            None => (variant, self.role),
            Some((variant, role)) => {
                let role = ModelRole::ALL.into_iter().find(|r| r.id() == role.trim()).ok_or_else(
                    || {
                        format!(
                            "No role {:?}: use planner, navigator, thinking or repair.",
                            role.trim()
                        )
                    },
                )?;
                (variant.trim(), role)
            }
        };
        self.check().map_err(|e| format!("Fix the prompt files first: {e}"))?;
        let vars = match vars {
            Some(vars) => vars,
            None => self.vars()?,
        };
        if !self.connected {
            return Err("Not connected to the extension's worker.".into());
        }
        Ok(StudioRun {
            prompt_id: self.prompt.clone(),
            variant: variant.to_owned(),
            overrides: self.drafts.clone(),
            vars,
            role,
        })
    }

    fn compare(&mut self, variants: Vec<String>, samples: usize) {
        self.compare.clear();
        let picked: Vec<(String, String, Value)> = self
            .samples()
            .into_iter()
            .take(samples)
            .map(|t| (t.id.clone(), sample_label(t), t.params.clone()))
            .collect();
        if picked.is_empty() {
            self.notify(format!("No captured {} step to compare on yet.", self.prompt));
            return;
        }
        self.baseline = variants.first().cloned();
        for variant in variants {
            for (sample, label, vars) in &picked {
                let state = match self.run_request(&variant, Some(vars.clone())) {
                    Ok(run) => RunState::Running(
                        self.request(|id| StudioRequest::StudioRun { id, run: Box::new(run) }),
                    ),
                    Err(error) => RunState::Failed(error),
                };
                self.compare.push(CompareCell {
                    variant: variant.clone(),
                    sample: sample.clone(),
                    label: label.clone(),
                    state,
                });
            }
        }
    }

    fn on_event(&mut self, event: StudioEvent) {
        if self.pipeline.on_event(&event) {
            if matches!(event, StudioEvent::PipelineSaved { .. }) {
                let id = self.request(|id| StudioRequest::ListPipelines { id });
                self.pipeline.listing = Some(id);
            }
            return;
        }
        match event {
            StudioEvent::Settings { settings, .. } if self.overrides.is_none() => {
                self.overrides = Some(settings.map(|s| s.prompt_overrides).unwrap_or_default());
            }
            StudioEvent::PromptOverrides { id, overrides }
                if self.pending_save.as_ref().is_some_and(|p| p.id == id) =>
            {
                let Some(saved) = self.pending_save.take() else { return };
                self.drafts.retain(|path, text| overrides.get(path) != Some(text));
                self.overrides = Some(overrides);
                let text = match &saved.restoring {
                    Some((path, number)) => format!(
                        "Restored version {number} of {path}, saved as its newest version. New \
                         tasks use it."
                    ),
                    None => "Saved. New tasks use these prompt files.".into(),
                };
                self.notice = Some(Notice { text, view: Some(saved.view) });
                self.effect(Effect::LoadVersions);
            }
            StudioEvent::StudioResult { id, result } => {
                let result: Rc<StudioRunResult> = Rc::from(result);
                if self.run == RunState::Running(id) {
                    self.run = RunState::Done(result.clone());
                }
                for cell in &mut self.compare {
                    if cell.state == RunState::Running(id) {
                        cell.state = RunState::Done(result.clone());
                    }
                }
                // The run left a trace.
                if self.traces.is_some() {
                    self.effect(Effect::LoadTraces);
                }
            }
            StudioEvent::Failed { id, message } => {
                if self.run == RunState::Running(id) {
                    self.run = RunState::Failed(message.clone());
                }
                for cell in &mut self.compare {
                    if cell.state == RunState::Running(id) {
                        cell.state = RunState::Failed(message.clone());
                    }
                }
                if let Some(saved) = self.pending_save.take_if(|p| p.id == id) {
                    self.notice = Some(Notice { text: message, view: Some(saved.view) });
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, make: impl FnOnce(u32) -> StudioRequest) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.effect(Effect::Send(make(id)));
        id
    }

    fn effect(&mut self, effect: Effect) {
        self.next_effect += 1;
        self.effects.push((self.next_effect, effect));
    }

    /// Whether `path` differs from its bundled file in what is stored.
    pub fn is_overridden(&self, path: &str) -> bool {
        self.overrides.as_ref().is_some_and(|o| o.contains_key(path))
    }

    pub fn saving(&self) -> bool {
        self.pending_save.is_some()
    }

    pub fn file_kind(&self, path: &str) -> Option<FileKind> {
        let catalogue = self.catalogue();
        let files = catalogue.prompts.iter().flat_map(|p| p.files.iter());
        files.chain(catalogue.rules.iter()).find(|f| f.path == path).map(|f| f.kind.clone())
    }
}
