//! The tools AlphaScout lists to MCP clients: the fixed ones with their descriptions and
//! input schemas, and one tool per published pipeline and per workflow.
//!
//! `act`'s action schema is the Navigator's own `$defs/action` (prompts/navigator/
//! schema.json), which the worker passes in: this crate stays a leaf and the model and MCP
//! clients are held to one schema.

use serde_json::{Value, json};

use crate::bridge::Tool;

/// A published pipeline as its tool shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineEntry {
    /// The pipeline's id (what `run_pipeline` names).
    pub name: String,
    pub description: String,
    /// Its `inputs.schema`, when it declares one.
    pub inputs: Option<Value>,
}

/// A workflow (its latest version) as its tool shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowEntry {
    pub id: String,
    pub name: String,
    pub description: String,
    pub params: Vec<ParamEntry>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamEntry {
    pub name: String,
    pub description: String,
    /// Used when the call gives no value; empty for a secret.
    pub example: String,
    pub secret: bool,
}

impl ParamEntry {
    /// A call must give it: a secret, or a parameter with no example to fall back on.
    pub fn required(&self) -> bool {
        self.secret || self.example.is_empty()
    }
}

/// What is published now: the tools beyond the fixed ones.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Published {
    pub pipelines: Vec<PipelineEntry>,
    pub workflows: Vec<WorkflowEntry>,
}

/// The prefix of a published pipeline's own tool.
pub const PIPELINE_PREFIX: &str = "pipeline_";
/// The prefix of a workflow's own tool.
pub const WORKFLOW_PREFIX: &str = "workflow_";

/// `name` reduced to what a tool name may hold here: lowercase ASCII letters, digits and
/// single `_` between them (`Buy a Kettle!` → `buy_a_kettle`).
pub fn reduce(name: &str) -> String {
    let mut out = String::new();
    for c in text_case::lowercase(name).chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_owned()
}

impl Published {
    /// The pipeline whose own tool is `tool`, if any.
    pub fn pipeline_tool(&self, tool: &str) -> Option<&PipelineEntry> {
        let name = tool.strip_prefix(PIPELINE_PREFIX)?;
        self.pipelines.iter().find(|p| reduce(&p.name) == name)
    }

    /// The workflow whose own tool is `tool`, if any (the first listed, when two names
    /// reduce alike).
    pub fn workflow_tool(&self, tool: &str) -> Option<&WorkflowEntry> {
        let name = tool.strip_prefix(WORKFLOW_PREFIX)?;
        self.workflows.iter().find(|w| reduce(&w.name) == name)
    }

    /// A workflow by id, or else by name.
    pub fn workflow(&self, named: &str) -> Option<&WorkflowEntry> {
        let by_id = self.workflows.iter().find(|w| w.id == named);
        by_id.or_else(|| self.workflows.iter().find(|w| w.name == named))
    }
}

fn tab_id(what: &str) -> Value {
    json!({"type": "integer", "description": what})
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required,
        "additionalProperties": false})
}

