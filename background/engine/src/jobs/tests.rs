//! The job rules (`super`), one test per rule, and the stored replay format (`stored`).
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::stored::{REPLAY_FORMAT, StoredReplay, UnreadableJob, read_replay};
use super::*;
use crate::workflow::replay::{ReplayState, ReplayStatus};
use crate::workflow::schema::{FORMAT_VERSION, Workflow};

const LIMITS: Limits = Limits { max_running: 3 };

fn job(id: &str, kind: JobKind, tab: TabId) -> Job {
    Job::new(id, kind, Some(tab))
}

fn task(id: &str, tab: TabId) -> Job {
    job(id, JobKind::Task, tab)
}

fn reflection(id: &str) -> Job {
    Job::new(id, JobKind::Reflection, None)
}

fn paused(job: Job) -> Job {
    job.with_status(JobStatus::Paused)
}

fn running_in(kind: JobKind) -> String {
    let noun = match kind {
        JobKind::Pipeline => "pipeline run".to_owned(),
        kind => kind.label().to_lowercase(),
    };
    format!("A {noun} is running in this tab: stop it, or use another tab.")
}

const RECORDED: &str =
    "This tab is being recorded: stop the recording before the agent works here.";
const AGENT_HERE: &str =
    "The agent works in this tab: record in another tab, or stop the job first.";

// ---- admit: tabs ----

#[test]
fn a_running_job_refuses_another_in_its_tab_but_not_in_another_tab() {
    for kind in [JobKind::Task, JobKind::Replay, JobKind::Pipeline] {
        let jobs = [job("a", kind, 1)];
        for new_kind in [JobKind::Task, JobKind::Replay, JobKind::Pipeline] {
            let refused = admit(&jobs, &job("b", new_kind, 1), LIMITS);
            assert_eq!(refused, Err(running_in(kind)), "{kind:?} then {new_kind:?}");
            assert_eq!(admit(&jobs, &job("b", new_kind, 2), LIMITS), Ok(()));
        }
    }
}

#[test]
fn a_running_recording_refuses_a_second_recording_in_its_tab() {
    let jobs = [job("rec", JobKind::Recording, 1)];
    let second = job("rec-2", JobKind::Recording, 1);
    assert_eq!(admit(&jobs, &second, LIMITS), Err(running_in(JobKind::Recording)));
    assert_eq!(admit(&jobs, &job("rec-2", JobKind::Recording, 2), LIMITS), Ok(()));
}

#[test]
fn a_paused_tasks_tab_takes_a_new_task() {
    // The session rules then continue or replace the paused task.
    let jobs = [paused(task("a", 1))];
    assert_eq!(admit(&jobs, &task("b", 1), LIMITS), Ok(()));
}

#[test]
fn a_paused_task_keeps_its_tab_from_other_kinds() {
    let jobs = [paused(task("a", 1))];
    assert_eq!(
        admit(&jobs, &job("r", JobKind::Replay, 1), LIMITS),
        Err("A paused task holds this tab: resume or stop it first, or use another tab.".into())
    );
}

#[test]
fn a_paused_replay_refuses_a_task_in_its_tab() {
    let jobs = [paused(job("r", JobKind::Replay, 1))];
    assert_eq!(
        admit(&jobs, &task("t", 1), LIMITS),
        Err("A paused replay holds this tab: resume or stop it first, or use another tab.".into())
    );
    assert_eq!(admit(&jobs, &task("t", 2), LIMITS), Ok(()));
}

#[test]
fn a_recording_refuses_a_task_in_its_tab() {
    let jobs = [job("rec", JobKind::Recording, 1)];
    for kind in [JobKind::Task, JobKind::Replay, JobKind::Pipeline] {
        assert_eq!(admit(&jobs, &job("t", kind, 1), LIMITS), Err(RECORDED.into()), "{kind:?}");
    }
    assert_eq!(admit(&jobs, &task("t", 2), LIMITS), Ok(()));
}

#[test]
fn a_task_refuses_a_recording_in_its_tab_even_while_paused() {
    let recording = job("rec", JobKind::Recording, 1);
    for other in [task("t", 1), paused(task("t", 1)), paused(job("r", JobKind::Replay, 1))] {
        assert_eq!(admit(&[other], &recording, LIMITS), Err(AGENT_HERE.into()));
    }
    assert_eq!(admit(&[task("t", 2)], &recording, LIMITS), Ok(()));
}

