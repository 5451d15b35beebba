use annotation_core::record::{ReviewStatus, progress};
use annotation_core::roles::transition_label;
use yew::prelude::*;

use crate::components::run_row::UNSCORED;
use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};
use crate::util::new_id;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    /// The server's figures for the run, once a round has read them.
    #[prop_or_default]
    pub team: Option<annotation_core::metrics_sync::TeamMetrics>,
    /// A sync server is set: the team's line is there from the start, so nothing below it
    /// moves when a round fills it in.
    #[prop_or_default]
    pub syncing: bool,
}

/// The run's header (seed §2): status, metadata, progress, and what can be done to it.
#[function_component(RunHeader)]
pub fn run_header(props: &Props) -> Html {
    let editor = &props.editor;
    let run = editor.merged_run();
    let steps = editor.merged_steps();
    let pending = annotation_core::review::pending(&editor.suggestions);
    let targets = editor.targets();
    let perms = editor.permissions();
    let on_move = props.dispatch.to_callback().reform(Action::Transition);
    let on_export = props.dispatch.to_callback().reform(|_| Action::ExportRun);
    let on_duplicate = props.dispatch.to_callback().reform(|_| Action::Duplicate { id: new_id() });
    let on_back = props.dispatch.to_callback().reform(|e: MouseEvent| {
        e.prevent_default();
        Action::LeaveRun
    });
    let on_tags = {
        let dispatch = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let tags = page_kit::value(&e)
                .split(',')
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect();
            dispatch.dispatch(Action::SetTags(tags));
        })
    };
    let percent = progress(&steps);
    let metrics = annotation_core::metrics::run_metrics(run, &steps);
    let open_issues = metrics.issues_flagged - metrics.issues_resolved;
    let on_discard = props.dispatch.to_callback().reform(|_| Action::DiscardDrafts);
    let spent = run.telemetry.total();
    html! {
        <div class="run-header" data-testid="run-header">
            <a href="annotation.html" class="back" onclick={on_back} data-testid="back-to-list">{ "← All runs" }</a>
            <h1 data-testid="run-title">{ &run.task_prompt }</h1>
            if let Some(replay) = &run.replay {
                <p class="replay-of" data-testid="run-replay">{ format!("Replay · {}", replay.describe()) }</p>
            }
            <div class="meta">
                <span class={classes!("badge", run.status.as_str())} data-testid="run-status">{ run.status.label() }</span>
                if editor.qa { <span class="badge review" data-testid="qa-badge">{ "Review mode" }</span> }
                if editor.dirty() {
                    <span class="badge unsaved" data-testid="unsaved">{ "Unsaved edits" }</span>
                    if let Some(restored) = &editor.restored {
                        <span class="muted" data-testid="restored">{ format!("restored from a draft of {}", restored.saved_at.get(..16).unwrap_or(&restored.saved_at).replace('T', " ")) }</span>
                    }
                    <button class="small ghost" data-testid="discard-drafts" onclick={on_discard} title="Forget the unsaved edits">{ "Discard" }</button>
                }
                <span>{ format!("agent: {}", run.agent_status) }</span>
                <span>{ format!("annotator: {}", run.annotator.clone().unwrap_or_else(|| "unassigned".into())) }</span>
                if let Some(reviewer) = &run.reviewed_by { <span>{ format!("reviewed by {reviewer}") }</span> }
                <span>{ format!("updated {}", run.updated_at.get(..16).unwrap_or(&run.updated_at).replace('T', " ")) }</span>
                <span>{ if run.version == 0 { "not edited yet".to_owned() } else { format!("version {}", run.version) } }</span>
                if let Some(q) = run.quality {
                    <span data-testid="run-quality">{ format!("quality {q}") }</span>
                } else {
                    <span data-testid="run-quality" title={UNSCORED}>{ "quality —" }</span>
                }
                if metrics.issues_flagged > 0 {
                    <span class={classes!("badge", "issues", (open_issues > 0).then_some("open"))} data-testid="run-issues"
                        title="Issues flagged on the run's steps">
                        { format!("{open_issues} open issue{} · {} resolved", if open_issues == 1 { "" } else { "s" }, metrics.issues_resolved) }
                    </span>
                }
                if pending > 0 { <span class="badge suggestion" data-testid="pending-count">{ format!("{pending} suggestion{} pending", if pending == 1 { "" } else { "s" }) }</span> }
            </div>
            <div class="metrics muted" data-testid="run-metrics" title="Per-run metrics (time spent annotating here, review rounds, issues)">
                <span>{ format!("time annotating {}", annotation_core::metrics::duration(metrics.active_ms)) }</span>
                <span>{ format!("review rounds {}", metrics.review_rounds) }</span>
                <span>{ format!("issues flagged {} · resolved {}", metrics.issues_flagged, metrics.issues_resolved) }</span>
            </div>
            if props.syncing {
                // One line whatever it says, so a round filling it in moves nothing below.
                <div class="metrics muted team" data-testid="team-metrics" title="What the team's sync server holds: the run's last reported quality and everyone's time annotating it (yours in brackets)">
                    if let Some(team) = &props.team {
                        <span>{ format!("team: quality {}", team.quality.map_or("—".to_owned(), |q| q.to_string())) }</span>
                        <span data-testid="team-time">{ format!("time {} (yours {})", annotation_core::metrics::duration(team.time_spent_ms), annotation_core::metrics::duration(team.mine_ms)) }</span>
                    } else {
                        <span>{ "team: not read yet" }</span>
                    }
                </div>
            }
            if !run.telemetry.is_empty() {
                <details class="run-telemetry" data-testid="run-telemetry">
                    <summary title="What the agents decided, paused and asked, and what each role's model calls cost">
                        { format!("Telemetry: {} · {} model calls, ${:.4}", annotation_core::telemetry::counts(&run.telemetry), spent.calls, spent.cost) }
                    </summary>
                    <table>
                        <thead><tr><th>{ "role" }</th><th>{ "calls" }</th><th>{ "input tokens" }</th><th>{ "output tokens" }</th><th>{ "cost (USD)" }</th></tr></thead>
                        <tbody>
                            { for run.telemetry.spend.iter().map(|(role, spend)| html! {
                                <tr data-testid="run-telemetry-spend" data-role={role.clone()}>
                                    <td>{ role }</td><td>{ spend.calls }</td><td>{ spend.input_tokens }</td>
                                    <td>{ spend.output_tokens }</td><td>{ format!("{:.4}", spend.cost) }</td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                    <p class="muted">{ "Each step shows what happened before it, under its thoughts." }</p>
                </details>
            }
            <div class="progress-line" title="Steps marked complete">
                <span class="bar"><span style={format!("width:{percent}%")} /></span>
                <span data-testid="run-progress">{ format!("{percent}% complete") }</span>
            </div>
            // Review mode reads the tags; only the annotator's view edits them.
            if editor.qa {
                <p class="tags-field" data-testid="run-tags-read">{ "Tags: " }
                    if run.tags.is_empty() { <span class="muted">{ "none" }</span> }
                    { for run.tags.iter().map(|t| html! { <span class="tag">{ t }</span> }) }
                </p>
            } else {
                <label class="tags-field">{ "Tags" }
                    <input data-testid="run-tags" value={run.tags.join(", ")} onchange={on_tags}
                        placeholder="No tags yet: type some, comma-separated" disabled={!perms.edit} />
                </label>
            }
            <div class="actions">
                { for targets.iter().filter(|t| **t != ReviewStatus::Archived).map(|to| {
                    let to = *to;
                    let class = if to == ReviewStatus::Approved { "primary" } else { "" };
                    html! {
                        <button class={class} data-testid={format!("to-{}", to.as_str())} onclick={on_move.reform(move |_| to)}>
                            { transition_label(to) }
                        </button>
                    }
                }) }
                <button data-testid="export-run" onclick={on_export} title="This run as a ZIP with its screenshots">{ "Export" }</button>
                if targets.contains(&ReviewStatus::Archived) {
                    <button data-testid="to-archived" onclick={on_move.reform(|_| ReviewStatus::Archived)}>{ "Archive" }</button>
                }
                if !editor.qa {
                    <button data-testid="duplicate" onclick={on_duplicate}>{ "Duplicate" }</button>
                }
            </div>
            if let Some(doubts) = &props.editor.approving {
                <div class="confirm-bar" role="alertdialog" data-testid="approve-confirm">
                    <span data-testid="approve-doubts">{ format!("This run has {doubts}. Approved, it goes into training data as it is.") }</span>
                    <button class="primary" data-testid="approve-anyway" onclick={props.dispatch.to_callback().reform(|_| Action::ConfirmApproval(true))}>{ "Approve anyway" }</button>
                    <button data-testid="approve-cancel" onclick={props.dispatch.to_callback().reform(|_| Action::ConfirmApproval(false))}>{ "Cancel" }</button>
                </div>
            }
        </div>
    }
}
