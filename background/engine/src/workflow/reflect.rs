//! Reflect: a [`Recording`] made into a [`Workflow`] by two model passes, through the same
//! render → ask → repair → trace path as the agents ([`traced_call`]).
//!
//! * Pass A (`prompts/reflect_step/`), once per step: the pre- and post-action screenshots
//!   (or, without vision, the recorded page states), the action, its target and the user's
//!   note → [`StepReflection`].
//! * Pass B (`prompts/reflect_task/`), once: every pass-A result → [`TaskReflection`]: the
//!   description, subtasks, parameters, and each step's subtask and parametrised value.
//!
//! Pass-A results are kept per step (`Vec<Option<StepReflection>>`), so a failed reflection
//! resumes where it stopped and pass B can be re-run alone. A failure is a typed
//! [`ReflectError`] that says which pass, which step and why.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::recording::{Dragged, ExtractQuery, RecordedAction, Recording, SECRET_MASK};
use super::schema::{
    ActionKind, FORMAT_VERSION, Param, StepAction, Workflow, WorkflowStep, WorkflowSubtask,
    is_identifier,
};
use crate::Clock;
use crate::executor::{CallContext, CallError, CallSpec, decode_answer, traced_call};
use crate::providers::{Http, ModelConfig};
use crate::repair::RepairLedger;
use crate::run::{Actor, LlmTrace};

pub const STEP_PROMPT: &str = "reflect_step";
pub const TASK_PROMPT: &str = "reflect_task";

/// Pass A's answer for one step.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct StepReflection {
    pub expected_current_state: String,
    pub intent: String,
    pub target: String,
    pub post_action: String,
    pub action_value: String,
}

/// Pass B's answer.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct TaskReflection {
    pub task_name: String,
    pub detailed_task_description: String,
    pub task_params: Vec<Param>,
    pub subtasks: Vec<ReflectedSubtask>,
    pub steps: Vec<ReflectedStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ReflectedSubtask {
    pub id: String,
    pub text: String,
    pub expected_outcome: String,
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ReflectedStep {
    pub index: u32,
    pub subtask: String,
    pub action_value: String,
    pub variable: String,
}

/// Why a reflection stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum ReflectError {
    /// The recording has no steps.
    Empty,
    /// Paused or cancelled by the user.
    Interrupted,
    /// Pass A failed on step `step`: `why` in a sentence, `details` for whoever looks.
    StepFailed { step: u32, why: String, details: Option<String> },
    /// Pass B failed, or answered something that does not fit the recording.
    TaskFailed { why: String, details: Option<String> },
}

impl ReflectError {
    /// The model's own words on what was wrong, kept out of the sentence above them.
    pub fn details(&self) -> Option<&str> {
        match self {
            ReflectError::StepFailed { details, .. } | ReflectError::TaskFailed { details, .. } => {
                details.as_deref()
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for ReflectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReflectError::Empty => f.write_str("The recording has no steps to reflect on."),
            ReflectError::Interrupted => f.write_str("Reflection was stopped."),
            ReflectError::StepFailed { step, why, .. } => {
                write!(f, "Recorded step {} could not be described: {why}", step + 1)
            }
            ReflectError::TaskFailed { why, .. } => {
                write!(f, "The steps could not be put together into a workflow: {why}")
            }
        }
    }
}

/// The failure in a sentence, and the model's answer's problems apart from it.
fn why(error: CallError) -> (String, Option<String>) {
    match error {
        CallError::Interrupted => ("interrupted".to_owned(), None),
        CallError::Failed(error) => (error.headline(), error.details()),
    }
}

/// What a reflection needs besides the recording.
pub struct Reflector<'a, H, K> {
    pub cx: CallContext<'a, H, K>,
    /// The model for both passes (the shell's choice; a vision model reads screenshots).
    pub model: &'a ModelConfig,
    /// Send screenshots; otherwise the recorded page states stand in for them.
    pub vision: bool,
    /// Base64 JPEGs by SHA-256: the recording's screenshots the shell loaded.
    pub screenshots: &'a BTreeMap<String, String>,
    /// Fresh ids for traces.
    pub new_id: &'a dyn Fn() -> String,
    pub ledger: &'a RepairLedger,
}

