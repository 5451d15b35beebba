//! A [`Checkpoint`] as it is stored: versioned, read back after an upgrade, and never
//! dropped in silence.
//!
//! A stored checkpoint carries the `version` of its shape; one stored without a version is
//! version 1, the shape of the releases before versions (commit 4062a39 and its
//! successors up to this module). [`read_checkpoint`] upgrades an older one step by step to
//! [`CHECKPOINT_VERSION`] before decoding it, and what it cannot read it returns as an
//! [`Unreadable`] that says why and keeps what could be salvaged, so the shell can log it,
//! list it in the History and refuse to open it, while it stays stored.
//!
//! Changing the shape: a new field that has a sensible default gets `#[serde(default)]`;
//! anything else (a renamed, moved or re-typed field) raises [`CHECKPOINT_VERSION`] and
//! appends the step from the previous version to [`UPGRADES`]. Keep the previous release's
//! checkpoint as a fixture and a test that reads it.

use protocol::agent::{EventDetail, SessionStatus, SessionSummary};
use serde_json::{Map, Value};

use super::Checkpoint;
use crate::truncate;

/// The version of the checkpoint's stored shape that this build writes.
pub const CHECKPOINT_VERSION: u32 = 3;

/// The status an unreadable checkpoint has in the History.
pub const UNREADABLE_STATUS: SessionStatus = SessionStatus::Unreadable;

/// A checkpoint stored without a version has the shape of version 1.
pub(super) fn unversioned() -> u32 {
    1
}

/// One step per version: `UPGRADES[n - 1]` turns a version `n` checkpoint into version
/// `n + 1`. Its length is checked against [`CHECKPOINT_VERSION`] at compile time.
type Upgrade = fn(&mut Map<String, Value>);
const UPGRADES: [Upgrade; CHECKPOINT_VERSION as usize - 1] = [from_1, from_2];

/// Version 1 (no `version` stored) lacks what was added after 4062a39: `off_plan`, the
/// extracted text of the last step and the read position of `memory`. Each starts empty,
/// as in a fresh task. (Their serde defaults say the same; this says it for version 1.)
/// Its events carry their facts only as text: each gets its `detail` from that text, in
/// the wording that release wrote, so a reopened conversation shows its step cards.
fn from_1(cp: &mut Map<String, Value>) {
    cp.entry("off_plan").or_insert(Value::Bool(false));
    if let Some(Value::Object(last)) = cp.get_mut("last") {
        last.entry("extracted").or_insert_with(|| Value::String(String::new()));
    }
    if let Some(Value::Object(memory)) = cp.get_mut("memory") {
        memory.entry("reading").or_insert(Value::Null);
    }
    let mut started = String::new();
    for event in cp.get_mut("events").and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(event) = event.as_object_mut() else { continue };
        if event.contains_key("detail") {
            continue;
        }
        let detail = released_detail(event, &mut started);
        if let Ok(detail) = serde_json::to_value(detail) {
            event.insert("detail".into(), detail);
        }
    }
}

/// Version 2 kept the seed §7 log in the checkpoint (`log`), where deleting the
/// conversation or a follow-up task lost it; version 3 keeps it in the run record
/// (`run.telemetry.log`), with the counts it had.
fn from_2(cp: &mut Map<String, Value>) {
    let log = cp.remove("log").unwrap_or(Value::Array(Vec::new()));
    let counters = cp.get("counters").cloned().unwrap_or(Value::Null);
    let count = |key: &str| counters.get(key).cloned().unwrap_or(Value::from(0));
    let telemetry = serde_json::json!({
        "log": log,
        "pauses": count("pauses"),
        "resumes": count("resumes"),
        "thinkingCalls": count("thinking_calls"),
    });
    if let Some(Value::Object(run)) = cp.get_mut("run") {
        run.entry("telemetry").or_insert(telemetry);
    }
}

