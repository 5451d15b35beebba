//! The Studio's view of a pipeline file: its steps as a diagram (which earlier steps each
//! reads, and under which `when`), laid out in layers, and what its tool allowlist lets it
//! do, as warnings to show. The Studio is where pipeline YAML is read: [`parse_source`].

use prompt_files::pipeline::load::parsed;
use prompt_files::pipeline::{Problem, ToolName};
use serde_json::Value;

/// Parses the editor's file: as JSON when it looks like JSON (for JSON's own error
/// positions), as YAML otherwise. The worker is sent this parsed form with the text.
pub fn parse_source(source: &str) -> Result<Value, Problem> {
    if source.trim_start().starts_with('{') {
        return parsed(source, None);
    }
    serde_norway::from_str(source).map_err(|e| Problem::whole(format!("not valid YAML: {e}")))
}

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

/// A box on the drawing, in SVG units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    /// Whether the two boxes share any area (touching edges do not count).
    pub fn intersects(&self, other: &Rect) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }
}

/// A step's box.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedNode {
    pub node: Node,
    pub rect: Rect,
}

/// An arrow from the bottom of its `from` step to the top of its `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedEdge {
    pub edge: Edge,
    pub start: (f64, f64),
    pub end: (f64, f64),
}

/// A step's `when`, written once in the gap above the step, beside its arrows' heads.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedLabel {
    /// The step the condition gates.
    pub to: String,
    /// As drawn (shortened when long).
    pub text: String,
    /// The whole condition.
    pub full: String,
    pub rect: Rect,
}

/// The diagram drawn: boxes, arrows and labels with their places, and the drawing's size.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub nodes: Vec<PlacedNode>,
    pub edges: Vec<PlacedEdge>,
    pub labels: Vec<PlacedLabel>,
    pub width: f64,
    pub height: f64,
}

pub const NODE_W: f64 = 170.0;
pub const NODE_H: f64 = 46.0;
const GAP_X: f64 = 40.0;
/// The least room between layers, for the arrows.
const GAP_Y: f64 = 44.0;
const MARGIN: f64 = 10.0;
/// A label's line (11px text) and the room between stacked labels.
pub const LABEL_H: f64 = 15.0;
/// An upper bound on an 11px character's width, so a label's box holds its text.
const CHAR_W: f64 = 6.6;
const LABEL_CHARS: usize = 48;
/// The width an arrowhead takes at the top of a step, which no label may cover.
pub const ARROWHEAD: f64 = 12.0;

