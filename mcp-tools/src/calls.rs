//! A `tools/call`'s arguments read into a typed [`Call`], or refused with a sentence that
//! names the field (sent to the client as `InvalidParams`).
//!
//! Only the arguments' shape is checked here. What needs the browser or the user's data (is
//! there such a tab, job or workflow; does the firewall allow the URL; is the action one
//! the Navigator knows) the worker checks on the same paths the side panel's requests take.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::catalogue::{Published, WorkflowEntry, flat_inputs};

/// A tab's id, as Chrome numbers tabs.
pub type TabId = i32;

/// One tool call, its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    RunTask {
        task: String,
        tab_id: Option<TabId>,
        url: Option<String>,
    },
    Answer {
        job_id: String,
        text: String,
    },
    GetPageState {
        tab_id: TabId,
    },
    /// `action` is checked against the Navigator's schema by the worker.
    Act {
        tab_id: TabId,
        action: Value,
    },
    Screenshot {
        tab_id: TabId,
    },
    ListTabs,
    ListWorkflows,
    /// `workflow` is an id or a name; `params` only those given.
    ReplayWorkflow {
        workflow: String,
        params: BTreeMap<String, String>,
        tab_id: Option<TabId>,
        fast_path: bool,
    },
    RunPipeline {
        name: String,
        input: Value,
        tab_id: Option<TabId>,
    },
    JobStatus {
        job_id: String,
    },
    StopJob {
        job_id: String,
    },
}

/// Reads `tool`'s `arguments`; a published pipeline's or a workflow's own tool becomes a
/// [`Call::RunPipeline`] or [`Call::ReplayWorkflow`].
/// Whether reading or carrying out a call of `tool` needs [`Published`]: a published
/// pipeline's or a workflow's own tool, or the two fixed tools that name one.
pub fn needs_published(tool: &str) -> bool {
    !matches!(
        tool,
        "run_task"
            | "answer"
            | "get_page_state"
            | "act"
            | "screenshot"
            | "list_tabs"
            | "list_workflows"
            | "job_status"
            | "stop_job"
    )
}

pub fn read(tool: &str, arguments: &Value, published: &Published) -> Result<Call, String> {
    let empty = Map::new();
    let args = match arguments {
        Value::Object(map) => map,
        Value::Null => &empty,
        _ => return Err(format!("The arguments of {tool} must be an object.")),
    };
    let args = Args { tool, args };
    let call = match tool {
        "run_task" => {
            // Which addresses it may open is the URL firewall's to say, as for the agent.
            let (url, tab_id) = (args.string("url")?, args.tab("tab_id")?);
            if url.is_some() && tab_id.is_some() {
                return Err("run_task takes tab_id or url, not both.".into());
            }
            Call::RunTask { task: args.text("task")?, tab_id, url }
        }
        "answer" => Call::Answer { job_id: args.text("job_id")?, text: args.text("text")? },
        "get_page_state" => Call::GetPageState { tab_id: args.required_tab()? },
        "act" => {
            let action = args.args.get("action").cloned().unwrap_or(Value::Null);
            if !action.is_object() {
                return Err("act needs action: one Navigator action, an object like \
                            {\"action\": \"click\", \"id\": 3}."
                    .into());
            }
            Call::Act { tab_id: args.required_tab()?, action }
        }
        "screenshot" => Call::Screenshot { tab_id: args.required_tab()? },
        "list_tabs" => Call::ListTabs,
        "list_workflows" => Call::ListWorkflows,
        "replay_workflow" => Call::ReplayWorkflow {
            workflow: args.text("workflow")?,
            params: args.params()?,
            tab_id: args.tab("tab_id")?,
            fast_path: args.flag("fast_path")?,
        },
        "run_pipeline" => Call::RunPipeline {
            name: args.text("name")?,
            input: args.args.get("input").cloned().unwrap_or(Value::Null),
            tab_id: args.tab("tab_id")?,
        },
        "job_status" => Call::JobStatus { job_id: args.text("job_id")? },
        "stop_job" => Call::StopJob { job_id: args.text("job_id")? },
        _ => return published_call(&args, published),
    };
    args.no_others(&call)?;
    Ok(call)
}

