//! Replay against a fake site (a search box, results, an album page) and a scripted model.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures::executor::block_on;
use serde_json::json;

use super::*;
use crate::executor::{BrowserError, CaptureError, Checkpoint, Control};
use crate::prompts::PromptSet;
use crate::run::{AgentEvent, LlmTrace};
use crate::testing::{FakeClock, Scripted, settings};
use crate::workflow::schema::{FORMAT_VERSION, Param, StepAction, WorkflowSubtask};

/// A page: where it is and what it lists.
#[derive(Clone)]
struct Page {
    url: String,
    elements: Vec<Element>,
}

fn element(id: u32, tag: &str, text: &str) -> Element {
    Element { id, tag: tag.into(), text: text.into(), ..Element::default() }
}

fn home() -> Page {
    Page { url: "https://music.test/".into(), elements: vec![element(1, "input", "Search")] }
}

/// How the fake site answers an action: whether it worked, changing the page if it does.
type React = Box<dyn Fn(&Action, &mut Page) -> bool>;

/// A site whose pages change as `react` says, keeping what was done.
struct Site {
    page: RefCell<Page>,
    done: RefCell<Vec<Action>>,
    /// Per action: whether it was carried out awaiting nothing new.
    quick: RefCell<Vec<bool>>,
    react: React,
    /// Called on every action (to pause or cancel mid-replay).
    on_action: Box<dyn Fn(usize)>,
}

impl Site {
    fn new(react: impl Fn(&Action, &mut Page) -> bool + 'static) -> Site {
        Site {
            page: RefCell::new(home()),
            done: RefCell::default(),
            quick: RefCell::default(),
            react: Box::new(react),
            on_action: Box::new(|_| {}),
        }
    }
}

/// The music site: typing fills the box, Enter searches (to `/search?q=…`), an album link
/// leads to `/album`.
fn music(action: &Action, page: &mut Page) -> bool {
    match action {
        Action::Type { .. } => true,
        Action::SendKeys { keys } if keys == "Enter" => {
            *page = Page {
                url: "https://music.test/search?q=halo".into(),
                elements: vec![
                    element(5, "a", "Halo"),
                    element(6, "a", "Album: I Am… Sasha Fierce"),
                ],
            };
            true
        }
        Action::Click { id: 6 } => {
            *page = Page { url: "https://music.test/album".into(), elements: vec![] };
            true
        }
        Action::Extract { .. } => true,
        _ => false,
    }
}

impl Browser for Site {
    async fn observe(&self, _: TabId) -> Result<PageView, BrowserError> {
        let page = self.page.borrow();
        let text = page
            .elements
            .iter()
            .map(|e| format!("[{}]<{}>{}", e.id, e.tag, e.text))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(PageView {
            url: page.url.clone(),
            title: "Music".into(),
            text: format!("url: {}\n{text}", page.url),
            comparison: String::new(),
            hash: String::new(),
        })
    }
    async fn screenshot(&self, _: TabId, _: bool) -> Option<Vec<u8>> {
        Some(vec![0xff, 0xd8])
    }
    async fn perform(&self, _: TabId, action: &Action) -> ActionOutcome {
        self.done.borrow_mut().push(action.clone());
        if self.quick.borrow().len() < self.done.borrow().len() {
            self.quick.borrow_mut().push(false);
        }
        (self.on_action)(self.done.borrow().len());
        let ok = (self.react)(action, &mut self.page.borrow_mut());
        let extracted = matches!(action, Action::Extract { .. })
            .then(|| "Album: I Am… Sasha Fierce (2008)".to_owned());
        ActionOutcome {
            ok,
            message: if ok { "done".into() } else { "nothing happened".into() },
            extracted,
            ..ActionOutcome::default()
        }
    }
    fn describe(&self, _: TabId, id: u32) -> String {
        format!("element {id}")
    }
}

impl ReplayBrowser for Site {
    fn elements(&self, _: TabId) -> Vec<Element> {
        self.page.borrow().elements.clone()
    }

