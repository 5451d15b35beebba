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
use protocol::studio::{StudioRun, StudioRunResult};
use protocol::{PanelRequest, WorkerEvent};
use run_records::LlmTrace;
use serde_json::Value;
use studio_core::catalogue::{self, Catalogue, FileKind, PromptEntry};
use studio_core::preview::{self, Preview};
use studio_core::traces::TraceFilter;
use yew::Reducible;

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
    Send(PanelRequest),
    LoadTraces,
    SetHash(String),
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
    pub state: RunState,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Connected,
    Disconnected,
    Worker(WorkerEvent),
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
    pub notice: Option<String>,
    pub pipeline: PipelineEditor,
    pending_save: Option<u32>,
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
            pending_save: None,
            next_id: 1,
            next_effect: 0,
            effects: vec![],
        }
    }
}

impl Reducible for Studio {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.apply(action);
        Rc::new(next)
    }
}

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

    pub fn apply(&mut self, action: Action) {
        match action {
            Action::Connected => {
                self.connected = true;
                self.request(|id| PanelRequest::GetSettings { id });
                // The samples for previews and comparisons are the stored traces.
                if self.traces.is_none() {
                    self.effect(Effect::LoadTraces);
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
                self.notice = Some(error);
            }
            Action::Route(route) => self.follow(route),
            Action::Tab(tab) => {
                self.tab = tab;
                match tab {
                    Tab::Traces | Tab::Telemetry => self.effect(Effect::LoadTraces),
                    Tab::Pipelines => {
                        let id = self.request(|id| PanelRequest::ListPipelines { id });
                        self.pipeline.listing = Some(id);
                        self.request(|id| PanelRequest::ListTabs { id });
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
                    self.notice = Some(format!("Not saved: {problem}"));
                    return;
                }
                let edits = self.drafts.iter().map(|(p, t)| (p.clone(), Some(t.clone()))).collect();
                let id = self.request(|id| PanelRequest::SavePrompts { id, edits });
                self.pending_save = Some(id);
            }
            Action::Revert(path) => {
                self.drafts.remove(&path);
                let mut edits = BTreeMap::new();
                edits.insert(path, None);
                let id = self.request(|id| PanelRequest::SavePrompts { id, edits });
                self.pending_save = Some(id);
            }
            Action::NewVariant(name) => {
                let Some(entry) = self.entry() else { return };
                match catalogue::new_variant(&entry, &self.variant, &name) {
                    Ok(edits) => {
                        self.drafts.extend(edits);
                        self.variant = name.trim().to_owned();
                        self.file = Some(format!("{}/{}.md", entry.folder, self.variant));
                    }
                    Err(error) => self.notice = Some(error),
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
                Err(error) => self.notice = Some(error),
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
                    let id = self.request(|id| PanelRequest::StudioRun { id, run: Box::new(run) });
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
        let picked: Vec<(String, Value)> = self
            .samples()
            .into_iter()
            .take(samples)
            .map(|t| (t.id.clone(), t.params.clone()))
            .collect();
        if picked.is_empty() {
            self.notice = Some(format!("No captured {} step to compare on yet.", self.prompt));
            return;
        }
        self.baseline = variants.first().cloned();
        for variant in variants {
            for (sample, vars) in &picked {
                let state = match self.run_request(&variant, Some(vars.clone())) {
                    Ok(run) => RunState::Running(
                        self.request(|id| PanelRequest::StudioRun { id, run: Box::new(run) }),
                    ),
                    Err(error) => RunState::Failed(error),
                };
                self.compare.push(CompareCell {
                    variant: variant.clone(),
                    sample: sample.clone(),
                    state,
                });
            }
        }
    }

    fn on_event(&mut self, event: WorkerEvent) {
        if self.pipeline.on_event(&event) {
            if matches!(event, WorkerEvent::PipelineSaved { .. }) {
                let id = self.request(|id| PanelRequest::ListPipelines { id });
                self.pipeline.listing = Some(id);
            }
            return;
        }
        match event {
            WorkerEvent::Settings { settings, .. } if self.overrides.is_none() => {
                self.overrides = Some(settings.map(|s| s.prompt_overrides).unwrap_or_default());
            }
            WorkerEvent::PromptOverrides { id, overrides } if self.pending_save == Some(id) => {
                self.pending_save = None;
                self.drafts.retain(|path, text| overrides.get(path) != Some(text));
                self.overrides = Some(overrides);
                self.notice = Some("Saved. New tasks use these prompt files.".into());
            }
            WorkerEvent::StudioResult { id, result } => {
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
            WorkerEvent::Failed { id, message } => {
                if self.run == RunState::Running(id) {
                    self.run = RunState::Failed(message.clone());
                }
                for cell in &mut self.compare {
                    if cell.state == RunState::Running(id) {
                        cell.state = RunState::Failed(message.clone());
                    }
                }
                if self.pending_save == Some(id) {
                    self.pending_save = None;
                    self.notice = Some(message);
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, make: impl FnOnce(u32) -> PanelRequest) -> u32 {
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
