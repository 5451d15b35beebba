//! A comparison cell read against its baseline: what changed in outcome, repairs, tokens,
//! cost and latency, and whether the answer (the action, for the Navigator) is another.

use protocol::studio::StudioRunResult;
use serde_json::Value;

/// How one cell differs from the baseline's cell on the same sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// `Some(valid)` when validity differs from the baseline's.
    pub validity: Option<bool>,
    pub repairs: i64,
    pub tokens: i64,
    pub cost: f64,
    pub latency_ms: f64,
    /// What the answers are compared by: "action" when they have one, else "answer".
    pub compared: &'static str,
    /// Both valid and the answers (actions) differ.
    pub answer_differs: bool,
}

/// The part of an answer a reader compares: the Navigator's `actions` (or an `action`),
/// else the whole answer.
fn decision(output: &Value) -> (&'static str, &Value) {
    match (output.get("actions"), output.get("action")) {
        (Some(actions), _) => ("action", actions),
        (None, Some(action)) => ("action", action),
        (None, None) => ("answer", output),
    }
}

fn repairs(result: &StudioRunResult) -> i64 {
    result.attempts.len().saturating_sub(1) as i64
}

fn tokens(result: &StudioRunResult) -> i64 {
    (result.input_tokens + result.output_tokens) as i64
}

pub fn delta(baseline: &StudioRunResult, cell: &StudioRunResult) -> Delta {
    let valid = cell.output.is_some();
    let (compared, answer_differs) = match (&baseline.output, &cell.output) {
        (Some(base), Some(this)) => {
            let (kind, base) = decision(base);
            let (_, this) = decision(this);
            (kind, base != this)
        }
        (_, Some(this)) => (decision(this).0, false),
        _ => ("answer", false),
    };
    Delta {
        validity: (valid != baseline.output.is_some()).then_some(valid),
        repairs: repairs(cell) - repairs(baseline),
        tokens: tokens(cell) - tokens(baseline),
        cost: cell.cost - baseline.cost,
        latency_ms: cell.latency_ms - baseline.latency_ms,
        compared,
        answer_differs,
    }
}

impl Delta {
    /// The differences as short phrases ("now invalid", "+120 tokens", "−35 ms", "action
    /// differs"), or "same as baseline" when none shows.
    pub fn phrases(&self) -> Vec<String> {
        let signed =
            |n: i64| if n > 0 { format!("+{n}") } else { format!("−{}", n.unsigned_abs()) };
        let mut out = Vec::new();
        match self.validity {
            Some(true) => out.push("now valid".to_owned()),
            Some(false) => out.push("now invalid".to_owned()),
            None => {}
        }
        if self.answer_differs {
            out.push(format!("{} differs", self.compared));
        }
        if self.repairs != 0 {
            out.push(format!("{} repair(s)", signed(self.repairs)));
        }
        if self.tokens != 0 {
            out.push(format!("{} tokens", signed(self.tokens)));
        }
        if self.cost.abs() >= 0.000005 {
            let sign = if self.cost > 0.0 { "+" } else { "−" };
            out.push(format!("{sign}${:.5}", self.cost.abs()));
        }
        let ms = self.latency_ms.round() as i64;
        if ms != 0 {
            out.push(format!("{} ms", signed(ms)));
        }
        if out.is_empty() {
            out.push(format!("same {} and figures as baseline", self.compared));
        } else if self.validity.is_none() && !self.answer_differs {
            out.insert(0, format!("same {}", self.compared));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::studio::StudioAttempt;
    use serde_json::json;

    fn result(output: Option<Value>, answers: usize, tokens: u64, ms: f64) -> StudioRunResult {
        let attempt = StudioAttempt {
            model: "m".into(),
            raw: String::new(),
            problems: vec![],
            output: None,
            violations: vec![],
            input_tokens: 0,
            output_tokens: 0,
        };
        StudioRunResult {
            run_id: "studio:1".into(),
            trace_id: "t".into(),
            prompt_id: "navigator".into(),
            variant: "A".into(),
            prompt_hash: String::new(),
            revision_hash: String::new(),
            model: "m".into(),
            exchanges: vec![],
            attempts: vec![attempt; answers],
            error: output.is_none().then(|| "repairs did not fix it".to_owned()),
            output,
            input_tokens: tokens,
            output_tokens: 10,
            cost: tokens as f64 * 0.000001,
            latency_ms: ms,
        }
    }

    fn act(action: &str) -> Option<Value> {
        Some(json!({"current_state": {"memory": "x"}, "actions": [{"action": action}]}))
    }

    #[test]
    fn a_cell_says_how_it_differs_from_its_baseline() {
        let base = result(act("done"), 1, 100, 200.0);
        let other = result(act("click"), 2, 150, 260.0);
        let d = delta(&base, &other);
        assert_eq!((d.validity, d.repairs, d.tokens, d.answer_differs), (None, 1, 50, true));
        assert_eq!(
            d.phrases(),
            ["action differs", "+1 repair(s)", "+50 tokens", "+$0.00005", "+60 ms"]
        );
        // Another memory but the same actions: the same action.
        let same = result(
            Some(json!({"current_state": {"memory": "y"}, "actions": [{"action": "done"}]})),
            1,
            90,
            150.0,
        );
        assert_eq!(
            delta(&base, &same).phrases(),
            ["same action", "−10 tokens", "−$0.00001", "−50 ms"]
        );
        let failed = result(None, 3, 100, 200.0);
        assert_eq!(delta(&base, &failed).phrases()[0], "now invalid");
        assert_eq!(delta(&failed, &base).phrases()[0], "now valid");
        assert_eq!(delta(&base, &base).phrases(), ["same action and figures as baseline"]);
        let planner = |title: &str| result(Some(json!({"title": title})), 1, 100, 200.0);
        assert_eq!(delta(&planner("a"), &planner("b")).phrases(), ["answer differs"]);
    }
}
