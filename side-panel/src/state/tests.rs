use protocol::agent::{
    Actor, AgentEvent, EventKind, ExecutionState::*, Spend, TaskSnapshot, TaskStatus,
};
use protocol::settings::{ModelConfig, ProviderKind, RoleModels, Secret, Settings};

use protocol::Favourite;
use protocol::agent::SessionSummary;

use super::chat::tests::{a_step, event, messages as chat_messages};
use super::chat::{Entry, PendingKind};
use super::history::tests::session;
use super::settings::{ConnectionTest, Field, Load, Saved};
use super::*;
use protocol::settings::ModelRole;

fn reduce(state: PanelState, actions: impl IntoIterator<Item = PanelAction>) -> PanelState {
    actions.into_iter().fold(state, PanelState::reduce_owned)
}

fn hello() -> PanelAction {
    PanelAction::Worker(WorkerEvent::Hello { version: "0.1.0".into() })
}

/// What the greeting asks (requests 0 to 2): the favourites, the jobs, and this tab's task.
fn greeting_requests(tab: TabId) -> [PanelRequest; 3] {
    [
        PanelRequest::GetFavourites { id: 0 },
        PanelRequest::ListJobs { id: 1 },
        PanelRequest::CurrentTask { id: 2, tab_id: Some(tab) },
    ]
}

/// Connected, with what the greeting asked answered: no favourites, no jobs, no task.
fn connected_on_tab(tab: TabId) -> PanelState {
    let mut state = reduce(PanelState::default(), [PanelAction::TabChosen(Some(tab)), hello()]);
    assert_eq!(posted(&mut state), greeting_requests(tab));
    reduce(
        state,
        [
            PanelAction::Worker(WorkerEvent::Favourites { id: 0, favourites: vec![] }),
            PanelAction::Worker(WorkerEvent::Jobs { id: Some(1), jobs: vec![] }),
            PanelAction::Worker(WorkerEvent::Task { id: Some(2), snapshot: None }),
        ],
    )
}

/// An event of a task started from tab 3's panel (the panel the tests open).
fn agent(event: AgentEvent) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Agent { event, panel_tab: Some(3) })
}

fn at(event: AgentEvent, at: f64) -> AgentEvent {
    AgentEvent { at, ..event }
}

fn snapshot(status: TaskStatus, events: Vec<AgentEvent>) -> TaskSnapshot {
    TaskSnapshot {
        session_id: "s1".into(),
        run_id: "r1".into(),
        tab_id: 3,
        panel_tab: None,
        task: "Find a kettle".into(),
        status,
        step: 2,
        spend: Spend { input_tokens: 1200, output_tokens: 300, cost: 0.0042 },
        events,
        telemetry: Default::default(),
    }
}

fn task(snapshot: TaskSnapshot) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Task { id: None, snapshot: Some(Box::new(snapshot)) })
}

fn typed(text: &str) -> [PanelAction; 2] {
    [PanelAction::DraftChanged(text.into()), PanelAction::Send]
}

/// The outbox, drained as the `App` would post it.
/// The worker's answer `id` to a settings request, with no problems and no variants beyond
/// the bundled ones.
fn settings_loaded(id: u32, settings: Option<Settings>) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Settings {
        id,
        settings: settings.map(Box::new),
        problems: vec![],
        variants: Default::default(),
    })
}

fn posted(state: &mut PanelState) -> Vec<PanelRequest> {
    std::mem::take(&mut state.outbox)
}

/// A panel connected to tab 3 showing a running task in session `s1`.
fn running() -> PanelState {
    let mut state = reduce(
        connected_on_tab(3),
        [task(snapshot(
            TaskStatus::Running,
            vec![at(event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"), 1.0)],
        ))],
    );
    posted(&mut state);
    state
}

fn paused_with_question() -> PanelState {
    reduce(
        running(),
        [agent(at(event(Actor::System, TaskPause, EventKind::Question, "Which colour?"), 9.0))],
    )
}

fn messages(state: &PanelState) -> Vec<(Actor, EventKind, String)> {
    chat_messages(&state.chat).into_iter().map(|(a, k, text)| (a, k, text.to_owned())).collect()
}

// --- The title probe and /state, as before ---

#[test]
fn requests_can_be_made_once_the_worker_greets_and_a_tab_is_known() {
    assert!(!PanelState::default().can_request_title());
    assert!(connected_on_tab(3).can_request_title());
    assert!(connected_on_tab(3).can_request_state());
}

#[test]
fn the_matching_answer_shows_the_title() {
    let mut state = reduce(connected_on_tab(3), [PanelAction::ReadTitle]);
    assert_eq!(posted(&mut state), [PanelRequest::PageTitle { id: 3, tab_id: 3 }]);
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::PageTitle { id: 3, tab_id: 3, title: "Shop".into() })],
    );
    assert_eq!(state.title, Lookup::Shown("Shop".into()));
    assert!(state.can_request_title());
}

#[test]
fn a_stale_answer_is_ignored() {
    let state = reduce(
        connected_on_tab(3),
        [
            PanelAction::ReadTitle,
            PanelAction::ReadTitle,
            PanelAction::Worker(WorkerEvent::Failed { id: 41, message: "old".into() }),
        ],
    );
    assert_eq!(state.title, Lookup::Pending { id: 3 });
    assert_eq!(state.outbox.len(), 1, "one request at a time");
}

#[test]
fn the_state_command_typed_in_the_chat_shows_the_text_the_agent_reads() {
    assert_eq!(Command::parse(" /state "), Ok(Command::State));
    let mut state = reduce(connected_on_tab(3), typed("/stat"));
    assert!(state.command_error.as_deref().unwrap().contains("Try /state"));
    assert_eq!(state.draft, "", "the box is ready for the next command");
    state.tools_collapsed = true;
    let mut state = reduce(state, typed("/state"));
    assert_eq!(state.command_error, None, "a good command clears the last complaint");
    assert!(!state.tools_collapsed, "the answer shows in the Tools area");
    assert_eq!(posted(&mut state), [PanelRequest::PageState { id: 3, tab_id: 3 }]);
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::PageState {
            id: 3,
            text: "[1]<a>Home".into(),
            chars: 10,
            ms: 4.0,
        })],
    );
    let Lookup::Shown(view) = &state.state_view else { panic!("{:?}", state.state_view) };
    assert_eq!(view.text, "[1]<a>Home");
    assert!(state.chat.is_empty(), "a command is not a task");
}