#[test]
fn a_child_job_works_in_its_parents_tab() {
    let jobs = [job("pipeline:1", JobKind::Pipeline, 1)];
    let child = task("t", 1).with_parent("pipeline:1");
    assert_eq!(admit(&jobs, &child, LIMITS), Ok(()));
    // Only its own parent's tab: another pipeline's tab is still refused.
    let stranger = task("t", 1).with_parent("pipeline:2");
    assert_eq!(admit(&jobs, &stranger, LIMITS), Err(running_in(JobKind::Pipeline)));
}

#[test]
fn a_parent_resuming_is_not_refused_by_its_childs_tab() {
    let jobs = [
        paused(job("pipeline:1", JobKind::Pipeline, 1)),
        paused(task("t", 1).with_parent("pipeline:1")),
    ];
    assert_eq!(admit(&jobs, &job("pipeline:1", JobKind::Pipeline, 1), LIMITS), Ok(()));
}

#[test]
fn a_job_resuming_is_not_refused_by_its_own_row() {
    let jobs = [paused(job("r", JobKind::Replay, 1)), task("b", 2), task("c", 3)];
    assert_eq!(admit(&jobs, &job("r", JobKind::Replay, 1), LIMITS), Ok(()));
    // Its row may still say running (a restart): it is not counted twice either.
    let jobs = [job("r", JobKind::Replay, 1), task("b", 2), task("c", 3)];
    assert_eq!(admit(&jobs, &job("r", JobKind::Replay, 1), LIMITS), Ok(()));
}

#[test]
fn ended_jobs_hold_no_tab_and_do_not_count() {
    let ended = [JobStatus::Done, JobStatus::Failed, JobStatus::Cancelled];
    let jobs: Vec<Job> =
        ended.iter().map(|&s| job("old", JobKind::Replay, 1).with_status(s)).collect();
    assert_eq!(admit(&jobs, &job("rec", JobKind::Recording, 1), LIMITS), Ok(()));
    assert_eq!(admit(&jobs, &task("t", 1), Limits { max_running: 1 }), Ok(()));
}

// ---- admit: how many ----

fn at_limit(running: usize) -> String {
    format!(
        "{running} jobs are running, the most Settings allow at once: wait for one to end, stop \
         one in the Jobs list, or raise the limit in Settings."
    )
}

#[test]
fn the_limit_counts_running_tasks_replays_reflections_and_pipelines() {
    let jobs = [
        task("t", 1),
        job("r", JobKind::Replay, 2),
        reflection("rec-1"),
        job("pipeline:1", JobKind::Pipeline, 3),
    ];
    for n in 0..jobs.len() {
        let new = task("new", 9);
        let want = if n < 3 { Ok(()) } else { Err(at_limit(3)) };
        assert_eq!(admit(&jobs[..n], &new, LIMITS), want, "{n} running");
    }
}

#[test]
fn the_limit_is_three_by_default_and_follows_settings() {
    assert_eq!(Limits::default(), LIMITS);
    let jobs = [task("t", 1)];
    assert_eq!(admit(&jobs, &task("u", 2), Limits { max_running: 1 }), Err(at_limit(1)));
    assert_eq!(admit(&jobs, &task("u", 2), Limits { max_running: 2 }), Ok(()));
}

#[test]
fn recordings_and_paused_jobs_do_not_count_toward_the_limit() {
    let jobs = [
        task("t", 1),
        job("r", JobKind::Replay, 2),
        job("rec", JobKind::Recording, 3),
        paused(task("p", 4)),
        paused(job("q", JobKind::Replay, 5)),
    ];
    assert_eq!(admit(&jobs, &task("new", 9), LIMITS), Ok(()));
}

#[test]
fn a_recording_starts_even_at_the_limit() {
    // The person's own work: it neither counts nor waits for a model slot.
    let jobs = [task("t", 1), task("u", 2), reflection("x")];
    assert_eq!(admit(&jobs, &job("rec", JobKind::Recording, 3), LIMITS), Ok(()));
}

