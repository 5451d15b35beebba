//! The Studio's traces view: stored `LlmTrace`s filtered by prompt, variant, model, run,
//! outcome and date, and repair telemetry (counts and rates per prompt and per model).

use std::collections::BTreeMap;

use run_records::LlmTrace;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Valid at the first answer.
    Ok,
    /// Valid after one or more repairs.
    Repaired,
    Failed,
}

impl Outcome {
    pub fn of(trace: &LlmTrace) -> Outcome {
        match (&trace.error, repairs(trace)) {
            (Some(_), _) => Outcome::Failed,
            (None, 0) => Outcome::Ok,
            (None, _) => Outcome::Repaired,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Repaired => "repaired",
            Outcome::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Outcome> {
        [Outcome::Ok, Outcome::Repaired, Outcome::Failed].into_iter().find(|o| o.name() == text)
    }
}

/// Repairs a call needed: answers after the first.
pub fn repairs(trace: &LlmTrace) -> usize {
    trace.attempts.len().saturating_sub(1)
}

/// A step as a person reads it: stored indexes count from 0, the pages from 1 (the
/// annotation page's "Step 3 of 5"), so stored step 2 is "step 3" everywhere.
pub fn step_label(step: u32) -> String {
    format!("step {}", u64::from(step) + 1)
}

/// A run id short enough for a label: its first eight characters after any `kind:` prefix
/// (`studio:`, `pipeline:`).
pub fn short_run(run_id: &str) -> &str {
    let id = run_id.rsplit(':').next().unwrap_or(run_id);
    match id.char_indices().nth(8) {
        Some((at, _)) => &id[..at],
        None => id,
    }
}

/// Which captured step a trace is: its run's task (as its variables kept it, shortened),
/// the run's short id and the step, 1-based.
pub fn sample_label(trace: &LlmTrace) -> String {
    let task = trace.params["task"].as_str().map(str::trim).filter(|t| !t.is_empty());
    let run = format!("run {} · {}", short_run(&trace.run_id), step_label(trace.step));
    match task {
        Some(task) if task.chars().count() > 48 => {
            format!("“{}…” · {run}", task.chars().take(47).collect::<String>().trim_end())
        }
        Some(task) => format!("“{task}” · {run}"),
        None => run,
    }
}

/// What the list is narrowed to; empty fields match everything.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceFilter {
    pub prompt: String,
    pub variant: String,
    pub model: String,
    pub run: String,
    pub outcome: Option<Outcome>,
    /// `YYYY-MM-DD` prefix of `startedAt`.
    pub date: String,
}

impl TraceFilter {
    pub fn matches(&self, trace: &LlmTrace) -> bool {
        let has = |field: &str, wanted: &str| {
            wanted.trim().is_empty()
                || text_case::lowercase(field).contains(&text_case::lowercase(wanted.trim()))
        };
        has(&trace.prompt_id, &self.prompt)
            && (self.variant.trim().is_empty() || trace.variant == self.variant.trim())
            && has(&trace.model, &self.model)
            && has(&trace.run_id, &self.run)
            && self.outcome.is_none_or(|o| Outcome::of(trace) == o)
            && trace.started_at.starts_with(self.date.trim())
    }

    /// The matching traces, newest first.
    pub fn apply<'a>(&self, traces: &'a [LlmTrace]) -> Vec<&'a LlmTrace> {
        let mut out: Vec<&LlmTrace> = traces.iter().filter(|t| self.matches(t)).collect();
        lean::sort_by(&mut out, |a, b| b.started_at.cmp(&a.started_at).then(a.id.cmp(&b.id)));
        out
    }
}

/// Repair figures for one prompt or one model.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RepairStats {
    pub calls: usize,
    /// Calls that needed at least one repair.
    pub repaired_calls: usize,
    /// Repairs attempted in all.
    pub repairs: usize,
    pub failed: usize,
}

impl RepairStats {
    fn add(&mut self, trace: &LlmTrace) {
        self.calls += 1;
        let repairs = repairs(trace);
        self.repairs += repairs;
        self.repaired_calls += usize::from(repairs > 0);
        self.failed += usize::from(trace.error.is_some());
    }

    /// Share of calls that needed a repair, 0–1.
    pub fn rate(&self) -> f64 {
        if self.calls == 0 { 0.0 } else { self.repaired_calls as f64 / self.calls as f64 }
    }
}