/// What a version-1 event's text said, as data: the only place that release's wording is
/// read. `started` is the label of the last action begun, which its end repeats.
fn released_detail(event: &Map<String, Value>, started: &mut String) -> EventDetail {
    let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
    let (actor, state, kind, details) =
        (text("actor"), text("state"), text("kind"), text("details"));
    let step_number = |rest: &str| rest.split(' ').next().and_then(|n| n.parse::<u32>().ok());
    match (actor, state) {
        ("navigator", "STEP_START") => match details.strip_prefix("Step ").and_then(step_number) {
            Some(number) if !details["Step ".len()..].contains(' ') => {
                EventDetail::StepOpened { number }
            }
            _ => EventDetail::Goal,
        },
        ("navigator", "ACT_START") => {
            *started = details.to_owned();
            EventDetail::ActionStarted { label: details.to_owned() }
        }
        ("navigator", "ACT_OK" | "ACT_FAIL") if !started.is_empty() => {
            match details.strip_prefix(started.as_str()) {
                Some(rest) => EventDetail::ActionEnded {
                    label: std::mem::take(started),
                    ok: state == "ACT_OK" && kind != "error",
                    skipped: false,
                    message: rest.trim_start_matches(':').trim().to_owned(),
                },
                None => EventDetail::None,
            }
        }
        ("navigator", "STEP_OK" | "STEP_FAIL") => {
            match details.strip_prefix("Step ").map(|rest| rest.split_once(' ')) {
                Some(Some((number, "done" | "failed"))) => match number.parse() {
                    Ok(number) => EventDetail::StepEnded { number, ok: state == "STEP_OK" },
                    Err(_) => EventDetail::None,
                },
                _ => EventDetail::None,
            }
        }
        ("planner", "STEP_OK") => match details.strip_prefix("Plan:") {
            Some(steps) => EventDetail::Plan { steps: steps.trim_start().to_owned() },
            None if details.starts_with("I believe the task is done") => EventDetail::PlannerDone,
            None => EventDetail::None,
        },
        _ if (kind == "error" || kind == "question") && details.contains("Settings") => {
            EventDetail::NeedsSettings { what: "the model settings".into() }
        }
        _ => EventDetail::None,
    }
}

/// A stored checkpoint that could not be read. It stays stored (deleting it is the
/// person's choice, from the History); the shell logs it and lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    /// Its key in the store: the session id.
    pub key: String,
    /// The version it says it has, when it says one that is a number.
    pub version: Option<u64>,
    /// Why, for a person: "it was stored by a newer version …", or serde's error.
    pub reason: String,
    /// Its task, when that much can still be read.
    pub task: Option<String>,
    /// When its run last changed (ISO 8601), when that can still be read.
    pub updated_at: Option<String>,
}

impl Unreadable {
    /// An unreadable checkpoint about which nothing but `reason` is known.
    pub fn new(key: &str, reason: impl Into<String>) -> Unreadable {
        Unreadable {
            key: key.to_owned(),
            version: None,
            reason: reason.into(),
            task: None,
            updated_at: None,
        }
    }

    /// For the console: the key and why.
    pub fn log_line(&self) -> String {
        format!(
            "IndexedDB: the checkpoint {} could not be read (kept in storage): {}",
            self.key, self.reason
        )
    }

    /// Said to a person who tries to open it or continue it.
    pub fn message(&self) -> String {
        format!(
            "This conversation could not be read: {}. It is kept as it was stored; you can \
             delete it from the History.",
            self.reason
        )
    }

    /// How the History lists it: status [`UNREADABLE_STATUS`], and a title that says it
    /// could not be read and why, then its first task (from the runs store when it has
    /// runs there) or its own task as far as it could be read.
    pub fn summary(&self, first_task: Option<&str>, runs: u32) -> SessionSummary {
        let task = first_task.or(self.task.as_deref()).map(str::trim).unwrap_or("");
        let why = truncate(&self.reason, 200);
        let title = if task.is_empty() {
            format!("Could not be read: {why}")
        } else {
            format!("Could not be read: {why}. Task: {}", truncate(task, 200))
        };
        SessionSummary {
            session_id: self.key.clone(),
            // The same text in both, so the History does not add a "Latest:" line.
            task: title.clone(),
            title,
            status: UNREADABLE_STATUS,
            updated_at: self.updated_at.clone().unwrap_or_default(),
            runs: runs.max(1),
            panel_tab: None,
        }
    }
}

