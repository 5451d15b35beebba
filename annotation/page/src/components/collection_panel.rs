use annotation_core::collections::{Collection, Metadata};
use annotation_core::metrics::duration;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub name: String,
    /// What is stored of it, if anything yet.
    pub collection: Option<Collection>,
    pub meta: Metadata,
    pub on_describe: Callback<String>,
    /// Deleting is offered (a reviewer may not delete the team's collections).
    pub can_delete: bool,
    pub on_delete: Callback<()>,
}

/// The collection the list is filtered by (seed §7.D): its description, editable, and its
/// metadata. A collection the team's server holds shows what the server computes (runs,
/// steps, average quality, domains, annotators, average time per step, created, last
/// exported); one only here shows what this browser's runs say.
#[function_component(CollectionPanel)]
pub fn collection_panel(props: &Props) -> Html {
    let stored = props.collection.clone().unwrap_or_default();
    let on_change = props.on_describe.reform(|e: Event| page_kit::value(&e));
    let day = |at: &str| at.get(..16).unwrap_or(at).replace('T', " ");
    let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut facts = match &stored.shared {
        Some(shared) => {
            let m = &shared.metadata;
            let mut facts = vec![
                plural(m.runs, "run"),
                plural(m.steps, "step"),
                m.average_quality
                    .map_or("no quality yet".into(), |q| format!("average quality {q:.0}")),
                m.average_time_per_step_ms.map_or("no time recorded".into(), |ms| {
                    format!("{} per step", duration(ms.round() as u64))
                }),
            ];
            if !m.annotators.is_empty() {
                facts.push(format!("annotators {}", m.annotators.join(", ")));
            }
            if !m.domains.is_empty() {
                facts.push(format!("domains {}", m.domains.join(", ")));
            }
            facts
        }
        None => {
            let meta = &props.meta;
            vec![
                plural(meta.runs as u64, "run"),
                plural(u64::from(meta.total_steps), "step"),
                meta.average_quality
                    .map_or("no quality yet".into(), |q| format!("average quality {q}")),
            ]
        }
    };
    if !stored.created_at.is_empty() {
        facts.push(format!("created {} by {}", day(&stored.created_at), stored.created_by));
    }
    facts.push(match &stored.exported_at {
        Some(at) => format!("last exported {}", day(at)),
        None => "never exported".into(),
    });
    let on_delete = props.on_delete.reform(|_: MouseEvent| ());
    html! {
        <section class="collection" data-testid="collection" data-shared={stored.shared.is_some().to_string()}>
            <h2>{ format!("Collection “{}”", props.name) }</h2>
            <p class="muted" data-testid="collection-meta">{ facts.join(" · ") }</p>
            <textarea data-testid="collection-description" rows="2" placeholder="What this collection is for (shown to whoever exports it)"
                value={stored.description.clone()} onchange={on_change} />
            <div class="actions">
                <span class="muted shared">{ if stored.shared.is_some() { "Shared with the team through the sync server." } else { "Kept in this browser." } }</span>
                if props.can_delete {
                    <button class="small" data-testid="collection-delete" onclick={on_delete}>{ "Delete collection" }</button>
                }
            </div>
        </section>
    }
}
