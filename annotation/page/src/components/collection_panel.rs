use annotation_core::collections::{Collection, Metadata};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub name: String,
    /// What is stored of it, if anything yet.
    pub collection: Option<Collection>,
    pub meta: Metadata,
    pub on_describe: Callback<String>,
}

/// The collection the list is filtered by (seed §7.D): its description, editable, and its
/// metadata: runs, total steps, average quality, when made and last exported.
#[function_component(CollectionPanel)]
pub fn collection_panel(props: &Props) -> Html {
    let stored = props.collection.clone().unwrap_or_default();
    let on_change = props.on_describe.reform(|e: Event| page_kit::value(&e));
    let day = |at: &str| at.get(..16).unwrap_or(at).replace('T', " ");
    let meta = &props.meta;
    let mut facts = vec![
        format!("{} run{}", meta.runs, if meta.runs == 1 { "" } else { "s" }),
        format!("{} steps", meta.total_steps),
        meta.average_quality.map_or("no quality yet".into(), |q| format!("average quality {q}")),
    ];
    if !stored.created_at.is_empty() {
        facts.push(format!("created {} by {}", day(&stored.created_at), stored.created_by));
    }
    facts.push(match &stored.exported_at {
        Some(at) => format!("last exported {}", day(at)),
        None => "never exported".into(),
    });
    html! {
        <section class="collection" data-testid="collection">
            <h2>{ format!("Collection “{}”", props.name) }</h2>
            <p class="muted" data-testid="collection-meta">{ facts.join(" · ") }</p>
            <textarea data-testid="collection-description" rows="2" placeholder="What this collection is for (shown to whoever exports it)"
                value={stored.description.clone()} onchange={on_change} />
        </section>
    }
}
