//! The chat: a task's [`AgentEvent`]s folded into what people read.
//!
//! Most events become one message each. The Navigator's low-level events — the step's
//! opener, its goal, each action's start and outcome, the step's summary — fold into one
//! [`StepGroup`] per step, which shows the goal, the action under way as a live line, and
//! the finished actions collapsed. Messages the person sent show at once as [`Pending`] and
//! give way to the worker's echo of them.

use std::hash::{DefaultHasher, Hash, Hasher};

use protocol::agent::{Actor, AgentEvent, EventDetail, EventKind, ExecutionState};

/// One message: an event shown on its own, or a note made by the panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub key: u64,
    pub actor: Actor,
    pub kind: EventKind,
    /// `None` for notes the panel made itself (a request that failed, say).
    pub state: Option<ExecutionState>,
    pub text: String,
    /// What the event is about, as data (a plan, a settings problem…).
    pub detail: EventDetail,
    /// A remark under the text, e.g. that steering was not applied.
    pub note: Option<String>,
}

impl Message {
    /// A model answer the repair loop gave up on: a short line for the chat, with the
    /// problems (`text`) folded under it; `None` for any other message.
    pub fn malformed(&self) -> Option<&'static str> {
        match self.detail {
            EventDetail::MalformedAnswer { retried: true } => {
                Some("The model's answer was malformed; retried.")
            }
            EventDetail::MalformedAnswer { retried: false } => {
                Some("The model's answer was malformed.")
            }
            _ => None,
        }
    }

    /// The ThinkingAgent's verdict as labelled lines: what it decided, why it was asked,
    /// and what it told whom (empty lines left out); `None` for any other message.
    pub fn verdict(&self) -> Option<(&str, Vec<(&'static str, &str)>)> {
        let EventDetail::Verdict { title, reason, decided, missing, to_planner, to_navigator } =
            &self.detail
        else {
            return None;
        };
        let lines = [
            ("Decided", decided),
            ("Why", reason),
            ("Missing", missing),
            ("To the Planner", to_planner),
            ("To the Navigator", to_navigator),
        ]
        .into_iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(label, text)| (label, text.as_str()))
        .collect();
        Some((title.as_str(), lines))
    }
}

/// How a step ended, or that it is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    Running,
    Ok,
    Failed,
    Interrupted,
    /// The Navigator asked the user a question instead of acting.
    Asked,
}

/// What an asking step asked the user for.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedUser {
    /// In the Navigator's own words.
    pub need: String,
    /// A question to the user follows in the chat, so the step does not repeat it.
    pub question_follows: bool,
}

/// One action of a step: its label, and its outcome once known (`Err` when it failed).
#[derive(Debug, Clone, PartialEq)]
pub struct Act {
    pub label: String,
    pub result: Option<Result<String, String>>,
}

/// A Navigator step with its actions.
#[derive(Debug, Clone, PartialEq)]
pub struct StepGroup {
    pub key: u64,
    pub run_id: String,
    /// 1-based, as people count.
    pub number: u32,
    pub goal: Option<String>,
    pub acts: Vec<Act>,
    pub outcome: StepOutcome,
    /// Set when the step asked the user instead of acting.
    pub asked: Option<AskedUser>,
}

impl StepGroup {
    /// The action under way: the last one started and not finished, while the step runs.
    pub fn live(&self) -> Option<&Act> {
        if self.outcome != StepOutcome::Running {
            return None;
        }
        self.acts.last().filter(|act| act.result.is_none())
    }

    pub fn failed_acts(&self) -> usize {
        self.acts.iter().filter(|act| matches!(act.result, Some(Err(_)))).count()
    }

    fn is_empty(&self) -> bool {
        self.goal.is_none() && self.acts.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Message(Message),
    Step(StepGroup),
}

impl Entry {
    pub fn key(&self) -> u64 {
        match self {
            Entry::Message(message) => message.key,
            Entry::Step(group) => group.key,
        }
    }
}

/// What a message the person sent was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    /// A new task, or a follow-up task after the last one ended.
    Task,
    /// Steering a running task: applied at its next step.
    Steering,
    /// Sent while paused: the answer or new instructions, then resume.
    Answer,
}

