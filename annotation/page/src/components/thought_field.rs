use annotation_core::lint::{TextIssue, segments};
use annotation_core::record::Thought;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub which: Thought,
    pub text: String,
    pub editable: bool,
    /// Spelling and grammar issues in `text`, highlighted in place.
    pub issues: Vec<TextIssue>,
    pub on_change: Callback<(Thought, String)>,
    /// Shown in review mode: propose a change instead of editing.
    pub on_suggest: Option<Callback<Thought>>,
    /// Apply a replacement for an issue: (issue, replacement, everywhere).
    pub on_fix: Callback<(TextIssue, String, bool)>,
    /// Shown in review mode: the selected characters (start, end) of the thought, to
    /// comment on (`false`) or to suggest a replacement for (`true`).
    #[prop_or_default]
    pub on_passage: Option<Callback<(Thought, usize, usize, bool)>>,
}

/// The textarea's selection in characters (the DOM counts UTF-16 units).
fn selection(area: &web_sys::HtmlTextAreaElement) -> Option<(usize, usize)> {
    let (start, end) = (area.selection_start().ok()??, area.selection_end().ok()??);
    let units: Vec<u16> = area.value().encode_utf16().collect();
    let chars = |units: &[u16]| String::from_utf16_lossy(units).chars().count();
    let (start, end) = (start as usize, end as usize);
    (start < end && end <= units.len()).then(|| (chars(&units[..start]), chars(&units[..end])))
}

pub fn hint(which: Thought) -> &'static str {
    match which {
        Thought::One => "What changed since the last step (or where I start), in the first person.",
        Thought::Two => "What I can see now, what I need, and what is in the way (“but …”).",
        Thought::Three => {
            "What I will do next and what I expect to happen; on the last step, the answer or the exact error."
        }
    }
}

/// One of the three thoughts: the text with its issues marked behind it, a character
/// count, and the issues' one-click fixes below.
///
/// The marks sit in a backdrop under a transparent textarea holding the same text in the
/// same box, so each lands under its word: the backdrop scrolls with the textarea, and both
/// keep room for a scrollbar (`annotation.css`) so their lines wrap alike.
#[function_component(ThoughtField)]
pub fn thought_field(props: &Props) -> Html {
    let which = props.which;
    let backdrop = use_node_ref();
    let on_input = props.on_change.reform(move |e: InputEvent| (which, page_kit::value(&e)));
    let on_scroll = {
        let backdrop = backdrop.clone();
        Callback::from(move |e: Event| {
            let area: web_sys::Element = e.target_unchecked_into();
            if let Some(backdrop) = backdrop.cast::<web_sys::Element>() {
                backdrop.set_scroll_top(area.scroll_top());
            }
        })
    };
    let n = which.number();
    let area = use_node_ref();
    let passage = |suggest: bool| {
        let (area, on_passage) = (area.clone(), props.on_passage.clone());
        Callback::from(move |_: MouseEvent| {
            let picked = area.cast::<web_sys::HtmlTextAreaElement>().and_then(|a| selection(&a));
            if let (Some((start, end)), Some(on_passage)) = (picked, &on_passage) {
                on_passage.emit((which, start, end, suggest));
            }
        })
    };
    let rows = (props.text.len() / 70 + props.text.matches('\n').count() + 2).clamp(3, 14);
    html! {
        <div class="thought" data-testid={format!("thought{n}-field")}>
            <div class="thought-head">
                <label for={format!("thought{n}")}>{ format!("Thought {n}") }</label>
                <span class="muted hint" title={hint(which)}>{ hint(which) }</span>
                <span class="count" data-testid={format!("thought{n}-count")}>{ format!("{} chars", props.text.chars().count()) }</span>
                if let Some(on_suggest) = &props.on_suggest {
                    <button class="small" data-testid={format!("suggest{n}")} onclick={on_suggest.reform(move |_| which)}>{ "Suggest change" }</button>
                }
                if props.on_passage.is_some() {
                    <button class="small ghost" data-testid={format!("comment-passage{n}")} title="Comment on the words selected in this thought"
                        onclick={passage(false)}>{ "Comment" }</button>
                    <button class="small ghost" data-testid={format!("suggest-passage{n}")} title="Suggest a replacement for the words selected in this thought"
                        onclick={passage(true)}>{ "Suggest part" }</button>
                }
            </div>
            <div class={classes!("thought-wrap", (!props.editable).then_some("readonly"))}>
                { backdrop_of(&props.text, &props.issues, backdrop) }
                <textarea id={format!("thought{n}")} data-testid={format!("thought{n}")} rows={rows.to_string()} ref={area}
                    value={props.text.clone()} oninput={on_input} onscroll={on_scroll} readonly={!props.editable} spellcheck="false" />
            </div>
            if !props.issues.is_empty() {
                <ul class="issues" data-testid={format!("thought{n}-issues")}>
                    { for props.issues.iter().map(|issue| {
                        let word = props.text.get(issue.start..issue.end).unwrap_or_default().to_owned();
                        html! {
                            <li>
                                <span>{ &issue.message }</span>
                                if props.editable {
                                    { for issue.replacements.iter().take(3).map(|r| {
                                        let (i1, r1) = (issue.clone(), r.clone());
                                        html! { <button class="small fix" data-testid="apply-fix" data-value={r.clone()} onclick={props.on_fix.reform(move |_| (i1.clone(), r1.clone(), false))}>{ r }</button> }
                                    }) }
                                    if let Some(best) = issue.replacements.first() {
                                        <button class="small ghost" data-testid="fix-everywhere" title={format!("Replace “{word}” with “{best}” in every step")}
                                            onclick={{ let (i1, r1) = (issue.clone(), best.clone()); props.on_fix.reform(move |_| (i1.clone(), r1.clone(), true)) }}>
                                            { "in all steps" }
                                        </button>
                                    }
                                }
                            </li>
                        }
                    }) }
                </ul>
            }
        </div>
    }
}

/// The backdrop under a transparent textarea: its text with the issues' words marked, and a
/// zero-width space so that a last empty line keeps its height.
pub fn backdrop_of(text: &str, issues: &[TextIssue], node: NodeRef) -> Html {
    html! {
        <div class="backdrop" aria-hidden="true" ref={node}>
            { for segments(text, issues).into_iter().map(|(text, issue)| match issue {
                Some(_) => html! { <mark>{ text }</mark> },
                None => html! { { text } },
            }) }
            { "\u{200b}" }
        </div>
    }
}
