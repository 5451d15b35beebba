//! The session rules against an in-memory checkpoint store.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures::executor::block_on;

use super::*;
use crate::testing::settings;

#[derive(Default)]
struct Stored {
    checkpoints: RefCell<BTreeMap<String, Checkpoint>>,
    /// Sessions whose stored checkpoint cannot be read.
    unreadable: Vec<String>,
}

impl CheckpointStore for Stored {
    async fn checkpoint(&self, session_id: &str) -> Result<Option<Checkpoint>, String> {
        if self.unreadable.iter().any(|s| s == session_id) {
            return Err("it was stored by a newer version".into());
        }
        Ok(self.checkpoints.borrow().get(session_id).cloned())
    }
    async fn put_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), CaptureError> {
        self.checkpoints.borrow_mut().insert(checkpoint.session_id.clone(), checkpoint.clone());
        Ok(())
    }
}

fn task(session: &str, text: &str, status: TaskStatus, updated: &str) -> Checkpoint {
    let mut cp =
        Checkpoint::new_task(session, &format!("run-{session}"), 1, text, &settings(), 0.0);
    cp.status = status;
    cp.run.updated_at = updated.into();
    cp
}

fn done() -> TaskStatus {
    TaskStatus::Done { answer: "25 EUR".into() }
}

fn paused() -> TaskStatus {
    TaskStatus::Paused { reason: "paused".into(), question: None, since: 0.0, by_user: false }
}

fn new_task<'a>(task: &'a str, session_id: Option<&'a str>, settings: &'a Settings) -> NewTask<'a> {
    NewTask {
        tab_id: 2,
        task,
        session_id,
        run_id: "run-new",
        new_session_id: "s-new",
        settings,
        epoch_ms: 1.7e12,
    }
}

#[test]
fn requests_about_another_session_or_in_the_wrong_state_are_refused_with_why() {
    let cp = task("s1", "Buy a kettle", paused(), "");
    let idle = Sessions { current: Some(&cp), running: false };
    let running = Sessions { current: Some(&cp), running: true };

    assert_eq!(idle.start("  ").unwrap_err(), "Type a task first.");
    assert!(running.start("Buy tea").unwrap_err().starts_with("A task is running."));
    assert_eq!(idle.start("Buy tea"), Ok(()));

    for refused in [
        idle.follow_up("s2").map(drop),
        idle.pause("s2").map(drop),
        idle.resume("s2").map(drop),
        idle.cancel("s2").map(drop),
    ] {
        assert_eq!(refused.unwrap_err(), "That task is no longer current.");
    }
    assert_eq!(running.follow_up("s1"), Ok(FollowUp::Steer));
    assert_eq!(idle.follow_up("s1"), Ok(FollowUp::Apply));
    assert_eq!((running.pause("s1"), idle.pause("s1")), (Ok(true), Ok(false)));
    assert_eq!(running.resume("s1"), Ok(Resume::AlreadyRunning));
    assert_eq!(idle.resume("s1"), Ok(Resume::Run));
    assert_eq!(
        (running.cancel("s1"), idle.cancel("s1")),
        (Ok(Cancel::Interrupt), Ok(Cancel::Finish))
    );

    let ended = task("s1", "Buy a kettle", done(), "");
    let ended = Sessions { current: Some(&ended), running: false };
    assert_eq!(ended.resume("s1").unwrap_err(), "The task is not paused.");

    assert_eq!(running.open("s1"), Ok(Open::Current));
    assert!(running.open("s2").unwrap_err().starts_with("A task is running."));
    assert_eq!(idle.open("s2"), Ok(Open::Load));
    assert!(running.delete("s1").unwrap_err().contains("Stop it before deleting"));
    assert_eq!((idle.delete("s1"), running.delete("s2")), (Ok(true), Ok(false)));
}

#[test]
fn a_first_task_opens_a_new_conversation() {
    let settings = settings();
    let mut current = None;
    block_on(start(&Stored::default(), &mut current, new_task("Buy tea", None, &settings)))
        .unwrap();
    let cp = current.unwrap();
    assert_eq!((cp.session_id.as_str(), cp.run.id.as_str(), cp.tab_id), ("s-new", "run-new", 2));
    assert_eq!((cp.memory.task.as_str(), &cp.status), ("Buy tea", &TaskStatus::Running));
}

