use annotation_core::history::word_diff;
use annotation_core::review::{self, Comment, CommentKind, Suggestion, SuggestionState, threads};
use annotation_core::sync::SyncSettings;
use yew::prelude::*;

use crate::components::app::{DbHandle, Dispatch, notify};
use crate::components::diff_view::DiffText;
use crate::state::Action;
use crate::state::editor::EditorState;
use crate::util::{new_id, now};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub db: DbHandle,
    pub editor: EditorState,
    pub dispatch: Dispatch,
}

/// Reloads comments and suggestions from storage into the state.
fn refresh(db: DbHandle, dispatch: Dispatch, run_id: String) {
    yew::platform::spawn_local(async move {
        match db.0.review(&run_id).await {
            Ok((comments, suggestions)) => {
                dispatch.dispatch(Action::Review { comments, suggestions })
            }
            Err(why) => notify(&dispatch, false, why),
        }
    });
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
    let (db, dispatch) = (props.db.clone(), props.dispatch.clone());
    let run_id = editor.run.id.clone();
    let user = editor.user.name.clone();

    let submit_suggestion = {
        let (db, dispatch, run_id, user, step) =
            (db.clone(), dispatch.clone(), run_id.clone(), user.clone(), step.clone());
        let suggesting = editor.suggesting.clone();
        let typed = suggest_field.clone();
        Callback::from(move |_| {
            let Some((field, after)) = suggesting.clone() else { return };
            let after =
                typed.cast::<web_sys::HtmlTextAreaElement>().map_or(after, |area| area.value());
            let before = step.thoughts.get(field).to_owned();
            if after == before {
                notify(
                    &dispatch,
                    false,
                    "The suggestion is the same as the current text; change it first.",
                );
                return;
            }
            let suggestion = Suggestion {
                id: new_id(),
                run_id: run_id.clone(),
                step_index: step.index,
                field,
                before,
                after,
                author: user.clone(),
                note: String::new(),
                state: SuggestionState::Pending,
                created_at: now(),
                resolved_by: None,
                resolved_at: None,
                server_id: None,
            };
            let (db, dispatch, run_id) = (db.clone(), dispatch.clone(), run_id.clone());
            yew::platform::spawn_local(async move {
                match db.0.put_suggestion(&suggestion).await {
                    Ok(()) => {
                        dispatch.dispatch(Action::CancelSuggest);
                        notify(&dispatch, true, "Suggestion sent to the run's author.");
                        refresh(db, dispatch, run_id);
                    }
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        })
    };

    let resolve = {
        let (db, dispatch, run_id, user, step) =
            (db.clone(), dispatch.clone(), run_id.clone(), user.clone(), step.clone());
        let sync = use_context::<SyncSettings>().unwrap_or_default();
        Callback::from(move |(suggestion, accept): (Suggestion, bool)| {
            let (db, dispatch, run_id, user, step, sync) = (
                db.clone(),
                dispatch.clone(),
                run_id.clone(),
                user.clone(),
                step.clone(),
                sync.clone(),
            );
            yew::platform::spawn_local(async move {
                let at = now();
                // A suggestion on the server is decided there, where the author's decision
                // counts; the result then comes in as a local edit like any other.
                let decided = match (&suggestion.server_id, sync.enabled()) {
                    (Some(_), true) => {
                        match crate::sync::decide(&db.0, &sync, &suggestion, accept).await {
                            Ok((decided, _)) => Ok(decided),
                            Err(why) => return notify(&dispatch, false, why),
                        }
                    }
                    _ => {
                        let mut decided = suggestion.clone();
                        let mut scratch = step.clone();
                        let result = if accept {
                            review::accept(&mut decided, &mut scratch, &user, &at)
                        } else {
                            review::reject(&mut decided, &user, &at)
                        };
                        result.map(|()| decided)
                    }
                };
                let decided = match decided {
                    Ok(decided) => decided,
                    Err(why) => return notify(&dispatch, false, why.to_string()),
                };
                if accept {
                    // The accepted text goes in as an edit; saving makes it a version.
                    let mut changed = step.clone();
                    *changed.thoughts.get_mut(decided.field) = decided.after.clone();
                    changed.last_edited_by = user.clone();
                    changed.last_edited_at = at.clone();
                    dispatch.dispatch(Action::ReplaceStep(Box::new(changed)));
                    dispatch.dispatch(Action::Save);
                }
                match db.0.put_suggestion(&decided).await {
                    Ok(()) => {
                        notify(
                            &dispatch,
                            true,
                            if accept { "Suggestion accepted." } else { "Suggestion rejected." },
                        );
                        refresh(db, dispatch, run_id);
                    }
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        })
    };

    let post_comment = {
        let (db, dispatch, run_id, user, index) =
            (db.clone(), dispatch.clone(), run_id.clone(), user.clone(), step.index);
        let (text, kind, reply_to) = (comment_text.clone(), comment_kind.clone(), reply_to.clone());
        let typed = comment_field.clone();
        Callback::from(move |_| {
            let written = typed
                .cast::<web_sys::HtmlTextAreaElement>()
                .map_or_else(|| (*text).clone(), |area| area.value());
            if written.trim().is_empty() {
                return;
            }
            let comment = Comment {
                id: new_id(),
                run_id: run_id.clone(),
                step_index: Some(index),
                parent_id: (*reply_to).clone(),
                author: user.clone(),
                text: written.trim().to_owned(),
                kind: *kind,
                resolved: false,
                created_at: now(),
                server_id: None,
            };
            text.set(String::new());
            reply_to.set(None);
            let (db, dispatch, run_id) = (db.clone(), dispatch.clone(), run_id.clone());
            yew::platform::spawn_local(async move {
                match db.0.put_comment(&comment).await {
                    Ok(()) => refresh(db, dispatch, run_id),
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        })
    };
    let toggle_resolved = {
        let (db, dispatch, run_id) = (db.clone(), dispatch.clone(), run_id.clone());
        Callback::from(move |comment: Comment| {
            let mut comment = comment;
            comment.resolved = !comment.resolved;
            let (db, dispatch, run_id) = (db.clone(), dispatch.clone(), run_id.clone());
            yew::platform::spawn_local(async move {
                match db.0.put_comment(&comment).await {
                    Ok(()) => refresh(db, dispatch, run_id),
                    Err(why) => notify(&dispatch, false, why),
                }
            });
        })
    };

    let here: Vec<&Suggestion> =
        editor.suggestions.iter().filter(|s| s.step_index == step.index).collect();
    let step_threads = threads(&editor.comments, Some(step.index));
    html! {
        <div class="review" data-testid="review-panel">
            if let Some((field, text)) = &editor.suggesting {
                <div class="suggest-form" data-testid="suggest-form">
                    <h3>{ format!("Suggest a change to thought {}", field.number()) }</h3>
                    <textarea data-testid="suggest-text" rows="5" value={text.clone()} ref={suggest_field.clone()}
                        oninput={dispatch.to_callback().reform(|e: InputEvent| { let a: web_sys::HtmlTextAreaElement = e.target_unchecked_into(); Action::SuggestText(a.value()) })} />
                    <DiffText ops={word_diff(step.thoughts.get(*field), text)} />
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
                            data-testid="suggestion" data-state={format!("{:?}", s.state).to_lowercase()}>
                            <div class="muted">{ format!("{} · thought {} · {}", s.author, s.field.number(), match s.state {
                                SuggestionState::Pending => "pending".to_owned(),
                                SuggestionState::Accepted => format!("accepted by {}", s.resolved_by.clone().unwrap_or_default()),
                                SuggestionState::Rejected => format!("rejected by {}", s.resolved_by.clone().unwrap_or_default()),
                            }) }</div>
                            <DiffText ops={word_diff(&s.before, &s.after)} />
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
                                let s: web_sys::HtmlSelectElement = e.target_unchecked_into();
                                if let Some(kind) = CommentKind::parse(&s.value()) { k.set(kind) }
                            }) }}>
                                { for CommentKind::ALL.iter().map(|k| html! { <option value={k.as_str()} selected={*k == *comment_kind}>{ k.as_str() }</option> }) }
                            </select>
                        }
                        <textarea data-testid="comment-text" rows="3" placeholder="Comment on this step…" value={(*comment_text).clone()} ref={comment_field.clone()}
                            oninput={{ let t = comment_text.clone(); Callback::from(move |e: InputEvent| { let a: web_sys::HtmlTextAreaElement = e.target_unchecked_into(); t.set(a.value()) }) }} />
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