#[test]
fn unknown_commands_say_what_is_understood() {
    assert!(Command::parse("/stat").unwrap_err().contains("Try /state"));
    assert!(Command::parse("").is_err());
}

#[test]
fn losing_the_port_fails_pending_requests_with_a_next_step() {
    let state = reduce(connected_on_tab(3), [PanelAction::ReadTitle, PanelAction::PortLost]);
    assert_eq!(state.worker, WorkerLink::Lost);
    let Lookup::Failed { message } = state.title else { panic!("{:?}", state.title) };
    assert!(message.contains("Reopen"));
    assert!(state.outbox.is_empty());
}

#[test]
fn an_interrupted_port_reconnects_and_the_snapshot_brings_the_task_back() {
    let state = reduce(
        running(),
        [
            PanelAction::DraftChanged("A new task".into()),
            PanelAction::ReadTitle,
            PanelAction::PortInterrupted,
        ],
    );
    assert_eq!(state.worker, WorkerLink::Reconnecting);
    assert!(matches!(state.title, Lookup::Failed { .. }));
    assert!(state.outbox.is_empty());
    assert_eq!(messages(&state).len(), 1, "no alarm in the chat for a reconnect");
    let events = vec![
        at(event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"), 1.0),
        at(event(Actor::Planner, StepOk, EventKind::Progress, "Plan"), 2.0),
    ];
    let state = reduce(state, [hello(), task(snapshot(TaskStatus::Running, events))]);
    assert!(state.connected());
    assert_eq!(messages(&state).len(), 2, "only what was missed is added");
    assert_eq!(state.phase(), Phase::Running);
}

#[test]
fn a_start_cut_off_by_a_reconnect_gives_its_text_back() {
    let state = reduce(connected_on_tab(3), typed("Find a kettle"));
    let state = reduce(state, [PanelAction::PortInterrupted]);
    assert_eq!(state.phase(), Phase::Idle);
    assert_eq!(state.draft, "Find a kettle");
    assert!(state.chat.pending.is_empty());
}

// --- Send, in each state ---

#[test]
fn send_with_no_task_starts_one_in_a_new_session() {
    let mut state = reduce(connected_on_tab(3), typed("  Find a kettle\nunder $30 "));
    assert_eq!(
        posted(&mut state),
        [PanelRequest::StartTask {
            id: 3,
            tab_id: 3,
            task: "Find a kettle\nunder $30".into(),
            session_id: None,
        }]
    );
    assert_eq!(state.phase(), Phase::Starting);
    assert_eq!(state.phase().name(), "running");
    assert_eq!(state.draft, "");
    assert_eq!(state.chat.pending[0].kind, PendingKind::Task, "shown at once");

    // The worker reports the run: the echo replaces the pending copy.
    let state = reduce(
        state,
        [agent(AgentEvent {
            details: "Find a kettle\nunder $30".into(),
            ..event(Actor::User, TaskStart, EventKind::Message, "")
        })],
    );
    assert_eq!(state.phase(), Phase::Running);
    assert!(state.chat.pending.is_empty());
    assert_eq!(state.task.session_id.as_deref(), Some("s1"));
    assert_eq!(messages(&state).len(), 1);
}

#[test]
fn send_while_running_is_steering_and_the_box_stays_usable() {
    let mut state = reduce(running(), typed("only steel ones"));
    assert_eq!(
        posted(&mut state),
        [PanelRequest::FollowUp { id: 3, session_id: "s1".into(), text: "only steel ones".into() }]
    );
    assert_eq!(state.phase(), Phase::Running, "steering does not stop the task");
    assert_eq!(state.chat.pending[0].kind, PendingKind::Steering);
    assert_eq!(state.send_label(), "Steer");
}

#[test]
fn send_while_paused_is_a_follow_up_then_resume() {
    let state = paused_with_question();
    assert_eq!(state.phase(), Phase::Paused { question: true });
    assert_eq!(state.send_label(), "Answer");
    let mut state = reduce(state, typed("Blue"));
    assert_eq!(
        posted(&mut state),
        [
            PanelRequest::FollowUp { id: 3, session_id: "s1".into(), text: "Blue".into() },
            PanelRequest::Resume { id: 4, session_id: "s1".into() },
        ]
    );
    // The worker applies it and resumes.
    let state = reduce(
        state,
        [
            agent(at(event(Actor::User, TaskResume, EventKind::Progress, "Resumed."), 10.0)),
            agent(at(event(Actor::User, StepStart, EventKind::Message, "Blue"), 11.0)),
        ],
    );
    assert_eq!(state.phase(), Phase::Running);
    assert!(state.chat.pending.is_empty());
}

#[test]
fn send_after_a_task_ends_is_a_follow_up_task_in_the_same_session() {
    let mut state = reduce(
        running(),
        [agent(at(event(Actor::Thinking, TaskOk, EventKind::Answer, "**$20** kettle"), 5.0))],
    );
    assert_eq!(state.phase(), Phase::Done);
    assert_eq!(state.task.status, Some(TaskStatus::Done { answer: "**$20** kettle".into() }));
    state = reduce(state, typed("And a toaster?"));
    assert_eq!(
        posted(&mut state),
        [PanelRequest::StartTask {
            id: 3,
            tab_id: 3,
            task: "And a toaster?".into(),
            session_id: Some("s1".into()),
        }]
    );
    // A snapshot of the old run does not end "Starting"; one of the new run does.
    let state = reduce(state, [task(snapshot(TaskStatus::Done { answer: "x".into() }, vec![]))]);
    assert_eq!(state.phase(), Phase::Starting);
    let state = reduce(
        state,
        [task(TaskSnapshot { run_id: "r2".into(), ..snapshot(TaskStatus::Running, vec![]) })],
    );
    assert_eq!(state.phase(), Phase::Running);
    assert_eq!(state.task.run_id.as_deref(), Some("r2"));
    assert_eq!(messages(&state)[0].2, "Find a kettle", "the session's history stays");
}

#[test]
fn new_chat_forgets_the_session_and_starts_fresh() {
    let state = reduce(
        running(),
        [
            PanelAction::NewChat,
            agent(at(event(Actor::System, TaskFail, EventKind::Error, "Tab closed."), 5.0)),
        ],
    );
    assert_eq!(state.phase(), Phase::Failed, "no new chat while a task runs");
    let mut state = reduce(state, [PanelAction::NewChat]);
    assert_eq!(state.phase(), Phase::Idle);
    assert!(state.chat.is_empty());
    // A late snapshot of the put-away session does not bring it back.
    state =
        reduce(state, [task(snapshot(TaskStatus::Failed { error: "Tab closed.".into() }, vec![]))]);
    assert_eq!(state.phase(), Phase::Idle);
    state = reduce(state, typed("Something else"));
    let sent = posted(&mut state);
    let [PanelRequest::StartTask { session_id, .. }] = sent.as_slice() else { panic!("{sent:?}") };
    assert_eq!(*session_id, None);
    // The new session's events show; the pending task gives way to its echo.
    let state = reduce(
        state,
        [agent(AgentEvent {
            session_id: "s2".into(),
            ..at(event(Actor::User, TaskStart, EventKind::Message, "Something else"), 20.0)
        })],
    );
    assert_eq!(state.task.session_id.as_deref(), Some("s2"));
    assert_eq!(messages(&state), [(Actor::User, EventKind::Message, "Something else".to_owned())]);
}

#[test]
fn nothing_is_sent_before_the_worker_answers_and_the_text_is_kept() {
    let state = reduce(PanelState::default(), [PanelAction::TabChosen(Some(3))]);
    let state = reduce(state, typed("Find a kettle"));
    assert!(state.outbox.is_empty());
    assert!(state.send_error.is_some());
    assert_eq!(state.draft, "Find a kettle");
    assert!(reduce(state, typed("   ")).outbox.is_empty());
}

#[test]
fn a_start_that_fails_says_why_and_ends_starting() {
    let state = reduce(
        connected_on_tab(3),
        [
            PanelAction::DraftChanged("Find".into()),
            PanelAction::Send,
            PanelAction::Worker(WorkerEvent::Failed {
                id: 3,
                message: "No model is set up. Open Settings.".into(),
            }),
        ],
    );
    assert_eq!(state.phase(), Phase::Idle);
    assert!(state.chat.pending.is_empty());
    let (actor, kind, text) = &messages(&state)[0];
    assert_eq!((*actor, *kind), (Actor::System, EventKind::Error));
    assert!(text.contains("Open Settings"), "{text}");
}

#[test]
fn steering_that_fails_comes_back_to_the_box() {
    let state = reduce(
        running(),
        [
            PanelAction::DraftChanged("steel".into()),
            PanelAction::Send,
            PanelAction::Worker(WorkerEvent::Failed {
                id: 3,
                message: "The task has ended.".into(),
            }),
        ],
    );
    assert_eq!(state.draft, "steel");
    assert!(state.chat.pending.is_empty());
}

// --- Pause, resume, stop ---

#[test]
fn pause_and_steer_asks_once_and_the_worker_pauses() {
    let mut state = reduce(running(), [PanelAction::Pause, PanelAction::Pause]);
    assert_eq!(posted(&mut state), [PanelRequest::Pause { id: 3, session_id: "s1".into() }]);
    assert!(state.task.pause_requested);
    let state = reduce(
        state,
        [agent(at(
            event(
                Actor::User,
                TaskPause,
                EventKind::Progress,
                "Agent paused – you can adjust instructions now",
            ),
            5.0,
        ))],
    );
    assert_eq!(state.phase(), Phase::Paused { question: false });
    assert!(!state.task.pause_requested);
    assert_eq!(state.send_label(), "Send & resume");
}

#[test]
fn a_question_pauses_and_resume_anyway_resumes_without_a_message() {
    let mut state = reduce(paused_with_question(), [PanelAction::ResumeAnyway, PanelAction::Pause]);
    assert_eq!(posted(&mut state), [PanelRequest::Resume { id: 3, session_id: "s1".into() }]);
    let (actor, kind, text) = messages(&state).pop().unwrap();
    assert_eq!((actor, kind, text.as_str()), (Actor::System, EventKind::Question, "Which colour?"));
    let Some(TaskStatus::Paused { question, .. }) = &state.task.status else { panic!() };
    assert_eq!(question.as_deref(), Some("Which colour?"));
}

#[test]
fn stop_works_while_running_and_while_paused_only() {
    let mut state = reduce(running(), [PanelAction::Stop]);
    assert_eq!(posted(&mut state), [PanelRequest::Cancel { id: 3, session_id: "s1".into() }]);
    let mut state = reduce(paused_with_question(), [PanelAction::Stop]);
    assert_eq!(posted(&mut state).len(), 1);
    let mut state = reduce(
        state,
        [
            agent(at(event(Actor::User, TaskCancel, EventKind::Progress, "Task stopped."), 12.0)),
            PanelAction::Stop,
        ],
    );
    assert_eq!(state.phase(), Phase::Cancelled);
    assert!(posted(&mut state).is_empty());
}

#[test]
fn steering_still_queued_when_the_task_ends_is_marked_not_applied() {
    let state = reduce(
        running(),
        [
            PanelAction::DraftChanged("cheaper".into()),
            PanelAction::Send,
            agent(at(event(Actor::Thinking, TaskOk, EventKind::Answer, "Done"), 7.0)),
        ],
    );
    assert!(state.chat.pending.is_empty());
    let Some(Entry::Message(last)) = state.chat.entries.last() else { panic!() };
    assert_eq!(last.text, "cheaper");
    assert!(last.note.is_some());
}

// --- Reconnecting ---

#[test]
fn reopening_the_panel_mid_task_replays_the_snapshot() {
    let mut events = vec![event(Actor::User, TaskStart, EventKind::Message, "Find a kettle")];
    events.extend(a_step(1, "Open the shop", &[("click [3] Shop", Ok("clicked"))]));
    events.push(event(Actor::Planner, StepOk, EventKind::Progress, "Plan: look for kettles"));
    let events: Vec<AgentEvent> =
        events.into_iter().enumerate().map(|(i, e)| at(e, i as f64)).collect();

    let state = reduce(
        PanelState::default(),
        [
            PanelAction::TabChosen(Some(3)),
            hello(),
            task(snapshot(TaskStatus::Running, events.clone())),
        ],
    );
    assert_eq!(state.phase(), Phase::Running);
    assert_eq!(state.task.spend.input_tokens, 1200);
    assert_eq!(state.task.step, 2);
    assert_eq!(state.chat.entries.len(), 3, "user, one step, planner: {:#?}", state.chat.entries);
    assert_eq!(
        state.task.annotation_link().as_deref(),
        Some("annotation.html?agentRunId=r1&taskId=s1&qa=false")
    );

    // Live events continue; a later status snapshot repeats them without duplicates.
    let question = at(event(Actor::System, TaskPause, EventKind::Question, "Which colour?"), 100.0);
    let state = reduce(state, [agent(question.clone())]);
    let mut all = events;
    all.push(question.clone());
    let paused = TaskStatus::Paused {
        reason: "The agent needs your input".into(),
        question: Some("Which colour?".into()),
        since: 100.0,
        by_user: false,
    };
    let state = reduce(state, [task(snapshot(paused, all))]);
    assert_eq!(state.chat.entries.len(), 4);
    assert_eq!(state.phase(), Phase::Paused { question: true });
}

#[test]
fn a_worker_without_a_task_for_this_tab_shows_idle() {
    // A broadcast without a snapshot says nothing of this tab (other tabs' tasks go on).
    let state =
        reduce(running(), [PanelAction::Worker(WorkerEvent::Task { id: None, snapshot: None })]);
    assert_eq!(state.phase(), Phase::Running);
    // The answer to this panel's own question after a reconnect does.
    let mut state = reduce(state, [PanelAction::PortInterrupted, hello()]);
    let sent = posted(&mut state);
    let Some(PanelRequest::CurrentTask { id, tab_id: Some(3) }) = sent.last().cloned() else {
        panic!("{sent:?}")
    };
    let state =
        reduce(state, [PanelAction::Worker(WorkerEvent::Task { id: Some(id), snapshot: None })]);
    assert_eq!(state.phase(), Phase::Idle);
    assert_eq!(connected_on_tab(3).phase().name(), "idle");
}

#[test]
fn posted_requests_leave_the_outbox() {
    let state = reduce(connected_on_tab(3), [PanelAction::ReadTitle, PanelAction::ToggleSettings]);
    assert_eq!(state.outbox.len(), 2);
    let state = reduce(state, [PanelAction::Posted { up_to: 3 }]);
    assert_eq!(state.outbox, [PanelRequest::GetSettings { id: 4 }]);
}

// --- Settings ---

fn stored_settings() -> Settings {
    Settings {
        models: RoleModels::all(ModelConfig {
            provider: ProviderKind::OpenAi,
            base_url: String::new(),
            api_key: Secret::new("***"),
            model: "gpt-test".into(),
            timeout_ms: 30_000,
            max_retries: 2,
        }),
        agent: Default::default(),
        allow: vec![],
        deny: vec![],
        variants: Default::default(),
        prompt_overrides: Default::default(),
        prices: Default::default(),
        mcp_servers: vec![],
        allow_mcp_clients: false,
    }
}

#[test]
fn the_gear_opens_settings_and_loads_them_once() {
    let mut state = reduce(connected_on_tab(3), [PanelAction::ToggleSettings]);
    assert_eq!(state.view, View::Settings);
    assert_eq!(posted(&mut state), [PanelRequest::GetSettings { id: 3 }]);
    let mut state = reduce(
        state,
        [settings_loaded(3, None), PanelAction::ToggleSettings, PanelAction::ToggleSettings],
    );
    assert_eq!(state.settings.load, Load::Ready { stored: false });
    assert!(posted(&mut state).is_empty(), "loaded already");
    assert_eq!(state.view, View::Settings);
}

#[test]
fn invalid_settings_show_inline_and_are_not_sent() {
    let mut state = reduce(
        connected_on_tab(3),
        [
            PanelAction::OpenSettings,
            PanelAction::Worker(WorkerEvent::Settings {
                id: 3,
                settings: Some(Box::new(stored_settings())),
                problems: vec![],
                variants: lean::StrMap::from([(
                    "thinking".to_owned(),
                    vec!["A".into(), "B".into()],
                )]),
            }),
            PanelAction::EditSetting(Field::MaxSteps, "0".into()),
        ],
    );
    posted(&mut state);
    assert_eq!(state.settings.variant_choices(ModelRole::Thinking), ["A", "B"]);
    assert_eq!(state.settings.problems_of(Field::MaxSteps)[0].path, "/agent/max_steps");
    let mut state = reduce(state, [PanelAction::SaveSettings]);
    assert!(posted(&mut state).is_empty());

    let mut state = reduce(
        state,
        [
            PanelAction::EditSetting(Field::MaxSteps, "25".into()),
            PanelAction::EditSetting(Field::ApiKey(ModelRole::Navigator), "sk-new".into()),
            PanelAction::SaveSettings,
        ],
    );
    let sent = posted(&mut state);
    let [PanelRequest::SaveSettings { id: 4, settings, keys }] = sent.as_slice() else {
        panic!("{sent:?}")
    };
    assert_eq!(settings.agent.max_steps, 25);
    assert_eq!(keys.get("navigator").map(String::as_str), Some("sk-new"), "the typed key travels");
    assert!(!keys.contains_key("planner"), "the stored key is kept");
    assert!(!serde_json::to_string(settings).unwrap().contains("sk-new"));

    // The worker refuses: its problems show next to the field.
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::Settings {
            id: 4,
            settings: Some(Box::new(stored_settings())),
            problems: vec![run_contract::Problem::new(
                "/models/navigator/base_url",
                "Unreachable.",
            )],
            variants: Default::default(),
        })],
    );
    assert_eq!(state.settings.saved, Some(Saved::Refused));
    assert_eq!(
        state.settings.problems_of(Field::BaseUrl(ModelRole::Navigator))[0].message,
        "Unreachable."
    );

    let state = reduce(
        state,
        [
            PanelAction::EditSetting(Field::BaseUrl(ModelRole::Navigator), "".into()),
            PanelAction::SaveSettings,
            settings_loaded(5, Some(stored_settings())),
        ],
    );
    assert_eq!(state.settings.saved, Some(Saved::Ok));
    assert!(state.settings.problems().is_empty());
}

