//! The pipeline's steps drawn as a DAG: one box per step in layers by what it reads,
//! solid arrows for data, dashed ones for a `when`, and each step's condition labelled
//! once where `studio_core::pipelines::layout` placed it (labels never overlap).

use studio_core::pipelines::{Diagram, layout};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DiagramProps {
    pub diagram: Diagram,
}

#[function_component(PipelineDiagram)]
pub fn pipeline_diagram(props: &DiagramProps) -> Html {
    let drawn = layout(&props.diagram);
    let edges = drawn.edges.iter().map(|placed| {
        let edge = &placed.edge;
        let ((x1, y1), (x2, y2)) = (placed.start, placed.end);
        let when = edge.when.clone().unwrap_or_default();
        html! {
            <g class={if edge.data { "edge" } else { "edge when" }} data-testid="diagram-edge"
                data-from={edge.from.clone()} data-to={edge.to.clone()} data-when={when}>
                <line x1={x1.to_string()} y1={y1.to_string()} x2={x2.to_string()} y2={(y2 - 4.0).to_string()}
                    marker-end="url(#arrow)" stroke-dasharray={if edge.when.is_some() { "5 4" } else { "" }} />
            </g>
        }
    });
    let labels = drawn.labels.iter().map(|label| {
        let r = label.rect;
        html! {
            <g class="when-label" data-testid="diagram-label" data-to={label.to.clone()}>
                <title>{ &label.full }</title>
                // A backdrop, so the arrows crossing a label do not strike through it.
                <rect x={r.x.to_string()} y={r.y.to_string()} width={r.w.to_string()} height={r.h.to_string()} rx="3" />
                <text x={(r.x + 4.0).to_string()} y={(r.y + r.h - 3.0).to_string()}>{ &label.text }</text>
            </g>
        }
    });
    let nodes = drawn.nodes.iter().map(|placed| {
        let (node, r) = (&placed.node, placed.rect);
        html! {
            <g class={format!("node {}", node.kind)} data-testid="diagram-node" data-step={node.id.clone()}>
                <rect x={r.x.to_string()} y={r.y.to_string()} width={r.w.to_string()} height={r.h.to_string()} rx="6" />
                <text x={(r.x + 8.0).to_string()} y={(r.y + 18.0).to_string()} class="node-id">{ &node.id }</text>
                <text x={(r.x + 8.0).to_string()} y={(r.y + 36.0).to_string()} class="node-kind">
                    { if node.detail.is_empty() { node.kind.clone() } else { format!("{} · {}", node.kind, node.detail) } }
                </text>
            </g>
        }
    });
    let (width, height) = (drawn.width.max(200.0), drawn.height.max(60.0));
    html! {
        <svg class="diagram" data-testid="pipeline-diagram" width={width.to_string()} height={height.to_string()}
            viewBox={format!("0 0 {width} {height}")}>
            <defs>
                <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M 0 0 L 10 5 L 0 10 z" />
                </marker>
            </defs>
            { for edges }
            { for labels }
            { for nodes }
        </svg>
    }
}