/// Per prompt and per model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Telemetry {
    pub by_prompt: BTreeMap<String, RepairStats>,
    pub by_model: BTreeMap<String, RepairStats>,
}

pub fn telemetry<'a>(traces: impl IntoIterator<Item = &'a LlmTrace>) -> Telemetry {
    let mut out = Telemetry::default();
    for trace in traces {
        out.by_prompt.entry(trace.prompt_id.clone()).or_default().add(trace);
        out.by_model.entry(trace.model.clone()).or_default().add(trace);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use run_records::Attempt;
    use serde_json::json;

    fn trace(id: &str, prompt: &str, model: &str, answers: usize, failed: bool) -> LlmTrace {
        let attempt = Attempt {
            model: model.into(),
            raw: "{}".into(),
            problems: vec![],
            usage: Default::default(),
        };
        let mut value = json!({
            "id": id, "runId": "r1", "step": 1, "role": "navigator", "promptId": prompt,
            "variant": "A", "promptHash": "h", "revisionHash": "r", "params": {},
            "redacted": [], "provider": "OpenAi", "model": model,
            "usage": {"input_tokens": 1, "output_tokens": 1}, "cost": 0.0,
            "startedAt": format!("2026-11-2{}T10:00:00.000Z", id.len()), "durationMs": 5.0,
            "attempts": [], "error": null,
            "chars": {"system": 1, "state": 0, "history": 0, "total": 1}
        });
        if failed {
            value["error"] = json!("repairs did not fix it");
        }
        let mut trace: LlmTrace = serde_json::from_value(value).unwrap();
        trace.attempts = vec![attempt; answers];
        trace
    }

    #[test]
    fn filters_narrow_by_each_field_and_list_newest_first() {
        let traces = vec![
            trace("a", "navigator", "gpt-test", 1, false),
            trace("bb", "planner", "claude", 2, false),
            trace("ccc", "navigator", "claude", 3, true),
        ];
        let all = TraceFilter::default().apply(&traces);
        assert_eq!(all.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["ccc", "bb", "a"]);
        let filter = TraceFilter { prompt: "nav".into(), ..Default::default() };
        assert_eq!(filter.apply(&traces).len(), 2);
        let filter = TraceFilter { outcome: Some(Outcome::Repaired), ..Default::default() };
        assert_eq!(filter.apply(&traces)[0].id, "bb");
        let filter =
            TraceFilter { model: "CLAUDE".into(), date: "2026-11-23".into(), ..Default::default() };
        assert_eq!(filter.apply(&traces)[0].id, "ccc");
        assert_eq!(Outcome::parse("failed"), Some(Outcome::Failed));
    }

    #[test]
    fn steps_read_from_one_and_a_sample_is_named_by_its_run_and_task() {
        assert_eq!(step_label(0), "step 1");
        assert_eq!(step_label(2), "step 3");
        let mut t = trace("a", "navigator", "m", 1, false);
        t.run_id = "7300bebe-1234-4abc-9def-000000000000".into();
        assert_eq!(sample_label(&t), "run 7300bebe · step 2");
        t.params = json!({"task": "What does the steel kettle cost?"});
        assert_eq!(sample_label(&t), "“What does the steel kettle cost?” · run 7300bebe · step 2");
        t.params = json!({"task": "x".repeat(80)});
        assert!(sample_label(&t).starts_with(&format!("“{}…” · run", "x".repeat(47))));
        assert_eq!(short_run("pipeline:0f1e2d3c-aaaa"), "0f1e2d3c");
        assert_eq!(short_run("r1"), "r1");
    }

    #[test]
    fn telemetry_counts_repairs_and_rates_per_prompt_and_model() {
        let traces = [
            trace("a", "navigator", "gpt-test", 1, false),
            trace("b", "navigator", "gpt-test", 3, false),
            trace("c", "planner", "gpt-test", 2, true),
        ];
        let t = telemetry(&traces);
        let nav = t.by_prompt["navigator"];
        assert_eq!((nav.calls, nav.repaired_calls, nav.repairs, nav.failed), (2, 1, 2, 0));
        assert!((nav.rate() - 0.5).abs() < 1e-9);
        let model = t.by_model["gpt-test"];
        assert_eq!((model.calls, model.repairs, model.failed), (3, 3, 1));
    }
}
