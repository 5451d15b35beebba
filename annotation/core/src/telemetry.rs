//! A run's telemetry (seed `001_…` §7) beside its steps: which log entries an annotator sees
//! with which step, and the words every view and export uses for them.
//!
//! The engine stamps an entry with the number of steps taken when it was logged, so an entry
//! at `n` happened after step `n - 1` and before step `n`. A step is shown with what
//! happened since the step before it; what came after the last step is the run's ending.

use run_contract::telemetry::{LogEntry, Telemetry};

use crate::record::Step;

/// The log split by step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ByStep<'a> {
    /// For each step, in the order given: the entries logged after the step before it was
    /// taken and before this one was (the first step also takes everything before it).
    pub steps: Vec<Vec<&'a LogEntry>>,
    /// Entries logged after the last step: the closing decision, a last question.
    pub after: Vec<&'a LogEntry>,
}

/// Splits `telemetry`'s log over `steps` (sorted by index, as the page keeps them; a gap
/// left by a removed step keeps its entries with the next step).
pub fn by_step<'a>(telemetry: &'a Telemetry, steps: &[Step]) -> ByStep<'a> {
    let mut out = ByStep { steps: vec![Vec::new(); steps.len()], after: Vec::new() };
    for entry in &telemetry.log {
        match steps.iter().position(|s| entry.step <= s.index) {
            Some(at) => out.steps[at].push(entry),
            None => out.after.push(entry),
        }
    }
    out
}

/// One entry in a line: "decision: Continue: the page shows the price".
pub fn line(entry: &LogEntry) -> String {
    format!("{}: {}", entry.kind.label(), entry.message)
}

/// The run's counts in words: "2 pauses · 2 resumes · 3 ThinkingAgent calls".
pub fn counts(telemetry: &Telemetry) -> String {
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    [
        plural(telemetry.pauses, "pause", "pauses"),
        plural(telemetry.resumes, "resume", "resumes"),
        plural(telemetry.thinking_calls, "ThinkingAgent call", "ThinkingAgent calls"),
    ]
    .join(" · ")
}

#[cfg(test)]
mod tests {
    use run_contract::telemetry::LogKind;

    use super::*;

    fn entry(step: u32, message: &str) -> LogEntry {
        LogEntry { at: 0.0, step, kind: LogKind::Thinking, message: message.into() }
    }

    #[test]
    fn each_step_gets_what_happened_since_the_step_before_and_the_rest_comes_after() {
        let mut telemetry = Telemetry::default();
        for (step, message) in
            [(0, "start"), (1, "after the first"), (3, "after a removed step"), (4, "closing")]
        {
            telemetry.push(entry(step, message));
        }
        // Step 2 was removed by an annotator: its entries stay with step 3.
        let steps: Vec<Step> = [0, 1, 3]
            .into_iter()
            .map(|index| Step { run_id: "r".into(), index, ..Step::default() })
            .collect();
        let split = by_step(&telemetry, &steps);
        let messages =
            |entries: &[&LogEntry]| entries.iter().map(|e| e.message.clone()).collect::<Vec<_>>();
        assert_eq!(messages(&split.steps[0]), ["start"]);
        assert_eq!(messages(&split.steps[1]), ["after the first"]);
        assert_eq!(messages(&split.steps[2]), ["after a removed step"]);
        assert_eq!(messages(&split.after), ["closing"]);
        assert_eq!(line(split.after[0]), "decision: closing");
        assert_eq!(
            by_step(&telemetry, &[]).after.len(),
            4,
            "a run without steps keeps its whole log"
        );
    }

    #[test]
    fn counts_read_as_words() {
        let telemetry =
            Telemetry { pauses: 1, resumes: 2, thinking_calls: 3, ..Default::default() };
        assert_eq!(counts(&telemetry), "1 pause · 2 resumes · 3 ThinkingAgent calls");
    }
}