/// Every tool: the fixed ones, then each published pipeline's and each workflow's own.
pub fn tools(action: &Value, published: &Published) -> Vec<Tool> {
    let tool = |name: &str, description: &str, input_schema: Value| Tool {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema,
    };
    let job_id = json!({"type": "string", "description": "The job's id, as a run_task, \
        replay_workflow or run_pipeline result gives it."});
    let mut list = vec![
        tool(
            "run_task",
            "Runs a task with AlphaScout's browser agent in the user's Chromium, as a job, and \
             returns when it ends or asks a question (status \"asking\": reply with `answer`). \
             Progress notifications follow its steps. Without tab_id it works in a new tab, \
             opened at url when given (the user's URL firewall decides where it may go).",
            object(
                json!({
                    "task": {"type": "string", "minLength": 1,
                        "description": "What to do, in plain words."},
                    "tab_id": tab_id("A tab to work in (see list_tabs)."),
                    "url": {"type": "string",
                        "description": "Open a new tab here first (http or https)."},
                }),
                &["task"],
            ),
        ),
        tool(
            "answer",
            "Answers the question a job asked (status \"asking\") and waits again until it ends \
             or asks again.",
            object(
                json!({"job_id": job_id, "text": {"type": "string", "minLength": 1,
                    "description": "The answer."}}),
                &["job_id", "text"],
            ),
        ),
        tool(
            "get_page_state",
            "The page of a tab as the agent reads it: its text and its interactive elements, \
             each with the id `act` takes.",
            object(json!({"tab_id": tab_id("The tab to read.")}), &["tab_id"]),
        ),
        tool(
            "act",
            "Carries out one browser action in a tab, as the agent's Navigator would (ids from \
             get_page_state), and says what happened.",
            object(
                json!({"tab_id": tab_id("The tab to act in."), "action": action}),
                &["tab_id", "action"],
            ),
        ),
        tool(
            "screenshot",
            "A JPEG screenshot of a tab's viewport.",
            object(json!({"tab_id": tab_id("The tab to capture.")}), &["tab_id"]),
        ),
        tool("list_tabs", "The open tabs: id, title and URL.", object(json!({}), &[])),
        tool(
            "list_workflows",
            "The recorded workflows (latest versions) with their parameters.",
            object(json!({}), &[]),
        ),
        tool(
            "replay_workflow",
            "Replays a workflow (by id or name) with parameters, as a job, and returns when it \
             ends or asks a question. Without tab_id it replays in a new tab.",
            object(
                json!({
                    "workflow": {"type": "string", "description": "Its id or name."},
                    "params": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": "Parameter values by name; examples fill the rest."},
                    "tab_id": tab_id("A tab to replay in."),
                    "fast_path": {"type": "boolean", "default": true,
                        "description": "Act without the model where the recording matches."},
                }),
                &["workflow"],
            ),
        ),
        tool(
            "run_pipeline",
            "Runs a published pipeline (by name) on an input, as a job, and returns its output.",
            object(
                json!({
                    "name": {"type": "string", "description": "The published pipeline's id."},
                    "input": {"description": "The pipeline's input, as its inputs schema says."},
                    "tab_id": tab_id("The tab it works in; a new one when absent."),
                }),
                &["name"],
            ),
        ),
        tool(
            "job_status",
            "Where a job stands: running, paused, asking, done, failed or stopped.",
            object(json!({"job_id": job_id}), &["job_id"]),
        ),
        tool("stop_job", "Stops a job.", object(json!({"job_id": job_id}), &["job_id"])),
    ];
    let mut taken: Vec<String> = list.iter().map(|t| t.name.clone()).collect();
    let mut add = |list: &mut Vec<Tool>, tool: Tool| {
        if !taken.contains(&tool.name) {
            taken.push(tool.name.clone());
            list.push(tool);
        }
    };
    for pipeline in &published.pipelines {
        let name = reduce(&pipeline.name);
        if name.is_empty() {
            continue;
        }
        let description = format!(
            "Runs the published pipeline {}: {}",
            pipeline.name,
            if pipeline.description.is_empty() { "no description." } else { &pipeline.description }
        );
        add(
            &mut list,
            tool(&format!("{PIPELINE_PREFIX}{name}"), &description, pipeline_schema(pipeline)),
        );
    }
    for workflow in &published.workflows {
        let name = reduce(&workflow.name);
        if name.is_empty() {
            continue;
        }
        let description = format!(
            "Replays the workflow {}{}",
            workflow.name,
            if workflow.description.is_empty() {
                ".".to_owned()
            } else {
                format!(": {}", workflow.description)
            }
        );
        add(
            &mut list,
            tool(&format!("{WORKFLOW_PREFIX}{name}"), &description, workflow_schema(workflow)),
        );
    }
    list
}

/// Whether a pipeline's inputs are an object whose properties can sit beside `tab_id`.
pub(crate) fn flat_inputs(inputs: Option<&Value>) -> bool {
    inputs.is_some_and(|schema| {
        schema["type"] == "object"
            && schema.get("properties").is_none_or(Value::is_object)
            && schema["properties"].get("tab_id").is_none()
    })
}

/// A pipeline tool takes its inputs' properties and `tab_id`; inputs that are not an
/// object go under `input`.
fn pipeline_schema(pipeline: &PipelineEntry) -> Value {
    let tab = tab_id("The tab it works in; a new one when absent.");
    match &pipeline.inputs {
        Some(schema) if flat_inputs(Some(schema)) => {
            let mut schema = schema.clone();
            if schema.get("properties").is_none() {
                schema["properties"] = json!({});
            }
            schema["properties"]["tab_id"] = tab;
            schema
        }
        Some(schema) => object(json!({"input": schema, "tab_id": tab}), &["input"]),
        None => object(json!({"input": {}, "tab_id": tab}), &[]),
    }
}

fn workflow_schema(workflow: &WorkflowEntry) -> Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for param in &workflow.params {
        let mut about = param.description.clone();
        if !param.secret && !param.example.is_empty() {
            about = format!("{about} (default: {})", param.example).trim().to_owned();
        }
        properties.insert(param.name.clone(), json!({"type": "string", "description": about}));
        if param.required() {
            required.push(param.name.as_str());
        }
    }
    properties.insert("tab_id".into(), tab_id("A tab to replay in; a new one when absent."));
    properties.insert(
        "fast_path".into(),
        json!({"type": "boolean", "default": true,
            "description": "Act without the model where the recording matches."}),
    );
    object(Value::Object(properties), &required)
}

