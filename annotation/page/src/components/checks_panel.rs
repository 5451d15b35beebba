use annotation_core::checklist::{self, passed};
use annotation_core::patterns;
use annotation_core::quality::step_quality;
use yew::prelude::*;

use crate::effects::SpellerHandle;
use crate::language;
use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch, GrammarCheck};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
    pub grammar_check: GrammarCheck,
}

/// The live structure checklist (seed §5.D), missing patterns with their fixes (seed §7.B)
/// and the step's quality score (seed §7.H), recomputed on every keystroke; its Language
/// part counts the spelling and grammar issues marked in the thoughts.
#[function_component(ChecksPanel)]
pub fn checks_panel(props: &Props) -> Html {
    let editor = &props.editor;
    let speller = use_context::<Option<SpellerHandle>>().flatten();
    let Some(step) = editor.current().cloned() else { return html! {} };
    let is_final = editor.is_final(editor.at);
    let checks = checklist::check(&step, is_final);
    let (ok, applicable) = passed(&checks);
    let misses = patterns::detect(&step);
    let speller = speller.as_ref().map(|s| &*s.0);
    let text_issues = language::count(speller, &props.grammar_check, &editor.run.id, &step);
    let quality = step_quality(&step, is_final, text_issues);
    let editable = editor.permissions().edit;
    html! {
        <div class="checks">
            <div class="score-line">
                <strong data-testid="checks-passed">{ format!("{ok} of {applicable} checks pass") }</strong>
                <span class="quality" data-testid="step-quality" title="Quality score for this step">{ format!("quality {}", quality.score) }</span>
            </div>
            <ul class="checklist" data-testid="checklist">
                { for checks.iter().map(|c| {
                    let state = if !c.applies { "na" } else if c.ok { "ok" } else { "bad" };
                    let mark = match state { "ok" => "✓", "bad" => "✗", _ => "–" };
                    html! {
                        <li class={state} data-check={c.id} data-state={state}>
                            <span class="mark">{ mark }</span>
                            <span><strong>{ c.label }</strong>
                                if !c.detail.is_empty() { <span class="muted">{ format!(" — {}", c.detail) }</span> }
                            </span>
                        </li>
                    }
                }) }
            </ul>
            <h3>{ "Missing patterns" }</h3>
            if misses.is_empty() {
                <p class="muted" data-testid="no-misses">{ "None: “I need”, “but”, “I can see” and “I should” are all there." }</p>
            } else {
                <ul class="misses" data-testid="misses">
                    { for misses.iter().map(|miss| {
                        let (dispatch, step, miss2) = (props.dispatch.clone(), step.clone(), miss.clone());
                        let fix = Callback::from(move |_| {
                            let mut fixed = step.clone();
                            patterns::apply(&mut fixed, &miss2);
                            dispatch.dispatch(Action::ReplaceStep(Box::new(fixed)));
                        });
                        html! {
                            <li data-miss={miss.id}>
                                <span>{ format!("Thought {}: {}", miss.thought.number(), miss.message) }</span>
                                if editable { <button class="small" data-testid="apply-pattern" onclick={fix} title={miss.fix.clone()}>{ "Fix" }</button> }
                            </li>
                        }
                    }) }
                </ul>
            }
            <h3>{ "Quality" }</h3>
            <div class="bars">
                { for quality.parts.iter().map(|p| html! {
                    <div class="bar-row"><span>{ p.label }</span><span class="bar"><span style={format!("width:{}%", p.score)} /></span><span>{ p.score }</span></div>
                }) }
            </div>
        </div>
    }
}