    async fn perform_awaiting_nothing_new(&self, tab: TabId, action: &Action) -> ActionOutcome {
        self.quick.borrow_mut().push(true);
        self.perform(tab, action).await
    }
}

#[derive(Default)]
struct Store {
    ids: RefCell<u32>,
    runs: RefCell<Vec<AgentRun>>,
    steps: RefCell<Vec<StepRecord>>,
    traces: RefCell<Vec<LlmTrace>>,
}

impl Capture for Store {
    fn new_id(&self) -> String {
        *self.ids.borrow_mut() += 1;
        format!("id{}", self.ids.borrow())
    }
    fn emit(&self, _: &AgentEvent) {}
    async fn save_run(&self, run: &AgentRun) -> Result<(), CaptureError> {
        self.runs.borrow_mut().push(run.clone());
        Ok(())
    }
    async fn save_step(&self, step: &StepRecord, _: Option<&[u8]>) -> Result<(), CaptureError> {
        self.steps.borrow_mut().push(step.clone());
        Ok(())
    }
    async fn save_trace(&self, trace: &LlmTrace) -> Result<(), CaptureError> {
        self.traces.borrow_mut().push(trace.clone());
        Ok(())
    }
    async fn save_checkpoint(&self, _: &Checkpoint) -> Result<(), CaptureError> {
        Ok(())
    }
}

fn descriptor(tag: &str, name: &str) -> TargetDescriptor {
    TargetDescriptor { tag: tag.into(), name: name.into(), ..TargetDescriptor::default() }
}

fn step(subtask: &str, kind: ActionKind, value: Option<&str>, url: &str) -> WorkflowStep {
    WorkflowStep {
        subtask: subtask.into(),
        intent: format!("{kind:?}"),
        expected_current_state: "the site".into(),
        target: String::new(),
        post_action: "it changes".into(),
        action: StepAction::new(kind, value),
        url: Some(url.into()),
        screenshot: None,
        details: None,
    }
}

/// Search for `{song}`, read the album (extract), then open the album (depends on it).
fn workflow() -> Workflow {
    let mut typing = step("search", ActionKind::Type, Some("{song}"), "https://music.test/");
    typing.action.descriptor = Some(descriptor("input", "Search"));
    let enter = step("search", ActionKind::Key, Some("Enter"), "https://music.test/");
    let mut extract =
        step("read", ActionKind::Extract, Some("the album"), "https://music.test/search?q=numb");
    extract.action.variable = Some("album".into());
    let mut open = step("open", ActionKind::Click, None, "https://music.test/search?q=numb");
    open.action.descriptor = Some(descriptor("a", "Album: Meteora"));
    let subtask = |id: &str, depends_on: &[&str]| WorkflowSubtask {
        id: id.into(),
        text: format!("{id} for {{song}}"),
        expected_outcome: format!("{id} done"),
        depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
    };
    Workflow {
        format_version: FORMAT_VERSION,
        id: "wf".into(),
        name: "Find a song's album".into(),
        description: "Search {song}, read its album, open it".into(),
        version: 3,
        updated_at: "t".into(),
        start_url: "https://music.test/".into(),
        recording_id: None,
        params: vec![Param {
            name: "song".into(),
            description: "".into(),
            example: "numb".into(),
            secret: false,
        }],
        subtasks: vec![subtask("search", &[]), subtask("read", &[]), subtask("open", &["album"])],
        steps: vec![typing, enter, extract, open],
    }
}

fn answer(action: serde_json::Value, extracted: serde_json::Value) -> String {
    json!({"thought_changed": "I see the page", "thought_state": "state", "thought_next": "next",
           "observation": "seen", "memory": "song searched", "extracted": extracted,
           "action": action})
    .to_string()
}

fn done() -> String {
    answer(json!({"action": "done", "text": "reached", "success": true}), json!([]))
}

