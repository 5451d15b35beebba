//! The workflow: what reflection makes of a recording, what the editor changes and what
//! replay runs. [`Workflow::validate`] lists every problem with its path (as the editor shows
//! them next to the field); [`Workflow::substitute`] fills in the parameters. The file
//! format is published as `workflow-format/workflow.schema.json`, which imports are checked
//! against before serde reads them, and which tests hold to the types.

use std::collections::BTreeMap;

pub use run_contract::Problem;
use serde::Serialize;

use super::recording::{SECRET_MASK, TargetDescriptor};
use prompt_files::structured::{Schema, extract_json};

/// The published JSON Schema of an exported workflow.
pub const WORKFLOW_SCHEMA: &str = include_str!("../workflow.schema.json");

/// The export format's version; a future change of shape raises it.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    pub format_version: u32,
    pub id: String,
    pub name: String,
    pub description: String,
    pub version: u32,
    pub updated_at: String,
    pub start_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_id: Option<String>,
    pub params: Vec<Param>,
    pub subtasks: Vec<WorkflowSubtask>,
    /// Grouped by subtask through `subtask`; a subtask's steps are in list order.
    pub steps: Vec<WorkflowStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Param {
    pub name: String,
    pub description: String,
    pub example: String,
    /// A password or code: given at each replay, never stored, and never shown to a model
    /// (prompts and traces carry [`secret_token`] instead; only the typing carries the value).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

/// What stands for secret parameter `name` in a replay's prompts, traces and records.
pub fn secret_token(name: &str) -> String {
    format!("[secret:{name}]")
}

/// What a replay needs from a workflow and the user's values.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayInput {
    /// Substituted, secret parameters as their [`secret_token`]s.
    pub workflow: Workflow,
    /// Every parameter's value as the model may see it (secrets as tokens).
    pub params: BTreeMap<String, String>,
    /// Token → value, for the moment a secret is typed. Keep it in memory only.
    pub secrets: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowSubtask {
    pub id: String,
    pub text: String,
    pub expected_outcome: String,
    /// Variable names of extract steps in earlier subtasks whose values this one needs.
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowStep {
    pub subtask: String,
    pub intent: String,
    pub expected_current_state: String,
    pub target: String,
    pub post_action: String,
    pub action: StepAction,
    /// The page the step was recorded on: replay's fast path checks where an action led
    /// against the next step's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

/// A workflow step's kind is one of [`ActionKind::REPLAYABLE`] (checked by
/// [`Workflow::validate`]).
pub use run_contract::ActionKind;

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StepAction {
    pub kind: ActionKind,
    /// Typed text, key, option, URL or extract query, with `{param}`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A scroll's distance in screens (negative is up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screens: Option<f64>,
    /// An extract's variable name, which later subtasks depend on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The recorded element, for replay's fast path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<TargetDescriptor>,
    /// A drag's drop target as recorded, when the recorder could name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<TargetDescriptor>,
    /// A drag's movement in CSS pixels, from where it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<[f64; 2]>,
}

impl StepAction {
    /// An action of `kind` with `value` and nothing else: no recorded element, variable,
    /// candidates or drag.
    pub fn new(kind: ActionKind, value: Option<&str>) -> StepAction {
        StepAction {
            kind,
            value: value.map(Into::into),
            screens: None,
            variable: None,
            candidates: vec![],
            descriptor: None,
            to: None,
            offset: None,
        }
    }
}

/// A parameter or variable name: a letter or `_`, then letters, digits or `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `{name}`s in `text`, in order. Braces around anything but an identifier are text.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_identifier(&after[..close]) => {
                found.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

/// `text` with each `{name}` that `values` has replaced by its value.
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').map(|close| (close, &after[..close])) {
            Some((close, name)) if values.contains_key(name) => {
                out.push_str(&values[name]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl Workflow {
    /// The texts that may hold `{param}`s, with their paths.
    fn templated(&self) -> Vec<(String, &str)> {
        let mut texts = vec![("description".to_owned(), self.description.as_str())];
        for (i, subtask) in self.subtasks.iter().enumerate() {
            texts.push((format!("/subtasks/{i}/text"), &subtask.text));
            texts.push((format!("/subtasks/{i}/expectedOutcome"), &subtask.expected_outcome));
        }
        for (i, step) in self.steps.iter().enumerate() {
            texts.push((format!("/steps/{i}/intent"), &step.intent));
            if let Some(value) = &step.action.value {
                texts.push((format!("/steps/{i}/action/value"), value));
            }
        }
        texts
    }

    /// Every problem, by path. An empty list means replay can run it.
    pub fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        if self.name.trim().is_empty() {
            problems.push(Problem::new("/name", "Give the workflow a name."));
        }
        let mut seen = lean::SortedSet::new();
        for (i, param) in self.params.iter().enumerate() {
            let path = format!("/params/{i}/name");
            if !is_identifier(&param.name) {
                problems.push(Problem::new(
                    &path,
                    format!(
                        "{:?} is not a valid name: use letters, digits and _, starting with a letter.",
                        param.name
                    ),
                ));
            } else if !seen.insert(param.name.as_str()) {
                problems.push(Problem::new(&path, format!("{:?} is defined twice.", param.name)));
            }
        }
        let used: lean::SortedSet<&str> =
            self.templated().iter().flat_map(|(_, text)| placeholders(text)).collect();
        for (path, text) in self.templated() {
            for name in placeholders(text) {
                if !seen.contains(name) {
                    problems.push(Problem::new(&path, format!("{{{name}}} is not a parameter.")));
                }
            }
        }
        for (i, param) in self.params.iter().enumerate() {
            if is_identifier(&param.name) && !used.contains(param.name.as_str()) {
                problems.push(Problem::new(
                    format!("/params/{i}/name"),
                    format!("{{{}}} is not used by any step or subtask.", param.name),
                ));
            }
        }

        if self.subtasks.is_empty() {
            problems.push(Problem::new("/subtasks", "Add at least one subtask."));
        }
        let mut subtask_index = lean::SortedMap::new();
        for (i, subtask) in self.subtasks.iter().enumerate() {
            if subtask.id.trim().is_empty() {
                problems.push(Problem::new(format!("/subtasks/{i}/id"), "A subtask needs an id."));
            } else if subtask_index.contains_key(subtask.id.as_str()) {
                problems.push(Problem::new(
                    format!("/subtasks/{i}/id"),
                    format!("The id {:?} is used twice.", subtask.id),
                ));
            } else {
                subtask_index.insert(subtask.id.as_str(), i);
            }
            if subtask.text.trim().is_empty() {
                problems.push(Problem::new(
                    format!("/subtasks/{i}/text"),
                    "Say what this subtask does.",
                ));
            }
            if subtask.expected_outcome.trim().is_empty() {
                problems.push(Problem::new(
                    format!("/subtasks/{i}/expectedOutcome"),
                    "Say what the screen shows when this subtask is done.",
                ));
            }
            if !self.steps.iter().any(|s| s.subtask == subtask.id) {
                problems.push(Problem::new(
                    format!("/subtasks/{i}"),
                    "This subtask has no steps: replay has nothing to ground it on.",
                ));
            }
        }

        // Extract variables: where each is defined (its subtask's position).
        let mut variables: lean::SortedMap<&str, usize> = lean::SortedMap::new();
        for (i, step) in self.steps.iter().enumerate() {
            let at = subtask_index.get(step.subtask.as_str()).copied();
            if at.is_none() {
                problems.push(Problem::new(
                    format!("/steps/{i}/subtask"),
                    format!("There is no subtask {:?}.", step.subtask),
                ));
            }
            if !step.action.kind.is_replayable() {
                problems.push(Problem::new(
                    format!("/steps/{i}/action/kind"),
                    format!("A workflow cannot replay {:?} steps.", step.action.kind.as_str()),
                ));
            }
            let needs_value = matches!(
                step.action.kind,
                ActionKind::Type | ActionKind::Key | ActionKind::Select | ActionKind::Navigate
            );
            if needs_value && step.action.value.as_deref().is_none_or(|v| v.is_empty()) {
                problems.push(Problem::new(
                    format!("/steps/{i}/action/value"),
                    "This action needs a value.",
                ));
            }
            if step.action.value.as_deref().is_some_and(|v| v.contains(SECRET_MASK)) {
                problems.push(Problem::new(
                    format!("/steps/{i}/action/value"),
                    "The recorded secret was masked: replace it with a parameter.",
                ));
            }
            if step.action.kind != ActionKind::Extract {
                continue;
            }
            let path = format!("/steps/{i}/action/variable");
            match step.action.variable.as_deref() {
                None | Some("") => {
                    problems.push(Problem::new(path, "Name the variable this extract stores."))
                }
                Some(name) if !is_identifier(name) => problems
                    .push(Problem::new(path, format!("{name:?} is not a valid variable name."))),
                Some(name) => {
                    if variables.insert(name, at.unwrap_or(usize::MAX)).is_some() {
                        problems.push(Problem::new(path, format!("{name:?} is extracted twice.")));
                    }
                }
            }
        }
        for (i, subtask) in self.subtasks.iter().enumerate() {
            for (j, name) in subtask.depends_on.iter().enumerate() {
                let path = format!("/subtasks/{i}/dependsOn/{j}");
                match variables.get(name.as_str()) {
                    None => {
                        problems.push(Problem::new(path, format!("No step extracts {name:?}.")))
                    }
                    Some(&at) if at >= i => problems.push(Problem::new(
                        path,
                        format!("{name:?} is extracted in this or a later subtask, not upstream."),
                    )),
                    Some(_) => {}
                }
            }
        }
        problems
    }

    /// The parameter values replay runs with: each example, overridden by `given`. Names
    /// not defined, and parameters left without a value, are problems.
    pub fn resolve_params(
        &self,
        given: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, Vec<Problem>> {
        let mut problems = Vec::new();
        for name in given.keys() {
            if !self.params.iter().any(|p| &p.name == name) {
                problems
                    .push(Problem::new(format!("/params/{name}"), "There is no such parameter."));
            }
        }
        let mut values = BTreeMap::new();
        for (i, param) in self.params.iter().enumerate() {
            // A secret's example is only ever the mask: its value comes with each replay.
            let fallback = if param.secret { "" } else { param.example.as_str() };
            let value = given.get(&param.name).map_or(fallback, String::as_str);
            if value.is_empty() {
                let why = if param.secret {
                    "Enter this secret."
                } else {
                    "Give this parameter a value."
                };
                problems.push(Problem::new(format!("/params/{i}"), why));
            }
            values.insert(param.name.clone(), value.to_owned());
        }
        if problems.is_empty() { Ok(values) } else { Err(problems) }
    }

    /// The workflow with every `{param}` replaced by its value (see
    /// [`Workflow::resolve_params`]); a workflow with problems is refused whole.
    pub fn substitute(&self, given: &BTreeMap<String, String>) -> Result<Workflow, Vec<Problem>> {
        let problems = self.validate();
        if !problems.is_empty() {
            return Err(problems);
        }
        let values = self.resolve_params(given)?;
        let mut filled = self.clone();
        filled.description = fill(&self.description, &values);
        for subtask in &mut filled.subtasks {
            subtask.text = fill(&subtask.text, &values);
            subtask.expected_outcome = fill(&subtask.expected_outcome, &values);
        }
        for step in &mut filled.steps {
            step.intent = fill(&step.intent, &values);
            step.action.value = step.action.value.as_deref().map(|v| fill(v, &values));
        }
        Ok(filled)
    }

    /// The workflow ready to replay with `given`: substituted, with secret parameters left
    /// as tokens that only the typing replaces.
    pub fn for_replay(
        &self,
        given: &BTreeMap<String, String>,
    ) -> Result<ReplayInput, Vec<Problem>> {
        let values = self.resolve_params(given)?;
        let mut shown = values.clone();
        let mut secrets = BTreeMap::new();
        for param in self.params.iter().filter(|p| p.secret) {
            let token = secret_token(&param.name);
            secrets.insert(token.clone(), values[&param.name].clone());
            shown.insert(param.name.clone(), token);
        }
        let workflow = self.substitute(&shown)?;
        Ok(ReplayInput { workflow, params: shown, secrets })
    }

    /// The workflow as saved again: every save is a new version.
    pub fn saved(&self, at: &str) -> Workflow {
        Workflow { version: self.version + 1, updated_at: at.to_owned(), ..self.clone() }
    }

    /// The export file: one JSON document following [`WORKFLOW_SCHEMA`].
    pub fn to_export(&self) -> String {
        serde_json::to_string_pretty(self).expect("workflows serialize")
    }

    /// Reads an export file: checked against [`WORKFLOW_SCHEMA`] first (all its violations,
    /// by JSON Pointer), then read; the workflow's own problems come back beside it for the
    /// editor to show.
    pub fn import(text: &str) -> Result<(Workflow, Vec<Problem>), Vec<Problem>> {
        let value = extract_json(text).map_err(|e| vec![Problem::new("", e.message)])?;
        let violations = schema().validate(&value);
        if !violations.is_empty() {
            return Err(violations.into_iter().map(|v| Problem::new(v.path, v.message)).collect());
        }
        let workflow: Workflow =
            serde_json::from_value(value).map_err(|e| vec![Problem::new("", e.to_string())])?;
        let problems = workflow.validate();
        Ok((workflow, problems))
    }
}

/// [`WORKFLOW_SCHEMA`], compiled.
pub fn schema() -> Schema {
    let value = serde_json::from_str(WORKFLOW_SCHEMA).expect("the workflow schema is JSON");
    Schema::compile(value).expect("the workflow schema uses supported keywords")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The seed's example: open a music app, search and play `{song_name}`, then read the
    /// album (extracted) and use it in a later subtask.
    pub fn example() -> Workflow {
        let step = |subtask: &str, intent: &str, kind, value: Option<&str>| WorkflowStep {
            subtask: subtask.into(),
            intent: intent.into(),
            expected_current_state: "the music site".into(),
            target: "the search box".into(),
            post_action: "results show".into(),
            action: StepAction::new(kind, value),
            url: None,
            screenshot: None,
            details: None,
        };
        let mut extract = step("play", "Read the album", ActionKind::Extract, Some("album name"));
        extract.action.variable = Some("album".into());
        Workflow {
            format_version: FORMAT_VERSION,
            id: "wf-1".into(),
            name: "Play a song".into(),
            description: "Play {song_name} and look up its album".into(),
            version: 1,
            updated_at: "2026-11-24T00:00:00.000Z".into(),
            start_url: "https://music.test/".into(),
            recording_id: Some("rec-1".into()),
            params: vec![Param {
                name: "song_name".into(),
                description: "the song".into(),
                example: "numb".into(),
                secret: false,
            }],
            subtasks: vec![
                WorkflowSubtask {
                    id: "play".into(),
                    text: "Search for and play {song_name}".into(),
                    expected_outcome: "{song_name} is playing".into(),
                    depends_on: vec![],
                },
                WorkflowSubtask {
                    id: "album".into(),
                    text: "Open the album page".into(),
                    expected_outcome: "the album page shows".into(),
                    depends_on: vec!["album".into()],
                },
            ],
            steps: vec![
                step("play", "Search", ActionKind::Type, Some("{song_name}")),
                step("play", "Submit", ActionKind::Key, Some("Enter")),
                extract,
                step("album", "Open the album", ActionKind::Click, None),
            ],
        }
    }

    fn paths(problems: &[Problem]) -> Vec<&str> {
        problems.iter().map(|p| p.path.as_str()).collect()
    }

    #[test]
    fn the_example_is_valid_and_substitutes() {
        let workflow = example();
        assert_eq!(workflow.validate(), []);
        let given = BTreeMap::from([("song_name".to_owned(), "Halo".to_owned())]);
        let filled = workflow.substitute(&given).unwrap();
        assert_eq!(filled.steps[0].action.value.as_deref(), Some("Halo"));
        assert_eq!(filled.subtasks[0].expected_outcome, "Halo is playing");
        let defaults = workflow.substitute(&BTreeMap::new()).unwrap();
        assert_eq!(defaults.subtasks[0].text, "Search for and play numb");
        let unknown = BTreeMap::from([("artist".to_owned(), "x".to_owned())]);
        assert_eq!(paths(&workflow.substitute(&unknown).unwrap_err()), ["/params/artist"]);
    }

    #[test]
    fn validation_reports_every_problem_with_its_path() {
        let mut workflow = example();
        workflow.params.push(Param {
            name: "unused".into(),
            description: "".into(),
            example: "x".into(),
            secret: false,
        });
        workflow.params.push(Param {
            name: "2bad".into(),
            description: "".into(),
            example: "".into(),
            secret: false,
        });
        workflow.steps[1].action.value = Some("{artist} Enter".into());
        workflow.steps[2].action.value = Some("[secret]".into());
        workflow.subtasks[0].depends_on = vec!["album".into()];
        workflow.subtasks[1].depends_on.push("nothing".into());
        workflow.subtasks.push(WorkflowSubtask {
            id: "play".into(),
            text: " ".into(),
            expected_outcome: "done".into(),
            depends_on: vec![],
        });
        workflow.steps[3].subtask = "gone".into();
        let problems = workflow.validate();
        let mut got = paths(&problems);
        got.sort();
        assert_eq!(
            got,
            [
                "/params/1/name",
                "/params/2/name",
                "/steps/1/action/value",
                "/steps/2/action/value",
                "/steps/3/subtask",
                "/subtasks/0/dependsOn/0",
                "/subtasks/1",
                "/subtasks/1/dependsOn/1",
                "/subtasks/2/id",
                "/subtasks/2/text",
            ],
            "{problems:#?}"
        );
        let message = |path: &str| {
            problems.iter().find(|p| p.path == path).map(|p| p.message.clone()).unwrap()
        };
        assert!(message("/subtasks/0/dependsOn/0").contains("not upstream"));
        assert!(message("/steps/1/action/value").contains("{artist}"));
        assert!(message("/params/1/name").contains("not used"));
        // A problem-free workflow is required to substitute.
        assert!(workflow.substitute(&BTreeMap::new()).is_err());
    }

    #[test]
    fn a_secret_parameter_is_given_each_replay_and_reaches_prompts_only_as_a_token() {
        let mut workflow = example();
        workflow.params.push(Param {
            name: "password".into(),
            description: "the account's".into(),
            example: "[secret]".into(),
            secret: true,
        });
        workflow.steps[1].action.value = Some("{password}".into());
        workflow.steps[1].action.kind = ActionKind::Type;
        assert_eq!(workflow.validate(), []);
        let missing = workflow.for_replay(&BTreeMap::new()).unwrap_err();
        assert_eq!(missing, [Problem::new("/params/1", "Enter this secret.")]);
        let given = BTreeMap::from([("password".to_owned(), "hunter2".to_owned())]);
        let input = workflow.for_replay(&given).unwrap();
        assert_eq!(input.params["password"], "[secret:password]");
        assert_eq!(input.params["song_name"], "numb");
        assert_eq!(input.secrets["[secret:password]"], "hunter2");
        assert_eq!(input.workflow.steps[1].action.value.as_deref(), Some("[secret:password]"));
        assert!(!format!("{:?}", input.workflow).contains("hunter2"));
    }

    #[test]
    fn placeholders_are_identifiers_in_braces_only() {
        assert_eq!(placeholders("a {x} {not it} {y_2}{} {"), ["x", "y_2"]);
        let values = BTreeMap::from([("x".to_owned(), "1".to_owned())]);
        assert_eq!(fill("{x}{y} {x", &values), "1{y} {x");
    }

    #[test]
    fn the_published_schema_and_serde_agree_on_examples() {
        let mut workflow = example();
        workflow.steps[3].action.descriptor = Some(TargetDescriptor {
            tag: "a".into(),
            role: Some("link".into()),
            name: "Meteora".into(),
            selector: "a[data-testid=album]".into(),
            state_id: Some(12),
            bbox: [1.0, 2.0, 3.0, 4.0],
            ..TargetDescriptor::default()
        });
        workflow.steps[0].screenshot = Some("ab".repeat(32));
        workflow.steps[0].url = Some("https://music.test/".into());
        let export = workflow.to_export();
        let value: serde_json::Value = serde_json::from_str(&export).unwrap();
        assert_eq!(schema().validate(&value), []);
        let (back, problems) = Workflow::import(&export).unwrap();
        assert_eq!((back, problems), (workflow.clone(), vec![]));

        // What the schema refuses, import refuses, by path.
        let mut broken = value.clone();
        broken["subtasks"][0]["dependsOn"] = serde_json::json!("album");
        broken["steps"][0]["action"]["kind"] = serde_json::json!("teleport");
        let errors = Workflow::import(&broken.to_string()).unwrap_err();
        let mut got = paths(&errors);
        got.sort();
        assert_eq!(got, ["/steps/0/action/kind", "/subtasks/0/dependsOn"]);
        // Every kind serde writes is one the schema allows.
        for kind in ActionKind::REPLAYABLE {
            let mut one = value.clone();
            one["steps"][0]["action"]["kind"] = serde_json::to_value(&kind).unwrap();
            assert_eq!(schema().validate(&one), [], "{kind:?}");
        }
        // A kind the vocabulary has but a workflow cannot replay is refused by both checks.
        let mut hover = value.clone();
        hover["steps"][0]["action"]["kind"] = serde_json::json!("hover");
        assert_eq!(
            paths(&Workflow::import(&hover.to_string()).unwrap_err()),
            ["/steps/0/action/kind"]
        );
        assert_eq!(workflow.saved("later").version, 2);
    }
}
