use annotation_core::history::word_diff;
use annotation_core::review::{
    Comment, CommentKind, PassageRef, Suggestion, SuggestionState, threads, tracked,
};
use yew::prelude::*;

use crate::components::diff_view::DiffText;
use crate::state::editor::EditorState;
use crate::state::{Action, Dispatch};
use crate::util::{new_id, now};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub editor: EditorState,
    pub dispatch: Dispatch,
}

/// Review (seed §6 Mode B, §7.A): suggestions as tracked changes the author accepts or
/// rejects, and threaded comments with resolve.
#[function_component(ReviewPanel)]
pub fn review_panel(props: &Props) -> Html {
    let comment_text = use_state(String::new);
    // Buttons read the fields themselves: a click can come before the re-render that would
    // hand them the latest text.
    let comment_field = use_node_ref();
    let suggest_field = use_node_ref();
    let comment_kind = use_state(|| CommentKind::Question);
    let reply_to = use_state(|| None::<String>);
    let editor = &props.editor;
    let Some(step) = editor.current().cloned() else { return html! {} };
    let perms = editor.permissions();
    let dispatch = props.dispatch.clone();

    let submit_suggestion = {
        let dispatch = dispatch.clone();
        let drafted = editor.suggesting.as_ref().map(|(_, text)| text.clone());
        let typed = suggest_field.clone();
        Callback::from(move |_| {
            let Some(drafted) = drafted.clone() else { return };
            let text =
                typed.cast::<web_sys::HtmlTextAreaElement>().map_or(drafted, |area| area.value());
            dispatch.dispatch(Action::SubmitSuggestion { id: new_id(), text, at: now() });
        })
    };
    let resolve = dispatch.to_callback().reform(|(suggestion, accept): (Suggestion, bool)| {
        Action::Resolve { suggestion: Box::new(suggestion), accept, at: now() }
    });
    let post_comment = {
        let dispatch = dispatch.clone();
        let (text, kind, reply_to) = (comment_text.clone(), comment_kind.clone(), reply_to.clone());
        let typed = comment_field.clone();
        Callback::from(move |_| {
            let written = typed
                .cast::<web_sys::HtmlTextAreaElement>()
                .map_or_else(|| (*text).clone(), |area| area.value());
            // A blank comment leaves the form as it is.
            if written.trim().is_empty() {
                return;
            }
            dispatch.dispatch(Action::PostComment {
                id: new_id(),
                text: written,
                kind: *kind,
                reply_to: (*reply_to).clone(),
                at: now(),
            });
            text.set(String::new());
            reply_to.set(None);
        })
    };
    let toggle_resolved =
        dispatch.to_callback().reform(|comment: Comment| Action::ToggleResolved(Box::new(comment)));

    let here: Vec<&Suggestion> =
        editor.suggestions.iter().filter(|s| s.step_index == step.index).collect();
    let step_threads = threads(&editor.comments, Some(step.index));
    html! {
        <div class="review" data-testid="review-panel">
            if let Some((field, text)) = &editor.suggesting {
                <div class="suggest-form" data-testid="suggest-form">
                    <h3>{ format!("Suggest a change to thought {}", field.number()) }</h3>
                    if let Some(p) = &editor.suggest_passage {
                        <p class="muted" data-testid="suggest-passage">{ format!("Replacing “{}” only", p.quote) }</p>
                    }
                    <textarea data-testid="suggest-text" rows="5" value={text.clone()} ref={suggest_field.clone()}
                        oninput={dispatch.to_callback().reform(|e: InputEvent| { Action::SuggestText(page_kit::value(&e)) })} />
                    if editor.suggest_passage.is_none() {
                        <DiffText ops={word_diff(step.thoughts.get(*field), text)} />
                    }
                    <button class="primary small" data-testid="suggest-submit" onclick={submit_suggestion}>{ "Send suggestion" }</button>
                    <button class="small" onclick={dispatch.to_callback().reform(|_| Action::CancelSuggest)}>{ "Cancel" }</button>
                </div>
            }
            <h3>{ "Suggestions" }</h3>
            if here.is_empty() {
                <p class="muted">{ if perms.suggest && editor.qa { "None on this step. Use “Suggest change” on a thought." } else { "None on this step." } }</p>
            }
            <ul class="suggestions" data-testid="suggestions">
                { for here.iter().map(|s| {
                    let s = (*s).clone();
                    html! {
                        <li class={classes!("suggestion", match s.state { SuggestionState::Pending => "pending", SuggestionState::Accepted => "accepted", SuggestionState::Rejected => "rejected" })}
                            data-testid="suggestion" data-state={format!("{:?}", s.state).to_ascii_lowercase()}>
                            <div class="muted">{ format!("{} · thought {} · {}", s.author, s.field.number(), match s.state {
                                SuggestionState::Pending => "pending".to_owned(),
                                SuggestionState::Accepted => format!("accepted by {}", s.resolved_by.clone().unwrap_or_default()),
                                SuggestionState::Rejected => format!("rejected by {}", s.resolved_by.clone().unwrap_or_default()),
                            }) }</div>
                            { tracked_change(&s, step.thoughts.get(s.field)) }
                            if s.state == SuggestionState::Pending && perms.resolve_suggestions {
                                <button class="primary small" data-testid="suggestion-accept" onclick={resolve.reform({ let s = s.clone(); move |_| (s.clone(), true) })}>{ "Accept" }</button>
                                <button class="small" data-testid="suggestion-reject" onclick={resolve.reform({ let s = s.clone(); move |_| (s.clone(), false) })}>{ "Reject" }</button>
                            }
                        </li>
                    }
                }) }
            </ul>
            <h3>{ "Comments" }</h3>
            if !perms.see_comments {
                <p class="muted">{ "Reviewers' comments show here once the run is submitted for review." }</p>
            } else {
                <ul class="threads" data-testid="threads">
                    { for step_threads.iter().map(|t| {
                        let root = t.root.clone();
                        let id = root.id.clone();
                        html! {
                            <li class={classes!("thread", root.resolved.then_some("resolved"))} data-testid="thread">
                                if let Some(p) = &root.passage { { passage_line(p, step.thoughts.get(p.field)) } }
                                { comment_line(&root) }
                                { for t.replies.iter().map(|r| html! { <div class="reply">{ comment_line(r) }</div> }) }
                                if perms.comment {
                                  <div class="thread-actions">
                                    <button class="small ghost" data-testid="reply" onclick={{ let r = reply_to.clone(); move |_| r.set(Some(id.clone())) }}>{ "Reply" }</button>
                                    <button class="small ghost" data-testid="resolve" onclick={toggle_resolved.reform(move |_| root.clone())}>
                                        { if t.root.resolved { "Reopen" } else { "Resolve" } }
                                    </button>
                                  </div>
                                }
                            </li>
                        }
                    }) }
                </ul>
                if perms.comment {
                    <div class="comment-form">
                        if reply_to.is_some() {
                            <p class="muted">{ "Replying to a thread · " }<button class="small ghost" onclick={{ let r = reply_to.clone(); move |_| r.set(None) }}>{ "cancel" }</button></p>
                        } else {
                            <select data-testid="comment-type" onchange={{ let k = comment_kind.clone(); Callback::from(move |e: Event| {
                                if let Some(kind) = CommentKind::parse(&page_kit::value(&e)) { k.set(kind) }
                            }) }}>
                                { for CommentKind::ALL.iter().map(|k| html! { <option value={k.as_str()} selected={*k == *comment_kind}>{ k.as_str() }</option> }) }
                            </select>
                        }
                        if let (None, Some(p)) = (&*reply_to, &editor.passage) {
                            <p class="muted" data-testid="comment-on-passage">
                                { format!("On thought {}: “{}” · ", p.field.number(), p.quote) }
                                <button class="small ghost" onclick={dispatch.to_callback().reform(|_| Action::SelectPassage(None))}>{ "whole step" }</button>
                            </p>
                        }
                        <textarea data-testid="comment-text" rows="3" placeholder="Comment on this step…" value={(*comment_text).clone()} ref={comment_field.clone()}
                            oninput={page_kit::keep_text(&comment_text)} />
                        <button class="small" data-testid="comment-post" onclick={post_comment}>{ "Post" }</button>
                    </div>
                }
            }
        </div>
    }
}

