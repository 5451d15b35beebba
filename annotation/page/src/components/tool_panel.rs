use annotation_core::templates::Template;
use yew::prelude::*;

use crate::components::agreement_panel::AgreementPanel;
use crate::components::checks_panel::ChecksPanel;
use crate::components::history_panel::HistoryPanel;
use crate::components::issues_panel::IssuesPanel;
use crate::components::json_panel::JsonPanel;
use crate::components::review_panel::ReviewPanel;
use crate::components::subtasks_panel::SubtasksPanel;
use crate::components::templates_panel::TemplatesPanel;
use crate::state::editor::{EditorState, Tool};
use crate::state::team::TeamState;
use crate::state::{Action, Dispatch, GrammarCheck};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    /// Bumped by the Alt+D shortcut.
    pub divider_key: u32,
    /// Steps starred as templates.
    pub starred: Vec<Template>,
    /// Grammar answers, which count in the step's quality.
    pub grammar_check: GrammarCheck,
    pub team: TeamState,
}

/// The right panel's tools, one tab at a time (seed §2 "Tools & Options").
#[function_component(ToolPanel)]
pub fn tool_panel(props: &Props) -> Html {
    let editor = &props.editor;
    let tool = editor.shown_tool();
    let body = match tool {
        Tool::Checks => {
            html! { <ChecksPanel editor={editor.clone()} dispatch={props.dispatch.clone()} grammar_check={props.grammar_check.clone()} /> }
        }
        Tool::Issues => {
            html! { <IssuesPanel editor={editor.clone()} dispatch={props.dispatch.clone()} /> }
        }
        Tool::Templates => {
            html! { <TemplatesPanel starred={props.starred.clone()} editor={editor.clone()} dispatch={props.dispatch.clone()} /> }
        }
        Tool::Json => {
            html! { <JsonPanel editor={editor.clone()} dispatch={props.dispatch.clone()} /> }
        }
        Tool::Review => {
            html! { <ReviewPanel editor={editor.clone()} dispatch={props.dispatch.clone()} /> }
        }
        Tool::History => {
            html! { <HistoryPanel editor={editor.clone()} dispatch={props.dispatch.clone()} /> }
        }
        Tool::Agreement => html! {
            <AgreementPanel agreement={props.team.agreement.clone()} merge={props.team.merge.clone()}
                step={editor.current().map(|s| s.index)} busy={props.team.busy.is_some()} dispatch={props.dispatch.clone()} />
        },
        Tool::Subtasks => {
            html! { <SubtasksPanel editor={editor.clone()} dispatch={props.dispatch.clone()} divider_key={props.divider_key} /> }
        }
    };
    html! {
        <div class="tools" data-testid="tools">
            <div class="tabs" role="tablist">
                { for editor.tools().into_iter().map(|t| {
                    let count = match t {
                        Tool::Issues => editor.current().map_or(0, annotation_core::issues::open_count),
                        _ => 0,
                    };
                    html! {
                        <button role="tab" class={classes!("tab", (t == tool).then_some("on"))} aria-selected={(t == tool).to_string()}
                            data-testid={format!("tab-{}", t.id())} onclick={props.dispatch.to_callback().reform(move |_| Action::ShowTool(t))}>
                            { t.label() }
                            if count > 0 { <span class="count issues" data-testid="tab-issues-count">{ count }</span> }
                        </button>
                    }
                }) }
            </div>
            <div class="tool-body">{ body }</div>
        </div>
    }
}
