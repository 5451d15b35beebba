use annotation_core::issues::IssueKind;
use annotation_core::query::{Facets, Filter, NOT_DRIVEN, OPEN_ISSUES, Sort};
use annotation_core::record::ReviewStatus;
use page_kit::value;
use yew::prelude::*;

use crate::state::list::ListAction;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub filter: Filter,
    pub sort: Sort,
    pub facets: Facets,
    /// Runs the quality bound holds back only for having no score yet.
    pub unscored: usize,
    pub on_change: Callback<ListAction>,
}

fn some(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// Search and filters over the runs (seed §7.E): every change filters at once.
#[function_component(RunFilters)]
pub fn run_filters(props: &Props) -> Html {
    let f = &props.filter;
    let set = |edit: fn(&mut Filter, String)| {
        let (filter, on_change) = (f.clone(), props.on_change.clone());
        Callback::from(move |e: Event| {
            let mut filter = filter.clone();
            edit(&mut filter, value(&e));
            on_change.emit(ListAction::Filter(filter));
        })
    };
    let on_text = props.on_change.reform(|e: InputEvent| ListAction::Text(value(&e)));
    let on_sort = props.on_change.reform(|e: Event| {
        let sort = match value(&e).as_str() {
            "oldest" => Sort::Oldest,
            "quality-high" => Sort::QualityHigh,
            "quality-low" => Sort::QualityLow,
            "status" => Sort::Status,
            _ => Sort::Newest,
        };
        ListAction::Sort(sort)
    });
    let options = |values: &[String], selected: &Option<String>, any: &str| {
        html! {
            <>
                <option value="" selected={selected.is_none()}>{ any.to_owned() }</option>
                { for values.iter().map(|v| html! { <option value={v.clone()} selected={selected.as_ref() == Some(v)}>{ v }</option> }) }
            </>
        }
    };
    let tag = f.tags.first().cloned();
    html! {
        <div class="filters" data-testid="filters">
            <input class="search" type="search" placeholder="Search prompts and thoughts…" data-testid="search"
                value={f.text.clone()} oninput={on_text} />
            <div class="status-toggles">
                { for ReviewStatus::ALL.iter().map(|status| {
                    let on = f.statuses.contains(status);
                    let status = *status;
                    html! {
                        <button class={classes!("toggle", on.then_some("on"))} data-testid={format!("filter-{}", status.as_str())}
                            aria-pressed={on.to_string()} onclick={props.on_change.reform(move |_| ListAction::ToggleStatus(status))}>
                            { status.label() }
                        </button>
                    }
                }) }
            </div>
            <label>{ "From" }<input type="date" value={f.from.clone().unwrap_or_default()} onchange={set(|f, v| f.from = some(v))} /></label>
            <label>{ "To" }<input type="date" value={f.to.clone().unwrap_or_default()} onchange={set(|f, v| f.to = some(v))} /></label>
            <select data-testid="filter-annotator" onchange={set(|f, v| f.annotator = some(v))}>
                { options(&props.facets.annotators, &f.annotator, "Any annotator") }
            </select>
            <select data-testid="filter-tag" onchange={set(|f, v| f.tags = some(v).into_iter().collect())}>
                { options(&props.facets.tags, &tag, "Any tag") }
            </select>
            <select data-testid="filter-collection" onchange={set(|f, v| f.collection = some(v))}>
                { options(&props.facets.collections, &f.collection, "Any collection") }
            </select>
            <select data-testid="filter-action" onchange={set(|f, v| f.action_type = some(v))}>
                { options(&props.facets.action_types, &f.action_type, "Any action") }
            </select>
            if !props.facets.drivers.is_empty() || f.driven_by.is_some() {
                <select data-testid="filter-driven-by" title="The MCP client that drove the run" onchange={set(|f, v| f.driven_by = some(v))}>
                    <option value="" selected={f.driven_by.is_none()}>{ "Driven by anyone" }</option>
                    <option value={NOT_DRIVEN} selected={f.driven_by.as_deref() == Some(NOT_DRIVEN)}>{ "No MCP client (side panel)" }</option>
                    { for props.facets.drivers.iter().map(|d| html! {
                        <option value={d.clone()} selected={f.driven_by.as_deref() == Some(d.as_str())}>{ format!("Driven by {d}") }</option>
                    }) }
                </select>
            }
            <select data-testid="filter-issue" onchange={set(|f, v| f.issue = some(v))}>
                <option value="" selected={f.issue.is_none()}>{ "Any issues" }</option>
                <option value={OPEN_ISSUES} selected={f.issue.as_deref() == Some(OPEN_ISSUES)}>{ "With open issues" }</option>
                { for IssueKind::ALL.iter().map(|k| html! {
                    <option value={k.as_str()} selected={f.issue.as_deref() == Some(k.as_str())}>{ format!("Open {} issues", k.label().to_ascii_lowercase()) }</option>
                }) }
            </select>
            <label title="Only scored runs pass. A run is scored when saved, imported or first opened here.">{ "Quality ≥" }
                <input type="number" min="0" max="100" step="5" data-testid="filter-quality" size="3"
                    value={f.min_quality.map(|q| q.to_string()).unwrap_or_default()}
                    onchange={set(|f, v| f.min_quality = v.parse().ok())} />
            </label>
            if props.unscored > 0 {
                <span class="muted small" data-testid="unscored-hidden" title="Runs never saved, imported or opened here have no score yet, so a quality bound leaves them out. Open one to score it.">
                    { format!("{} unscored run{} hidden", props.unscored, if props.unscored == 1 { "" } else { "s" }) }
                </span>
            }
            <select data-testid="sort" onchange={on_sort}>
                <option value="newest" selected={props.sort == Sort::Newest}>{ "Newest first" }</option>
                <option value="oldest" selected={props.sort == Sort::Oldest}>{ "Oldest first" }</option>
                <option value="quality-high" selected={props.sort == Sort::QualityHigh}>{ "Best quality" }</option>
                <option value="quality-low" selected={props.sort == Sort::QualityLow}>{ "Worst quality" }</option>
                <option value="status" selected={props.sort == Sort::Status}>{ "By status" }</option>
            </select>
        </div>
    }
}