/// Places the steps in their layers and columns and each `when` label so that no two
/// labels overlap and none covers a step: the labels of one layer go in the gap above it,
/// each beside its step's arrowheads, stacked upwards in rows where they would collide,
/// and the gap grows to hold the rows.
pub fn layout(diagram: &Diagram) -> Layout {
    let x_of = |column: usize| MARGIN + column as f64 * (NODE_W + GAP_X);
    // Each step with a `when` that reads an earlier step gets one label.
    let mut wanted: Vec<(usize, String, String, f64, f64)> = Vec::new();
    for node in &diagram.nodes {
        let drawn = diagram.edges.iter().any(|e| e.to == node.id && e.when.is_some());
        let Some(when) = node.when.as_ref().filter(|_| drawn) else { continue };
        let full = format!("when {when}");
        let text = if full.chars().count() > LABEL_CHARS {
            format!("{}…", full.chars().take(LABEL_CHARS - 1).collect::<String>())
        } else {
            full.clone()
        };
        let w = text.chars().count() as f64 * CHAR_W + 8.0;
        let x = x_of(node.column) + NODE_W / 2.0 + 6.0;
        wanted.push((node.layer, node.id.clone(), text, x, w));
    }
    // Rows per layer: a label takes the lowest row (nearest its step) where it overlaps no
    // label already there. The lowest row is level with the arrowheads, so there the
    // arrowheads into the layer's steps are taken from the start.
    let mut rows_of: Vec<Vec<Vec<(f64, f64)>>> = vec![Vec::new(); diagram.layers.max(1)];
    for node in &diagram.nodes {
        if diagram.edges.iter().any(|e| e.to == node.id) {
            let head = x_of(node.column) + NODE_W / 2.0 - ARROWHEAD / 2.0;
            let rows = &mut rows_of[node.layer];
            if rows.is_empty() {
                rows.push(Vec::new());
            }
            rows[0].push((head, ARROWHEAD));
        }
    }
    let mut row_of_label = Vec::new();
    for (layer, _, _, x, w) in &wanted {
        let rows = &mut rows_of[*layer];
        let free = |row: &Vec<(f64, f64)>| row.iter().all(|(x0, w0)| x + w <= *x0 || x0 + w0 <= *x);
        let row = match rows.iter().position(free) {
            Some(row) => row,
            None => {
                rows.push(Vec::new());
                rows.len() - 1
            }
        };
        rows[row].push((*x, *w));
        row_of_label.push(row);
    }
    // Each layer's top: the gap above it holds its label rows and room for the arrows.
    let mut tops = Vec::new();
    let mut y = MARGIN;
    for (layer, rows) in rows_of.iter().enumerate() {
        let used = rows.iter().rposition(|row| row.iter().any(|(_, w)| *w > ARROWHEAD));
        let labels = used.map_or(0.0, |last| (last + 1) as f64 * LABEL_H);
        let gap = if layer == 0 { labels } else { GAP_Y.max(labels + 24.0) };
        y += gap;
        tops.push(y);
        y += NODE_H;
    }
    let mut out = Layout::default();
    for node in &diagram.nodes {
        let rect = Rect { x: x_of(node.column), y: tops[node.layer], w: NODE_W, h: NODE_H };
        out.nodes.push(PlacedNode { node: node.clone(), rect });
    }
    let rect_of = |id: &str| out.nodes.iter().find(|n| n.node.id == id).map(|n| n.rect);
    for edge in &diagram.edges {
        let (Some(from), Some(to)) = (rect_of(&edge.from), rect_of(&edge.to)) else { continue };
        out.edges.push(PlacedEdge {
            edge: edge.clone(),
            start: (from.x + from.w / 2.0, from.y + from.h),
            end: (to.x + to.w / 2.0, to.y),
        });
    }
    for ((layer, to, text, x, w), row) in wanted.into_iter().zip(row_of_label) {
        let bottom = tops[layer] - 4.0 - row as f64 * LABEL_H;
        let full = diagram.nodes.iter().find(|n| n.id == to).and_then(|n| n.when.clone());
        out.labels.push(PlacedLabel {
            to,
            text,
            full: format!("when {}", full.unwrap_or_default()),
            rect: Rect { x, y: bottom - (LABEL_H - 2.0), w, h: LABEL_H - 2.0 },
        });
    }
    let right = |r: &Rect| r.x + r.w;
    out.width = out
        .nodes
        .iter()
        .map(|n| right(&n.rect))
        .chain(out.labels.iter().map(|l| right(&l.rect)))
        .fold(0.0, f64::max)
        + MARGIN;
    out.height = y + MARGIN;
    out
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
            out.push("No allow_tools: this pipeline may call every tool (page state, extract, agent tasks, workflow replays, http, the MCP servers' tools).".into());
            ToolName::ALL.iter().map(|t| t.as_str().to_owned()).collect()
        }
        Some(list) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
    };
    if allowed.iter().any(|t| t == "agent_task") {
        out.push("It may run agent tasks, which act in your browser.".into());
    }
    let mcp: Vec<&str> = allowed
        .iter()
        .filter(|t| *t == "mcp" || t.starts_with("mcp:"))
        .map(|t| if t == "mcp" { "every server's tools" } else { t.as_str() })
        .collect();
    if !mcp.is_empty() {
        out.push(format!("It may call tools of MCP servers from Settings: {}.", mcp.join(", ")));
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
    #[test]
    fn unparsable_files_say_where_and_yaml_reads_as_its_json() {
        let yaml = super::parse_source("id: x\nsteps:\n  - id: a\n   type: llm\n").unwrap_err();
        assert_eq!(yaml.path, "");
        assert!(yaml.message.contains("YAML") && yaml.message.contains("line 4"), "{yaml:?}");
        let json = super::parse_source("{\"id\": \"x\",\n \"steps\": [}").unwrap_err();
        assert!(json.message.contains("JSON") && json.message.contains("line 2"), "{json:?}");
        let read = super::parse_source("id: x\nsteps: [{id: a, n: 1}]\n").unwrap();
        assert_eq!(read, serde_json::json!({"id": "x", "steps": [{"id": "a", "n": 1}]}));
    }

    use super::*;
    use prompt_files::pipeline::BUNDLED_PIPELINES;

    #[test]
    fn mcp_tools_in_the_allowlist_are_said() {
        let listed =
            tool_warnings("id: p\nallow_tools: [\"mcp:shop/lookup\", \"mcp:crm/*\"]\nsteps: []\n");
        assert_eq!(
            listed,
            ["It may call tools of MCP servers from Settings: mcp:shop/lookup, mcp:crm/*."]
        );
        let all = tool_warnings("id: p\nsteps: []\n");
        assert!(
            all.contains(
                &"It may call tools of MCP servers from Settings: every server's tools.".to_owned()
            ),
            "{all:?}"
        );
    }

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
    fn when_labels_of_edges_meeting_at_one_step_and_its_neighbours_never_overlap() {
        // `joined` reads three earlier steps in its `when`, and its neighbours in the layer
        // have long conditions of their own: the labels all want the same gap.
        let source = r#"
id: many_whens
steps:
  - {id: a, type: transform, output: 1}
  - {id: b, type: transform, output: 2}
  - {id: c, type: transform, output: 3}
  - {id: joined, type: transform, when: "steps.a.output == 1 && steps.b.output == 2 || exists(steps.c.output)", output: "{{steps.a.output}}"}
  - {id: left_out, type: transform, when: "steps.a.status == 'skipped' && steps.b.status == 'skipped'", output: 0}
  - {id: third, type: transform, when: "steps.c.output == 3", output: "{{steps.b.output}}"}
  - {id: last, type: transform, when: "steps.joined.status == 'ok' && steps.third.status == 'ok'", output: 4}
"#;
        let drawn = diagram(source).unwrap();
        let into_joined = drawn.edges.iter().filter(|e| e.to == "joined" && e.when.is_some());
        assert_eq!(into_joined.count(), 3, "three when edges meet at one step");
        let layout = layout(&drawn);
        assert_eq!(layout.labels.len(), 4, "one label per gated step: {:?}", layout.labels);
        for (n, label) in layout.labels.iter().enumerate() {
            for other in &layout.labels[n + 1..] {
                assert!(
                    !label.rect.intersects(&other.rect),
                    "{} overlaps {}: {:?} {:?}",
                    label.to,
                    other.to,
                    label.rect,
                    other.rect
                );
            }
            for node in &layout.nodes {
                assert!(!label.rect.intersects(&node.rect), "{} covers {}", label.to, node.node.id);
            }
            for edge in &layout.edges {
                let (x, y) = edge.end;
                let head = Rect { x: x - ARROWHEAD / 2.0, y: y - 12.0, w: ARROWHEAD, h: 12.0 };
                assert!(
                    !label.rect.intersects(&head),
                    "{} covers the arrow into {}",
                    label.to,
                    edge.edge.to
                );
            }
            assert!(label.rect.x + label.rect.w <= layout.width, "inside the drawing");
            assert!(label.rect.y >= 0.0);
        }
        let long = layout.labels.iter().find(|l| l.to == "joined").unwrap();
        assert!(long.text.ends_with('…') && long.full.contains("exists(steps.c.output)"));
        // The example's labels are apart too.
        let example = super::layout(&diagram(BUNDLED_PIPELINES[0].1).unwrap());
        assert_eq!(example.labels.len(), 3);
        assert!(!example.labels[0].rect.intersects(&example.labels[1].rect));
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