/// Reads the checkpoint stored under `key`, upgrading an older version first. What does
/// not read comes back as an [`Unreadable`] saying why; nothing is dropped.
pub fn read_checkpoint(key: &str, value: Value) -> Result<Checkpoint, Unreadable> {
    let Value::Object(mut cp) = value else {
        return Err(Unreadable::new(key, format!("it is not an object but {}", kind(&value))));
    };
    let salvage = |reason: String, version: Option<u64>, cp: &Map<String, Value>| {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let memory_task = text(cp.get("memory").and_then(|m| m.get("task")));
        let run = cp.get("run");
        Unreadable {
            key: key.to_owned(),
            version,
            reason,
            task: memory_task.or_else(|| text(run.and_then(|r| r.get("taskPrompt")))),
            updated_at: text(run.and_then(|r| r.get("updatedAt"))),
        }
    };
    let version = match cp.get("version") {
        None | Some(Value::Null) => u64::from(unversioned()),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                let reason = format!("its version is {v}, which no version of AlphaScout wrote");
                return Err(salvage(reason, None, &cp));
            }
        },
    };
    if version > u64::from(CHECKPOINT_VERSION) {
        let reason = format!(
            "it was stored by a newer version of AlphaScout (checkpoint version {version}; \
             this one reads up to {CHECKPOINT_VERSION})"
        );
        return Err(salvage(reason, Some(version), &cp));
    }
    for upgrade in &UPGRADES[version as usize - 1..] {
        upgrade(&mut cp);
    }
    cp.insert("version".into(), Value::from(CHECKPOINT_VERSION));
    // `from_value` takes the map; keep a copy of only what salvage reads.
    let kept: Map<String, Value> = ["memory", "run"]
        .into_iter()
        .filter_map(|k| cp.get(k).map(|v| (k.to_owned(), v.clone())))
        .collect();
    serde_json::from_value(Value::Object(cp)).map_err(|error| {
        let reason = format!("version {version} data that does not fit: {error}");
        salvage(reason, Some(version), &kept)
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use protocol::agent::{Actor, EventKind, ExecutionState, TaskStatus};
    use run_contract::telemetry::LogKind;
    use serde_json::json;

    use super::*;

    /// A checkpoint as the release before versions (commit 4062a39) stored it: the
    /// executor's own test world at that commit ran "Buy a kettle" for three steps until the
    /// ThinkingAgent asked a question, and this is its checkpoint, serialized by that
    /// commit's types.
    const PREVIOUS_RELEASE: &str = include_str!("fixtures/checkpoint_v1.json");

    fn previous_release() -> Value {
        serde_json::from_str(PREVIOUS_RELEASE).unwrap()
    }

    #[test]
    fn the_previous_releases_checkpoint_reads_with_what_matters() {
        let stored = previous_release();
        assert!(stored.get("version").is_none(), "the fixture is unversioned");
        assert!(stored.get("off_plan").is_none(), "and older than off_plan");
        assert!(stored["memory"].get("reading").is_none());
        assert!(stored["last"].get("extracted").is_none());

        let cp = read_checkpoint("s1", stored).unwrap();
        assert_eq!(cp.version, CHECKPOINT_VERSION);
        assert_eq!((cp.session_id.as_str(), cp.tab_id), ("s1", 7));
        assert_eq!(cp.memory.task, "Buy a kettle");
        assert_eq!(cp.run.task_prompt, "Buy a kettle");
        let TaskStatus::Paused { question, reason, .. } = &cp.status else {
            panic!("paused: {:?}", cp.status)
        };
        assert_eq!(question.as_deref(), Some("Which brand do you prefer, Acme or Zeta?"));
        assert_eq!(reason, "The agent needs your input");
        assert_eq!((cp.step, cp.step_limit), (3, 40));
        assert_eq!(cp.events.len(), 20);
        let first = &cp.events[0];
        assert_eq!((first.actor, first.state), (Actor::User, ExecutionState::TaskStart));
        assert_eq!(first.details, "Buy a kettle");
        let last = cp.events.last().unwrap();
        assert_eq!(
            (last.actor, last.state, last.kind),
            (Actor::System, ExecutionState::TaskPause, EventKind::Question)
        );
        assert_eq!(cp.memory.steps.len(), 3);
        assert_eq!(cp.memory.steps[2].url, "http://shop.test/page2");
        assert_eq!(cp.memory.plan, "1. Open the kettle\n2. Read the price");
        assert_eq!(cp.memory.domains, ["shop.test"]);
        assert!(cp.memory.findings.iter().any(|f| f == "kettle costs 25"));
        assert_eq!(cp.last.outcome, "done (success) → ok: found it");
        assert_eq!(cp.counters.pauses, 1);
        assert!(cp.planner.as_ref().is_some_and(|p| p.done && p.final_answer == "A kettle"));
        assert!(cp.spend.input_tokens > 0);
        // Its log moved into the run's telemetry, with its counts.
        assert!(cp.run.telemetry.log.iter().any(|e| e.kind == LogKind::UserInput));
        assert_eq!(cp.run.telemetry.pauses, 1);
        // What came after that release starts empty.
        assert!(!cp.off_plan);
        assert_eq!(cp.memory.reading, None);
        assert_eq!(cp.last.extracted, "");
    }

    #[test]
    fn the_previous_releases_events_get_their_facts_from_its_wording() {
        let cp = read_checkpoint("s", previous_release()).unwrap();
        let details: Vec<&EventDetail> = cp.events.iter().map(|e| &e.detail).collect();
        assert!(details.contains(&&EventDetail::StepOpened { number: 1 }), "{details:#?}");
        assert!(details.iter().any(|d| matches!(d, EventDetail::Plan { .. })), "{details:#?}");
        assert!(details.iter().any(|d| matches!(d, EventDetail::StepEnded { number: 1, .. })));
        let ended = details.iter().find_map(|d| match d {
            EventDetail::ActionEnded { label, .. } => Some(label.clone()),
            _ => None,
        });
        let begun = details.iter().find_map(|d| match d {
            EventDetail::ActionStarted { label } => Some(label.clone()),
            _ => None,
        });
        assert!(ended.is_some() && ended == begun, "{ended:?} vs {begun:?}");
    }

    #[test]
    fn an_upgraded_checkpoint_is_stored_with_the_current_version_and_reads_back_the_same() {
        let cp = read_checkpoint("s1", previous_release()).unwrap();
        let stored = serde_json::to_value(&cp).unwrap();
        assert_eq!(stored["version"], json!(CHECKPOINT_VERSION));
        assert_eq!(read_checkpoint("s1", stored).unwrap(), cp);
    }

    #[test]
    fn fields_with_a_default_may_be_missing() {
        let mut stored = previous_release();
        let map = stored.as_object_mut().unwrap();
        for field in ["events", "log", "counters", "notes", "spend", "planner", "detector"] {
            map.remove(field);
        }
        let cp = read_checkpoint("s1", stored).unwrap();
        assert!(cp.events.is_empty() && cp.run.telemetry.log.is_empty() && cp.planner.is_none());
        assert_eq!(cp.memory.task, "Buy a kettle");
    }

    #[test]
    fn a_newer_version_is_reported_with_what_could_be_salvaged() {
        let mut stored = previous_release();
        stored["version"] = json!(CHECKPOINT_VERSION + 1);
        let unreadable = read_checkpoint("s1", stored).unwrap_err();
        assert_eq!(unreadable.key, "s1");
        assert_eq!(unreadable.version, Some(u64::from(CHECKPOINT_VERSION + 1)));
        assert!(unreadable.reason.contains("newer version of AlphaScout"), "{unreadable:?}");
        assert_eq!(unreadable.task.as_deref(), Some("Buy a kettle"));
        assert!(unreadable.updated_at.as_deref().is_some_and(|at| at.starts_with("20")));
    }

    #[test]
    fn a_checkpoint_that_does_not_fit_is_reported_with_the_serde_error() {
        let mut stored = previous_release();
        stored.as_object_mut().unwrap().remove("step_limit");
        let unreadable = read_checkpoint("s1", stored).unwrap_err();
        assert!(unreadable.reason.contains("missing field `step_limit`"), "{unreadable:?}");
        assert_eq!(unreadable.version, Some(1));
        assert_eq!(unreadable.task.as_deref(), Some("Buy a kettle"));
        assert!(unreadable.log_line().contains("s1"));
        assert!(unreadable.log_line().contains("missing field `step_limit`"));

        let mut stored = previous_release();
        stored["step"] = json!("three");
        let unreadable = read_checkpoint("s1", stored).unwrap_err();
        assert!(unreadable.reason.contains("invalid type"), "{unreadable:?}");

        let unreadable = read_checkpoint("k", json!("garbage")).unwrap_err();
        assert_eq!(unreadable.reason, "it is not an object but a string");
        let unreadable = read_checkpoint("k", json!({"version": "two"})).unwrap_err();
        assert!(unreadable.reason.contains("its version is \"two\""), "{unreadable:?}");
        let unreadable = read_checkpoint("k", json!({"version": 0})).unwrap_err();
        assert!(unreadable.reason.contains("its version is 0"), "{unreadable:?}");
    }

    #[test]
    fn the_history_lists_an_unreadable_checkpoint_with_why() {
        let mut stored = previous_release();
        stored.as_object_mut().unwrap().remove("step_limit");
        let unreadable = read_checkpoint("s1", stored).unwrap_err();
        let summary = unreadable.summary(None, 0);
        assert_eq!(summary.session_id, "s1");
        assert_eq!(summary.status, UNREADABLE_STATUS);
        assert_eq!(
            summary.title,
            "Could not be read: version 1 data that does not fit: missing field `step_limit`. \
             Task: Buy a kettle"
        );
        assert_eq!(summary.task, summary.title);
        assert_eq!(summary.runs, 1);
        assert_eq!(summary.updated_at, unreadable.updated_at.clone().unwrap());
        let from_runs = unreadable.summary(Some("The first task"), 2);
        assert!(from_runs.title.ends_with("Task: The first task"), "{}", from_runs.title);
        assert_eq!(from_runs.runs, 2);
        let bare = Unreadable::new("k", "it is not an object but a string").summary(None, 0);
        assert_eq!(bare.title, "Could not be read: it is not an object but a string");
        assert_eq!(bare.updated_at, "");
        assert!(Unreadable::new("k", "why").message().contains("could not be read: why"));
    }
}
