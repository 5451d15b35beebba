//! The Studio's pipeline editor: the YAML as typed (checked, drawn), a test run with its
//! input and tab, cancel, save and publish through the worker's gate.

use prompt_files::pipeline::{BUNDLED_PIPELINES, Problem, load};
use prompt_files::prompts::PromptSet;
use protocol::studio::StoredPipeline;
use protocol::studio::StudioEvent;
use protocol::studio::StudioRequest;
use protocol::{TabId, TabInfo};
use serde_json::Value;
use studio_core::pipelines::parse_source;

#[derive(Debug, Clone, PartialEq)]
pub enum PipelineRunState {
    Idle,
    Running(u32),
    /// The engine's `PipelineRun` as JSON.
    Done(Value),
    Failed(String),
}

/// What the worker said of a save or publish.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveReport {
    pub version: u32,
    pub published: bool,
    pub errors: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PipelineAction {
    Text(String),
    Input(String),
    Tab(String),
    /// Ask the worker for the open tabs to choose from.
    ListTabs,
    Run,
    Cancel,
    Save {
        publish: bool,
    },
    /// Opens a stored version's text (or a bundled example's), named as the list names it.
    /// Asks first when the editor holds unsaved YAML.
    Open {
        name: String,
        text: String,
    },
    /// The answer to "replace the unsaved YAML?".
    ConfirmOpen(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PipelineEditor {
    pub text: String,
    pub input_text: String,
    pub tab_text: String,
    pub run: PipelineRunState,
    pub saving: Option<u32>,
    pub report: Option<SaveReport>,
    pub stored: Vec<StoredPipeline>,
    pub listing: Option<u32>,
    /// The running run's steps so far, as the worker tells them.
    pub live: Vec<Value>,
    /// The open web pages a test run can read, by title and URL.
    pub tabs: Vec<TabInfo>,
    /// The text as last opened or saved: the editor has unsaved YAML when it differs.
    pub opened: String,
    /// The text being saved, which becomes `opened` once stored.
    saving_text: String,
    /// A file to open once the person agrees to lose the unsaved YAML: its name and text.
    pub confirm_open: Option<(String, String)>,
}

impl Default for PipelineEditor {
    fn default() -> Self {
        PipelineEditor {
            text: BUNDLED_PIPELINES[0].1.to_owned(),
            input_text: "{}".into(),
            tab_text: String::new(),
            run: PipelineRunState::Idle,
            saving: None,
            report: None,
            stored: vec![],
            listing: None,
            live: vec![],
            tabs: vec![],
            opened: BUNDLED_PIPELINES[0].1.to_owned(),
            saving_text: String::new(),
            confirm_open: None,
        }
    }
}

impl PipelineEditor {
    /// The file's problems as the loader reports them (errors, then warnings).
    pub fn problems(&self, prompts: &PromptSet) -> (Vec<Problem>, Vec<Problem>) {
        match parse_source(&self.text).map_err(|p| vec![p]).and_then(|v| load(&v, prompts)) {
            Ok(loaded) => (vec![], loaded.warnings),
            Err(errors) => (errors, vec![]),
        }
    }

    /// Whether the editor holds YAML that was neither opened nor saved as it is.
    pub fn unsaved(&self) -> bool {
        self.text != self.opened
    }

    fn open(&mut self, text: String) {
        self.opened = text.clone();
        self.text = text;
        self.report = None;
        self.run = PipelineRunState::Idle;
        self.confirm_open = None;
    }

    pub fn tab(&self) -> Option<TabId> {
        self.tab_text.trim().parse().ok()
    }

    /// Carries out `action`; a request to send comes back for the page to number and send.
    pub fn apply(
        &mut self,
        action: PipelineAction,
        next_id: &mut dyn FnMut() -> u32,
    ) -> Option<StudioRequest> {
        match action {
            PipelineAction::Text(text) => {
                self.text = text;
                self.report = None;
                None
            }
            PipelineAction::Input(text) => {
                self.input_text = text;
                None
            }
            PipelineAction::Tab(text) => {
                self.tab_text = text;
                None
            }
            PipelineAction::ListTabs => Some(StudioRequest::ListTabs { id: next_id() }),
            PipelineAction::Open { name, text } => {
                if self.unsaved() && text != self.text {
                    self.confirm_open = Some((name, text));
                } else {
                    self.open(text);
                }
                None
            }
            PipelineAction::ConfirmOpen(yes) => {
                match self.confirm_open.take() {
                    Some((_, text)) if yes => self.open(text),
                    _ => {}
                }
                None
            }
            PipelineAction::Run => {
                let input: Value = match serde_json::from_str(&self.input_text) {
                    Ok(input) => input,
                    Err(error) => {
                        self.run =
                            PipelineRunState::Failed(format!("The input is not JSON: {error}"));
                        return None;
                    }
                };
                // The worker reads no YAML: it is sent the file as parsed here.
                let pipeline = match parse_source(&self.text) {
                    Ok(pipeline) => pipeline,
                    Err(problem) => {
                        self.run = PipelineRunState::Failed(format!(
                            "The pipeline does not load: {problem}"
                        ));
                        return None;
                    }
                };
                let id = next_id();
                self.run = PipelineRunState::Running(id);
                self.live.clear();
                Some(StudioRequest::RunPipeline {
                    id,
                    text: self.text.clone(),
                    pipeline: Some(pipeline),
                    input,
                    tab_id: self.tab(),
                })
            }
            PipelineAction::Cancel => match self.run {
                PipelineRunState::Running(run) => {
                    Some(StudioRequest::CancelPipeline { id: next_id(), run })
                }
                _ => None,
            },
            PipelineAction::Save { publish } => {
                let pipeline = match parse_source(&self.text) {
                    Ok(pipeline) => pipeline,
                    Err(problem) => {
                        self.report = Some(SaveReport {
                            version: 0,
                            published: false,
                            errors: vec![problem],
                            warnings: vec![],
                        });
                        return None;
                    }
                };
                let id = next_id();
                self.saving = Some(id);
                self.saving_text = self.text.clone();
                self.report = None;
                Some(StudioRequest::SavePipeline {
                    id,
                    text: self.text.clone(),
                    pipeline: Some(pipeline),
                    publish,
                })
            }
        }
    }

    /// Takes the worker's answers meant for the editor; true when one was.
    pub fn on_event(&mut self, event: &StudioEvent) -> bool {
        match event {
            StudioEvent::PipelineResult { id, run }
                if self.run == PipelineRunState::Running(*id) =>
            {
                self.run = PipelineRunState::Done(run.clone());
                self.live.clear();
                true
            }
            StudioEvent::Tabs { tabs, .. } => {
                self.tabs = tabs.iter().filter(|t| t.url.starts_with("http")).cloned().collect();
                true
            }
            StudioEvent::PipelineStep { run, step } => {
                if self.run == PipelineRunState::Running(*run) {
                    self.live.push(step.clone());
                }
                true
            }
            StudioEvent::PipelineSaved { id, version, published, errors, warnings }
                if self.saving == Some(*id) =>
            {
                self.saving = None;
                if *version > 0 {
                    self.opened = std::mem::take(&mut self.saving_text);
                }
                self.report = Some(SaveReport {
                    version: *version,
                    published: *published,
                    errors: errors.clone(),
                    warnings: warnings.clone(),
                });
                true
            }
            StudioEvent::Pipelines { id, pipelines } if self.listing == Some(*id) => {
                self.listing = None;
                self.stored = pipelines.clone();
                true
            }
            StudioEvent::Failed { id, message } if self.run == PipelineRunState::Running(*id) => {
                self.run = PipelineRunState::Failed(message.clone());
                true
            }
            StudioEvent::Failed { id, message } if self.saving == Some(*id) => {
                self.saving = None;
                self.report = Some(SaveReport {
                    version: 0,
                    published: false,
                    errors: vec![Problem::whole(message.clone())],
                    warnings: vec![],
                });
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counter() -> impl FnMut() -> u32 {
        let mut n = 10;
        move || {
            n += 1;
            n
        }
    }

    #[test]
    fn the_example_loads_and_a_missing_prompt_is_an_error_at_its_step() {
        let mut editor = PipelineEditor::default();
        let prompts = PromptSet::bundled();
        assert!(editor.problems(&prompts).0.is_empty());
        editor.text = editor.text.replace("prompt_id: product_facts", "prompt_id: no_such_prompt");
        let (errors, _) = editor.problems(&prompts);
        assert!(
            errors
                .iter()
                .any(|e| e.path.starts_with("/steps/1") && e.message.contains("no_such_prompt")),
            "{errors:?}"
        );
    }

    #[test]
    fn the_tab_list_offers_open_web_pages_by_title() {
        let mut editor = PipelineEditor::default();
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        let asked = editor.apply(PipelineAction::ListTabs, &mut next);
        assert_eq!(asked, Some(StudioRequest::ListTabs { id: 1 }));
        let tab = |id, url: &str| TabInfo { id, title: format!("Tab {id}"), url: url.into() };
        let tabs = vec![tab(7, "http://shop.test/p"), tab(8, "chrome://newtab/")];
        assert!(editor.on_event(&StudioEvent::Tabs { id: 1, tabs }));
        assert_eq!(editor.tabs, [tab(7, "http://shop.test/p")]);
    }

    #[test]
    fn a_run_sends_the_text_input_and_tab_and_takes_its_result() {
        let mut editor = PipelineEditor::default();
        let mut ids = counter();
        editor.apply(PipelineAction::Input("{".into()), &mut ids);
        assert_eq!(editor.apply(PipelineAction::Run, &mut ids), None);
        assert!(matches!(&editor.run, PipelineRunState::Failed(m) if m.contains("not JSON")));
        editor.apply(PipelineAction::Input("{}".into()), &mut ids);
        editor.apply(PipelineAction::Tab(" 7 ".into()), &mut ids);
        let Some(StudioRequest::RunPipeline { id, tab_id, input, text, pipeline }) =
            editor.apply(PipelineAction::Run, &mut ids)
        else {
            panic!()
        };
        assert_eq!((tab_id, input), (Some(7), json!({})));
        // The worker reads no YAML: the file goes as written and as parsed here.
        assert_eq!((text.as_str(), pipeline), (editor.text.as_str(), parse_source(&text).ok()));
        let Some(StudioRequest::CancelPipeline { run, .. }) =
            editor.apply(PipelineAction::Cancel, &mut ids)
        else {
            panic!()
        };
        assert_eq!(run, id);
        let step = json!({"step_id": "page", "status": "ok"});
        editor.on_event(&StudioEvent::PipelineStep { run: id, step: step.clone() });
        editor.on_event(&StudioEvent::PipelineStep { run: id + 100, step: json!({}) });
        assert_eq!(editor.live, [step], "this run's steps, live");
        let result = json!({"status": "ok", "output": {"found": true}, "steps": []});
        assert!(editor.on_event(&StudioEvent::PipelineResult { id, run: result.clone() }));
        assert_eq!(editor.run, PipelineRunState::Done(result));
        assert!(editor.live.is_empty());
        assert_eq!(editor.apply(PipelineAction::Cancel, &mut ids), None);
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_here_with_where() {
        let mut editor = PipelineEditor::default();
        let mut ids = counter();
        editor.apply(
            PipelineAction::Text("id: x\nsteps:\n  - id: a\n   type: llm\n".into()),
            &mut ids,
        );
        assert_eq!(editor.apply(PipelineAction::Run, &mut ids), None);
        let PipelineRunState::Failed(said) = &editor.run else { panic!("{:?}", editor.run) };
        assert!(said.contains("not valid YAML") && said.contains("line 4"), "{said}");
        assert_eq!(editor.apply(PipelineAction::Save { publish: true }, &mut ids), None);
        let report = editor.report.as_ref().expect("a report");
        assert!(report.errors[0].message.contains("not valid YAML"), "{report:?}");
        assert_eq!((report.version, editor.saving), (0, None));
    }

    #[test]
    fn opening_an_example_over_unsaved_yaml_asks_first() {
        let mut editor = PipelineEditor::default();
        let mut ids = counter();
        let example = BUNDLED_PIPELINES[0];
        let open = || PipelineAction::Open { name: example.0.into(), text: example.1.into() };
        // Nothing typed: the example opens at once.
        editor.apply(open(), &mut ids);
        assert_eq!(editor.confirm_open, None);
        let mine = format!("{}\n# mine", example.1);
        editor.apply(PipelineAction::Text(mine.clone()), &mut ids);
        assert!(editor.unsaved());
        editor.apply(open(), &mut ids);
        assert_eq!(editor.text, mine, "the unsaved YAML is kept until the person agrees");
        assert_eq!(editor.confirm_open.as_ref().map(|c| c.0.as_str()), Some(example.0));
        editor.apply(PipelineAction::ConfirmOpen(false), &mut ids);
        assert_eq!((editor.text.as_str(), editor.confirm_open.is_none()), (mine.as_str(), true));
        editor.apply(open(), &mut ids);
        editor.apply(PipelineAction::ConfirmOpen(true), &mut ids);
        assert_eq!(editor.text, example.1);
        assert!(!editor.unsaved());
        // Once saved, the text is no longer unsaved: opening another file asks nothing.
        editor.apply(PipelineAction::Text(mine.clone()), &mut ids);
        let Some(StudioRequest::SavePipeline { id, .. }) =
            editor.apply(PipelineAction::Save { publish: false }, &mut ids)
        else {
            panic!()
        };
        editor.on_event(&StudioEvent::PipelineSaved {
            id,
            version: 2,
            published: false,
            errors: vec![],
            warnings: vec![],
        });
        assert!(!editor.unsaved());
        editor.apply(open(), &mut ids);
        assert_eq!((editor.text.as_str(), editor.confirm_open.is_none()), (example.1, true));
    }

    #[test]
    fn a_refused_publish_keeps_the_gates_errors() {
        let mut editor = PipelineEditor::default();
        let mut ids = counter();
        let Some(StudioRequest::SavePipeline { id, publish: true, .. }) =
            editor.apply(PipelineAction::Save { publish: true }, &mut ids)
        else {
            panic!()
        };
        let error = Problem { path: "/steps/1/prompt_id".into(), message: "no prompt".into() };
        editor.on_event(&StudioEvent::PipelineSaved {
            id,
            version: 0,
            published: false,
            errors: vec![error.clone()],
            warnings: vec![],
        });
        let report = editor.report.as_ref().unwrap();
        assert_eq!(
            (report.version, report.published, &report.errors[..]),
            (0, false, &[error][..])
        );
        assert_eq!(editor.saving, None);
    }
}