#[test]
fn a_child_job_does_not_count_toward_the_limit() {
    let jobs = [task("t", 1), task("u", 2), job("pipeline:1", JobKind::Pipeline, 3)];
    let child = job("r", JobKind::Replay, 3).with_parent("pipeline:1");
    assert_eq!(admit(&jobs, &child, LIMITS), Ok(()));
    // Nor do children already running count against a new job.
    let jobs = [
        job("pipeline:1", JobKind::Pipeline, 1),
        task("c1", 1).with_parent("pipeline:1"),
        task("c2", 1).with_parent("pipeline:1"),
    ];
    assert_eq!(admit(&jobs, &task("new", 2), LIMITS), Ok(()));
}

#[test]
fn a_reflection_only_counts_toward_the_limit() {
    // It has no tab, so it shares with anything; a running one elsewhere blocks nothing.
    let jobs = [task("t", 1), job("rec", JobKind::Recording, 2)];
    assert_eq!(admit(&jobs, &reflection("x"), LIMITS), Ok(()));
    let jobs = [reflection("x"), reflection("y")];
    assert_eq!(admit(&jobs, &task("t", 1), LIMITS), Ok(()));
    let jobs = [reflection("x"), reflection("y"), task("t", 1)];
    assert_eq!(admit(&jobs, &reflection("z"), LIMITS), Err(at_limit(3)));
}

// ---- after_restart ----

#[test]
fn after_a_restart_running_jobs_pause_go_on_or_fail_by_kind() {
    let pause = Restart::Pause { why: RESTARTED };
    assert_eq!(after_restart(JobKind::Task, JobStatus::Running), pause);
    assert_eq!(after_restart(JobKind::Replay, JobStatus::Running), pause);
    assert_eq!(after_restart(JobKind::Recording, JobStatus::Running), Restart::Continue);
    let fail = Restart::Fail { why: CUT_OFF };
    assert_eq!(after_restart(JobKind::Reflection, JobStatus::Running), fail);
    assert_eq!(after_restart(JobKind::Pipeline, JobStatus::Running), fail);
    assert_eq!(RESTARTED, crate::session::RESTARTED);
}

#[test]
fn after_a_restart_paused_and_ended_jobs_stay_as_they_were() {
    let kinds = [
        JobKind::Task,
        JobKind::Replay,
        JobKind::Reflection,
        JobKind::Pipeline,
        JobKind::Recording,
    ];
    let statuses = [JobStatus::Paused, JobStatus::Done, JobStatus::Failed, JobStatus::Cancelled];
    for kind in kinds {
        for status in statuses {
            assert_eq!(after_restart(kind, status), Restart::Keep, "{kind:?} {status:?}");
        }
    }
}

// ---- on_tab_closed ----

#[test]
fn closing_a_tab_ends_its_jobs_only() {
    let jobs = [
        job("pipeline:1", JobKind::Pipeline, 1),
        task("child", 1).with_parent("pipeline:1"),
        task("old", 1).with_status(JobStatus::Done),
        paused(job("r", JobKind::Replay, 2)),
        job("rec", JobKind::Recording, 3),
        task("elsewhere", 4),
        reflection("x"),
    ];
    let interrupt = |id: &str| TabClosed::Interrupt { id: id.into() };
    assert_eq!(on_tab_closed(&jobs, 1), [interrupt("pipeline:1"), interrupt("child")]);
    assert_eq!(on_tab_closed(&jobs, 2), [TabClosed::End { id: "r".into() }]);
    assert_eq!(on_tab_closed(&jobs, 3), [TabClosed::StopRecording { id: "rec".into() }]);
    assert_eq!(on_tab_closed(&jobs, 9), []);
}

#[test]
fn a_closed_tab_ends_with_a_sentence_that_keeps_the_capture() {
    assert!(TAB_CLOSED.contains("tab was closed") && TAB_CLOSED.contains("is kept"));
}

// ---- route ----

fn routed(job: Job, command: Command) -> Result<Routed, String> {
    route(std::slice::from_ref(&job), &job.id, command).map(|(_, routed)| routed)
}

#[test]
fn pause_stop_and_messages_signal_a_running_job() {
    for command in [Command::Pause, Command::Stop, Command::Message] {
        assert_eq!(routed(task("t", 1), command), Ok(Routed::Signal), "{command:?}");
    }
}