/// The search subtask decided by the model: "halo" typed into `field`, Enter, done.
fn search_halo(field: u32) -> Vec<String> {
    vec![
        answer(json!({"action": "type", "id": field, "text": "halo"}), json!([])),
        answer(json!({"action": "send_keys", "keys": "Enter"}), json!([])),
        done(),
    ]
}

/// The model done reading the album page, saying `text`, with the `album` extracted.
fn read_album(text: &str, album: &str) -> String {
    let read = json!({"action": "done", "text": text, "success": true});
    answer(read, json!([{"variable": "album", "value": album}]))
}

struct Outcome {
    state: ReplayState,
    model: Scripted,
    store: Store,
    site: Site,
}

fn replay(workflow: &Workflow, site: Site, replies: Vec<String>, control: &Control) -> Outcome {
    let model = Scripted::new(replies);
    let store = Store::default();
    let mut state = ReplayState::new(workflow, BTreeMap::new(), 1, "run-1", "t0", "gpt-test");
    resume(workflow, &site, &model, &store, control, &mut state);
    Outcome { state, model, store, site }
}

fn resume(
    workflow: &Workflow,
    site: &Site,
    model: &Scripted,
    store: &Store,
    control: &Control,
    state: &mut ReplayState,
) {
    resume_with(workflow, site, model, store, control, state, ReplayLimits::default(), &|_| {});
}

#[allow(clippy::too_many_arguments)]
fn resume_with(
    workflow: &Workflow,
    site: &Site,
    model: &Scripted,
    store: &Store,
    control: &Control,
    state: &mut ReplayState,
    limits: ReplayLimits,
    on_state: &dyn Fn(&ReplayState),
) {
    let settings = settings();
    let prompts = PromptSet::bundled();
    let clock = FakeClock::default();
    let ledger = RepairLedger::with_budget(3);
    let mut given = BTreeMap::from([("song".to_owned(), "halo".to_owned())]);
    if workflow.params.iter().any(|p| p.secret) {
        given.insert("password".into(), "hunter2".into());
    }
    let input = workflow.for_replay(&given).expect("the test workflow is valid");
    state.params = input.params.clone();
    let replayer = Replayer {
        cx: CallContext {
            http: model,
            clock: &clock,
            control,
            prompts: &prompts,
            settings: &settings,
            epoch_ms: &|| 0.0,
        },
        browser: site,
        capture: store,
        model: &settings.models.navigator,
        ledger: &ledger,
        limits,
        on_state,
        secrets: &input.secrets,
    };
    block_on(replayer.run(&input.workflow, state));
}

fn prompt(model: &Scripted, call: usize) -> String {
    model.seen.borrow()[call].body["messages"][0]["content"].as_str().unwrap().to_owned()
}

