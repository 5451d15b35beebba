//! "What happened" in words: counts with their plurals, and where in the run each log
//! entry falls, told as the annotation page tells it.

use run_contract::telemetry::{LogKind, Telemetry};

/// "1 decision · 2 pauses · 0 resumes".
pub fn counts(telemetry: &Telemetry) -> String {
    let decisions = telemetry.log.iter().filter(|e| e.kind == LogKind::Thinking).count() as u32;
    let plural = |n: u32, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    [
        plural(decisions, "decision"),
        plural(telemetry.pauses, "pause"),
        plural(telemetry.resumes, "resume"),
    ]
    .join(" · ")
}

/// When an entry stamped `step` (the steps taken when it was logged) happened, in a run
/// that has taken `taken` steps: never a step that does not exist.
pub fn when(step: u32, taken: u32) -> String {
    if step >= taken && taken > 0 {
        "after the last step".into()
    } else if step == 0 {
        "before the first step".into()
    } else {
        format!("before step {}", step + 1)
    }
}

#[cfg(test)]
mod tests {
    use run_contract::telemetry::LogEntry;

    use super::*;

    #[test]
    fn one_of_a_thing_is_singular() {
        let entry = |kind| LogEntry { at: 0.0, step: 0, kind, message: String::new() };
        // (what was logged, pauses, resumes, what is said)
        let cases = [
            ([LogKind::Thinking, LogKind::Pause], 1, 1, "1 decision · 1 pause · 1 resume"),
            ([LogKind::Thinking, LogKind::Thinking], 0, 2, "2 decisions · 0 pauses · 2 resumes"),
        ];
        for (kinds, pauses, resumes, said) in cases {
            let log = kinds.into_iter().map(entry).collect();
            let telemetry = Telemetry { log, pauses, resumes, ..Telemetry::default() };
            assert_eq!(counts(&telemetry), said);
        }
    }

    #[test]
    fn the_exit_gate_of_a_three_step_run_is_after_the_last_step() {
        assert_eq!(when(3, 3), "after the last step");
        assert_eq!(when(1, 3), "before step 2");
        assert_eq!(when(0, 3), "before the first step");
        assert_eq!(when(0, 0), "before the first step", "a run that has taken no step yet");
    }
}