#[test]
fn resuming_a_running_job_does_nothing() {
    assert_eq!(routed(task("t", 1), Command::Resume), Ok(Routed::Nothing));
}

#[test]
fn a_paused_job_runs_again_on_resume_or_an_answer() {
    for kind in [JobKind::Task, JobKind::Replay, JobKind::Pipeline] {
        for command in [Command::Resume, Command::Message] {
            assert_eq!(routed(paused(job("j", kind, 1)), command), Ok(Routed::Run));
        }
    }
}

#[test]
fn stopping_a_paused_job_finishes_it_here() {
    assert_eq!(routed(paused(task("t", 1)), Command::Stop), Ok(Routed::Finish));
}

#[test]
fn pausing_a_paused_job_does_nothing() {
    assert_eq!(routed(paused(task("t", 1)), Command::Pause), Ok(Routed::Nothing));
}

#[test]
fn a_paused_recording_is_not_run_by_a_resume_or_message() {
    let recording = paused(job("rec", JobKind::Recording, 1));
    assert_eq!(routed(recording.clone(), Command::Resume), Ok(Routed::Nothing));
    assert_eq!(routed(recording, Command::Message), Ok(Routed::Nothing));
}

#[test]
fn an_ended_job_refuses_every_command() {
    for status in [JobStatus::Done, JobStatus::Failed, JobStatus::Cancelled] {
        for command in [Command::Pause, Command::Resume, Command::Stop, Command::Message] {
            let ended = task("t", 1).with_status(status);
            assert_eq!(routed(ended, command), Err("That job has ended.".into()));
        }
    }
}

#[test]
fn an_unknown_job_is_refused() {
    let jobs = [task("t", 1)];
    assert_eq!(route(&jobs, "gone", Command::Stop), Err("That job is no longer known.".into()));
}

#[test]
fn a_command_reaches_only_the_job_it_names() {
    let jobs = [task("a", 1), paused(task("b", 2))];
    let (job, routed) = route(&jobs, "b", Command::Stop).unwrap();
    assert_eq!((job.id.as_str(), job.tab, routed), ("b", Some(2), Routed::Finish));
    let (job, routed) = route(&jobs, "a", Command::Pause).unwrap();
    assert_eq!((job.id.as_str(), job.tab, routed), ("a", Some(1), Routed::Signal));
}

// ---- held_tabs, any_running ----

#[test]
fn live_jobs_hold_their_tabs_once_each() {
    let jobs = [
        task("a", 5),
        paused(job("r", JobKind::Replay, 2)),
        job("rec", JobKind::Recording, 3),
        task("child", 5).with_parent("a"),
        task("old", 7).with_status(JobStatus::Cancelled),
        reflection("x"),
    ];
    assert_eq!(held_tabs(&jobs), [2, 3, 5]);
    assert!(held_tabs(&[]).is_empty());
}

#[test]
fn any_running_means_a_job_acting_in_a_tab_runs_now() {
    for kind in [JobKind::Task, JobKind::Replay, JobKind::Pipeline] {
        assert!(any_running(&[job("j", kind, 1)]), "{kind:?}");
    }
    // A person's recording, a tabless reflection and paused or ended jobs do not act.
    assert!(!any_running(&[
        job("rec", JobKind::Recording, 1),
        reflection("x"),
        paused(task("p", 2)),
        task("d", 3).with_status(JobStatus::Done),
    ]));
    assert!(!any_running(&[]));
}

// ---- stored replays ----

/// A paused replay row as the worker stored it before rows had a format (format 1).
fn format_1_row() -> Value {
    serde_json::from_str(include_str!("fixtures/replay_format_1.json")).unwrap()
}

fn workflow() -> Workflow {
    Workflow {
        format_version: FORMAT_VERSION,
        id: "wf-album".into(),
        name: "Find a song's album".into(),
        description: String::new(),
        version: 5,
        updated_at: "2025-05-01T09:00:00.000Z".into(),
        start_url: "https://music.test/".into(),
        recording_id: None,
        params: Vec::new(),
        subtasks: Vec::new(),
        steps: Vec::new(),
    }
}

