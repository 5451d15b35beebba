//! The Studio's view of a pipeline file: its steps as a diagram (which earlier steps each
//! reads, and under which `when`), laid out in layers, and what its tool allowlist lets it
//! do, as warnings to show.

use prompt_files::pipeline::ToolName;
use prompt_files::pipeline::load::parse_source;
use serde_json::Value;

/// One step in the diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub id: String,
    pub kind: String,
    /// What it calls: the prompt, the tool, or nothing.
    pub detail: String,
    pub when: Option<String>,
    /// 0 for steps that read no earlier step.
    pub layer: usize,
    /// Its place in its layer.
    pub column: usize,
}

/// `from` feeds `to`: its output is read by `to`'s templates (`data`), or by its `when`.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub data: bool,
    /// `to`'s condition, when it reads `from`.
    pub when: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diagram {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub layers: usize,
    pub width: usize,
}

/// The diagram of the file's steps, read leniently: a step without an id is left out,
/// a file that does not parse is an error.
pub fn diagram(source: &str) -> Result<Diagram, String> {
    let value = parse_source(source).map_err(|p| p.to_string())?;
    let steps = value["steps"].as_array().cloned().unwrap_or_default();
    let mut out = Diagram::default();
    let mut ids: Vec<String> = Vec::new();
    for step in &steps {
        let Some(id) = step["id"].as_str() else { continue };
        let kind = step["type"].as_str().unwrap_or("?").to_owned();
        let detail = match kind.as_str() {
            "llm" => step["prompt_id"].as_str().unwrap_or_default().to_owned(),
            "tool" => step["tool"].as_str().unwrap_or_default().to_owned(),
            _ => String::new(),
        };
        let when = step["when"].as_str().map(str::to_owned);
        let mut body = step.clone();
        if let Some(map) = body.as_object_mut() {
            map.remove("when");
            map.remove("id");
        }
        let body = body.to_string();
        let mut layer = 0;
        for earlier in &ids {
            let in_body = reads(&body, earlier);
            let in_when = when.as_deref().is_some_and(|w| reads(w, earlier));
            if !in_body && !in_when {
                continue;
            }
            let from = out.nodes.iter().find(|n| &n.id == earlier).expect("listed earlier");
            layer = layer.max(from.layer + 1);
            out.edges.push(Edge {
                from: earlier.clone(),
                to: id.to_owned(),
                data: in_body,
                when: if in_when { when.clone() } else { None },
            });
        }
        let column = out.nodes.iter().filter(|n| n.layer == layer).count();
        out.nodes.push(Node { id: id.to_owned(), kind, detail, when, layer, column });
        ids.push(id.to_owned());
    }
    out.layers = out.nodes.iter().map(|n| n.layer + 1).max().unwrap_or(0);
    out.width = out.nodes.iter().map(|n| n.column + 1).max().unwrap_or(0);
    Ok(out)
}

/// Whether `text` reads `steps.<id>` (as a whole id).
fn reads(text: &str, id: &str) -> bool {
    let needle = format!("steps.{id}");
    text.match_indices(&needle).any(|(at, _)| {
        let next = text[at + needle.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// What the file's `allow_tools` and `http_origins` let it do, for the editor to warn.
pub fn tool_warnings(source: &str) -> Vec<String> {
    let Ok(value) = parse_source(source) else { return vec![] };
    let mut out = Vec::new();
    let allowed: Vec<String> = match value["allow_tools"].as_array() {
        None => {
            out.push("No allow_tools: this pipeline may call every tool (page state, extract, agent tasks, workflow replays, http).".into());
            ToolName::ALL.iter().map(|t| t.as_str().to_owned()).collect()
        }
        Some(list) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
    };
    if allowed.iter().any(|t| t == "agent_task") {
        out.push("It may run agent tasks, which act in your browser.".into());
    }
    if allowed.iter().any(|t| t == "http") {
        let origins: Vec<&str> = value["http_origins"]
            .as_array()
            .map(|o| o.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        out.push(format!(
            "It may send HTTP requests to: {}.",
            if origins.is_empty() { "no origin yet".to_owned() } else { origins.join(", ") }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use prompt_files::pipeline::BUNDLED_PIPELINES;

    #[test]
    fn the_example_pipeline_is_drawn_in_layers_with_its_when_edges() {
        let diagram = diagram(BUNDLED_PIPELINES[0].1).unwrap();
        let ids: Vec<&str> = diagram.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["page", "read", "not_a_product", "facts", "checked"]);
        let layer = |id: &str| diagram.nodes.iter().find(|n| n.id == id).unwrap().layer;
        assert_eq!((layer("page"), layer("read"), layer("facts"), layer("checked")), (0, 1, 2, 3));
        assert_eq!(layer("not_a_product"), 2);
        let when_edge =
            diagram.edges.iter().find(|e| e.from == "facts" && e.to == "checked").unwrap();
        assert!(when_edge.when.as_deref().unwrap().contains("steps.facts.status"));
        assert!(when_edge.data, "checked also reads the facts");
        let data = diagram.edges.iter().find(|e| e.from == "page" && e.to == "read").unwrap();
        assert_eq!((data.data, data.when.as_deref()), (true, None));
        let only_when =
            diagram.edges.iter().find(|e| e.from == "read" && e.to == "not_a_product").unwrap();
        assert!(only_when.when.is_some());
        assert_eq!(diagram.nodes[1].detail, "product_facts");
        assert_eq!(diagram.width, 2);
    }

    #[test]
    fn ids_that_share_a_prefix_are_told_apart_and_bad_files_are_errors() {
        let source = "id: p\nsteps:\n  - {id: a, type: transform, output: 1}\n  - {id: ab, type: transform, output: \"{{steps.ab_x}}\"}\n";
        let diagram = diagram(source).unwrap();
        assert!(diagram.edges.is_empty(), "{diagram:?}");
        assert!(super::diagram("steps: [").is_err());
    }

    #[test]
    fn the_allowlist_is_warned_about() {
        assert!(tool_warnings("id: p\nsteps: []\n")[0].contains("every tool"));
        let warnings = tool_warnings(
            "id: p\nallow_tools: [http]\nhttp_origins: [\"https://api.test\"]\nsteps: []\n",
        );
        assert_eq!(warnings, ["It may send HTTP requests to: https://api.test."]);
        assert!(tool_warnings(BUNDLED_PIPELINES[0].1).is_empty());
    }
}