/// What the tests of this crate list as published: a pipeline whose inputs are an object
/// and a workflow with a parameter that has an example and a secret one.
#[cfg(test)]
pub(crate) fn published_for_tests() -> Published {
    Published {
        pipelines: vec![PipelineEntry {
            name: "product_facts".into(),
            description: "The product's facts.".into(),
            inputs: Some(json!({"type": "object", "additionalProperties": false,
                "properties": {}})),
        }],
        workflows: vec![WorkflowEntry {
            id: "w1".into(),
            name: "Buy a Kettle!".into(),
            description: String::new(),
            params: vec![
                ParamEntry {
                    name: "product".into(),
                    description: "What to buy".into(),
                    example: "kettle".into(),
                    secret: false,
                },
                ParamEntry {
                    name: "password".into(),
                    description: "The shop password".into(),
                    example: String::new(),
                    secret: true,
                },
            ],
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn published() -> Published {
        published_for_tests()
    }

    fn action() -> Value {
        json!({"oneOf": [{"type": "object", "properties": {"action": {"const": "back"}}}]})
    }

    #[test]
    fn names_reduce_to_lowercase_letters_digits_and_single_underscores() {
        assert_eq!(reduce("Buy a Kettle!"), "buy_a_kettle");
        assert_eq!(reduce("  --x--2--  "), "x_2");
        assert_eq!(reduce("Ünïcode"), "n_code");
        assert_eq!(reduce("!!!"), "");
    }

    #[test]
    fn the_fixed_tools_come_first_and_act_takes_the_navigators_action_schema() {
        let list = tools(&action(), &Published::default());
        let names: Vec<&str> = list.iter().map(|t| t.name.as_str()).collect();
        let fixed = "run_task answer get_page_state act screenshot list_tabs list_workflows \
                     replay_workflow run_pipeline job_status stop_job";
        assert_eq!(names, fixed.split_whitespace().collect::<Vec<_>>());
        let act = list.iter().find(|t| t.name == "act").unwrap();
        assert_eq!(act.input_schema["properties"]["action"], action());
        assert_eq!(act.input_schema["required"], json!(["tab_id", "action"]));
        for tool in &list {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            assert!(!tool.description.is_empty());
        }
    }

    #[test]
    fn published_pipelines_and_workflows_get_their_own_tools() {
        let list = tools(&action(), &published());
        let pipeline = list.iter().find(|t| t.name == "pipeline_product_facts").unwrap();
        assert!(pipeline.description.contains("The product's facts."));
        // Its inputs are an object: their properties and the tab sit side by side.
        assert_eq!(pipeline.input_schema["properties"]["tab_id"]["type"], "integer");
        assert_eq!(pipeline.input_schema["additionalProperties"], false);

        let workflow = list.iter().find(|t| t.name == "workflow_buy_a_kettle").unwrap();
        let schema = &workflow.input_schema;
        assert_eq!(schema["required"], json!(["password"]));
        assert_eq!(schema["properties"]["product"]["description"], "What to buy (default: kettle)");
        assert_eq!(schema["properties"]["password"]["description"], "The shop password");
        assert_eq!(schema["properties"]["fast_path"]["type"], "boolean");

        let found = published();
        assert_eq!(found.workflow_tool("workflow_buy_a_kettle").unwrap().id, "w1");
        assert_eq!(found.pipeline_tool("pipeline_product_facts").unwrap().name, "product_facts");
        assert!(found.workflow_tool("run_task").is_none());
    }

    #[test]
    fn a_pipeline_whose_inputs_are_not_an_object_takes_them_under_input() {
        let mut published = published();
        published.pipelines[0].inputs = Some(json!({"type": "string"}));
        let list = tools(&action(), &published);
        let schema =
            &list.iter().find(|t| t.name == "pipeline_product_facts").unwrap().input_schema;
        assert_eq!(schema["properties"]["input"], json!({"type": "string"}));
        assert_eq!(schema["required"], json!(["input"]));
    }

    #[test]
    fn a_name_that_reduces_to_a_taken_one_or_to_nothing_gets_no_tool() {
        let mut published = published();
        let mut twin = published.workflows[0].clone();
        twin.id = "w2".into();
        twin.name = "buy a kettle".into();
        published.workflows.push(twin);
        let mut nameless = published.workflows[0].clone();
        nameless.name = "???".into();
        published.workflows.push(nameless);
        let list = tools(&action(), &published);
        assert_eq!(list.iter().filter(|t| t.name.starts_with("workflow_")).count(), 1);
        assert_eq!(published.workflow_tool("workflow_buy_a_kettle").unwrap().id, "w1");
    }
}
