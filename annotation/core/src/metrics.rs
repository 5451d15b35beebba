//! Per-run metrics (seed §7.H "Metrics Per Run"): quality, time spent annotating, review
//! iterations, and issues flagged and resolved, with the rule that turns a person's activity
//! into time spent.

use crate::issues;
use crate::record::{Run, Step};

/// Time spent annotating: the gaps between a person's actions on a run, except gaps longer
/// than [`ActiveTime::IDLE_MS`], which count as away.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActiveTime {
    last_ms: Option<f64>,
    total_ms: f64,
}

impl ActiveTime {
    /// A pause longer than this (two minutes) is not annotating.
    pub const IDLE_MS: f64 = 120_000.0;

    /// An action (a key, a click) at `now_ms`.
    pub fn touch(&mut self, now_ms: f64) {
        if let Some(last) = self.last_ms {
            let gap = now_ms - last;
            if gap > 0.0 && gap <= Self::IDLE_MS {
                self.total_ms += gap;
            }
        }
        self.last_ms = Some(now_ms);
    }

    /// The time counted so far, in whole ms, and counting starts again from zero.
    pub fn take(&mut self) -> u64 {
        let taken = self.total_ms.max(0.0) as u64;
        self.total_ms = 0.0;
        taken
    }
}

/// The run's figures as the run header shows them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunMetrics {
    pub quality: Option<u8>,
    pub active_ms: u64,
    pub review_rounds: u32,
    pub issues_flagged: u32,
    pub issues_resolved: u32,
}

pub fn run_metrics(run: &Run, steps: &[Step]) -> RunMetrics {
    let tally = issues::tally(steps);
    RunMetrics {
        quality: run.quality,
        active_ms: run.active_ms,
        review_rounds: run.review_rounds,
        issues_flagged: tally.open + tally.resolved,
        issues_resolved: tally.resolved,
    }
}

/// "45 s", "12 min", "1 h 05 min".
pub fn duration(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        _ => format!("{} h {:02} min", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_longer_than_two_minutes_are_not_counted() {
        let mut time = ActiveTime::default();
        time.touch(1_000.0);
        time.touch(31_000.0);
        time.touch(31_000.0 + ActiveTime::IDLE_MS + 1.0);
        time.touch(41_000.0 + ActiveTime::IDLE_MS + 1.0);
        assert_eq!(time.take(), 40_000);
        assert_eq!(time.take(), 0, "taken once");
        time.touch(50_000.0 + ActiveTime::IDLE_MS + 1.0);
        assert_eq!(time.take(), 9_000, "counting goes on from the last action");
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(45_000), "45 s");
        assert_eq!(duration(12 * 60_000 + 5_000), "12 min");
        assert_eq!(duration(3_900_000), "1 h 05 min");
    }

    #[test]
    fn metrics_count_issues_flagged_and_resolved() {
        let mut step = Step::default();
        let draft = issues::Draft::default();
        let first = issues::raise(&step, &draft, "rev", "t");
        step.issues.push(first);
        let second = issues::raise(&step, &draft, "rev", "t");
        step.issues.push(second);
        issues::set_resolved(&mut step, 0, true, "ann", "t2");
        let run = Run { quality: Some(80), active_ms: 5_000, review_rounds: 2, ..Run::default() };
        let m = run_metrics(&run, &[step]);
        assert_eq!((m.issues_flagged, m.issues_resolved, m.review_rounds), (2, 1, 2));
    }
}