#[test]
fn the_fast_path_replays_matched_steps_and_extracts_flow_to_the_dependent_subtask() {
    let site = Site::new(music);
    let replies = vec![
        // "read": extract, then report the album and finish.
        answer(json!({"action": "extract"}), json!([])),
        answer(
            json!({"action": "done", "text": "read it", "success": true}),
            json!([{"variable": "album", "value": "I Am… Sasha Fierce"}, {"variable": "other", "value": "x"}]),
        ),
        // "open": the recorded link named another album, so the model picks it.
        answer(json!({"action": "click", "id": 6}), json!([])),
        done(),
    ];
    let out = replay(&workflow(), site, replies, &Control::default());
    assert_eq!(out.state.status, ReplayStatus::Done);
    // Typing and Enter went without the model, and so did the search subtask's done.
    assert_eq!(
        &out.site.done.borrow()[..2],
        &[
            Action::Type { id: 1, text: "halo".into(), clear: true },
            Action::SendKeys { keys: "Enter".into() },
        ]
    );
    assert_eq!((out.state.model_calls, out.state.calls_saved), (4, 3));
    assert_eq!(out.model.seen.borrow().len(), 4);
    // Only the subtask's own variables are kept.
    assert_eq!(out.state.extracts, BTreeMap::from([("album".into(), "I Am… Sasha Fierce".into())]));
    let open = prompt(&out.model, 2);
    assert!(open.contains("album = I Am… Sasha Fierce"), "{open}");
    assert!(open.contains("<extracted_values>"));
    assert!(open.contains("Subtask 3 of 3") && open.contains("open for halo"), "{open}");
    assert!(open.contains("song = halo") && open.contains("song searched"));
    let read = prompt(&out.model, 1);
    assert!(read.contains("<extracted_text>") && read.contains("album: the album"), "{read}");

    // Captured: a run with a subtask per workflow subtask and a step per action.
    let run = out.store.runs.borrow().last().unwrap().clone();
    assert_eq!(run.agent_status, protocol::jobs::JobStatus::Done);
    assert_eq!(run.telemetry.spend["replay"].calls, 4);
    assert_eq!(run.usage.input_tokens, 400);
    assert_eq!(
        run.subtasks.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["search", "read", "open"]
    );
    assert_eq!(run.subtasks[0].step_range, [0, 1]);
    let steps = out.store.steps.borrow();
    assert_eq!(steps.len(), 6);
    assert_eq!(steps[0].extended_thoughts, ["fast path: no model call"]);
    assert!(steps[0].trace_ids.is_empty() && !steps[2].trace_ids.is_empty());
    assert!(steps.iter().all(|s| s.screenshot.is_some() && !s.thoughts.thought3.is_empty()));
    assert_eq!(out.store.traces.borrow().len(), 4);
    assert!(
        out.store.traces.borrow().iter().all(|t| t.prompt_id == "replay" && t.run_id == "run-1")
    );
}

/// With the fast path off every step asks the model, and the shell is told the state after
/// each step (what it stores to resume).
#[test]
fn without_the_fast_path_every_step_asks_the_model_and_each_state_is_reported() {
    let site = Site::new(music);
    let mut replies = search_halo(1);
    replies.push(read_album("read it", "I Am… Sasha Fierce"));
    replies.extend([answer(json!({"action": "click", "id": 6}), json!([])), done()]);
    let model = Scripted::new(replies);
    let store = Store::default();
    let mut state = ReplayState::new(&workflow(), BTreeMap::new(), 1, "run-1", "t0", "gpt-test");
    let seen = RefCell::new(Vec::new());
    let limits = ReplayLimits { fast_path: false, ..ReplayLimits::default() };
    let on_state = |s: &ReplayState| seen.borrow_mut().push((s.step, s.subtask));
    resume_with(
        &workflow(),
        &site,
        &model,
        &store,
        &Control::default(),
        &mut state,
        limits,
        &on_state,
    );
    assert_eq!(state.status, ReplayStatus::Done);
    assert_eq!((state.model_calls, state.calls_saved), (6, 0));
    assert_eq!(state.extracts["album"], "I Am… Sasha Fierce");
    let seen = seen.borrow();
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert_eq!(seen.iter().filter(|(step, _)| *step > 0).map(|(s, _)| *s).max(), Some(6));
}

#[test]
fn an_ambiguous_target_falls_back_to_the_model() {
    let mut site = Site::new(music);
    site.page.borrow_mut().elements.push(element(2, "input", "search"));
    site.react = Box::new(music);
    let mut replies = search_halo(2);
    replies.extend([read_album("x", "A"), done()]);
    let out = replay(&workflow(), site, replies, &Control::default());
    assert_eq!(out.state.status, ReplayStatus::Done);
    assert_eq!(out.state.calls_saved, 0);
    assert_eq!(out.state.model_calls, 5);
    assert!(prompt(&out.model, 0).contains("How the user did this subtask"));
}