fn comment_line(c: &Comment) -> Html {
    html! {
        <div class="comment" data-testid="comment" data-type={c.kind.as_str()}>
            <span class={classes!("kind", c.kind.as_str())}>{ c.kind.as_str() }</span>
            <strong>{ &c.author }</strong>
            <span class="muted">{ c.created_at.get(..16).unwrap_or(&c.created_at).replace('T', " ") }</span>
            <p>{ &c.text }</p>
        </div>
    }
}

/// A suggestion as a tracked change on the thought as it reads now: a passage suggestion on
/// its range only, the rest of the thought as it is; any other on the whole thought.
fn tracked_change(s: &Suggestion, current: &str) -> Html {
    let shown = match s.state {
        SuggestionState::Pending => tracked(s, current),
        // A decided one is shown as it was proposed.
        _ => tracked(
            s,
            &s.passage
                .as_ref()
                .map_or(s.before.clone(), |p| format!("{}{}{}", p.prefix, p.quote, p.suffix)),
        ),
    };
    match shown {
        Some([before, removed, inserted, after]) if s.passage.is_some() => html! {
            <p class="tracked" data-testid="tracked-change">
                { before }<del data-testid="tracked-del">{ removed }</del><ins data-testid="tracked-ins">{ inserted }</ins>{ after }
            </p>
        },
        Some(_) => html! { <DiffText ops={word_diff(&s.before, &s.after)} /> },
        None => html! {
            <p class="tracked outdated" data-testid="tracked-outdated">
                { format!("Outdated: “{}” is no longer in the thought.", s.passage.as_ref().map_or("", |p| p.quote.as_str())) }
            </p>
        },
    }
}

/// The passage a thread is about, found again in the thought as it reads now.
fn passage_line(p: &PassageRef, current: &str) -> Html {
    let outdated = p.outdated || p.locate(current).is_none();
    html! {
        <p class={classes!("passage", outdated.then_some("outdated"))} data-testid="comment-passage"
            data-outdated={outdated.to_string()}>
            <span class="muted">{ format!("thought {} · ", p.field.number()) }</span>
            <mark>{ format!("“{}”", p.quote) }</mark>
            if outdated { <span class="badge" data-testid="passage-outdated">{ " outdated: the passage was changed" }</span> }
        </p>
    }
}