impl<H: Http, K: Clock> Reflector<'_, H, K> {
    /// Traces are filed under this run id, so the trace viewer groups a recording's calls.
    fn run_id(recording: &Recording) -> String {
        format!("reflect:{}", recording.id)
    }

    async fn ask<T: serde::de::DeserializeOwned>(
        &self,
        prompt_id: &str,
        run_id: &str,
        step: u32,
        vars: Value,
        images: Vec<String>,
        traces: &mut Vec<LlmTrace>,
    ) -> Result<T, CallError> {
        let spec = CallSpec {
            prompt_id,
            model: self.model,
            actor: Actor::Planner,
            run_id,
            step,
            trace_id: (self.new_id)(),
            vars,
            images,
        };
        let answer = traced_call(&self.cx, spec, self.ledger).await;
        traces.extend(answer.trace);
        answer.answer.and_then(|value| decode_answer(value, &self.model.model))
    }

    /// Pass A for step `index`.
    pub async fn reflect_step(
        &self,
        recording: &Recording,
        index: usize,
        traces: &mut Vec<LlmTrace>,
    ) -> Result<StepReflection, ReflectError> {
        let step = &recording.steps[index];
        let before = step.moment.screenshot.as_ref().and_then(|s| self.screenshots.get(s));
        let after = recording.post_screenshot(index).and_then(|s| self.screenshots.get(s));
        let (images, screens) = match (self.vision, before, after) {
            (true, Some(before), Some(after)) => (
                vec![before.clone(), after.clone()],
                "Two screenshots are attached: the screen before the action, then after it.",
            ),
            (true, Some(before), None) => (
                vec![before.clone()],
                "One screenshot is attached: the screen before the action (none was taken after).",
            ),
            _ => (Vec::new(), "No screenshots are attached: read the page states below."),
        };
        let state = |text: Option<&str>| text.unwrap_or("(not recorded)").to_owned();
        let target = step.action.target().map(|t| serde_json::to_string(t).unwrap_or_default());
        let vars = json!({
            "task_name": recording.name,
            "step_number": index + 1,
            "step_count": recording.steps.len(),
            "url": step.moment.url,
            "title": step.moment.title,
            "action": step.action.describe(),
            "target": target.unwrap_or_default(),
            "details": step.details,
            "screens": screens,
            "page_before": state(step.moment.page_state.as_deref()),
            "page_after": state(recording.post_page_state(index)),
        });
        let run_id = Self::run_id(recording);
        self.ask(STEP_PROMPT, &run_id, index as u32, vars, images, traces).await.map_err(
            |e| match e {
                CallError::Interrupted => ReflectError::Interrupted,
                e => {
                    let (why, details) = why(e);
                    ReflectError::StepFailed { step: index as u32, why, details }
                }
            },
        )
    }

    /// Pass A for every step that has no result yet in `done` (resized to the recording),
    /// stopping at the first failure with what succeeded kept.
    pub async fn reflect_steps(
        &self,
        recording: &Recording,
        done: &mut Vec<Option<StepReflection>>,
        traces: &mut Vec<LlmTrace>,
    ) -> Result<Vec<StepReflection>, ReflectError> {
        if recording.steps.is_empty() {
            return Err(ReflectError::Empty);
        }
        done.resize(recording.steps.len(), None);
        for (index, result) in done.iter_mut().enumerate() {
            if result.is_none() {
                *result = Some(self.reflect_step(recording, index, traces).await?);
            }
        }
        Ok(done.iter().flatten().cloned().collect())
    }

    /// Pass B over the pass-A results, checked against the recording.
    pub async fn reflect_task(
        &self,
        recording: &Recording,
        steps: &[StepReflection],
        traces: &mut Vec<LlmTrace>,
    ) -> Result<TaskReflection, ReflectError> {
        let listing: Vec<Value> = recording
            .steps
            .iter()
            .zip(steps)
            .map(|(step, a)| {
                json!({
                    "index": step.index,
                    "action": step.action.describe(),
                    "intent": a.intent,
                    "target": a.target,
                    "expected_current_state": a.expected_current_state,
                    "post_action": a.post_action,
                    "action_value": a.action_value,
                    "note": step.details,
                })
            })
            .collect();
        let vars = json!({
            "task_name": recording.name,
            "start_url": recording.start_url,
            "steps": serde_json::to_string_pretty(&listing).unwrap_or_default(),
        });
        let run_id = Self::run_id(recording);
        let step = recording.steps.len() as u32;
        let task: TaskReflection = self
            .ask(TASK_PROMPT, &run_id, step, vars, Vec::new(), traces)
            .await
            .map_err(|e| match e {
                CallError::Interrupted => ReflectError::Interrupted,
                e => {
                    let (why, details) = why(e);
                    ReflectError::TaskFailed { why, details }
                }
            })?;
        check_fits(recording, &task)?;
        Ok(task)
    }

    /// Both passes, resuming from `done` (the stored pass-A results), into a workflow.
    pub async fn reflect(
        &self,
        recording: &Recording,
        done: &mut Vec<Option<StepReflection>>,
        traces: &mut Vec<LlmTrace>,
        workflow_id: &str,
        at: &str,
    ) -> Result<Workflow, ReflectError> {
        let steps = self.reflect_steps(recording, done, traces).await?;
        let task = self.reflect_task(recording, &steps, traces).await?;
        Ok(build_workflow(recording, &steps, &task, workflow_id, at))
    }
}