#[test]
fn a_page_elsewhere_than_recorded_hands_over_to_the_model() {
    let mut wf = workflow();
    // When recorded, Enter led to the results page.
    wf.steps[2].url = Some("https://music.test/search?q=numb".into());
    wf.subtasks.truncate(1);
    wf.steps.truncate(2);
    wf.steps.push(step("search", ActionKind::Click, None, "https://music.test/search?q=numb"));
    wf.steps[2].action.descriptor = Some(descriptor("a", "Halo"));
    // Here Enter leads to a login page.
    let site = Site::new(|action, page| {
        if let Action::SendKeys { .. } = action {
            *page = Page { url: "https://music.test/login".into(), elements: vec![] };
        }
        true
    });
    let out = replay(&wf, site, vec![done()], &Control::default());
    assert_eq!(out.state.status, ReplayStatus::Done);
    assert_eq!((out.state.model_calls, out.state.calls_saved), (1, 2));
    let asked = prompt(&out.model, 0);
    assert!(
        asked.contains("led to https://music.test/login, not to https://music.test/search"),
        "{asked}"
    );
}

#[test]
fn a_failed_fast_action_falls_back_and_a_model_give_up_fails_the_replay() {
    let site = Site::new(|action, _| !matches!(action, Action::Type { .. }));
    let replies = vec![answer(
        json!({"action": "done", "text": "the box is read-only", "success": false}),
        json!([]),
    )];
    let out = replay(&workflow(), site, replies, &Control::default());
    assert_eq!(
        out.state.status,
        ReplayStatus::Failed {
            subtask: "search".into(),
            why: "the model could not reach the expected outcome: the box is read-only".into()
        }
    );
    assert_eq!(
        out.store.runs.borrow().last().unwrap().agent_status,
        protocol::jobs::JobStatus::Failed
    );
    assert!(prompt(&out.model, 0).contains("nothing happened"));
}

/// Ended by the shell (its tab closed) between steps: failed at its subtask with the
/// shell's reason, not cancelled.
#[test]
fn a_replay_ended_from_outside_fails_with_the_reason() {
    use std::rc::Rc;
    let control = Rc::new(Control::default());
    let mut site = Site::new(music);
    let handle = control.clone();
    site.on_action = Box::new(move |n| {
        if n == 1 {
            handle.request_end("Its tab was closed.");
        }
    });
    let (model, store, wf) = (Scripted::default(), Store::default(), workflow());
    let mut state = ReplayState::new(&wf, BTreeMap::new(), 1, "run-1", "t0", "gpt-test");
    resume(&wf, &site, &model, &store, &control, &mut state);
    let failed = ReplayStatus::Failed { subtask: "1".into(), why: "Its tab was closed.".into() };
    assert_eq!(state.status, failed);
    let run = store.runs.borrow().last().unwrap().clone();
    assert_eq!(run.agent_status, protocol::jobs::JobStatus::Failed);
}

#[test]
fn cancel_stops_between_steps_and_pause_resumes_at_the_subtask() {
    use std::rc::Rc;
    let control = Rc::new(Control::default());
    let mut site = Site::new(music);
    let handle = control.clone();
    site.on_action = Box::new(move |n| {
        if n == 1 {
            handle.request_cancel();
        }
    });
    let model = Scripted::default();
    let store = Store::default();
    let wf = workflow();
    let mut state = ReplayState::new(&wf, BTreeMap::new(), 1, "run-1", "t0", "gpt-test");
    resume(&wf, &site, &model, &store, &control, &mut state);
    assert_eq!(state.status, ReplayStatus::Cancelled);
    assert_eq!(site.done.borrow().len(), 1);
    assert_eq!(
        store.runs.borrow().last().unwrap().agent_status,
        protocol::jobs::JobStatus::Cancelled
    );

    // Paused during the "read" subtask's model call, then resumed with a fresh Control.
    let control = Control::default();
    let site = Site::new(music);
    let model = Scripted::default();
    let mut state = ReplayState::new(&wf, BTreeMap::new(), 1, "run-2", "t0", "gpt-test");
    control.request_pause();
    resume(&wf, &site, &model, &store, &control, &mut state);
    assert_eq!((state.status.clone(), state.subtask, state.step), (ReplayStatus::Paused, 0, 0));
    let stored: ReplayState =
        serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    assert_eq!(stored, state);
    let model = Scripted::new(vec![read_album("x", "A"), done()]);
    let mut state = stored;
    let site = Site::new(|action, page| {
        // The album link now bears the name recorded, so the fast path takes it too.
        if let Action::SendKeys { .. } = action {
            *page = Page {
                url: "https://music.test/search?q=halo".into(),
                elements: vec![element(6, "a", "Album: Meteora")],
            };
        }
        true
    });
    resume(&wf, &site, &model, &store, &Control::default(), &mut state);
    assert_eq!(state.status, ReplayStatus::Done);
    assert_eq!((state.model_calls, state.calls_saved), (1, 5));
    assert_eq!(state.run.subtasks.len(), 3);
}