#[test]
fn an_error_pointing_at_settings_can_open_them() {
    let state = reduce(running(), [PanelAction::OpenSettings]);
    assert_eq!(state.view, View::Settings);
    assert_eq!(state.phase(), Phase::Running, "the task is not disturbed");
}

#[test]
fn a_connection_test_sends_the_model_as_typed_and_shows_the_answer_by_its_role() {
    let mut state = reduce(
        connected_on_tab(3),
        [
            PanelAction::OpenSettings,
            settings_loaded(3, Some(stored_settings())),
            PanelAction::EditSetting(Field::ApiKey(ModelRole::Navigator), "sk-typed".into()),
            PanelAction::EditSetting(Field::Model(ModelRole::Navigator), "gpt-other".into()),
            PanelAction::TestConnection(ModelRole::Navigator),
            PanelAction::TestConnection(ModelRole::Planner),
        ],
    );
    let sent = posted(&mut state);
    let [
        PanelRequest::GetSettings { .. },
        PanelRequest::TestConnection { id: 4, role, model, key },
        PanelRequest::TestConnection { id: 5, key: stored_key, .. },
    ] = sent.as_slice()
    else {
        panic!("{sent:?}")
    };
    assert_eq!((*role, model.model.as_str()), (ModelRole::Navigator, "gpt-other"));
    assert_eq!(key.as_deref(), Some("sk-typed"), "a typed key travels apart");
    assert_eq!(*stored_key, None, "else the worker uses the stored key");
    assert_eq!(
        *state.settings.connection_of(ModelRole::Navigator),
        ConnectionTest::Testing { id: 4 }
    );

    let state = reduce(
        state,
        [
            PanelAction::Worker(WorkerEvent::Connection {
                id: 4,
                ok: true,
                message: "Connected: gpt-other answered in 412 ms".into(),
            }),
            PanelAction::Worker(WorkerEvent::Failed { id: 5, message: "No storage.".into() }),
        ],
    );
    assert_eq!(
        *state.settings.connection_of(ModelRole::Navigator),
        ConnectionTest::Done {
            ok: true,
            message: "Connected: gpt-other answered in 412 ms".into()
        }
    );
    assert_eq!(
        *state.settings.connection_of(ModelRole::Planner),
        ConnectionTest::Done { ok: false, message: "No storage.".into() }
    );
    assert!(messages(&state).is_empty(), "a failed test is not a chat error");
}

