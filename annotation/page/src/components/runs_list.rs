use annotation_core::query::facets;
use annotation_core::record::ReviewStatus;
use annotation_core::review::ApprovalCheck;
use annotation_core::roles::User;
use yew::prelude::*;

use crate::components::analytics_view::AnalyticsView;
use crate::components::collection_panel::CollectionPanel;
use crate::components::export_dialog::ExportDialog;
use crate::components::finetune_dialog::FinetuneDialog;
use crate::components::queue_view::QueueView;
use crate::components::run_filters::RunFilters;
use crate::components::run_row::RunRow;
use crate::components::virtual_rows::use_window;
use crate::state::list::{BatchAnswer, ListAction, ListState};
use crate::state::team::{TeamAction, TeamState};
use crate::state::{Action, Dispatch};

const ROW_PX: f64 = 32.0;
const VIEW_PX: f64 = 900.0;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub list: ListState,
    pub user: User,
    pub dispatch: Dispatch,
    pub rejections: Vec<String>,
    pub copyable: Option<(String, String)>,
    pub collections: Vec<annotation_core::collections::Collection>,
    pub team: TeamState,
    /// A sync server is set: "My queue" and assigning show.
    pub syncing: bool,
}

/// Every captured run: search, filters, batch actions, export and import (seed §7.E, §8).
#[function_component(RunsList)]
pub fn runs_list(props: &Props) -> Html {
    let exporting = use_state(|| false);
    let finetuning = use_state(|| false);
    let analytics = use_state(|| false);
    let collection = use_state(String::new);
    let round_robin = use_node_ref();
    let window = use_window(props.list.shown.len(), ROW_PX, VIEW_PX);
    {
        // Alt+R opens the first run shown: a queue is walked from here by keyboard.
        let dispatch = props.dispatch.clone();
        use_effect_with((), move |_| {
            let guard = crate::util::listen("keydown", move |event: web_sys::KeyboardEvent| {
                if event.alt_key() && !event.ctrl_key() && event.key().eq_ignore_ascii_case("r") {
                    event.prevent_default();
                    dispatch.dispatch(Action::NextRun);
                }
            });
            move || drop(guard)
        });
    }
    let list = &props.list;
    let facets = facets(&list.summaries);
    let on_list = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |action: ListAction| dispatch.dispatch(Action::List(action)))
    };
    let on_open = props
        .dispatch
        .to_callback()
        .reform(|(run_id, qa): (String, bool)| Action::OpenRun { run_id, qa });
    let on_import = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|files| files.get(0)) {
                // The size is known before the file is read: the reducer refuses one too big.
                let (name, bytes) = (file.name(), file.size() as u64);
                dispatch.dispatch(Action::ImportFile { name, bytes, file });
            }
            input.set_value("");
        })
    };
    let picked = &list.picked;
    let on_batch = props.dispatch.to_callback().reform(Action::MovePicked);
    let on_collect = {
        let (dispatch, name) = (props.dispatch.clone(), collection.clone());
        Callback::from(move |_| {
            dispatch.dispatch(Action::CollectPicked((*name).clone()));
            name.set(String::new());
        })
    };
    let on_export = {
        let (dispatch, exporting) = (props.dispatch.clone(), exporting.clone());
        Callback::from(move |(format, options)| {
            exporting.set(false);
            dispatch.dispatch(Action::ExportList(format, options));
        })
    };
    let on_finetune = {
        let (dispatch, finetuning) = (props.dispatch.clone(), finetuning.clone());
        Callback::from(move |options| {
            finetuning.set(false);
            dispatch.dispatch(Action::ExportFinetune(options));
        })
    };
    let all_shown_picked =
        !list.shown.is_empty() && list.shown().all(|s| list.picked.contains(&s.run_id));
    let manager_or_reviewer = props.user.role != annotation_core::roles::Role::Annotator;
    let on_queue =
        props.dispatch.to_callback().reform(|on: bool| Action::Team(TeamAction::ShowQueue(on)));
    let show_queue = props.syncing && props.team.show_queue;
    let on_round_robin = {
        let (dispatch, field) = (props.dispatch.clone(), round_robin.clone());
        Callback::from(move |_| {
            let typed =
                field.cast::<web_sys::HtmlInputElement>().map(|i| i.value()).unwrap_or_default();
            dispatch.dispatch(Action::Team(TeamAction::RoundRobin(typed)));
        })
    };
    html! {
        <main class="runs" data-testid="runs-list">
            <div class="runs-head">
                <h1>{ "Captured runs" }</h1>
                if show_queue {
                    <span class="muted" data-testid="queue-count">{ match props.team.queue.len() {
                        1 => "1 run in your queue".to_owned(),
                        n => format!("{n} runs in your queue"),
                    } }</span>
                } else {
                    <span class="muted" data-testid="runs-count">
                        { format!("{} of {} runs", list.shown.len(), list.summaries.len()) }
                    </span>
                }
                if !list.texts_loaded && !list.filter.text.is_empty() {
                    <span class="muted" data-testid="search-loading">{ "Loading the search index…" }</span>
                }
                <div class="spacer" />
                <label class="button" data-testid="import">
                    { "Import…" }
                    <input type="file" accept=".json,.jsonl,application/json" hidden=true onchange={on_import} data-testid="import-file" />
                </label>
                if props.user.role.is_manager() {
                    <button class={classes!((*analytics).then_some("toggle on"))} data-testid="analytics-toggle"
                        onclick={let a = analytics.clone(); move |_| a.set(!*a)}>{ "Analytics" }</button>
                }
                <button data-testid="finetune-open" title="Chat-format training data for the Navigator, a step an example"
                    onclick={let f = finetuning.clone(); move |_| f.set(true)}>{ "Fine-tuning data…" }</button>
                <button data-testid="export-open" onclick={let e = exporting.clone(); move |_| e.set(true)}>
                    { if picked.is_empty() { "Export shown…".to_owned() } else { format!("Export {} picked…", picked.len()) } }
                </button>
            </div>
            if props.syncing {
                <div class="tabs list-tabs" role="tablist">
                    <button role="tab" class={classes!("tab", show_queue.then_some("on"))} data-testid="tab-queue"
                        onclick={on_queue.reform(|_| true)}>{ format!("My queue ({})", props.team.queue.len()) }</button>
                    <button role="tab" class={classes!("tab", (!show_queue).then_some("on"))} data-testid="tab-all"
                        onclick={on_queue.reform(|_| false)}>{ "All runs" }</button>
                    if manager_or_reviewer && !show_queue {
                        <span class="round-robin">
                            <input data-testid="round-robin-to" ref={round_robin.clone()} size="20" placeholder="annotator ids, comma-separated" />
                            <button class="small" data-testid="round-robin" title="Assign the runs the filter shows, in turn"
                                onclick={on_round_robin}>{ "Assign filtered in turn" }</button>
                        </span>
                    }
                </div>
            }
            if show_queue {
                <QueueView rows={annotation_core::team::queue_rows(&props.team.queue, &list.summaries)} loaded={props.team.queue_loaded} dispatch={props.dispatch.clone()} />
            } else {
            <RunFilters filter={list.filter.clone()} sort={list.sort} facets={facets} unscored={list.unscored_hidden} on_change={on_list.clone()} />
            if let Some(name) = list.filter.collection.clone().filter(|c| !c.is_empty()) {
                <CollectionPanel name={name.clone()} collection={props.collections.iter().find(|c| c.name == name).cloned()}
                    meta={annotation_core::collections::metadata(&list.summaries, &name)}
                    on_describe={{ let (dispatch, name) = (props.dispatch.clone(), name.clone());
                        Callback::from(move |description| dispatch.dispatch(Action::DescribeCollection { name: name.clone(), description })) }}
                    can_delete={!(props.syncing && props.user.role == annotation_core::roles::Role::Reviewer)}
                    on_delete={{ let (dispatch, name) = (props.dispatch.clone(), name.clone());
                        Callback::from(move |()| dispatch.dispatch(Action::DeleteCollection(name.clone()))) }} />
            }
            if *analytics {
                <AnalyticsView summaries={list.shown().cloned().collect::<Vec<_>>()} />
            }
            if !props.rejections.is_empty() {
                <div class="rejections" data-testid="import-errors" role="alert">
                    <strong>{ "The import was refused; nothing changed. Fix these and import again:" }</strong>
                    <ul>{ for props.rejections.iter().map(|line| html! { <li>{ line }</li> }) }</ul>
                    if props.copyable.is_some() {
                        <button data-testid="import-copies" onclick={props.dispatch.to_callback().reform(|_| Action::ImportCopies)}>
                            { "Import them as copies instead" }
                        </button>
                    }
                </div>
            }
            if !picked.is_empty() {
                <div class="batch" data-testid="batch-bar">
                    <span>{ format!("{} picked", picked.len()) }</span>
                    if manager_or_reviewer {
                        <button class="primary" data-testid="batch-approve" onclick={on_batch.reform(|_| ReviewStatus::Approved)}>{ "Approve picked" }</button>
                    }
                    <button data-testid="batch-submit" onclick={on_batch.reform(|_| ReviewStatus::InReview)}>{ "Submit picked for review" }</button>
                    <input data-testid="collection-name" placeholder="Collection name" value={(*collection).clone()}
                        oninput={page_kit::keep_text(&collection)} />
                    <button data-testid="collection-add" disabled={collection.trim().is_empty()} onclick={on_collect}>{ "Add to collection" }</button>
                    <button class="ghost" onclick={on_list.reform(|_| ListAction::PickShown(false))}>{ "Clear" }</button>
                </div>
            }
            if let Some(asked) = &list.approving {
                <div class="confirm-bar" role="alertdialog" data-testid="batch-approve-confirm">
                    <span data-testid="batch-approve-doubts">{ format!(
                        "{} of the {} picked runs {} open issues or steps not complete. Approved, they go into training data as they are.",
                        asked.doubtful.len(), asked.all.len(), if asked.doubtful.len() == 1 { "has" } else { "have" }) }</span>
                    <button class="primary" data-testid="batch-approve-all" onclick={props.dispatch.to_callback().reform(|_| Action::ConfirmBatchApproval(BatchAnswer::All))}>
                        { format!("Approve all {}", asked.all.len()) }</button>
                    if asked.doubtful.len() < asked.all.len() {
                        <button data-testid="batch-approve-finished" onclick={props.dispatch.to_callback().reform(|_| Action::ConfirmBatchApproval(BatchAnswer::Finished))}>
                            { format!("Approve only the {} finished", asked.all.len() - asked.doubtful.len()) }</button>
                    }
                    <button data-testid="batch-approve-cancel" onclick={props.dispatch.to_callback().reform(|_| Action::ConfirmBatchApproval(BatchAnswer::Cancel))}>{ "Cancel" }</button>
                </div>
            }
            if list.loaded && list.summaries.is_empty() {
                <div class="empty" data-testid="no-runs">
                    <h2>{ "No captured runs yet" }</h2>
                    <p>{ "Give the agent a task in the side panel: every run it makes appears here to annotate. Or import an export file." }</p>
                </div>
            } else {
                <div class="run-table">
                    <div class="run-row head">
                        <input type="checkbox" aria-label="Pick all shown" checked={all_shown_picked}
                            onchange={on_list.reform(move |_| ListAction::PickShown(!all_shown_picked))} />
                        <span>{ "Task" }</span><span>{ "Status" }</span><span>{ "Steps" }</span>
                        <span>{ "Issues" }</span><span>{ "Quality" }</span><span>{ "Annotator" }</span>
                        <span>{ "Created" }</span>
                    </div>
                    <div class="run-scroll" onscroll={window.onscroll.clone()} data-testid="run-scroll">
                        <div style={format!("height:{}px", window.before)} />
                        { for window.range.clone().map(|i| {
                            let summary = &list.summaries[list.shown[i]];
                            html! {
                                <RunRow key={summary.run_id.clone()} summary={summary.clone()}
                                    picked={list.picked.contains(&summary.run_id)}
                                    on_pick={on_list.clone()} on_open={on_open.clone()} />
                            }
                        }) }
                        <div style={format!("height:{}px", window.after)} />
                    </div>
                </div>
            }
            if *finetuning {
                <FinetuneDialog count={if picked.is_empty() { list.shown.len() } else { picked.len() }}
                    unfinished={list.offered().filter(|s| ApprovalCheck::of_summary(s, 0).doubts().is_some()).count()}
                    on_export={on_finetune} on_cancel={let f = finetuning.clone(); Callback::from(move |()| f.set(false))} />
            }
            if *exporting {
                <ExportDialog count={if picked.is_empty() { list.shown.len() } else { picked.len() }}
                    on_export={on_export} on_cancel={let e = exporting.clone(); Callback::from(move |()| e.set(false))} />
            }
            }
        </main>
    }
}