#[test]
fn a_secret_parameter_is_typed_but_never_reaches_the_model_the_trace_or_the_run() {
    let mut wf = workflow();
    wf.params.push(Param {
        name: "password".into(),
        description: "".into(),
        example: SECRET_MASK.into(),
        secret: true,
    });
    // Two boxes named Search: the fast path steps aside and the model types the token.
    wf.steps[0].action.value = Some("{song}{password}".into());
    wf.subtasks.truncate(1);
    wf.steps.truncate(2);
    let mut site = Site::new(music);
    site.page.borrow_mut().elements.push(element(2, "input", "Search"));
    site.react = Box::new(|action, page| {
        if let Action::Type { text, .. } = action {
            assert_eq!(text, "halohunter2", "the value is typed");
        }
        music(action, page)
    });
    let replies = vec![
        answer(json!({"action": "type", "id": 1, "text": "halo[secret:password]"}), json!([])),
        done(),
    ];
    let out = replay(&wf, site, replies, &Control::default());
    assert_eq!(out.state.status, ReplayStatus::Done);
    let everything = format!(
        "{:?}{:?}{:?}{:?}{}",
        out.model.seen.borrow(),
        out.store.traces.borrow(),
        out.store.steps.borrow(),
        out.store.runs.borrow(),
        serde_json::to_string(&out.state).unwrap()
    );
    assert!(!everything.contains("hunter2"));
    assert!(prompt(&out.model, 0).contains("password = [secret:password]"));
    assert_eq!(out.site.done.borrow().len(), 1, "the model typed, then said done");
}

#[test]
fn the_fast_path_never_types_a_masked_secret_and_needs_a_naming_field() {
    let mut typing = step("s", ActionKind::Type, Some(SECRET_MASK), "https://a.test/");
    typing.action.descriptor = Some(descriptor("input", "Password"));
    let elements = [element(1, "input", "Password")];
    assert_eq!(fast_action(&typing, &elements, false), None);
    typing.action.value = Some("hunter2".into());
    assert!(fast_action(&typing, &elements, false).is_some());
    typing.action.descriptor = Some(descriptor("input", ""));
    assert_eq!(fast_action(&typing, &elements, false), None, "a bare tag names nothing");
    let enter = step("s", ActionKind::Key, Some("Enter"), "https://a.test/");
    assert_eq!(fast_action(&enter, &elements, false), None);
    assert!(fast_action(&enter, &elements, true).is_some());
}

#[test]
fn a_recorded_scroll_replays_its_screens_as_a_number_and_is_captured_like_a_tasks() {
    let mut scroll = step("s", ActionKind::Scroll, None, "https://a.test/");
    scroll.action.screens = Some(-1.5);
    let action = fast_action(&scroll, &[], false).unwrap();
    assert_eq!(action, Action::Scroll { id: None, screens: -1.5 });
    // A replay's step and a task's step say the same thing for the same action.
    let record = crate::run::StepAction::of(&action, "the page");
    assert_eq!((record.kind, record.value.as_deref()), (ActionKind::Scroll, Some("-1.5")));
    let keys =
        crate::run::StepAction::of(&Action::SendKeys { keys: "Enter".into() }, "the search box");
    assert_eq!(serde_json::to_value(&keys).unwrap()["type"], "key");
    // Without a distance there is nothing to do fast: the model reads the step instead.
    scroll.action.screens = None;
    assert_eq!(fast_action(&scroll, &[], false), None);
}