/// A message sent and not yet echoed by the worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The request that carried it.
    pub id: u32,
    pub kind: PendingKind,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chat {
    pub entries: Vec<Entry>,
    pub pending: Vec<Pending>,
    /// Fingerprints of the events folded in, so a snapshot replay adds only what is new.
    /// Sorted: a set type would be one more hash table's code in the bundle.
    seen: Vec<u64>,
    next_key: u64,
}

fn fingerprint(event: &AgentEvent) -> u64 {
    let mut hasher = DefaultHasher::new();
    event.session_id.hash(&mut hasher);
    event.run_id.hash(&mut hasher);
    event.actor.hash(&mut hasher);
    event.state.hash(&mut hasher);
    event.kind.hash(&mut hasher);
    event.step.hash(&mut hasher);
    event.details.hash(&mut hasher);
    event.at.to_bits().hash(&mut hasher);
    hasher.finish()
}

impl Chat {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.pending.is_empty()
    }

    fn key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }

    /// Forgets the messages (another session is shown now); keeps what is being sent.
    pub fn reset(&mut self) {
        self.entries.clear();
        self.seen.clear();
    }

    /// Folds one event in; false when it was already in.
    pub fn push(&mut self, event: &AgentEvent) -> bool {
        let print = fingerprint(event);
        match self.seen.binary_search(&print) {
            Ok(_) => return false,
            Err(at) => self.seen.insert(at, print),
        }
        self.fold(event);
        true
    }

    /// Folds in a snapshot's events (oldest first) after a (re)connect or a status change.
    /// New events that follow the known ones are appended; if the snapshot has new events
    /// before known ones, the snapshot is the better record and the chat is rebuilt from it.
    pub fn replay(&mut self, events: &[AgentEvent]) {
        let known: Vec<bool> =
            events.iter().map(|e| self.seen.binary_search(&fingerprint(e)).is_ok()).collect();
        let Some(first_new) = known.iter().position(|known| !known) else { return };
        if known[first_new..].iter().any(|known| *known) {
            self.reset();
            for event in events {
                self.push(event);
            }
        } else {
            for event in &events[first_new..] {
                self.push(event);
            }
        }
    }

    /// A note from the panel itself, e.g. why a request failed.
    pub fn note(&mut self, actor: Actor, kind: EventKind, text: impl Into<String>) {
        let key = self.key();
        self.entries.push(Entry::Message(Message {
            key,
            actor,
            kind,
            state: None,
            text: text.into(),
            detail: EventDetail::None,
            note: None,
        }));
    }

    pub fn add_pending(&mut self, id: u32, kind: PendingKind, text: impl Into<String>) {
        self.pending.push(Pending { id, kind, text: text.into() });
    }

    /// Drops the message carried by request `id` (it failed); returns its text.
    pub fn drop_pending(&mut self, id: u32) -> Option<String> {
        let at = self.pending.iter().position(|p| p.id == id)?;
        Some(self.pending.remove(at).text)
    }

    /// The task ended: steering still waiting for a next step will not get one. It stays
    /// in the chat, marked, so nobody thinks the agent read it.
    pub fn task_ended(&mut self) {
        let (unapplied, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.kind != PendingKind::Task);
        self.pending = keep;
        for pending in unapplied {
            let key = self.key();
            self.entries.push(Entry::Message(Message {
                key,
                actor: Actor::User,
                kind: EventKind::Message,
                state: None,
                text: pending.text,
                detail: EventDetail::None,
                note: Some("Not applied: the task ended before its next step.".into()),
            }));
        }
    }

    /// The worker echoed a message the person sent: the pending copy gives way.
    fn settle_pending(&mut self, event: &AgentEvent) {
        let text = event.details.trim();
        let is_task = event.state == ExecutionState::TaskStart;
        let at =
            self.pending.iter().position(|p| p.text.trim() == text).or_else(|| {
                self.pending.iter().position(|p| (p.kind == PendingKind::Task) == is_task)
            });
        if let Some(at) = at {
            self.pending.remove(at);
        }
    }

    /// The step group still collecting events of `run_id`, if the last one is.
    fn open_step(&mut self, run_id: &str) -> Option<&mut StepGroup> {
        self.entries
            .iter_mut()
            .rev()
            .find_map(|entry| match entry {
                Entry::Step(group) => Some(group),
                Entry::Message(_) => None,
            })
            .filter(|group| group.outcome == StepOutcome::Running && group.run_id == run_id)
    }

    fn open_new_step(&mut self, event: &AgentEvent, number: u32) -> &mut StepGroup {
        self.close_step(StepOutcome::Interrupted);
        let key = self.key();
        self.entries.push(Entry::Step(StepGroup {
            key,
            run_id: event.run_id.clone(),
            number,
            goal: None,
            acts: Vec::new(),
            outcome: StepOutcome::Running,
            asked: None,
        }));
        let Some(Entry::Step(group)) = self.entries.last_mut() else { unreachable!() };
        group
    }

    fn step_for(&mut self, event: &AgentEvent) -> &mut StepGroup {
        if self.open_step(&event.run_id).is_none() {
            return self.open_new_step(event, event.step + 1);
        }
        self.open_step(&event.run_id).expect("checked above")
    }

    /// Ends the open step, if any; an empty one (interrupted before it had a goal) goes.
    fn close_step(&mut self, outcome: StepOutcome) {
        let Some(at) = self.entries.iter().rposition(|e| matches!(e, Entry::Step(_))) else {
            return;
        };
        let Entry::Step(group) = &mut self.entries[at] else { return };
        if group.outcome != StepOutcome::Running {
            return;
        }
        if group.is_empty() && outcome != StepOutcome::Ok {
            self.entries.remove(at);
            return;
        }
        group.outcome = outcome;
        for act in &mut group.acts {
            if act.result.is_none() && outcome != StepOutcome::Ok {
                act.result = Some(Err("interrupted".into()));
            }
        }
    }

    fn message(&mut self, event: &AgentEvent) {
        let key = self.key();
        self.entries.push(Entry::Message(Message {
            key,
            actor: event.actor,
            kind: event.kind,
            state: Some(event.state),
            text: event.details.clone(),
            detail: event.detail.clone(),
            note: None,
        }));
    }

    /// The Navigator's step `number` of `run_id` asked the user: it did nothing, so it shows
    /// as a question, not as done. False when there is no such step.
    fn mark_asked(&mut self, run_id: &str, number: u32, need: &str) -> bool {
        let group = self.entries.iter_mut().rev().find_map(|entry| match entry {
            Entry::Step(group) if group.run_id == run_id && group.number == number => Some(group),
            _ => None,
        });
        let Some(group) = group else { return false };
        group.outcome = StepOutcome::Asked;
        group.asked = Some(AskedUser { need: need.trim().to_owned(), question_follows: false });
        true
    }

    /// A question to the user: an agent's need just before it (the asking step, or the
    /// Planner's "I need your input") is the same question, so it is shown once, here.
    fn question_asked(&mut self) {
        for at in (0..self.entries.len()).rev() {
            match &mut self.entries[at] {
                Entry::Step(group) => {
                    if let Some(asked) = &mut group.asked {
                        asked.question_follows = true;
                    }
                    return;
                }
                Entry::Message(m) if matches!(m.detail, EventDetail::AgentAsks { .. }) => {
                    self.entries.remove(at);
                    return;
                }
                Entry::Message(m) if m.kind == EventKind::Question => return,
                Entry::Message(_) => {}
            }
        }
    }

    fn fold(&mut self, event: &AgentEvent) {
        use ExecutionState::*;
        if event.actor == Actor::User && event.kind == EventKind::Message {
            self.settle_pending(event);
        }
        if event.kind == EventKind::Question {
            self.question_asked();
        }
        if event.actor != Actor::Navigator {
            // Anything task-level, or another agent speaking, means the step is over.
            let task_level = matches!(
                event.state,
                TaskStart | TaskOk | TaskFail | TaskCancel | TaskPause | TaskResume
            );
            if task_level || matches!(event.actor, Actor::Planner | Actor::Thinking) {
                self.close_step(StepOutcome::Interrupted);
            }
            self.message(event);
            return;
        }
        match (&event.state, &event.detail) {
            // `step` counts the steps taken, the asking one included.
            (_, EventDetail::AgentAsks { need })
                if self.mark_asked(&event.run_id, event.step, need) => {}
            (StepStart, EventDetail::StepOpened { number }) => {
                self.open_new_step(event, *number);
            }
            (StepStart, EventDetail::Goal) => {
                let fresh = self.open_step(&event.run_id).is_some_and(|g| g.acts.is_empty());
                let group = if fresh {
                    self.step_for(event)
                } else {
                    self.open_new_step(event, event.step + 1)
                };
                group.goal = Some(event.details.trim().to_owned());
            }
            (ActStart, EventDetail::ActionStarted { label }) => {
                self.step_for(event).acts.push(Act { label: label.clone(), result: None });
            }
            (ActOk | ActFail, EventDetail::ActionEnded { label, ok, message, .. }) => {
                let result = if *ok { Ok(message.clone()) } else { Err(message.clone()) };
                let group = self.step_for(event);
                let started = group
                    .acts
                    .iter_mut()
                    .rev()
                    .find(|act| act.result.is_none() && act.label == *label);
                match started {
                    Some(act) => act.result = Some(result),
                    None => group.acts.push(Act { label: label.clone(), result: Some(result) }),
                }
            }
            (StepOk, EventDetail::StepEnded { .. }) => self.close_step(StepOutcome::Ok),
            (StepOk, _) if self.open_step(&event.run_id).is_some() => {
                self.close_step(StepOutcome::Ok);
            }
            (StepCancel, _) => self.close_step(StepOutcome::Interrupted),
            (StepFail, EventDetail::StepEnded { .. }) => self.close_step(StepOutcome::Failed),
            (StepFail, _) => {
                // The step could not even act (the model or the page failed): say why.
                self.close_step(StepOutcome::Failed);
                self.message(event);
            }
            _ => self.message(event),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn event(
        actor: Actor,
        state: ExecutionState,
        kind: EventKind,
        details: &str,
    ) -> AgentEvent {
        AgentEvent {
            session_id: "s1".into(),
            run_id: "r1".into(),
            actor,
            state,
            kind,
            step: 0,
            details: details.into(),
            detail: EventDetail::None,
            at: 0.0,
        }
    }

    /// `event` with its facts as data, as the worker sends it.
    pub fn with(detail: EventDetail, event: AgentEvent) -> AgentEvent {
        AgentEvent { detail, ..event }
    }

    /// Events with distinct times, as the worker stamps them.
    pub fn timed(events: Vec<AgentEvent>) -> Vec<AgentEvent> {
        events
            .into_iter()
            .enumerate()
            .map(|(i, e)| AgentEvent { at: 1000.0 + i as f64, ..e })
            .collect()
    }

    pub fn a_step(n: u32, goal: &str, acts: &[(&str, Result<&str, &str>)]) -> Vec<AgentEvent> {
        use ExecutionState::*;
        let nav = |state, kind, details: String, detail| AgentEvent {
            step: n - 1,
            detail,
            ..event(Actor::Navigator, state, kind, &details)
        };
        let mut events = vec![
            nav(
                StepStart,
                EventKind::Progress,
                format!("Step {n}"),
                EventDetail::StepOpened { number: n },
            ),
            nav(StepStart, EventKind::Progress, goal.into(), EventDetail::Goal),
        ];
        let mut ok = true;
        for (label, outcome) in acts {
            let started = EventDetail::ActionStarted { label: (*label).into() };
            events.push(nav(ActStart, EventKind::Progress, (*label).into(), started));
            let (state, kind, message, done) = match outcome {
                Ok(m) => (ActOk, EventKind::Progress, *m, true),
                Err(m) => {
                    ok = false;
                    (ActFail, EventKind::Error, *m, false)
                }
            };
            let ended = EventDetail::ActionEnded {
                label: (*label).into(),
                ok: done,
                skipped: false,
                message: message.into(),
            };
            events.push(nav(state, kind, format!("{label}: {message}"), ended));
        }
        let summary = format!("Step {n} {}", if ok { "done" } else { "failed" });
        events.push(AgentEvent {
            step: n,
            detail: EventDetail::StepEnded { number: n, ok },
            ..event(
                Actor::Navigator,
                if ok { StepOk } else { StepFail },
                if ok { EventKind::Progress } else { EventKind::Error },
                &summary,
            )
        });
        events
    }

    fn chat_of(events: &[AgentEvent]) -> Chat {
        let mut chat = Chat::default();
        for event in events {
            chat.push(event);
        }
        chat
    }

    fn steps(chat: &Chat) -> Vec<&StepGroup> {
        chat.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Step(g) => Some(g),
                Entry::Message(_) => None,
            })
            .collect()
    }

    pub(crate) fn messages(chat: &Chat) -> Vec<(Actor, EventKind, &str)> {
        chat.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Message(m) => Some((m.actor, m.kind, m.text.as_str())),
                Entry::Step(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_step_folds_into_one_group_with_its_goal_and_actions() {
        let chat = chat_of(&timed(a_step(
            1,
            "Open the kettle page",
            &[("click [4] Kettle", Ok("clicked")), ("scroll down", Err("no page"))],
        )));
        assert_eq!(chat.entries.len(), 1, "{chat:#?}");
        let group = steps(&chat)[0];
        assert_eq!(group.number, 1);
        assert_eq!(group.goal.as_deref(), Some("Open the kettle page"));
        assert_eq!(group.outcome, StepOutcome::Failed);
        assert_eq!(
            group.acts,
            vec![
                Act { label: "click [4] Kettle".into(), result: Some(Ok("clicked".into())) },
                Act { label: "scroll down".into(), result: Some(Err("no page".into())) },
            ]
        );
        assert_eq!(group.failed_acts(), 1);
    }

    #[test]
    fn the_action_under_way_is_the_live_line() {
        use ExecutionState::*;
        let mut events = a_step(2, "Add to cart", &[]);
        events.pop(); // still running
        let label = || "click [9] Add".to_owned();
        events.push(with(
            EventDetail::ActionStarted { label: label() },
            event(Actor::Navigator, ActStart, EventKind::Progress, "click [9] Add"),
        ));
        let chat = chat_of(&timed(events));
        let group = steps(&chat)[0];
        assert_eq!(group.live().map(|a| a.label.as_str()), Some("click [9] Add"));

        let mut chat = chat;
        let ended = EventDetail::ActionEnded {
            label: label(),
            ok: true,
            skipped: false,
            message: "clicked".into(),
        };
        chat.push(&AgentEvent {
            at: 5000.0,
            ..with(
                ended,
                event(Actor::Navigator, ActOk, EventKind::Progress, "the text may say anything"),
            )
        });
        assert_eq!(steps(&chat)[0].live(), None);
    }

    #[test]
    fn agents_users_and_errors_get_messages_of_their_own() {
        use ExecutionState::*;
        let mut events = vec![
            event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"),
            event(Actor::Planner, StepOk, EventKind::Progress, "Plan: 1. search"),
        ];
        events.extend(a_step(1, "Search", &[("type \"kettle\" into [2]", Ok("typed"))]));
        events.push(event(
            Actor::Navigator,
            StepFail,
            EventKind::Error,
            "The API key was refused. Check your API key in Settings.",
        ));
        events.push(event(Actor::Thinking, TaskOk, EventKind::Answer, "**Kettle**: $20"));
        let chat = chat_of(&timed(events));
        assert_eq!(
            messages(&chat),
            vec![
                (Actor::User, EventKind::Message, "Find a kettle"),
                (Actor::Planner, EventKind::Progress, "Plan: 1. search"),
                (
                    Actor::Navigator,
                    EventKind::Error,
                    "The API key was refused. Check your API key in Settings."
                ),
                (Actor::Thinking, EventKind::Answer, "**Kettle**: $20"),
            ]
        );
        assert_eq!(steps(&chat).len(), 1);
    }

    #[test]
    fn a_step_that_could_not_act_leaves_only_its_error() {
        use ExecutionState::*;
        let events = timed(vec![
            with(
                EventDetail::StepOpened { number: 1 },
                event(Actor::Navigator, StepStart, EventKind::Progress, "Step 1"),
            ),
            event(Actor::Navigator, StepFail, EventKind::Error, "The model did not answer."),
        ]);
        let chat = chat_of(&events);
        assert!(steps(&chat).is_empty(), "an empty step is noise: {chat:#?}");
        assert_eq!(
            messages(&chat),
            vec![(Actor::Navigator, EventKind::Error, "The model did not answer.")]
        );
    }

    #[test]
    fn a_pause_mid_step_interrupts_the_step() {
        use ExecutionState::*;
        let mut events = a_step(1, "Scroll", &[]);
        events.pop();
        events.push(with(
            EventDetail::ActionStarted { label: "scroll down".into() },
            event(Actor::Navigator, ActStart, EventKind::Progress, "scroll down"),
        ));
        events.push(event(Actor::Navigator, StepCancel, EventKind::Progress, "Step interrupted."));
        events.push(event(
            Actor::User,
            TaskPause,
            EventKind::Progress,
            "Agent paused – you can adjust instructions now",
        ));
        let chat = chat_of(&timed(events));
        let group = steps(&chat)[0];
        assert_eq!(group.outcome, StepOutcome::Interrupted);
        assert_eq!(group.acts[0].result, Some(Err("interrupted".into())));
        assert_eq!(messages(&chat).len(), 1);
    }

    #[test]
    fn replaying_a_snapshot_adds_only_what_is_new() {
        use ExecutionState::*;
        let events = timed(vec![
            event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"),
            event(Actor::Planner, StepOk, EventKind::Progress, "Plan"),
            event(Actor::System, TaskPause, EventKind::Question, "Which colour?"),
        ]);
        let mut chat = chat_of(&events[..2]);
        chat.replay(&events);
        assert_eq!(messages(&chat).len(), 3);
        chat.replay(&events);
        assert_eq!(messages(&chat).len(), 3, "a second replay changes nothing");
        assert!(!chat.push(&events[0]), "a live event already replayed is dropped");
    }

    #[test]
    fn a_snapshot_with_events_we_missed_in_between_rebuilds_the_chat() {
        use ExecutionState::*;
        let events = timed(vec![
            event(Actor::User, TaskStart, EventKind::Message, "a"),
            event(Actor::Planner, StepOk, EventKind::Progress, "missed"),
            event(Actor::Thinking, StepOk, EventKind::Progress, "c"),
        ]);
        let mut chat = chat_of(&[events[0].clone(), events[2].clone()]);
        chat.replay(&events);
        let texts: Vec<&str> = messages(&chat).iter().map(|m| m.2).collect();
        assert_eq!(texts, ["a", "missed", "c"]);
    }

    #[test]
    fn pending_messages_give_way_to_the_workers_echo() {
        use ExecutionState::*;
        let mut chat = Chat::default();
        chat.add_pending(4, PendingKind::Task, "Find a kettle ");
        chat.add_pending(5, PendingKind::Steering, "cheaper please");
        chat.push(&event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"));
        assert_eq!(chat.pending.len(), 1);
        assert_eq!(chat.pending[0].id, 5);
        chat.task_ended();
        assert!(chat.pending.is_empty());
        let Some(Entry::Message(last)) = chat.entries.last() else { panic!() };
        assert_eq!(last.text, "cheaper please");
        assert!(last.note.as_deref().unwrap().contains("Not applied"));
        assert_eq!(chat.drop_pending(5), None);
    }

    /// The Navigator's step `n` asking for `need`, as the engine says it: the step ends
    /// with nothing done, then the need.
    fn an_asking_step(n: u32, need: &str) -> Vec<AgentEvent> {
        let mut events = a_step(n, "Ask the user", &[]);
        events.push(AgentEvent {
            step: n,
            ..with(
                EventDetail::AgentAsks { need: need.into() },
                event(
                    Actor::Navigator,
                    ExecutionState::StepOk,
                    EventKind::Progress,
                    &format!("I need your input: {need}"),
                ),
            )
        });
        events
    }

    fn the_question(text: &str) -> AgentEvent {
        event(Actor::System, ExecutionState::TaskPause, EventKind::Question, text)
    }

    #[test]
    fn an_asking_step_shows_as_a_question_not_as_done() {
        let chat = chat_of(&timed(an_asking_step(1, "Which kettle?")));
        let group = steps(&chat)[0];
        assert_eq!(group.outcome, StepOutcome::Asked, "it did nothing: {chat:#?}");
        assert_eq!(
            group.asked,
            Some(AskedUser { need: "Which kettle?".into(), question_follows: false })
        );
        assert!(messages(&chat).is_empty(), "the need is the step's, not a message of its own");
    }

    #[test]
    fn the_question_an_agent_asks_shows_once() {
        use ExecutionState::*;
        let mut events = an_asking_step(1, "Which kettle?");
        events.push(event(Actor::Thinking, StepOk, EventKind::Progress, "Review"));
        events.push(the_question("Which kettle do you mean, steel or glass?"));
        let chat = chat_of(&timed(events));
        let texts: Vec<&str> = messages(&chat).iter().map(|m| m.2).collect();
        assert_eq!(texts, ["Review", "Which kettle do you mean, steel or glass?"]);
        assert!(steps(&chat)[0].asked.as_ref().unwrap().question_follows);

        // The Planner's need, then the question: the question alone.
        let events = timed(vec![
            with(
                EventDetail::AgentAsks { need: "Which city?".into() },
                event(
                    Actor::Planner,
                    StepOk,
                    EventKind::Progress,
                    "I need your input: Which city?",
                ),
            ),
            the_question("Which city?"),
        ]);
        let chat = chat_of(&events);
        assert_eq!(messages(&chat), [(Actor::System, EventKind::Question, "Which city?")]);
    }

    #[test]
    fn a_malformed_answer_the_task_retries_is_one_short_line() {
        use ExecutionState::*;
        let dump = "The model's answer did not follow the expected format after 3 attempt(s) \
                    (repairs did not fix it): /current_state: missing property next_goal";
        let chat = chat_of(&timed(vec![with(
            EventDetail::MalformedAnswer { retried: true },
            event(Actor::Navigator, StepFail, EventKind::Error, dump),
        )]));
        let Some(Entry::Message(message)) = chat.entries.last() else { panic!("{chat:#?}") };
        assert_eq!(message.malformed(), Some("The model's answer was malformed; retried."));
        assert_eq!(message.text, dump, "the details stay, folded");
        let given_up =
            Message { detail: EventDetail::MalformedAnswer { retried: false }, ..message.clone() };
        assert_eq!(given_up.malformed(), Some("The model's answer was malformed."));
    }

    #[test]
    fn a_verdict_after_a_message_says_what_was_decided_and_why() {
        use ExecutionState::*;
        let verdict = EventDetail::Verdict {
            title: "After your message".into(),
            reason: "the user sent a message during the task".into(),
            decided: "continue the plan".into(),
            missing: String::new(),
            to_planner: String::new(),
            to_navigator: "Open the steel kettle".into(),
        };
        let chat = chat_of(&timed(vec![with(
            verdict,
            event(Actor::Thinking, StepOk, EventKind::Progress, "After your message"),
        )]));
        let Some(Entry::Message(message)) = chat.entries.last() else { panic!("{chat:#?}") };
        let (title, lines) = message.verdict().expect("a verdict");
        assert_eq!(title, "After your message");
        assert_eq!(
            lines,
            [
                ("Decided", "continue the plan"),
                ("Why", "the user sent a message during the task"),
                ("To the Navigator", "Open the steel kettle"),
            ]
        );
    }
}