#[test]
fn a_connection_test_of_a_broken_form_says_what_to_fix_without_asking() {
    let mut state = reduce(
        connected_on_tab(3),
        [
            PanelAction::OpenSettings,
            settings_loaded(3, None),
            PanelAction::TestConnection(ModelRole::Thinking),
        ],
    );
    assert_eq!(posted(&mut state), [PanelRequest::GetSettings { id: 3 }]);
    let ConnectionTest::Done { ok: false, message } =
        state.settings.connection_of(ModelRole::Thinking)
    else {
        panic!("{:?}", state.settings.connection)
    };
    assert_eq!(message, "Fix the form first: Enter a model name.");
    let state = reduce(
        state,
        [
            PanelAction::EditSetting(Field::Model(ModelRole::Thinking), "m".into()),
            PanelAction::TestConnection(ModelRole::Thinking),
            PanelAction::PortInterrupted,
        ],
    );
    assert!(matches!(
        state.settings.connection_of(ModelRole::Thinking),
        ConnectionTest::Done { ok: false, message } if message.contains("interrupted")
    ));
}

// --- History ---

fn sessions(id: u32, list: Vec<SessionSummary>) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Sessions { id, sessions: list })
}

/// The panel showing session `s1`, done.
fn done() -> PanelState {
    reduce(
        running(),
        [agent(at(event(Actor::Thinking, TaskOk, EventKind::Answer, "A $20 kettle"), 5.0))],
    )
}