#[test]
fn the_replay_schema_offers_exactly_the_navigators_actions() {
    let prompts = PromptSet::bundled();
    let replay = prompts.prompt(REPLAY_PROMPT).unwrap().schema.as_value().clone();
    let navigator = prompts.prompt("navigator").unwrap().schema.as_value().clone();
    assert_eq!(replay["$defs"]["action"], navigator["$defs"]["action"]);
}

#[test]
fn a_question_pauses_the_replay_and_the_answer_reaches_the_model_on_resume() {
    let wf = workflow();
    let asking = json!({"thought_changed": "I see results", "thought_state": "two albums",
        "thought_next": "ask", "observation": "two albums match", "memory": "searched",
        "extracted": [], "ask_user": "Which of the two albums do you mean?",
        "action": {"action": "wait", "seconds": 1}})
    .to_string();
    let out = replay(&wf, Site::new(music), vec![asking], &Control::default());
    let state = out.state;
    assert_eq!(state.status, ReplayStatus::Paused);
    assert_eq!(state.question.as_deref(), Some("Which of the two albums do you mean?"));
    // Asking is not acting: the wait was not carried out.
    assert!(!out.site.done.borrow().iter().any(|a| matches!(a, Action::Wait { .. })));
    let log = &state.run.telemetry.log;
    assert!(log.iter().any(|e| e.kind == LogKind::UserInput && e.message.contains("two albums")));

    // The answer comes back as steering on resume: the model reads it, the question is gone.
    let mut state: ReplayState =
        serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    let control = Control::default();
    control.push_follow_up("The live one, Meteora");
    let model = Scripted::new(vec![read_album("read", "Meteora"), done(), done()]);
    resume(&wf, &Site::new(music), &model, &out.store, &control, &mut state);
    let first = prompt(&model, 0);
    assert!(first.contains("The live one, Meteora"), "{first}");
    assert!(first.contains("The user said: The live one, Meteora"), "{first}");
    assert_eq!(state.question, None);
    assert_eq!(state.messages, vec!["The live one, Meteora".to_owned()]);
    assert_eq!(state.extracts.get("album").map(String::as_str), Some("Meteora"));
    assert!(state.run.telemetry.log.iter().any(|e| e.kind == LogKind::FollowUp));
}

/// Typing waits for a suggestion list only when the recording's next step needs something
/// that is not on the page yet; a key (to the field typed into) or a button already there
/// goes on at once.
#[test]
fn a_fast_typed_field_waits_for_suggestions_only_when_the_next_step_needs_one() {
    let replies = vec![
        answer(json!({"action": "extract", "query": "the album"}), json!([])),
        read_album("read", "Meteora"),
        done(),
    ];
    let out = replay(&workflow(), Site::new(music), replies.clone(), &Control::default());
    assert!(matches!(out.site.done.borrow()[0], Action::Type { .. }));
    assert!(out.site.quick.borrow()[0], "Enter goes to the field just typed into");

    // The recording clicked a suggestion that typing opened: the wait stays.
    let mut suggested = workflow();
    let mut pick = step("search", ActionKind::Click, None, "https://music.test/");
    pick.action.descriptor = Some(descriptor("li", "halo (song)"));
    suggested.steps[1] = pick;
    let replies = [vec![done()], replies].concat();
    let out = replay(&suggested, Site::new(music), replies, &Control::default());
    assert!(matches!(out.site.done.borrow()[0], Action::Type { .. }));
    assert!(!out.site.quick.borrow()[0], "the suggestion is not there yet");
}
