//! The pipeline's steps drawn as a DAG: one box per step in layers by what it reads,
//! solid arrows for data, dashed ones labelled with the `when` that gates a step.

use studio_core::pipelines::Diagram;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DiagramProps {
    pub diagram: Diagram,
}

const W: f64 = 170.0;
const H: f64 = 46.0;
const GAP_X: f64 = 40.0;
const GAP_Y: f64 = 44.0;

fn origin(layer: usize, column: usize) -> (f64, f64) {
    (10.0 + column as f64 * (W + GAP_X), 10.0 + layer as f64 * (H + GAP_Y))
}

#[function_component(PipelineDiagram)]
pub fn pipeline_diagram(props: &DiagramProps) -> Html {
    let diagram = &props.diagram;
    // Room on the right for the last column's `when` labels.
    let width = 280.0 + diagram.width.max(1) as f64 * (W + GAP_X);
    let height = 20.0 + diagram.layers.max(1) as f64 * (H + GAP_Y);
    let place =
        |id: &str| diagram.nodes.iter().find(|n| n.id == id).map(|n| origin(n.layer, n.column));
    // A step's condition is written once, beside the first arrow into it.
    let mut labelled: Vec<&str> = Vec::new();
    let edges = diagram.edges.iter().filter_map(|edge| {
        let first_when = edge.when.is_some() && !labelled.contains(&edge.to.as_str());
        if first_when {
            labelled.push(&edge.to);
        }
        let (from, to) = (place(&edge.from)?, place(&edge.to)?);
        let (x1, y1) = (from.0 + W / 2.0, from.1 + H);
        let (x2, y2) = (to.0 + W / 2.0, to.1);
        // Labels of neighbouring steps in a layer are staggered so they do not overlap.
        let stagger = diagram.nodes.iter().find(|n| n.id == edge.to).map_or(0.0, |n| (n.column % 2) as f64 * 14.0);
                let label = edge.when.clone().unwrap_or_default();
        Some(html! {
            <g class={if edge.data { "edge" } else { "edge when" }} data-testid="diagram-edge"
                data-from={edge.from.clone()} data-to={edge.to.clone()} data-when={label.clone()}>
                <line x1={x1.to_string()} y1={y1.to_string()} x2={x2.to_string()} y2={(y2 - 4.0).to_string()}
                    marker-end="url(#arrow)" stroke-dasharray={if edge.when.is_some() { "5 4" } else { "" }} />
                if first_when {
                    <text x={(x2 + 8.0).to_string()} y={(y2 - 22.0 + stagger).to_string()} class="when-label">
                        { format!("when {label}") }
                    </text>
                }
            </g>
        })
    });
    let nodes = diagram.nodes.iter().map(|node| {
        let (x, y) = origin(node.layer, node.column);
        html! {
            <g class={format!("node {}", node.kind)} data-testid="diagram-node" data-step={node.id.clone()}>
                <rect x={x.to_string()} y={y.to_string()} width={W.to_string()} height={H.to_string()} rx="6" />
                <text x={(x + 8.0).to_string()} y={(y + 18.0).to_string()} class="node-id">{ &node.id }</text>
                <text x={(x + 8.0).to_string()} y={(y + 36.0).to_string()} class="node-kind">
                    { if node.detail.is_empty() { node.kind.clone() } else { format!("{} · {}", node.kind, node.detail) } }
                </text>
            </g>
        }
    });
    html! {
        <svg class="diagram" data-testid="pipeline-diagram" width={width.to_string()} height={height.to_string()}
            viewBox={format!("0 0 {width} {height}")}>
            <defs>
                <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M 0 0 L 10 5 L 0 10 z" />
                </marker>
            </defs>
            { for edges }
            { for nodes }
        </svg>
    }
}