/// A published pipeline's or a workflow's own tool.
fn published_call(args: &Args, published: &Published) -> Result<Call, String> {
    let tool = args.tool;
    if let Some(pipeline) = published.pipeline_tool(tool) {
        let tab_id = args.tab("tab_id")?;
        let input = if flat_inputs(pipeline.inputs.as_ref()) {
            let mut rest = args.args.clone();
            rest.remove("tab_id");
            Value::Object(rest)
        } else {
            args.args.get("input").cloned().unwrap_or(Value::Null)
        };
        return Ok(Call::RunPipeline { name: pipeline.name.clone(), input, tab_id });
    }
    if let Some(workflow) = published.workflow_tool(tool) {
        let mut params = BTreeMap::new();
        for (name, value) in args.args {
            if name != "tab_id" && name != "fast_path" {
                params.insert(name.clone(), param_text(tool, name, value)?);
            }
        }
        check_params(tool, workflow, &params)?;
        return Ok(Call::ReplayWorkflow {
            workflow: workflow.id.clone(),
            params,
            tab_id: args.tab("tab_id")?,
            fast_path: args.flag("fast_path")?,
        });
    }
    Err(format!("There is no tool {tool:?}: tools/list says which there are."))
}

/// Refuses a parameter `workflow` does not have, and a missing one it cannot do without;
/// `tool` names the call in the sentence.
pub fn check_params(
    tool: &str,
    workflow: &WorkflowEntry,
    params: &BTreeMap<String, String>,
) -> Result<(), String> {
    if let Some(name) = params.keys().find(|n| !workflow.params.iter().any(|p| &&p.name == n)) {
        return Err(format!("{tool} has no parameter {name:?}."));
    }
    for param in workflow.params.iter().filter(|p| p.required()) {
        if params.get(&param.name).is_none_or(|v| v.is_empty()) {
            return Err(format!("{tool} needs {}: {}.", param.name, param.description));
        }
    }
    Ok(())
}

/// A parameter's value as the replay takes it: text, or a number or truth value written out.
fn param_text(tool: &str, name: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!("{tool}'s parameter {name} must be text.")),
    }
}

struct Args<'a> {
    tool: &'a str,
    args: &'a Map<String, Value>,
}

