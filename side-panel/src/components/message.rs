use protocol::agent::{Actor, EventDetail, EventKind};
use yew::prelude::*;

use crate::components::final_answer::FinalAnswer;
use crate::components::markdown::Markdown;
use crate::state::chat::Message as ChatMessage;

#[derive(Properties, PartialEq)]
pub struct MessageProps {
    pub message: ChatMessage,
    /// Opens Settings, for errors whose next step is there.
    pub on_open_settings: Callback<()>,
    /// For a task the person sent: whether it is a favourite already (`None`: not a task).
    #[prop_or_default]
    pub favourite: Option<bool>,
    /// "★ Save as favourite", with the task's text.
    #[prop_or_default]
    pub on_save_favourite: Callback<String>,
}

pub fn actor_id(actor: Actor) -> &'static str {
    match actor {
        Actor::System => "system",
        Actor::User => "user",
        Actor::Planner => "planner",
        Actor::Navigator => "navigator",
        Actor::Thinking => "thinking",
    }
}

fn actor_label(actor: Actor) -> &'static str {
    match actor {
        Actor::System => "System",
        Actor::User => "You",
        Actor::Planner => "Planner",
        Actor::Navigator => "Navigator",
        Actor::Thinking => "Thinking",
    }
}

pub fn kind_id(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Progress => "progress",
        EventKind::Question => "question",
        EventKind::Answer => "answer",
        EventKind::Error => "error",
        EventKind::Message => "message",
    }
}

/// One message of the chat, looking like who said it and what it is.
#[function_component(Message)]
pub fn message(props: &MessageProps) -> Html {
    let message = &props.message;
    let (actor, kind) = (actor_id(message.actor), kind_id(message.kind));
    let text = AttrValue::from(message.text.clone());
    // Short notices from the person or the system read as one line, not a card.
    let line =
        message.kind == EventKind::Progress && matches!(message.actor, Actor::User | Actor::System);
    // Errors (and questions) whose next step is in Settings get a way there.
    let settings = matches!(message.detail, EventDetail::NeedsSettings { .. });
    let onclick = props.on_open_settings.reform(|_: MouseEvent| ());
    let body = match message.kind {
        EventKind::Answer => html! { <FinalAnswer text={text} /> },
        EventKind::Message => html! { <p class="text">{ text }</p> },
        EventKind::Question => html! {
            <>
                <header class="msg-head"><span class="who">{ "Question from the agent" }</span></header>
                <Markdown source={text} />
                if settings {
                    <button type="button" class="link-button" data-testid="open-settings" {onclick}>
                        { "Open Settings" }
                    </button>
                }
            </>
        },
        EventKind::Error if message.malformed().is_some() => {
            // The schema's problems matter to whoever tunes the prompt, not to the chat.
            html! {
                <>
                    <header class="msg-head">
                        <span class="who">{ actor_label(message.actor) }</span>
                        <span class="badge retried">{ "malformed answer" }</span>
                    </header>
                    <p class="text" data-testid="malformed-line">{ message.malformed().unwrap_or_default() }</p>
                    <details class="malformed-details" data-testid="malformed-details">
                        <summary>{ "Details" }</summary>
                        <p class="text">{ text }</p>
                    </details>
                </>
            }
        }
        EventKind::Error => {
            html! {
                <>
                    <header class="msg-head">
                        <span class="who">{ actor_label(message.actor) }</span>
                        <span class="badge failed">{ "error" }</span>
                    </header>
                    <p class="text">{ text }</p>
                    if settings {
                        <button type="button" class="link-button" data-testid="open-settings" {onclick}>
                            { "Open Settings" }
                        </button>
                    }
                </>
            }
        }
        EventKind::Progress if line => html! { <p class="text">{ text }</p> },
        EventKind::Progress if message.verdict().is_some() => {
            // What the ThinkingAgent decided and why, as "What happened" tells it.
            let (title, lines) = message.verdict().unwrap_or_default();
            html! {
                <>
                    <header class="msg-head">
                        <span class="who">{ actor_label(message.actor) }</span>
                        <span class="step-no">{ title.to_owned() }</span>
                    </header>
                    <dl class="verdict" data-testid="verdict">
                        { for lines.into_iter().map(|(label, text)| html! {
                            <>
                                <dt>{ label }</dt>
                                <dd>{ text.to_owned() }</dd>
                            </>
                        }) }
                    </dl>
                </>
            }
        }
        EventKind::Progress => {
            // A plan reads better as a titled list.
            let (title, source) = match &message.detail {
                EventDetail::Plan { steps } => (Some("Plan"), AttrValue::from(steps.clone())),
                _ => (None, text),
            };
            html! {
                <>
                    <header class="msg-head">
                        <span class="who">{ actor_label(message.actor) }</span>
                        if let Some(title) = title { <span class="step-no">{ title }</span> }
                    </header>
                    <Markdown {source} />
                </>
            }
        }
    };
    // Outside the message, so its text stays the text that was sent.
    let save_favourite = props.favourite.map(|saved| {
        let (callback, text) = (props.on_save_favourite.clone(), message.text.clone());
        let onclick = Callback::from(move |_: MouseEvent| callback.emit(text.clone()));
        html! {
            <button type="button" class="msg-action" data-testid="message-favourite" disabled={saved}
                title={if saved { "This task is one of your favourites" } else { "Keep this task as a quick-start favourite" }}
                {onclick}>
                { if saved { "★ Saved as favourite" } else { "☆ Save as favourite" } }
            </button>
        }
    });
    let article = html! {
        <article
            class={classes!("msg", format!("actor-{actor}"), format!("kind-{kind}"), line.then_some("line"),
                message.malformed().is_some().then_some("malformed"))}
            data-testid="message"
            data-actor={actor}
            data-kind={kind}
        >
            { body }
            if let Some(note) = &message.note {
                <p class="note">{ note.clone() }</p>
            }
        </article>
    };
    match save_favourite {
        // One element either way, so the chat's keyed list moves nothing as it grows.
        Some(button) => html! { <div class="msg-group">{ article }{ button }</div> },
        None => article,
    }
}