#[test]
fn history_lists_the_conversations_each_time_it_opens() {
    let mut state = reduce(connected_on_tab(3), [PanelAction::ToggleHistory]);
    assert_eq!(state.view, View::History);
    assert_eq!(posted(&mut state), [PanelRequest::ListSessions { id: 3 }]);
    let state = reduce(
        state,
        [sessions(
            3,
            vec![
                session("s2", protocol::agent::SessionStatus::Done),
                session("s1", protocol::agent::SessionStatus::Done),
            ],
        )],
    );
    assert_eq!(state.history.sessions.as_ref().map(Vec::len), Some(2));
    assert_eq!(state.history.loading, None);
    let mut state = reduce(state, [PanelAction::ToggleHistory]);
    assert_eq!(state.view, View::Chat);
    assert!(posted(&mut state).is_empty());
    let mut state = reduce(state, [PanelAction::ToggleHistory]);
    assert_eq!(posted(&mut state), [PanelRequest::ListSessions { id: 4 }]);
    assert!(state.history.sessions.is_some(), "the old list shows while the new one loads");
    let mut state = reduce(state, [PanelAction::ToggleSettings]);
    assert_eq!(state.view, View::Settings, "one view at a time");
    posted(&mut state);
}

#[test]
fn a_reopened_conversation_shows_in_the_chat_and_a_message_continues_it() {
    let kettle = vec![
        at(event(Actor::User, TaskStart, EventKind::Message, "Find a kettle"), 1.0),
        at(event(Actor::Thinking, TaskOk, EventKind::Answer, "A $20 kettle"), 5.0),
    ];
    // Put away with New chat, another conversation had, then the first one reopened.
    let state = reduce(done(), [PanelAction::NewChat]);
    let state = reduce(
        state,
        [task(TaskSnapshot {
            session_id: "s2".into(),
            run_id: "r2".into(),
            ..snapshot(
                TaskStatus::Done { answer: "Toasters".into() },
                vec![AgentEvent {
                    session_id: "s2".into(),
                    run_id: "r2".into(),
                    ..at(event(Actor::User, TaskStart, EventKind::Message, "Toasters?"), 7.0)
                }],
            )
        })],
    );
    assert_eq!(state.task.session_id.as_deref(), Some("s2"));
    let mut state = reduce(
        state,
        [
            PanelAction::ToggleHistory,
            sessions(
                3,
                vec![
                    session("s2", protocol::agent::SessionStatus::Done),
                    session("s1", protocol::agent::SessionStatus::Done),
                ],
            ),
            PanelAction::OpenSession("s1".into()),
        ],
    );
    assert_eq!(
        posted(&mut state),
        [
            PanelRequest::ListSessions { id: 3 },
            PanelRequest::OpenSession { id: 4, session_id: "s1".into(), tab_id: Some(3) }
        ]
    );
    assert!(!state.can_open_session(), "one at a time");
    // The worker broadcasts the snapshot, then answers with it.
    let reopened = snapshot(TaskStatus::Done { answer: "A $20 kettle".into() }, kettle);
    let state = reduce(
        state,
        [
            task(reopened.clone()),
            PanelAction::Worker(WorkerEvent::Task {
                id: Some(4),
                snapshot: Some(Box::new(reopened)),
            }),
        ],
    );
    assert_eq!(state.view, View::Chat);
    assert_eq!(state.task.session_id.as_deref(), Some("s1"));
    assert_eq!(state.phase(), Phase::Done);
    assert_eq!(
        messages(&state),
        [
            (Actor::User, EventKind::Message, "Find a kettle".to_owned()),
            (Actor::Thinking, EventKind::Answer, "A $20 kettle".to_owned()),
        ],
        "only the reopened conversation"
    );
    let mut state = reduce(state, typed("And a toaster?"));
    let sent = posted(&mut state);
    let [PanelRequest::StartTask { session_id, .. }] = sent.as_slice() else { panic!("{sent:?}") };
    assert_eq!(session_id.as_deref(), Some("s1"), "a follow-up in that conversation");
}