impl Args<'_> {
    fn string(&self, field: &str) -> Result<Option<String>, String> {
        match self.args.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("{}'s {field} must be text.", self.tool)),
        }
    }

    /// A required, non-blank string.
    fn text(&self, field: &str) -> Result<String, String> {
        match self.string(field)? {
            Some(text) if !text.trim().is_empty() => Ok(text),
            _ => Err(format!("{} needs {field}: some text.", self.tool)),
        }
    }

    fn tab(&self, field: &str) -> Result<Option<TabId>, String> {
        match self.args.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_i64()
                .and_then(|n| TabId::try_from(n).ok())
                .filter(|n| *n >= 0)
                .map(Some)
                .ok_or_else(|| {
                    format!("{}'s {field} must be a tab's id, a whole number.", self.tool)
                }),
        }
    }

    fn required_tab(&self) -> Result<TabId, String> {
        self.tab("tab_id")?
            .ok_or_else(|| format!("{} needs tab_id: a tab's id (see list_tabs).", self.tool))
    }

    /// An optional truth value, true when absent.
    fn flag(&self, field: &str) -> Result<bool, String> {
        match self.args.get(field) {
            None | Some(Value::Null) => Ok(true),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{}'s {field} must be true or false.", self.tool)),
        }
    }

    fn params(&self) -> Result<BTreeMap<String, String>, String> {
        match self.args.get("params") {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| Ok((name.clone(), param_text(self.tool, name, value)?)))
                .collect(),
            Some(_) => Err(format!("{}'s params must be an object of values by name.", self.tool)),
        }
    }

    /// Refuses a field the tool does not take (a typo would otherwise pass unnoticed).
    fn no_others(&self, call: &Call) -> Result<(), String> {
        let known: &[&str] = match call {
            Call::RunTask { .. } => &["task", "tab_id", "url"],
            Call::Answer { .. } => &["job_id", "text"],
            Call::GetPageState { .. } | Call::Screenshot { .. } => &["tab_id"],
            Call::Act { .. } => &["tab_id", "action"],
            Call::ListTabs | Call::ListWorkflows => &[],
            Call::ReplayWorkflow { .. } => &["workflow", "params", "tab_id", "fast_path"],
            Call::RunPipeline { .. } => &["name", "input", "tab_id"],
            Call::JobStatus { .. } | Call::StopJob { .. } => &["job_id"],
        };
        match self.args.keys().find(|k| !known.contains(&k.as_str())) {
            Some(field) => Err(format!("{} takes no {field}.", self.tool)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalogue::PipelineEntry;

    fn none() -> Published {
        Published::default()
    }

    /// The crate's test catalogue, and a pipeline whose input is one string.
    fn published() -> Published {
        let mut published = crate::catalogue::published_for_tests();
        published.pipelines.push(PipelineEntry {
            name: "echo".into(),
            description: String::new(),
            inputs: Some(json!({"type": "string"})),
        });
        published
    }

    #[test]
    fn run_task_reads_its_task_tab_and_url() {
        let call = read("run_task", &json!({"task": "Find the price", "tab_id": 4}), &none());
        assert_eq!(
            call,
            Ok(Call::RunTask { task: "Find the price".into(), tab_id: Some(4), url: None })
        );
        let call = read("run_task", &json!({"task": "x", "url": "https://shop.test/"}), &none());
        assert!(matches!(call, Ok(Call::RunTask { url: Some(_), tab_id: None, .. })));
    }

    #[test]
    fn each_refusal_names_the_field() {
        let cases = [
            ("run_task", json!({}), "run_task needs task: some text."),
            ("run_task", json!({"task": "  "}), "run_task needs task: some text."),
            ("run_task", json!({"task": 3}), "run_task's task must be text."),
            (
                "run_task",
                json!({"task": "x", "tab_id": "4"}),
                "run_task's tab_id must be a tab's id, a whole number.",
            ),
            (
                "run_task",
                json!({"task": "x", "url": "https://a.test/", "tab_id": 2}),
                "run_task takes tab_id or url, not both.",
            ),
            ("run_task", json!({"task": "x", "tab": 4}), "run_task takes no tab."),
            ("answer", json!({"job_id": "j"}), "answer needs text: some text."),
            (
                "get_page_state",
                json!({}),
                "get_page_state needs tab_id: a tab's id (see list_tabs).",
            ),
            (
                "screenshot",
                json!({"tab_id": -1}),
                "screenshot's tab_id must be a tab's id, a whole number.",
            ),
            (
                "replay_workflow",
                json!({"workflow": "Buy", "params": ["kettle"]}),
                "replay_workflow's params must be an object of values by name.",
            ),
            (
                "replay_workflow",
                json!({"workflow": "Buy", "fast_path": "yes"}),
                "replay_workflow's fast_path must be true or false.",
            ),
            ("job_status", json!({"job_id": 7}), "job_status's job_id must be text."),
            ("list_tabs", json!([]), "The arguments of list_tabs must be an object."),
        ];
        for (tool, args, said) in cases {
            assert_eq!(read(tool, &args, &none()), Err(said.to_owned()), "{tool} {args}");
        }
        let act = read("act", &json!({"tab_id": 1, "action": "click 3"}), &none()).unwrap_err();
        assert!(act.starts_with("act needs action"), "{act}");
    }

    #[test]
    fn an_unknown_tool_is_refused_by_name() {
        assert_eq!(
            read("fly", &json!({}), &none()),
            Err("There is no tool \"fly\": tools/list says which there are.".into())
        );
    }

    #[test]
    fn replay_parameters_are_text_and_fast_path_defaults_on() {
        let call = read(
            "replay_workflow",
            &json!({"workflow": "Buy", "params": {"product": "tea", "count": 2}}),
            &none(),
        );
        let params =
            BTreeMap::from([("count".into(), "2".into()), ("product".into(), "tea".into())]);
        assert_eq!(
            call,
            Ok(Call::ReplayWorkflow {
                workflow: "Buy".into(),
                params,
                tab_id: None,
                fast_path: true
            })
        );
    }

    #[test]
    fn a_workflows_own_tool_replays_it_by_id_and_needs_what_has_no_default() {
        let published = published();
        let tool = "workflow_buy_a_kettle";
        assert_eq!(
            read(tool, &json!({"product": "tea"}), &published),
            Err(format!("{tool} needs password: The shop password."))
        );
        assert_eq!(
            read(tool, &json!({"colour": "red", "password": "1"}), &published),
            Err(format!("{tool} has no parameter \"colour\"."))
        );
        let call = read(tool, &json!({"password": "1234", "tab_id": 2}), &published);
        assert_eq!(
            call,
            Ok(Call::ReplayWorkflow {
                workflow: "w1".into(),
                params: BTreeMap::from([("password".into(), "1234".into())]),
                tab_id: Some(2),
                fast_path: true,
            })
        );
    }

    #[test]
    fn a_pipelines_own_tool_takes_its_input_flat_or_under_input() {
        let published = published();
        assert_eq!(
            read("pipeline_product_facts", &json!({"sku": "K1", "tab_id": 3}), &published),
            Ok(Call::RunPipeline {
                name: "product_facts".into(),
                input: json!({"sku": "K1"}),
                tab_id: Some(3),
            })
        );
        assert_eq!(
            read("pipeline_echo", &json!({"input": "hi"}), &published),
            Ok(Call::RunPipeline { name: "echo".into(), input: json!("hi"), tab_id: None })
        );
    }
}