/// Pass B's answer must place every recorded step exactly once, in a subtask it defined,
/// with subtasks taking consecutive runs of steps.
fn check_fits(recording: &Recording, task: &TaskReflection) -> Result<(), ReflectError> {
    let fail = |why: String| Err(ReflectError::TaskFailed { why, details: None });
    let ids: Vec<&str> = task.subtasks.iter().map(|s| s.id.as_str()).collect();
    let mut placed = lean::SortedSet::new();
    let mut last_subtask = 0;
    let mut by_index: Vec<&ReflectedStep> = task.steps.iter().collect();
    lean::sort_by_key(&mut by_index, |s| s.index);
    for step in by_index {
        if step.index as usize >= recording.steps.len() {
            return fail(format!("it places step {}, which was not recorded", step.index));
        }
        if !placed.insert(step.index) {
            return fail(format!("it places step {} twice", step.index));
        }
        let Some(at) = ids.iter().position(|id| *id == step.subtask) else {
            return fail(format!(
                "step {} is in subtask {:?}, which it did not define",
                step.index, step.subtask
            ));
        };
        if at < last_subtask {
            return fail(format!("step {} goes back to an earlier subtask", step.index));
        }
        last_subtask = at;
    }
    let missing: Vec<String> = (0..recording.steps.len() as u32)
        .filter(|i| !placed.contains(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return fail(format!("it leaves out step(s) {}", missing.join(", ")));
    }
    Ok(())
}

/// The workflow from a recording and both passes (checked by [`check_fits`]). What the
/// editor can fix (an unused parameter, a bad name) is left for [`Workflow::validate`].
pub fn build_workflow(
    recording: &Recording,
    steps: &[StepReflection],
    task: &TaskReflection,
    workflow_id: &str,
    at: &str,
) -> Workflow {
    let placed: lean::SortedMap<u32, &ReflectedStep> =
        task.steps.iter().map(|s| (s.index, s)).collect();
    let workflow_steps = recording
        .steps
        .iter()
        .zip(steps)
        .map(|(recorded, a)| {
            let b = placed.get(&recorded.index);
            let kind = recorded.action.kind();
            // A click has no value; the recorded one stands when pass B gave none.
            let value = match kind {
                ActionKind::Click
                | ActionKind::Scroll
                | ActionKind::DoubleClick
                | ActionKind::RightClick
                | ActionKind::Drag => None,
                _ => b
                    .map(|b| b.action_value.clone())
                    .filter(|v| !v.is_empty())
                    .or_else(|| recorded.action.value()),
            };
            let variable = match (&recorded.action, b) {
                (RecordedAction::Extract { .. }, Some(b)) if is_identifier(&b.variable) => {
                    Some(b.variable.clone())
                }
                (RecordedAction::Extract(ExtractQuery { query, .. }), _) => {
                    Some(variable_from(query))
                }
                _ => None,
            };
            let candidates = match &recorded.action {
                RecordedAction::Extract(ExtractQuery { candidates, .. }) => candidates.clone(),
                _ => Vec::new(),
            };
            WorkflowStep {
                subtask: b.map(|b| b.subtask.clone()).unwrap_or_default(),
                intent: a.intent.clone(),
                expected_current_state: a.expected_current_state.clone(),
                target: a.target.clone(),
                post_action: a.post_action.clone(),
                action: StepAction {
                    kind,
                    value,
                    screens: recorded.action.screens(),
                    to: match &recorded.action {
                        RecordedAction::Drag(Dragged { to, .. }) => to.as_deref().cloned(),
                        _ => None,
                    },
                    offset: match &recorded.action {
                        RecordedAction::Drag(Dragged { dx, dy, .. }) => Some([*dx, *dy]),
                        _ => None,
                    },
                    variable,
                    candidates,
                    descriptor: recorded.action.target().cloned(),
                },
                url: Some(recorded.moment.url.clone()),
                screenshot: recorded.moment.screenshot.clone(),
                details: recorded.details.clone(),
            }
        })
        .collect();
    Workflow {
        format_version: FORMAT_VERSION,
        id: workflow_id.to_owned(),
        name: task.task_name.clone(),
        description: task.detailed_task_description.clone(),
        version: 1,
        updated_at: at.to_owned(),
        start_url: recording.start_url.clone(),
        recording_id: Some(recording.id.clone()),
        // A parameter standing for a masked value is a secret: given at each replay.
        params: task
            .task_params
            .iter()
            .map(|p| Param { secret: p.secret || p.example == SECRET_MASK, ..p.clone() })
            .collect(),
        subtasks: task
            .subtasks
            .iter()
            .map(|s| WorkflowSubtask {
                id: s.id.clone(),
                text: s.text.clone(),
                expected_outcome: s.expected_outcome.clone(),
                depends_on: s.depends_on.clone(),
            })
            .collect(),
        steps: workflow_steps,
    }
}

/// `album name?` → `album_name`: a variable name when pass B gave none.
fn variable_from(query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(4)
        .map(str::to_ascii_lowercase)
        .collect();
    let name = words.join("_");
    if is_identifier(&name) { name } else { format!("value_{name}") }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::executor::Control;
    use crate::prompts::PromptSet;
    use crate::testing::{FakeClock, Scripted, settings};
    use crate::workflow::recording::{KeyPress, Moment, RecordedStep, TargetDescriptor};
    use futures::executor::block_on;
    use std::cell::Cell;

    fn recording() -> Recording {
        let step = |index: u32, shot: &str, action| RecordedStep {
            index,
            moment: Moment {
                at_ms: index as f64,
                tab_id: 1,
                url: "https://music.test/".into(),
                title: "Music".into(),
                screenshot: Some(shot.into()),
                page_state: Some(format!("[{index}]<input>Search")),
            },
            action,
            details: None,
        };
        let search = TargetDescriptor {
            tag: "input".into(),
            name: "Search".into(),
            selector: "#q".into(),
            ..TargetDescriptor::default()
        };
        Recording {
            id: "rec-1".into(),
            name: "play numb".into(),
            created_at: "t".into(),
            start_url: "https://music.test/".into(),
            start_screenshot: Some("s0".into()),
            end_screenshot: Some("s3".into()),
            end_page_state: None,
            steps: vec![
                step(0, "s0", RecordedAction::Type { target: search, text: "numb".into() }),
                step(1, "s1", RecordedAction::Key(KeyPress { key: "Enter".into(), target: None })),
                step(
                    2,
                    "s2",
                    RecordedAction::Extract(ExtractQuery {
                        query: "the album".into(),
                        candidates: vec![],
                    }),
                ),
            ],
        }
    }

    fn pass_a(value: &str) -> String {
        json!({"expected_current_state": "home", "intent": format!("do {value}"),
               "target": "search box", "post_action": "changed", "action_value": value})
        .to_string()
    }

    fn pass_b() -> String {
        json!({
            "task_name": "Play a song", "detailed_task_description": "Play {song_name}.",
            "task_params": [{"name": "song_name", "description": "the song", "example": "numb"}],
            "subtasks": [{"id": "search", "text": "Find {song_name}",
                          "expected_outcome": "results for {song_name}", "depends_on": []}],
            "steps": [{"index": 0, "subtask": "search", "action_value": "{song_name}", "variable": ""},
                      {"index": 1, "subtask": "search", "action_value": "Enter", "variable": ""},
                      {"index": 2, "subtask": "search", "action_value": "the album", "variable": "album"}]
        })
        .to_string()
    }

    fn run(
        http: &Scripted,
        vision: bool,
        done: &mut Vec<Option<StepReflection>>,
    ) -> (Result<Workflow, ReflectError>, Vec<LlmTrace>) {
        let settings = settings();
        let prompts = PromptSet::bundled();
        let control = Control::default();
        let clock = FakeClock::default();
        let shots: BTreeMap<String, String> =
            ["s0", "s1", "s2", "s3"].iter().map(|s| (s.to_string(), format!("b64-{s}"))).collect();
        let ids = Cell::new(0);
        let new_id = || {
            ids.set(ids.get() + 1);
            format!("t{}", ids.get())
        };
        let ledger = RepairLedger::with_budget(5);
        let reflector = Reflector {
            cx: CallContext {
                http,
                clock: &clock,
                control: &control,
                prompts: &prompts,
                settings: &settings,
                epoch_ms: &|| 0.0,
            },
            model: &settings.models.navigator,
            vision,
            screenshots: &shots,
            new_id: &new_id,
            ledger: &ledger,
        };
        let mut traces = Vec::new();
        let result = block_on(reflector.reflect(&recording(), done, &mut traces, "wf-1", "now"));
        (result, traces)
    }

    #[test]
    fn both_passes_make_a_valid_workflow_with_a_repair_and_screenshots() {
        let http = Scripted::new(vec![
            pass_a("numb"),
            // Missing fields: repaired on the next answer.
            json!({"intent": "press"}).to_string(),
            pass_a("Enter"),
            pass_a("the album"),
            pass_b(),
        ]);
        let mut done = Vec::new();
        let (workflow, traces) = run(&http, true, &mut done);
        let workflow = workflow.unwrap();
        assert_eq!(workflow.validate(), []);
        assert_eq!(workflow.steps[0].action.value.as_deref(), Some("{song_name}"));
        assert_eq!(workflow.steps[0].intent, "do numb");
        assert_eq!(workflow.steps[0].action.descriptor.as_ref().unwrap().selector, "#q");
        assert_eq!(workflow.steps[2].action.variable.as_deref(), Some("album"));
        assert_eq!(traces.len(), 4, "one trace per call, the repaired one included");
        assert_eq!(traces[1].attempts.len(), 2);
        assert_eq!(traces[3].prompt_id, TASK_PROMPT);
        assert!(traces.iter().all(|t| t.run_id == "reflect:rec-1" && t.error.is_none()));
        // Pass A of step 1 saw the screens before (s1) and after (s2).
        let first = &http.seen.borrow()[0].body;
        assert!(first.to_string().contains("b64-s0") && first.to_string().contains("b64-s1"));
        assert!(first.to_string().contains("Two screenshots are attached"));
    }

    #[test]
    fn without_vision_the_page_states_stand_in() {
        let http = Scripted::new(vec![pass_a("numb"), pass_a("Enter"), pass_a("x"), pass_b()]);
        let (workflow, _) = run(&http, false, &mut Vec::new());
        assert!(workflow.is_ok());
        let first = http.seen.borrow()[0].body.to_string();
        assert!(!first.contains("b64-s0") && first.contains("[0]<input>Search"), "{first}");
    }

    #[test]
    fn a_failed_pass_says_why_and_resumes_from_the_stored_results() {
        // Step 2's answer stays invalid through every repair.
        let bad = json!({"intent": 1}).to_string();
        let http = Scripted::new(vec![pass_a("numb"), bad.clone(), bad.clone(), bad]);
        let mut done = Vec::new();
        let (result, traces) = run(&http, true, &mut done);
        let error = result.unwrap_err();
        assert!(matches!(error, ReflectError::StepFailed { step: 1, .. }), "{error}");
        // One sentence for a person; the schema's complaints are kept apart, for whoever looks.
        assert_eq!(
            error.to_string(),
            "Recorded step 2 could not be described: The model's answer did not follow the \
             expected format after 3 attempt(s) (repairs did not fix it)."
        );
        assert!(error.details().is_some_and(|d| d.contains("/intent")), "{:?}", error.details());
        assert!(traces[1].error.is_some());
        assert!(done[0].is_some() && done[1].is_none());

        // Retried: only the missing steps are asked again. Pass B leaves a step out.
        let mut incomplete: Value = serde_json::from_str(&pass_b()).unwrap();
        incomplete["steps"].as_array_mut().unwrap().pop();
        let http = Scripted::new(vec![pass_a("Enter"), pass_a("x"), incomplete.to_string()]);
        let (result, _) = run(&http, true, &mut done);
        assert_eq!(
            result.unwrap_err(),
            ReflectError::TaskFailed { why: "it leaves out step(s) 2".into(), details: None }
        );
        assert_eq!(http.seen.borrow().len(), 3);

        // Pass B alone, again, from what is stored.
        let http = Scripted::new(vec![pass_b()]);
        let (result, _) = run(&http, true, &mut done);
        assert_eq!(result.unwrap().steps.len(), 3);
    }

    #[test]
    fn a_parameter_for_a_masked_value_is_a_secret() {
        let mut task: TaskReflection = serde_json::from_str(&pass_b()).unwrap();
        task.task_params.push(Param {
            name: "pin".into(),
            description: "".into(),
            example: SECRET_MASK.into(),
            secret: false,
        });
        let a: StepReflection = serde_json::from_str(&pass_a("x")).unwrap();
        let workflow = build_workflow(&recording(), &[a.clone(), a.clone(), a], &task, "w", "t");
        assert_eq!(workflow.params.iter().map(|p| p.secret).collect::<Vec<_>>(), [false, true]);
    }

    #[test]
    fn variables_are_named_from_the_query_when_pass_b_gives_none() {
        assert_eq!(variable_from("The album name?"), "the_album_name");
        assert_eq!(variable_from("2024 price"), "value_2024_price");
    }
}