#[test]
fn no_conversation_opens_while_a_task_runs_and_a_refusal_is_shown() {
    let mut state = reduce(running(), [PanelAction::ToggleHistory]);
    posted(&mut state);
    assert!(!state.can_open_session());
    let mut state = reduce(state, [PanelAction::OpenSession("s0".into())]);
    assert!(posted(&mut state).is_empty());
    assert!(state.history.error.as_deref().unwrap().contains("A task is running"));

    let mut state =
        reduce(done(), [PanelAction::ToggleHistory, PanelAction::OpenSession("gone".into())]);
    assert_eq!(posted(&mut state).len(), 2);
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::Failed {
            id: 4,
            message: "That conversation is no longer stored.".into(),
        })],
    );
    assert_eq!(
        state.history.error.as_deref(),
        Some("Could not open it: That conversation is no longer stored.")
    );
    assert_eq!(state.view, View::History);
    assert!(messages(&state).len() == 2, "the chat is untouched");
}

#[test]
fn deleting_asks_first_spares_the_running_task_and_empties_a_chat_showing_it() {
    let mut state = reduce(
        done(),
        [
            PanelAction::ToggleHistory,
            sessions(
                3,
                vec![
                    session("s9", protocol::agent::SessionStatus::Running),
                    session("s1", protocol::agent::SessionStatus::Done),
                ],
            ),
            PanelAction::AskDeleteSession("s9".into()),
        ],
    );
    posted(&mut state);
    assert_eq!(state.history.confirming.as_deref(), Some("s9"));
    assert!(
        state.why_not_delete(&session("s9", protocol::agent::SessionStatus::Running)).is_some()
    );
    let mut state = reduce(state, [PanelAction::DeleteSession("s9".into())]);
    assert!(posted(&mut state).is_empty(), "the running session is not deleted");
    assert!(state.history.error.as_deref().unwrap().contains("stop the task first"));

    let mut state = reduce(
        state,
        [
            PanelAction::AskDeleteSession("s1".into()),
            PanelAction::CancelDeleteSession,
            PanelAction::AskDeleteSession("s1".into()),
            PanelAction::DeleteSession("s1".into()),
        ],
    );
    assert_eq!(
        posted(&mut state),
        [PanelRequest::DeleteSession { id: 4, session_id: "s1".into() }]
    );
    assert_eq!(state.history.confirming, None);
    let state =
        reduce(state, [sessions(4, vec![session("s9", protocol::agent::SessionStatus::Running)])]);
    assert_eq!(
        state.history.sessions,
        Some(vec![session("s9", protocol::agent::SessionStatus::Running)])
    );
    assert_eq!(state.phase(), Phase::Idle, "the chat showed it: it is empty now");
    assert!(state.chat.is_empty());
    // The worker's snapshot of it, late, does not bring it back.
    let state = reduce(state, [task(snapshot(TaskStatus::Done { answer: "x".into() }, vec![]))]);
    assert!(state.chat.is_empty());
}

#[test]
fn the_session_shown_while_it_runs_cannot_be_deleted_even_if_the_list_is_old() {
    let state = reduce(running(), [PanelAction::ToggleHistory]);
    assert!(state.why_not_delete(&session("s1", protocol::agent::SessionStatus::Done)).is_some());
    assert!(state.why_not_delete(&session("s2", protocol::agent::SessionStatus::Done)).is_none());
}

// --- Favourites ---

fn favourites_stored(id: u32, list: &[(&str, &str, &str)]) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Favourites {
        id,
        favourites: list
            .iter()
            .map(|(id, title, prompt)| Favourite {
                id: (*id).into(),
                title: (*title).into(),
                prompt: (*prompt).into(),
            })
            .collect(),
    })
}

fn fav(action: FavouriteAction) -> PanelAction {
    PanelAction::Favourite(action)
}

#[test]
fn favourites_load_on_connect_and_a_chip_fills_the_box_without_sending() {
    let mut state = reduce(PanelState::default(), [PanelAction::TabChosen(Some(3)), hello()]);
    assert_eq!(posted(&mut state), greeting_requests(3));
    let mut state = reduce(
        state,
        [
            favourites_stored(0, &[("fav-1", "Kettle", "Find the cheapest kettle")]),
            fav(FavouriteAction::Use("fav-1".into())),
        ],
    );
    assert!(state.shows_quick_start());
    assert_eq!(state.draft, "Find the cheapest kettle");
    assert!(posted(&mut state).is_empty(), "not sent");
    assert!(!running().shows_quick_start(), "only on an empty chat");
}

