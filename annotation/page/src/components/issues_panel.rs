use annotation_core::issues;
use yew::prelude::*;

use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};
use crate::util::now;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
}

/// The Issue Tracker (seed §2): the selected step's issues with their type, severity,
/// description and suggested fix, who raised them, and resolve or reopen.
#[function_component(IssuesPanel)]
pub fn issues_panel(props: &Props) -> Html {
    let editor = &props.editor;
    let Some(step) = editor.current().cloned() else { return html! {} };
    let may = editor.permissions().mark;
    let list = issues::of_step(&step);
    let open = list.iter().filter(|i| i.is_open()).count();
    html! {
        <div class="issues-panel" data-testid="issues">
            <p class="muted" data-testid="issues-summary">{
                match (list.len(), open) {
                    (0, _) => "No issues on this step. Flag one below the thoughts: type, severity, what is wrong and how to fix it.".to_owned(),
                    (n, open) => format!("{n} issue{} on this step, {open} open.", if n == 1 { "" } else { "s" }),
                }
            }</p>
            <ul class="issue-list">
                { for list.iter().enumerate().map(|(position, issue)| {
                    let state = issue.status.as_str();
                    let resolved = !issue.is_open();
                    let toggle = props.dispatch.to_callback().reform(move |_| Action::ResolveIssue {
                        position, resolved: !resolved, at: now(),
                    });
                    let raised = match (&issue.flagged_by, &issue.flagged_at) {
                        (Some(by), Some(at)) => format!("flagged by {by}, {}", at.get(..16).unwrap_or(at).replace('T', " ")),
                        (Some(by), None) => format!("flagged by {by}"),
                        _ => String::new(),
                    };
                    html! {
                        <li class={classes!("issue", state)} data-testid="issue" data-state={state}
                            data-type={issue.kind.as_str()} data-severity={issue.severity.as_str()}>
                            <div class="issue-head">
                                <span class={classes!("badge", "severity", issue.severity.as_str())} data-testid="issue-severity">{ issue.severity.as_str() }</span>
                                <span class="badge kind" data-testid="issue-type">{ issue.kind.label() }</span>
                                <span class="muted">{ raised }</span>
                                if resolved {
                                    <span class="muted" data-testid="issue-resolved">{
                                        format!("resolved{}", issue.resolved_by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default())
                                    }</span>
                                }
                                <span class="spacer" />
                                if may {
                                    <button class="small" data-testid="issue-resolve" onclick={toggle}>
                                        { if resolved { "Reopen" } else { "Resolve" } }
                                    </button>
                                }
                            </div>
                            <p class="issue-description" data-testid="issue-description">{ &issue.description }</p>
                            if let Some(suggestion) = &issue.suggestion {
                                <p class="issue-suggestion" data-testid="issue-suggestion"><strong>{ "Suggested fix: " }</strong>{ suggestion }</p>
                            }
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}