/// A running replay as this build writes it.
fn replay_now() -> StoredReplay {
    let wf = workflow();
    let params = BTreeMap::from([("song".to_owned(), "numb".to_owned())]);
    let state = ReplayState::new(&wf, params, 7, "run-9", "2025-05-03T08:00:00.000Z", "gpt-test");
    StoredReplay {
        format: REPLAY_FORMAT,
        workflow_id: wf.id,
        workflow_version: wf.version,
        workflow_name: wf.name,
        subtasks: 2,
        fast_path: true,
        why: None,
        state,
    }
}

fn unreadable(value: Value) -> UnreadableJob {
    read_replay("replay-key", value).expect_err("unreadable")
}

#[test]
fn a_replay_stored_before_formats_is_read_and_upgraded() {
    let replay = read_replay("replay-run-1", format_1_row()).unwrap();
    assert_eq!(replay.format, REPLAY_FORMAT);
    assert_eq!(replay.workflow_version, 3);
    assert_eq!(
        (replay.workflow_id.as_str(), replay.workflow_name.as_str()),
        ("wf-album", "Find a song's album")
    );
    assert_eq!(replay.status(), JobStatus::Paused);
    assert_eq!(replay.why.as_deref(), Some(RESTARTED));
    assert_eq!(replay.state.question.as_deref(), Some("Which of the two albums?"));
    assert_eq!(replay.state.messages, ["take the studio album"]);
}

#[test]
fn upgrading_a_format_1_replay_loses_nothing() {
    // Written back and renamed as format 1 had it, the row is the stored one field for field.
    let replay = read_replay("replay-run-1", format_1_row()).unwrap();
    let Value::Object(mut row) = serde_json::to_value(&replay).unwrap() else { panic!() };
    assert_eq!(row.remove("format"), Some(json!(REPLAY_FORMAT)));
    let version = row.remove("workflowVersion").unwrap();
    row.insert("version".into(), version);
    assert_eq!(Value::Object(row), format_1_row());
}

#[test]
fn a_replay_written_now_round_trips() {
    let replay = replay_now();
    let row = serde_json::to_value(&replay).unwrap();
    assert_eq!(row["format"], json!(REPLAY_FORMAT));
    assert_eq!(row["workflowVersion"], json!(5));
    assert!(row.get("version").is_none());
    assert_eq!(read_replay("run-9", row), Ok(replay));
}

#[test]
fn a_replay_from_a_newer_version_is_kept_unreadable_with_its_name() {
    let mut row = serde_json::to_value(replay_now()).unwrap();
    row["format"] = json!(REPLAY_FORMAT + 1);
    let job = unreadable(row);
    assert_eq!(job.key, "replay-key");
    assert_eq!(job.kind, JobKind::Replay);
    assert!(job.reason.contains("stored by a newer version of AlphaScout"), "{}", job.reason);
    assert!(job.reason.contains(&format!("replay format {}", REPLAY_FORMAT + 1)), "{}", job.reason);
    assert_eq!(job.title.as_deref(), Some("Find a song's album"));
}

#[test]
fn a_replay_with_a_format_no_release_wrote_is_unreadable() {
    for format in [json!(0), json!(-1), json!("2"), json!(1.5)] {
        let mut row = format_1_row();
        row["format"] = format.clone();
        let job = unreadable(row);
        assert_eq!(job.reason, format!("its format is {format}, which no release wrote"));
        assert_eq!(job.title.as_deref(), Some("Find a song's album"));
    }
}

#[test]
fn a_replay_that_does_not_fit_is_unreadable_with_serdes_reason() {
    let mut row = format_1_row();
    row.as_object_mut().unwrap().remove("state");
    let job = unreadable(row);
    assert_eq!(job.reason, "format 1 data that does not fit: missing field `state`");
    assert_eq!(job.title.as_deref(), Some("Find a song's album"));

    let mut row = serde_json::to_value(replay_now()).unwrap();
    row["subtasks"] = json!("two");
    let job = unreadable(row);
    assert!(
        job.reason.starts_with("format 2 data that does not fit: invalid type"),
        "{}",
        job.reason
    );
}

#[test]
fn a_replay_row_that_is_not_an_object_is_unreadable() {
    for value in [json!([1, 2]), json!("replay"), Value::Null] {
        let job = unreadable(value);
        assert_eq!((job.reason.as_str(), job.title), ("it is not an object", None));
    }
}