#[test]
fn favourites_are_added_edited_and_removed_through_the_worker() {
    let mut state = reduce(
        connected_on_tab(3),
        [
            fav(FavouriteAction::Add),
            fav(FavouriteAction::Title("Kettle".into())),
            fav(FavouriteAction::Save),
        ],
    );
    assert!(posted(&mut state).is_empty(), "no prompt yet");
    let problem = state.favourites.editor.as_ref().and_then(|e| e.problem.clone()).unwrap();
    assert!(problem.contains("prompt"), "{problem}");

    let mut state = reduce(
        state,
        [fav(FavouriteAction::Prompt("Find a kettle".into())), fav(FavouriteAction::Save)],
    );
    let kettle =
        Favourite { id: "fav-1".into(), title: "Kettle".into(), prompt: "Find a kettle".into() };
    assert_eq!(
        posted(&mut state),
        [PanelRequest::SaveFavourites { id: 3, favourites: vec![kettle.clone()] }]
    );
    assert!(state.favourites.list.is_empty(), "shown once stored");
    let state = reduce(state, [favourites_stored(3, &[("fav-1", "Kettle", "Find a kettle")])]);
    assert_eq!(state.favourites.list, [kettle]);
    assert_eq!(state.favourites.editor, None);

    let mut state = reduce(
        state,
        [
            fav(FavouriteAction::ToggleManage),
            fav(FavouriteAction::Edit("fav-1".into())),
            fav(FavouriteAction::Prompt("Find a steel kettle".into())),
            fav(FavouriteAction::Save),
        ],
    );
    let sent = posted(&mut state);
    let [PanelRequest::SaveFavourites { id: 4, favourites }] = sent.as_slice() else {
        panic!("{sent:?}")
    };
    assert_eq!(favourites[0].prompt, "Find a steel kettle");
    let mut state = reduce(
        state,
        [
            favourites_stored(4, &[("fav-1", "Kettle", "Find a steel kettle")]),
            fav(FavouriteAction::Remove("fav-1".into())),
        ],
    );
    assert_eq!(posted(&mut state), [PanelRequest::SaveFavourites { id: 5, favourites: vec![] }]);
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::Failed { id: 5, message: "Storage is full.".into() })],
    );
    assert_eq!(state.favourites.list.len(), 1, "still stored");
    assert_eq!(state.favourites.error.as_deref(), Some("Storage is full."));
    assert!(messages(&state).is_empty(), "not a chat error");
}

#[test]
fn a_sent_task_can_be_kept_as_a_favourite() {
    let mut state = reduce(done(), [fav(FavouriteAction::SaveTask("Find a kettle".into()))]);
    assert_eq!(
        posted(&mut state),
        [PanelRequest::SaveFavourites {
            id: 3,
            favourites: vec![Favourite {
                id: "fav-1".into(),
                title: "Find a kettle".into(),
                prompt: "Find a kettle".into(),
            }],
        }]
    );
    let state =
        reduce(state, [favourites_stored(3, &[("fav-1", "Find a kettle", "Find a kettle")])]);
    assert!(state.favourites.has_prompt("Find a kettle"));
    let mut state = reduce(state, [fav(FavouriteAction::SaveTask("Find a kettle".into()))]);
    assert!(posted(&mut state).is_empty(), "once");
}

#[test]
fn what_happened_asks_for_the_latest_telemetry_and_shows_the_snapshots() {
    use run_contract::telemetry::{LogEntry, LogKind, RoleSpend};
    let mut state = reduce(running(), [PanelAction::ToggleTelemetry]);
    assert_eq!(state.view, View::Telemetry);
    assert!(
        matches!(posted(&mut state)[..], [PanelRequest::CurrentTask { tab_id: Some(3), .. }]),
        "asked afresh, for this tab"
    );

    let mut with_telemetry = snapshot(TaskStatus::Running, vec![]);
    with_telemetry.telemetry.push(LogEntry {
        at: 2.0,
        step: 1,
        kind: LogKind::Thinking,
        message: "Called because the user sent a message during the task. Decided: re-plan.".into(),
    });
    with_telemetry.telemetry.pauses = 1;
    with_telemetry
        .telemetry
        .spend
        .insert("thinking".into(), RoleSpend { calls: 1, input_tokens: 900, ..Default::default() });
    let state = reduce(state, [task(with_telemetry.clone())]);
    assert_eq!(state.task.telemetry, with_telemetry.telemetry);
    assert_eq!(state.view, View::Telemetry, "a snapshot does not close the view");
    let state = reduce(state, [PanelAction::ToggleTelemetry]);
    assert_eq!(state.view, View::Chat);
}

#[test]
fn run_runs_a_published_pipeline_on_the_tab_and_puts_its_result_in_the_chat() {
    assert_eq!(
        Command::parse("/run product_facts {\"a\": 1}"),
        Ok(Command::Run { name: "product_facts".into(), input: serde_json::json!({"a": 1}) })
    );
    assert_eq!(
        Command::parse("/run facts"),
        Ok(Command::Run { name: "facts".into(), input: serde_json::json!({}) })
    );
    assert!(Command::parse("/run").unwrap_err().contains("Name the pipeline"));
    assert!(Command::parse("/run facts {").unwrap_err().contains("not JSON"));
    assert!(Command::parse("/running").is_err());

    let mut state = reduce(connected_on_tab(3), typed("/run product_facts {}"));
    let [PanelRequest::RunPublished { id, name, tab_id: 3, .. }] = &posted(&mut state)[..] else {
        panic!("{:?}", state.outbox)
    };
    let (id, name) = (*id, name.clone());
    assert_eq!(name, "product_facts");
    let run = serde_json::json!({"status": "ok", "output": {"found": true, "price": 39}});
    let state = reduce(state, [PanelAction::Worker(WorkerEvent::PipelineResult { id, run })]);
    let texts: Vec<String> = messages(&state).into_iter().map(|(_, _, text)| text).collect();
    assert_eq!(texts[0], "/run product_facts {}");
    assert!(texts[1].contains("\"price\": 39"), "{texts:?}");

    let mut state = reduce(state, typed("/run missing"));
    let [PanelRequest::RunPublished { id, .. }] = &posted(&mut state)[..] else { panic!() };
    let message = "No published pipeline is named \"missing\".".to_owned();
    let state = reduce(state, [PanelAction::Worker(WorkerEvent::Failed { id: *id, message })]);
    let Some(Entry::Message(last)) = state.chat.entries.last() else { panic!() };
    assert_eq!(last.kind, EventKind::Error);
    assert!(last.text.contains("No published pipeline"));
}

// --- One panel per tab: other tabs' tasks and replays are not shown ---

fn agent_in(panel_tab: Option<TabId>, event: AgentEvent) -> PanelAction {
    PanelAction::Worker(WorkerEvent::Agent { event, panel_tab })
}

fn in_session(session: &str, event: AgentEvent) -> AgentEvent {
    AgentEvent { session_id: session.into(), run_id: format!("{session}-run"), ..event }
}

