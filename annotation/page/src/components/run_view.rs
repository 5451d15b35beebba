use annotation_core::templates::Template;
use yew::prelude::*;

use crate::components::assign_panel::AssignPanel;
use crate::components::guidelines::Guidelines;
use crate::components::run_header::RunHeader;
use crate::components::step_editor::StepEditor;
use crate::components::step_list::StepList;
use crate::components::tool_panel::ToolPanel;
use crate::state::editor::{EditorState, Tool};
use crate::state::team::TeamState;
use crate::state::{Action, Dispatch, GrammarCheck};
use crate::util::{listen, now};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    pub grammar: String,
    pub grammar_check: GrammarCheck,
    pub starred: Vec<Template>,
    pub team: TeamState,
    /// The annotators the assign field offers.
    pub assign_choices: Vec<String>,
    /// A sync server is set: the team's parts show.
    pub syncing: bool,
}

/// What a key press means on the run page, if anything. `in_text` is true while typing in
/// a field, where plain keys are text.
pub fn shortcut(key: &str, alt: bool, ctrl: bool, shift: bool, in_text: bool) -> Option<Shortcut> {
    // Alt+letter chords read the letter whatever the case (Shift or Caps Lock).
    let letter = (alt && !ctrl && key.chars().count() == 1).then(|| key.to_ascii_lowercase());
    if let Some(letter) = letter.as_deref() {
        return Some(match letter {
            "j" => Shortcut::Next,
            "k" => Shortcut::Prev,
            "n" => Shortcut::NextNeedingWork,
            "l" => Shortcut::NextFlagged,
            "f" => Shortcut::Flag,
            "a" => Shortcut::Approve,
            "w" => Shortcut::FixSpelling,
            "t" => Shortcut::FlagKind,
            "v" => Shortcut::FlagSeverity,
            "i" => Shortcut::Tool(Tool::Issues),
            "c" => Shortcut::Tool(Tool::Checks),
            "r" => Shortcut::NextRun,
            "1" => Shortcut::Focus(1),
            "2" => Shortcut::Focus(2),
            "3" => Shortcut::Focus(3),
            "z" => Shortcut::Zoom,
            "d" => Shortcut::Divider,
            _ => return None,
        });
    }
    Some(match (key, alt, ctrl) {
        ("ArrowDown", true, false) => Shortcut::Next,
        ("ArrowUp", true, false) => Shortcut::Prev,
        ("Enter", false, true) if shift => Shortcut::SubmitAndNext,
        ("Enter", false, true) => Shortcut::Complete,
        ("s" | "S", false, true) => Shortcut::Save,
        ("?", false, false) if !in_text => Shortcut::Help,
        ("Escape", false, false) => Shortcut::Escape,
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    Next,
    Prev,
    NextNeedingWork,
    NextFlagged,
    Complete,
    SubmitAndNext,
    NextRun,
    Flag,
    FlagKind,
    FlagSeverity,
    FixSpelling,
    Tool(Tool),
    Save,
    Approve,
    Focus(u8),
    Zoom,
    Divider,
    Help,
    Escape,
}

/// The dual panel (seed §2): the run and its steps on the left, the selected step's editor
/// and the tools on the right.
#[function_component(RunView)]
pub fn run_view(props: &Props) -> Html {
    let divider = use_state(|| 0u32);
    {
        let dispatch = props.dispatch.clone();
        let divider = divider.clone();
        use_effect_with((), move |_| {
            let guard = listen("keydown", move |event: web_sys::KeyboardEvent| {
                let target = event
                    .target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok());
                let in_text = target.is_some_and(|t| {
                    matches!(t.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                });
                let Some(key) = shortcut(
                    &event.key(),
                    event.alt_key(),
                    event.ctrl_key() || event.meta_key(),
                    event.shift_key(),
                    in_text,
                ) else {
                    return;
                };
                event.prevent_default();
                match key {
                    Shortcut::Next => dispatch.dispatch(Action::Next),
                    Shortcut::Prev => dispatch.dispatch(Action::Prev),
                    Shortcut::NextNeedingWork => dispatch.dispatch(Action::NextNeedingWork),
                    Shortcut::NextFlagged => dispatch.dispatch(Action::NextFlagged),
                    Shortcut::SubmitAndNext => dispatch.dispatch(Action::SubmitAndNext),
                    Shortcut::NextRun => dispatch.dispatch(Action::NextRun),
                    Shortcut::FlagKind => dispatch.dispatch(Action::CycleFlagKind),
                    Shortcut::FlagSeverity => dispatch.dispatch(Action::CycleFlagSeverity),
                    Shortcut::Tool(tool) => dispatch.dispatch(Action::ShowTool(tool)),
                    // The first suggestion of the first underlined word, as a click gives it.
                    Shortcut::FixSpelling => {
                        click("[data-testid=step-editor] [data-testid=apply-fix]")
                    }
                    Shortcut::Complete => dispatch.dispatch(Action::MarkComplete),
                    Shortcut::Flag => dispatch.dispatch(Action::Flag(now())),
                    Shortcut::Save => dispatch.dispatch(Action::Save),
                    Shortcut::Approve => dispatch.dispatch(Action::Approve),
                    Shortcut::Divider => divider.set(*divider + 1),
                    Shortcut::Focus(n) => focus(&format!("[data-testid=thought{n}]")),
                    Shortcut::Zoom => dispatch.dispatch(Action::ToggleZoom),
                    Shortcut::Help => dispatch.dispatch(Action::Help(true)),
                    Shortcut::Escape => {
                        dispatch.dispatch(Action::Help(false));
                        dispatch.dispatch(Action::Escaping(None));
                        dispatch.dispatch(Action::Unzoom);
                    }
                }
            });
            move || drop(guard)
        });
    }
    let editor = &props.editor;
    let steps = editor.merged_steps();
    html! {
        <div class="run-view" data-testid="run-view" data-qa={editor.qa.to_string()}>
            <aside class="left">
                <RunHeader editor={editor.clone()} dispatch={props.dispatch.clone()} team={props.team.metrics.clone().filter(|m| m.run_id == editor.run.id)} syncing={props.syncing} />
                if let Some(project) = &props.team.project {
                    <Guidelines project={project.clone()} />
                }
                if props.syncing && editor.user.role != annotation_core::roles::Role::Annotator
                    && annotation_core::team::assignable(editor.merged_run().status) {
                    <AssignPanel assignees={props.team.assignees.clone()} choices={props.assign_choices.clone()} busy={props.team.busy.is_some()}
                        overlap={props.team.project.as_ref().map_or(1, |p| p.overlap)} dispatch={props.dispatch.clone()} />
                }
                if editor.own_version {
                    <p class="own-version muted" data-testid="own-version">{ "Your own version: the other annotators of this run cannot see it, nor you theirs, until review." }</p>
                }
                <StepList steps={steps} run={editor.merged_run().clone()} at={editor.at}
                    drafted={editor.drafts.values().map(|s| s.index).collect::<Vec<_>>()}
                    comments={editor.comments.clone()} suggestions={editor.suggestions.clone()}
                    dispatch={props.dispatch.clone()} />
            </aside>
            <section class="right">
                if editor.steps.is_empty() {
                    <p class="empty">{ "This run has no steps: the agent finished without acting in a tab." }</p>
                } else {
                    <StepEditor editor={editor.clone()} dispatch={props.dispatch.clone()} grammar={props.grammar.clone()}
                        check={props.grammar_check.clone()} />
                    <ToolPanel editor={editor.clone()} dispatch={props.dispatch.clone()} divider_key={*divider}
                        starred={props.starred.clone()} grammar_check={props.grammar_check.clone()} team={props.team.clone()} />
                }
            </section>
        </div>
    }
}

fn element(selector: &str) -> Option<web_sys::HtmlElement> {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
}

fn click(selector: &str) {
    if let Some(element) = element(selector) {
        element.click();
    }
}

fn focus(selector: &str) {
    if let Some(element) = element(selector) {
        let _ = element.focus();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_keys_type_in_fields_and_chords_act_everywhere() {
        assert_eq!(shortcut("?", false, false, false, true), None);
        assert_eq!(shortcut("?", false, false, false, false), Some(Shortcut::Help));
        assert_eq!(shortcut("ArrowDown", true, false, false, true), Some(Shortcut::Next));
        assert_eq!(shortcut("Enter", false, true, false, true), Some(Shortcut::Complete));
        assert_eq!(shortcut("Enter", false, true, true, true), Some(Shortcut::SubmitAndNext));
        assert_eq!(shortcut("j", false, false, false, false), None);
        assert_eq!(shortcut("N", true, false, true, true), Some(Shortcut::NextNeedingWork));
        assert_eq!(shortcut("i", true, false, false, true), Some(Shortcut::Tool(Tool::Issues)));
    }

    #[test]
    fn every_shortcut_is_in_the_help() {
        use crate::components::help_overlay::SHORTCUTS;
        for keys in [
            "Alt+↓",
            "Alt+↑",
            "Ctrl+Enter",
            "Alt+F",
            "Ctrl+S",
            "Alt+A",
            "Alt+1",
            "Alt+Z",
            "Alt+D",
            "Alt+N",
            "Alt+L",
            "Alt+W",
            "Alt+T",
            "Alt+V",
            "Alt+I",
            "Alt+C",
            "Alt+R",
            "Ctrl+Shift+Enter",
            "?",
            "Esc",
        ] {
            assert!(SHORTCUTS.iter().any(|(k, _)| k.contains(keys)), "{keys} is not in the help");
        }
    }
}