#[test]
fn an_unreadable_job_shows_as_failed_saying_why() {
    let job = unreadable(json!({ "format": 99, "workflowName": "Checkout" }));
    let summary = job.summary();
    assert_eq!((summary.id.as_str(), summary.kind), ("replay-key", JobKind::Replay));
    assert_eq!((summary.title.as_str(), summary.status), ("Checkout", JobStatus::Failed));
    assert_eq!(
        summary.why,
        Some(format!("Could not be read: {}. It is kept as it was stored.", job.reason))
    );
    assert_eq!((summary.tab_id, summary.step, summary.question), (None, 0, None));
    assert_eq!(unreadable(json!(3)).summary().title, "(unknown)");
    let line = job.log_line();
    assert!(line.contains("replay-key") && line.contains(&job.reason), "{line}");
}

#[test]
fn a_paused_replay_shows_its_progress_and_why() {
    let replay = read_replay("replay-run-1", format_1_row()).unwrap();
    let progress = replay.progress();
    assert_eq!(
        (progress.run_id.as_str(), progress.workflow_id.as_str()),
        ("replay-run-1", "wf-album")
    );
    assert_eq!((progress.version, progress.tab_id), (3, 42));
    assert_eq!((progress.subtask, progress.subtasks, progress.step), (1, 3, 4));
    assert_eq!((progress.model_calls, progress.calls_saved), (3, 2));
    assert_eq!(progress.status, JobStatus::Paused);
    assert_eq!(progress.why.as_deref(), Some(RESTARTED));
    assert_eq!(progress.question.as_deref(), Some("Which of the two albums?"));
    assert_eq!(progress.extracts["artist"], "Linkin Park");
    assert!(replay.is_live());

    let summary = replay.summary();
    assert_eq!(
        (summary.id.as_str(), summary.kind, summary.tab_id),
        ("replay-run-1", JobKind::Replay, Some(42))
    );
    assert_eq!(
        (summary.title.as_str(), summary.status, summary.step),
        ("Find a song's album", JobStatus::Paused, 4)
    );
    assert_eq!(summary.why.as_deref(), Some(RESTARTED));
    assert_eq!(summary.question.as_deref(), Some("Which of the two albums?"));
}

#[test]
fn a_replays_status_is_the_one_the_jobs_list_shows() {
    let mut replay = replay_now();
    replay.why = Some("stale".into());
    for (status, shown) in [
        (ReplayStatus::Running, JobStatus::Running),
        (ReplayStatus::Done, JobStatus::Done),
        (ReplayStatus::Cancelled, JobStatus::Cancelled),
    ] {
        replay.state.status = status;
        assert_eq!((replay.status(), replay.summary().status), (shown, shown));
        // Only a pause or a failure says why.
        assert_eq!(replay.why(), None);
    }
    assert!(!replay.is_live());
}

#[test]
fn failing_a_replay_ends_it_saying_why() {
    let mut replay = read_replay("replay-run-1", format_1_row()).unwrap();
    replay.fail(TAB_CLOSED, "2025-05-02T11:00:00.000Z");
    let why = format!("Subtask \"2\": {TAB_CLOSED}");
    assert_eq!(replay.status(), JobStatus::Failed);
    assert!(!replay.is_live());
    assert_eq!(replay.progress().why.as_deref(), Some(why.as_str()));
    assert_eq!(replay.summary().why.as_deref(), Some(why.as_str()));
    assert_eq!(replay.state.run.agent_status, protocol::jobs::JobStatus::Failed);
    assert_eq!(replay.state.run.updated_at, "2025-05-02T11:00:00.000Z");
    // The captured run says why too, as a replay that fails by itself does.
    assert_eq!(replay.state.run.final_answer.as_deref(), Some(why.as_str()));
    // An ended replay waits for no answer.
    assert_eq!(replay.summary().question, None);
    assert_eq!(replay.progress().question, None);
}

#[test]
fn pausing_a_replay_keeps_it_live_saying_why() {
    let mut replay = replay_now();
    replay.pause(RESTARTED);
    assert_eq!((replay.status(), replay.is_live()), (JobStatus::Paused, true));
    assert_eq!(replay.state.run.agent_status, protocol::jobs::JobStatus::Paused);
    assert_eq!(replay.progress().why.as_deref(), Some(RESTARTED));
    assert_eq!(replay.summary().why.as_deref(), Some(RESTARTED));
}