#[test]
fn a_follow_up_task_in_the_current_finished_conversation_keeps_what_was_learned() {
    let settings = settings();
    let mut current = Some(task("s1", "Buy a kettle", done(), ""));
    let new = new_task("Now buy tea", Some("s1"), &settings);
    block_on(start(&Stored::default(), &mut current, new)).unwrap();
    let cp = current.unwrap();
    assert_eq!((cp.session_id.as_str(), cp.run.id.as_str()), ("s1", "run-new"));
    assert_eq!(cp.status, TaskStatus::Running);
    assert!(cp.memory.progress.iter().any(|p| p.contains("Earlier task \"Buy a kettle\": 25 EUR")));
}

#[test]
fn a_follow_up_task_in_a_stored_conversation_continues_it_and_the_current_one_stays_stored() {
    let settings = settings();
    let store = Stored::default();
    store.checkpoints.borrow_mut().insert("s0".into(), task("s0", "Find a flight", done(), ""));
    let mut current = Some(task("s1", "Buy a kettle", done(), ""));
    block_on(start(&store, &mut current, new_task("And a hotel", Some("s0"), &settings))).unwrap();
    let cp = current.unwrap();
    assert_eq!((cp.session_id.as_str(), cp.memory.task.as_str()), ("s0", "And a hotel"));
    assert!(cp.memory.progress.iter().any(|p| p.contains("Find a flight")));
}

#[test]
fn a_new_task_ends_a_paused_one_as_cancelled_and_stores_it() {
    let settings = settings();
    let store = Stored::default();
    let mut current = Some(task("s1", "Buy a kettle", paused(), ""));
    block_on(start(&store, &mut current, new_task("Buy tea", None, &settings))).unwrap();
    assert_eq!(current.unwrap().session_id, "s-new");
    assert_eq!(store.checkpoints.borrow()["s1"].status, TaskStatus::Cancelled);
}

#[test]
fn an_unreadable_stored_conversation_is_an_error_and_the_current_one_stays() {
    let settings = settings();
    let store = Stored { unreadable: vec!["s0".into()], ..Stored::default() };
    let mut current = Some(task("s1", "Buy a kettle", paused(), ""));
    let error = block_on(start(&store, &mut current, new_task("Go on", Some("s0"), &settings)))
        .unwrap_err();
    assert_eq!(error, "it was stored by a newer version");
    let cp = current.unwrap();
    assert_eq!((cp.session_id.as_str(), &cp.status), ("s1", &paused()));
}

#[test]
fn after_a_restart_every_unfinished_conversation_comes_back_oldest_first() {
    let restored = to_restore([
        task("new", "c", TaskStatus::Running, "2026-11-23T10:00:00.000Z"),
        task("done", "b", done(), "2026-11-24T10:00:00.000Z"),
        task("old", "a", paused(), "2026-11-20T10:00:00.000Z"),
    ]);
    let ids: Vec<String> = restored.into_iter().map(|cp| cp.session_id).collect();
    assert_eq!(ids, ["old", "new"]);
    assert!(to_restore([task("done", "b", done(), "")]).is_empty());
}

#[test]
fn the_history_lists_newest_first_with_the_current_one_as_in_memory() {
    let stored = [
        task("s1", "Buy a kettle", TaskStatus::Running, "2026-11-20T10:00:00.000Z"),
        task("s2", "Find a flight", TaskStatus::Running, "2026-11-21T10:00:00.000Z"),
    ];
    // In memory, s1 has moved on since it was stored.
    let mut live = stored[0].clone();
    live.run.updated_at = "2026-11-22T10:00:00.000Z".into();
    let runs = lean::SortedMap::from([(
        "s1".to_owned(),
        SessionRuns { runs: 3, first_task: Some("  Buy a kettle under 30 EUR ".into()) },
    )]);
    let unreadable = [Unreadable::new("s3", "it is not plain data")];
    let list =
        history(&stored, &unreadable, &runs, Sessions { current: Some(&live), running: true });
    let rows: Vec<(&str, &str, &str, u32)> = list
        .iter()
        .map(|s| (s.session_id.as_str(), s.title.as_str(), s.status.label(), s.runs))
        .collect();
    assert_eq!(
        rows,
        [
            ("s1", "Buy a kettle under 30 EUR", "running", 3),
            // Running in the store but not in this worker: cut off by a restart.
            ("s2", "Find a flight", "paused", 1),
            ("s3", "Could not be read: it is not plain data", "unreadable", 1),
        ]
    );
}
