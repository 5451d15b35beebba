use yew::prelude::*;

use crate::components::message::Message;
use crate::components::step_card::StepCard;
use protocol::agent::{Actor, EventKind, ExecutionState};

use crate::state::chat::{Entry, Pending, PendingKind, StepOutcome};

#[derive(Properties, PartialEq)]
pub struct ChatLogProps {
    pub entries: Vec<Entry>,
    pub pending: Vec<Pending>,
    /// The task is running: show that work goes on between messages.
    pub working: bool,
    pub on_open_settings: Callback<()>,
    /// The prompts that are favourites, to mark sent tasks that are.
    #[prop_or_default]
    pub favourite_prompts: Vec<String>,
    #[prop_or_default]
    pub on_save_favourite: Callback<String>,
    /// Shown in the empty chat (the favourite prompts).
    #[prop_or_default]
    pub children: Html,
}

/// The conversation, newest at the bottom; it stays scrolled to the bottom as it grows.
#[function_component(ChatLog)]
pub fn chat_log(props: &ChatLogProps) -> Html {
    let live_step = props.entries.last().is_some_and(
        |entry| matches!(entry, Entry::Step(group) if group.outcome == StepOutcome::Running),
    );
    let empty = props.entries.is_empty() && props.pending.is_empty();
    html! {
        // `column-reverse` keeps the view anchored at the newest message.
        <section class="chat-log" aria-label="Conversation with the agent">
            <div class="chat-items" role="log" aria-live="polite" aria-relevant="additions">
                if empty {
                    <div class="empty-chat">
                        <p class="empty-title">{ "What should the agent do in this tab?" }</p>
                        <p>{ "For example: “Find the cheapest steel kettle and tell me its price.”" }</p>
                        <p class="hint">
                            { "You can steer it while it works, pause it with Alt+P, or type " }
                            <code>{ "/state" }</code>{ " to see the page as the agent reads it." }
                        </p>
                        { props.children.clone() }
                    </div>
                }
                { for props.entries.iter().map(|entry| match entry {
                    Entry::Message(message) => {
                        // A task the person sent can become a favourite.
                        let task = message.actor == Actor::User
                            && message.kind == EventKind::Message
                            && message.state == Some(ExecutionState::TaskStart);
                        let favourite = task.then(|| {
                            props.favourite_prompts.iter().any(|p| p.trim() == message.text.trim())
                        });
                        html! {
                            <Message key={entry.key()} message={message.clone()}
                                on_open_settings={props.on_open_settings.clone()}
                                {favourite} on_save_favourite={props.on_save_favourite.clone()} />
                        }
                    }
                    Entry::Step(group) => html! { <StepCard key={entry.key()} group={group.clone()} /> },
                }) }
                { for props.pending.iter().map(|pending| {
                    let note = match pending.kind {
                        PendingKind::Task => "Starting…",
                        PendingKind::Steering => "Steering: the agent reads this at its next step",
                        PendingKind::Answer => "Sending and resuming…",
                    };
                    html! {
                        <article key={format!("pending-{}", pending.id)}
                            class="msg actor-user kind-message pending"
                            data-testid="message" data-actor="user" data-kind="message" data-pending="true">
                            <p class="text">{ pending.text.clone() }</p>
                            <p class="note">{ note }</p>
                        </article>
                    }
                }) }
                if props.working && !live_step {
                    <p class="working" aria-hidden="true"><span></span><span></span><span></span></p>
                }
            </div>
        </section>
    }
}