#[test]
fn another_tabs_events_are_not_shown_and_this_tabs_are() {
    let state = reduce(
        running(),
        [
            agent_in(
                Some(5),
                in_session("s5", event(Actor::User, TaskStart, EventKind::Message, "Find tea")),
            ),
            agent_in(
                Some(5),
                in_session("s5", event(Actor::Thinking, TaskOk, EventKind::Answer, "Green tea")),
            ),
        ],
    );
    assert_eq!(state.task.session_id.as_deref(), Some("s1"), "tab 5's task is not adopted");
    assert_eq!(state.phase(), Phase::Running);
    assert_eq!(messages(&state), [(Actor::User, EventKind::Message, "Find a kettle".to_owned())]);
    // This tab's own events, and those meant for every panel, show.
    let state = reduce(
        state,
        [
            agent_in(Some(3), at(event(Actor::Planner, StepOk, EventKind::Progress, "Plan"), 2.0)),
            agent_in(None, at(event(Actor::Thinking, TaskOk, EventKind::Answer, "A kettle"), 3.0)),
        ],
    );
    assert_eq!(messages(&state).len(), 3);
    assert_eq!(state.phase(), Phase::Done);
}

#[test]
fn before_the_panel_knows_its_tab_it_shows_no_tabs_task() {
    let state = reduce(
        PanelState::default(),
        [
            hello(),
            agent_in(Some(3), event(Actor::User, TaskStart, EventKind::Message, "Find a kettle")),
            task(snapshot(TaskStatus::Running, vec![])),
        ],
    );
    assert_eq!(state.phase(), Phase::Idle);
    assert!(state.chat.is_empty());
}

#[test]
fn a_snapshot_shows_only_in_the_panel_of_the_tab_it_was_started_from() {
    let elsewhere = TaskSnapshot {
        session_id: "s5".into(),
        run_id: "r5".into(),
        tab_id: 5,
        ..snapshot(TaskStatus::Running, vec![])
    };
    let state = reduce(connected_on_tab(3), [task(elsewhere.clone())]);
    assert_eq!(state.phase(), Phase::Idle, "tab 5's task");
    // Started here, then working in tab 5 (it opened a tab): still this panel's.
    let state = reduce(state, [task(TaskSnapshot { panel_tab: Some(3), ..elsewhere.clone() })]);
    assert_eq!(state.task.session_id.as_deref(), Some("s5"));
    assert_eq!(state.phase(), Phase::Running);
    // Working in this tab but started from tab 4's panel: that panel's.
    let other = TaskSnapshot {
        session_id: "s4".into(),
        panel_tab: Some(4),
        ..snapshot(TaskStatus::Done { answer: "x".into() }, vec![])
    };
    let state = reduce(state, [task(other.clone())]);
    assert_eq!(state.task.session_id.as_deref(), Some("s5"));
    // Even as an answer: the worker names the panel it is for.
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::Task { id: Some(2), snapshot: Some(Box::new(other)) })],
    );
    assert_eq!(state.task.session_id.as_deref(), Some("s5"));
}

#[test]
fn no_snapshot_means_no_task_only_in_answer_to_this_panel() {
    // Someone else's `current_task` (or a broadcast) without a snapshot leaves the task be.
    let state = reduce(
        running(),
        [PanelAction::Worker(WorkerEvent::Task { id: Some(99), snapshot: None })],
    );
    assert_eq!(state.phase(), Phase::Running);
    let mut state = reduce(state, [PanelAction::ToggleTelemetry]);
    let [PanelRequest::CurrentTask { id, tab_id: Some(3) }] = posted(&mut state)[..] else {
        panic!()
    };
    let state =
        reduce(state, [PanelAction::Worker(WorkerEvent::Task { id: Some(id), snapshot: None })]);
    assert_eq!(state.phase(), Phase::Idle);
}

#[test]
fn the_panel_asks_for_its_tabs_task_once_it_knows_both_worker_and_tab() {
    // Greeted first: no tab to ask about yet.
    let mut state = reduce(PanelState::default(), [hello()]);
    assert_eq!(
        posted(&mut state),
        [PanelRequest::GetFavourites { id: 0 }, PanelRequest::ListJobs { id: 1 }]
    );
    let mut state = reduce(state, [PanelAction::TabChosen(Some(7))]);
    assert_eq!(posted(&mut state), [PanelRequest::CurrentTask { id: 2, tab_id: Some(7) }]);
    let answer = TaskSnapshot { tab_id: 7, ..snapshot(TaskStatus::Running, vec![]) };
    let state = reduce(
        state,
        [PanelAction::Worker(WorkerEvent::Task { id: Some(2), snapshot: Some(Box::new(answer)) })],
    );
    assert_eq!(state.phase(), Phase::Running);
    // The tab known first: the greeting asks (see `greeting_requests`).
    let mut state = reduce(PanelState::default(), [PanelAction::TabChosen(Some(7))]);
    assert!(posted(&mut state).is_empty(), "not connected yet");
}

#[test]
fn a_replay_in_another_tab_is_not_shown() {
    use protocol::jobs::JobStatus;
    use protocol::workflow::ReplayProgress;
    let progress = |tab_id, status| ReplayProgress {
        run_id: format!("run-{tab_id}"),
        workflow_id: "wf".into(),
        version: 1,
        workflow_name: "Cheapest".into(),
        tab_id,
        subtask: 0,
        subtasks: 2,
        step: 1,
        model_calls: 1,
        calls_saved: 0,
        fast_path: true,
        status,
        why: None,
        extracts: Default::default(),
        question: None,
    };
    let replay = |p: ReplayProgress| {
        PanelAction::Worker(WorkerEvent::Replay { id: None, replay: Some(Box::new(p)) })
    };
    let state = reduce(connected_on_tab(3), [replay(progress(5, JobStatus::Running))]);
    assert_eq!(state.workflows.replay, None);
    assert_eq!(state.workflows.pill(), None);
    let state = reduce(
        state,
        [replay(progress(3, JobStatus::Running)), replay(progress(5, JobStatus::Paused))],
    );
    assert_eq!(state.workflows.replay.as_ref().map(|r| r.run_id.as_str()), Some("run-3"));
    assert_eq!(state.workflows.pill().as_deref(), Some("Replaying · subtask 1 of 2"));
    // "No replay" is not about this tab's: the one shown stays.
    let state =
        reduce(state, [PanelAction::Worker(WorkerEvent::Replay { id: None, replay: None })]);
    assert!(state.workflows.replay.is_some());
}
