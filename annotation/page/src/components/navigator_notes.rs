use annotation_core::lint::{self, TextIssue};
use annotation_core::record::{NavigatorNote, NavigatorNotes, Thought};
use yew::prelude::*;

use crate::components::thought_field::backdrop_of;
use crate::effects::SpellerHandle;
use crate::language;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub notes: NavigatorNotes,
    pub editable: bool,
    pub on_change: Callback<(NavigatorNote, String)>,
}

fn hint(which: NavigatorNote) -> &'static str {
    match which {
        NavigatorNote::Evaluation => {
            "Did the previous goal succeed (Success, Failed, Unknown), and why."
        }
        NavigatorNote::Memory => {
            "What the Navigator keeps for later steps: values found, pages visited."
        }
        NavigatorNote::NextGoal => "The goal of this step's actions.",
    }
}

/// The Navigator's notes beside the three thoughts (its answer's evaluation, memory and next
/// goal), checked and edited like the thoughts: misspellings marked in place with one-click
/// fixes. They go into the fine-tuning target as edited here.
#[function_component(NavigatorNotesView)]
pub fn navigator_notes(props: &Props) -> Html {
    let speller = use_context::<Option<SpellerHandle>>().flatten();
    html! {
        <details class="navigator-notes" data-testid="navigator-notes" open=true>
            <summary>{ "Navigator's notes" }<span class="muted">{ " (evaluation, memory and next goal, as in the fine-tuning target)" }</span></summary>
            { for NavigatorNote::ALL.into_iter().map(|which| {
                let text = props.notes.get(which).to_owned();
                // The speller's issues name a thought; only their ranges matter here.
                let issues: Vec<TextIssue> = speller.as_ref()
                    .map(|s| language::spelling(&*s.0, Thought::One, &text)).unwrap_or_default();
                let key = which.key();
                let rows = (text.len() / 70 + text.matches('\n').count() + 1).clamp(1, 8);
                let on_input = props.on_change.reform(move |e: InputEvent| {
                    (which, page_kit::value(&e))
                });
                html! {
                    <div class="thought note" data-testid={format!("note-{key}-field")}>
                        <div class="thought-head">
                            <label for={format!("note-{key}")}>{ which.label() }</label>
                            <span class="muted hint" title={hint(which)}>{ hint(which) }</span>
                        </div>
                        <div class={classes!("thought-wrap", (!props.editable).then_some("readonly"))}>
                            { backdrop_of(&text, &issues, NodeRef::default()) }
                            <textarea id={format!("note-{key}")} data-testid={format!("note-{key}")} rows={rows.to_string()}
                                value={text.clone()} oninput={on_input} readonly={!props.editable} spellcheck="false" />
                        </div>
                        if !issues.is_empty() {
                            <ul class="issues" data-testid={format!("note-{key}-issues")}>
                                { for issues.iter().map(|issue| html! {
                                    <li>
                                        <span>{ &issue.message }</span>
                                        if props.editable {
                                            { for issue.replacements.iter().take(3).map(|r| {
                                                let fixed = lint::apply(&text, issue, r);
                                                html! { <button class="small fix" data-testid="apply-fix" data-value={r.clone()}
                                                    onclick={props.on_change.reform(move |_| (which, fixed.clone()))}>{ r }</button> }
                                            }) }
                                        }
                                    </li>
                                }) }
                            </ul>
                        }
                    </div>
                }
            }) }
        </details>
    }
}
