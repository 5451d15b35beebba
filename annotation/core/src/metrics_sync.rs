//! A run's quality score and time spent, reported to the team's sync server
//! (`POST /runs/{runId}/metrics`, issue 29). The server adds each report's time to the
//! reporter's total, so a report must never count twice: what is sent is kept here as
//! pending, under its `Idempotency-Key`, and sent again as it was until the server has
//! answered it; only then does it count as reported. Time spent offline goes up on the next
//! round, in reports of at most an hour (the server's limit).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

/// The most time one report may add (the server's `addTimeMs` maximum).
pub const MAX_REPORT_MS: u64 = 3_600_000;

/// What this browser reported of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    /// How much of the run's `active_ms` the server has counted.
    pub reported_ms: u64,
    /// The score last reported.
    #[serde(default)]
    pub reported_quality: Option<u8>,
    /// A report sent without an answer read yet: sent again, the same, under its key.
    #[serde(default)]
    pub pending: Option<Report>,
}

/// One report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub key: String,
    pub quality: Option<u8>,
    pub add_ms: u64,
}

impl Report {
    /// The `RunMetricsReport` body.
    pub fn body(&self) -> Value {
        let mut body = json!({});
        if let Some(quality) = self.quality {
            body["quality"] = json!(quality);
        }
        if self.add_ms > 0 {
            body["addTimeMs"] = json!(self.add_ms);
        }
        body
    }
}

/// By run id.
pub type Marks = BTreeMap<String, Mark>;

impl Mark {
    /// The report to send for a run scored `quality` with `active_ms` spent here: the one
    /// pending, or a new one (under `key`) when something is unreported. `may_score` says
    /// whether this person's score is the run's (a reviewer's is not).
    pub fn report(
        &mut self,
        quality: Option<u8>,
        active_ms: u64,
        may_score: bool,
        key: impl FnOnce() -> String,
    ) -> Option<Report> {
        if let Some(pending) = &self.pending {
            return Some(pending.clone());
        }
        let add_ms = active_ms.saturating_sub(self.reported_ms).min(MAX_REPORT_MS);
        // A run not scored (yet, or again after a pull) says nothing: the last score stands.
        let quality = quality.filter(|q| may_score && self.reported_quality != Some(*q));
        if add_ms == 0 && quality.is_none() {
            return None;
        }
        let report = Report { key: key(), quality, add_ms };
        self.pending = Some(report.clone());
        Some(report)
    }

    /// The server has answered the pending report (or refused it for good): it counts.
    pub fn reported(&mut self) {
        if let Some(report) = self.pending.take() {
            self.reported_ms += report.add_ms;
            self.reported_quality = report.quality.or(self.reported_quality);
        }
    }
}

/// The server's figures for a run (`RunMetrics`), as the run header shows them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TeamMetrics {
    pub run_id: String,
    pub quality: Option<u8>,
    pub time_spent_ms: u64,
    pub mine_ms: u64,
    pub review_rounds: u64,
}

impl TeamMetrics {
    pub fn from_server(value: &Value) -> TeamMetrics {
        TeamMetrics {
            run_id: value["runId"].as_str().unwrap_or_default().to_owned(),
            quality: value["quality"].as_u64().map(|q| q.min(100) as u8),
            time_spent_ms: value["timeSpentMs"].as_u64().unwrap_or(0),
            mine_ms: value["mine"].as_u64().unwrap_or(0),
            review_rounds: value["reviewRounds"].as_u64().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_a_new_score_are_reported_once() {
        let mut mark = Mark::default();
        let report = mark.report(Some(80), 5_000, true, || "k1".into()).unwrap();
        assert_eq!(report.body(), json!({"quality": 80, "addTimeMs": 5000}));
        // Unanswered: the same report, same key, even if more time was spent meanwhile.
        let again = mark.report(Some(81), 9_000, true, || "k2".into()).unwrap();
        assert_eq!(again, report);
        mark.reported();
        let next = mark.report(Some(80), 9_000, true, || "k3".into()).unwrap();
        assert_eq!(next.body(), json!({"addTimeMs": 4000}), "the score was reported already");
        mark.reported();
        assert_eq!(mark.report(Some(80), 9_000, true, || "k4".into()), None);
    }

    #[test]
    fn a_reviewer_reports_time_only_and_long_offline_work_goes_by_the_hour() {
        let mut mark = Mark::default();
        let report = mark.report(Some(70), 2 * MAX_REPORT_MS + 5, false, || "k".into()).unwrap();
        assert_eq!(report.body(), json!({"addTimeMs": MAX_REPORT_MS}));
        mark.reported();
        mark.report(None, 2 * MAX_REPORT_MS + 5, false, || "k".into()).unwrap();
        mark.reported();
        let last = mark.report(None, 2 * MAX_REPORT_MS + 5, false, || "k".into()).unwrap();
        assert_eq!(last.add_ms, 5);
    }

    #[test]
    fn the_servers_figures_are_read() {
        let m = TeamMetrics::from_server(&json!({"runId": "r", "quality": 90,
            "timeSpentMs": 65_000, "mine": 5000, "reviewRounds": 1}));
        assert_eq!((m.quality, m.time_spent_ms, m.mine_ms), (Some(90), 65_000, 5000));
    }
}
