use annotation_core::issues::{Draft as IssueDraft, IssueKind, Severity};
use annotation_core::lint::{self, TextIssue};
use annotation_core::record::{ActionKind, StepAction, StepState, Thought};
use yew::prelude::*;

use crate::components::draft_panel::DraftPanel;
use crate::components::navigator_notes::NavigatorNotesView;
use crate::components::screenshot_view::ScreenshotView;
use crate::components::step_telemetry::StepTelemetry;
use crate::components::thought_field::ThoughtField;
use crate::effects::SpellerHandle;
use crate::language;
use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch, GrammarCheck, web_link};
use crate::util::now;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    /// The LanguageTool-compatible server, empty when grammar checks are off.
    pub grammar: String,
    pub check: GrammarCheck,
}

/// The right panel's editor for the selected step (seed §2).
#[function_component(StepEditor)]
pub fn step_editor(props: &Props) -> Html {
    let speller = use_context::<Option<SpellerHandle>>().flatten();
    let editor = &props.editor;
    let Some(step) = editor.current().cloned() else { return html! {} };
    let perms = editor.permissions();
    let dispatch = props.dispatch.clone();
    let on_thought = dispatch.to_callback().reform(|(which, text)| Action::SetThought(which, text));
    let on_fix = {
        let (dispatch, step) = (dispatch.clone(), step.clone());
        Callback::from(move |(issue, replacement, everywhere): (TextIssue, String, bool)| {
            let text = step.thoughts.get(issue.thought);
            if everywhere {
                let from = text.get(issue.start..issue.end).unwrap_or_default().to_owned();
                dispatch.dispatch(Action::EditAll(Box::new(move |steps| {
                    lint::replace_everywhere(steps, &from, &replacement);
                })));
            } else {
                dispatch.dispatch(Action::SetThought(
                    issue.thought,
                    lint::apply(text, &issue, &replacement),
                ));
            }
        })
    };
    let set_action = |edit: fn(&mut StepAction, String)| {
        let (dispatch, action) = (dispatch.clone(), step.action.clone());
        Callback::from(move |e: Event| {
            let mut action = action.clone();
            edit(&mut action, page_kit::value(&e));
            dispatch.dispatch(Action::SetAction(action));
        })
    };
    let on_extended = dispatch.to_callback().reform(|e: Event| {
        Action::SetExtended(page_kit::value(&e).lines().map(str::to_owned).collect())
    });
    let on_flag = dispatch.to_callback().reform(|_| Action::Flag(now()));
    let edit_flag = |edit: fn(&mut IssueDraft, String)| {
        let (dispatch, draft) = (dispatch.clone(), editor.flag.clone());
        Callback::from(move |e: Event| {
            let mut draft = draft.clone();
            edit(&mut draft, page_kit::value(&e));
            dispatch.dispatch(Action::EditFlag(draft));
        })
    };
    let type_flag = |edit: fn(&mut IssueDraft, String)| {
        let (dispatch, draft) = (dispatch.clone(), editor.flag.clone());
        Callback::from(move |e: InputEvent| {
            let mut draft = draft.clone();
            edit(&mut draft, page_kit::value(&e));
            dispatch.dispatch(Action::EditFlag(draft));
        })
    };
    // The one vocabulary, the seed's six first; an imported step's own name stays selectable.
    let mut kinds = ActionKind::NAMED.to_vec();
    if !kinds.contains(&step.action.kind) {
        kinds.push(step.action.kind.clone());
    }
    let position = editor.at;
    let total = editor.steps.len();
    let log = annotation_core::telemetry::by_step(&editor.run.telemetry, &editor.steps);
    let owned = |entries: &[&run_contract::telemetry::LogEntry]| -> Vec<_> {
        entries.iter().map(|e| (*e).clone()).collect()
    };
    let before = log.steps.get(position).map(|entries| owned(entries)).unwrap_or_default();
    let after = if position + 1 == total { owned(&log.after) } else { Vec::new() };
    let state = match step.state() {
        StepState::Done => "Complete",
        StepState::Flagged => "Flagged for review",
        StepState::NeedsAnnotation => "Needs annotation",
    };
    html! {
        <div class="step-editor" data-testid="step-editor" data-index={step.index.to_string()}>
            <div class="editor-head">
                <h2 data-testid="step-heading">{ format!("Step {} of {}", position + 1, total) }</h2>
                <span class="muted" data-testid="step-state">{ state }</span>
                <a class="muted url" href={web_link(&step.url).map(str::to_owned)} target="_blank" rel="noopener noreferrer">{ &step.title }</a>
                // The model calls behind this step, in the Prompt Studio's traces view.
                <a class="muted" data-testid="step-traces" href={format!("studio.html#run={}&step={}",
                    js_sys::encode_uri_component(&editor.run.id), step.index)}>{ "Traces" }</a>
            </div>
            // What the agent saw and did, beside what it thought: on a wide screen the two
            // columns scroll apart and the save bar stays in view (annotation.css).
            <div class="step-see">
            <ScreenshotView shot={step.screenshot.clone()} zoomed={editor.zoom} on_zoom={dispatch.to_callback().reform(|_| Action::ToggleZoom)} />
            <div class="action-fields">
                <label>{ "Action" }
                    <select data-testid="action-type" disabled={!perms.edit} onchange={set_action(|a, v| a.kind = ActionKind::parse(&v))}>
                        { for kinds.iter().map(|k| html! { <option value={k.to_string()} selected={*k == step.action.kind}>{ k.as_str() }</option> }) }
                    </select>
                </label>
                <label class="grow">{ "Target" }
                    <input data-testid="action-target" value={step.action.target.clone()} readonly={!perms.edit} onchange={set_action(|a, v| a.target = v)} />
                </label>
                <label>{ "Value" }
                    <input data-testid="action-value" value={step.action.value.clone().unwrap_or_default()} readonly={!perms.edit}
                        onchange={set_action(|a, v| a.value = (!v.is_empty()).then_some(v))} />
                </label>
            </div>
            if !step.actions.is_empty() && step.outcome == "failed" {
                <p class="outcome bad" data-testid="step-outcome">{ "The agent's action failed at this step; thought 3 of the next step should quote the error." }</p>
            }
            <StepTelemetry before={before} after={after} />
            </div>
            <div class="step-write">
            <div class="write-scroll">
            <DraftPanel step={step.clone()} drafting={editor.drafting.clone()} editable={perms.edit}
                without_thoughts={annotation_core::drafting::without_thoughts(&editor.merged_steps())
                    .iter().filter(|i| !editor.drafting.pending.contains_key(i)).count()}
                dispatch={dispatch.clone()} />
            { for Thought::ALL.iter().map(|which| {
                let on_passage = {
                    let (dispatch, thoughts) = (dispatch.clone(), step.thoughts.clone());
                    let may_suggest = perms.suggest;
                    Callback::from(move |(which, start, end, suggest): (Thought, usize, usize, bool)| {
                        let Some(p) = annotation_core::review::PassageRef::capture(which, thoughts.get(which), start, end) else { return };
                        dispatch.dispatch(if suggest && may_suggest { Action::SuggestPassage(p) } else { Action::SelectPassage(Some(p)) });
                    })
                };
                let text = step.thoughts.get(*which).to_owned();
                let mut issues = speller.as_ref().map(|s| language::spelling(&*s.0, *which, &text)).unwrap_or_default();
                // Grammar issues count only while the text is what was checked.
                issues.extend(language::grammar(&props.check, &editor.run.id, &step, *which).cloned());
                lean::sort_by_key(&mut issues, |i| i.start);
                html! {
                    <ThoughtField which={*which} text={text} editable={perms.edit} issues={issues}
                        on_change={on_thought.clone()} on_fix={on_fix.clone()}
                        on_suggest={(perms.suggest && editor.qa).then(|| dispatch.to_callback().reform(Action::StartSuggest))}
                        on_passage={(perms.comment && editor.qa).then(|| on_passage.clone())} />
                }
            }) }
            if let Some(notes) = step.navigator.clone() {
                <NavigatorNotesView notes={notes} editable={perms.edit}
                    on_change={dispatch.to_callback().reform(|(which, text)| Action::SetNote(which, text))} />
            }
            if editor.qa {
                // A reviewer reads them; suggestions go through the thoughts.
                if !step.extended_thoughts.is_empty() {
                    <div class="extended-thoughts" data-testid="extended-read">
                        <span>{ "Extended thoughts" }</span>
                        <ul>{ for step.extended_thoughts.iter().map(|t| html! { <li>{ t }</li> }) }</ul>
                    </div>
                }
            } else {
                <label class="extended-thoughts">
                    <span>{ "Extended thoughts " }<span class="muted">{ "(optional, one a line, at most 5: alternatives weighed, risks, what else was seen)" }</span></span>
                    <textarea data-testid="extended-thoughts" rows={(step.extended_thoughts.len().clamp(1, 5)).to_string()}
                        readonly={!perms.edit} value={step.extended_thoughts.join("\n")} onchange={on_extended} />
                </label>
            }
            if perms.mark {
                <div class="flag-bar" data-testid="flag-bar">
                    <select data-testid="flag-type" aria-label="Issue type" title="Alt+T" onchange={edit_flag(|d, v| if let Some(k) = IssueKind::parse(&v) { d.kind = k })}>
                        { for IssueKind::ALL.iter().map(|k| html! { <option value={k.as_str()} selected={*k == editor.flag.kind}>{ k.label() }</option> }) }
                    </select>
                    <select data-testid="flag-severity" aria-label="Severity" title="Alt+V" onchange={edit_flag(|d, v| if let Some(s) = Severity::parse(&v) { d.severity = s })}>
                        { for Severity::ALL.iter().map(|s| html! { <option value={s.as_str()} selected={*s == editor.flag.severity}>{ s.as_str() }</option> }) }
                    </select>
                    <input class="flag-reason" data-testid="flag-reason" placeholder="What is wrong? (Alt+F keeps it)" value={editor.flag.description.clone()} oninput={type_flag(|d, v| d.description = v)} />
                    <input class="flag-suggestion" data-testid="flag-suggestion" placeholder="Suggested fix (optional)" value={editor.flag.suggestion.clone()} oninput={type_flag(|d, v| d.suggestion = v)} />
                    <button data-testid="flag" disabled={editor.saving} onclick={on_flag} title="Alt+F">
                        { if editor.qa { "Raise issue" } else { "Save & flag for review" } }
                    </button>
                </div>
            }
            </div>
            <div class="editor-actions">
                <button data-testid="prev-step" disabled={position == 0} onclick={dispatch.to_callback().reform(|_| Action::Prev)} title="Alt+↑">{ "← Previous" }</button>
                <button data-testid="next-step" disabled={position + 1 >= total} onclick={dispatch.to_callback().reform(|_| Action::Next)} title="Alt+↓">{ "Next →" }</button>
                if !props.grammar.is_empty() {
                    <button data-testid="check-grammar" disabled={props.check.checking} onclick={dispatch.to_callback().reform(|_| Action::CheckGrammar)}>
                        { if props.check.checking { "Checking…" } else { "Check grammar" } }
                    </button>
                }
                <div class="spacer" />
                if perms.edit {
                    <button data-testid="save" disabled={!editor.dirty() || editor.saving} onclick={dispatch.to_callback().reform(|_| Action::Save)} title="Ctrl+S">{ "Save" }</button>
                }
                if perms.mark {
                    <button class="primary" data-testid="mark-complete" disabled={editor.saving} onclick={dispatch.to_callback().reform(|_| Action::MarkComplete)} title="Ctrl+Enter">
                        { if editor.qa { "Mark step checked" } else { "Save & mark complete" } }
                    </button>
                }
            </div>
            if let Some((_, unfilled)) = &editor.blocked {
                <div class="blocked" role="alert" data-testid="unfilled">
                    <span>{ format!("Not saved yet: {} still hold{} template placeholders ({}). Fill them in, or save as it is.",
                        unfilled.iter().map(|(n, _)| format!("step {n}")).collect::<Vec<_>>().join(", "),
                        if unfilled.len() == 1 { "s" } else { "" },
                        unfilled.iter().flat_map(|(_, names)| names.iter().map(|n| format!("<{n}>"))).collect::<Vec<_>>().join(", ")) }</span>
                    <button class="small" data-testid="save-anyway" onclick={dispatch.to_callback().reform(|_| Action::SaveAnyway)}>{ "Save anyway" }</button>
                    <button class="small ghost" data-testid="cancel-save" onclick={dispatch.to_callback().reform(|_| Action::CancelBlocked)}>{ "Keep editing" }</button>
                </div>
            }
            </div>
        </div>
    }
}
