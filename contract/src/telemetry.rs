//! A run's telemetry (seed `001_…` §7): what the agents decided and why, the pauses, the
//! questions and the steering applied, and what each role spent. It belongs to the run
//! record, so it outlives the conversation and travels with exports and sync.

use serde::Serialize;

/// Entries kept per run; the oldest go first (a run that long is rare, and its counts stay).
pub const MAX_ENTRIES: usize = 400;

#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Telemetry {
    /// Oldest first.
    #[serde(default)]
    pub log: Vec<LogEntry>,
    #[serde(default)]
    pub pauses: u32,
    #[serde(default)]
    pub resumes: u32,
    #[serde(default)]
    pub thinking_calls: u32,
    /// Per role (`planner`, `navigator`, `thinking`, `repair`): every model call's usage,
    /// failed attempts included.
    #[serde(default)]
    pub spend: lean::StrMap<RoleSpend>,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// Milliseconds since the epoch.
    pub at: f64,
    /// The step it happened at (0-based: before the step with this index).
    pub step: u32,
    pub kind: LogKind,
    pub message: String,
}

/// What a log entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// A ThinkingAgent call and its decision, with why it was called.
    Thinking,
    /// The Planner or Navigator said it needs the user.
    Asks,
    /// A question to the user (the task paused for it).
    UserInput,
    Pause,
    Resume,
    /// The user's steering or answer, applied.
    FollowUp,
    Failure,
}

impl LogKind {
    pub fn label(self) -> &'static str {
        match self {
            LogKind::Thinking => "decision",
            LogKind::Asks => "needs the user",
            LogKind::UserInput => "question",
            LogKind::Pause => "pause",
            LogKind::Resume => "resume",
            LogKind::FollowUp => "steering",
            LogKind::Failure => "failure",
        }
    }
}

/// What one role's model calls cost.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleSpend {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// USD, from the price table; 0 when the model has no price.
    pub cost: f64,
}

impl Telemetry {
    /// Nothing logged or spent: a run captured before telemetry, or not yet started.
    pub fn is_empty(&self) -> bool {
        self.log.is_empty() && self.spend.is_empty() && self.pauses == 0 && self.resumes == 0
    }

    pub fn push(&mut self, entry: LogEntry) {
        self.log.push(entry);
        if self.log.len() > MAX_ENTRIES {
            self.log.drain(..self.log.len() - MAX_ENTRIES);
        }
    }

    pub fn total(&self) -> RoleSpend {
        self.spend.values().fold(RoleSpend::default(), |sum, role| RoleSpend {
            calls: sum.calls + role.calls,
            input_tokens: sum.input_tokens + role.input_tokens,
            output_tokens: sum.output_tokens + role.output_tokens,
            cost: sum.cost + role.cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_bounded_and_the_total_adds_every_role() {
        let mut telemetry = Telemetry::default();
        for i in 0..(MAX_ENTRIES + 10) {
            let message = format!("entry {i}");
            telemetry.push(LogEntry { at: 0.0, step: 0, kind: LogKind::Thinking, message });
        }
        assert_eq!(telemetry.log.len(), MAX_ENTRIES);
        assert_eq!(telemetry.log[0].message, "entry 10");
        telemetry.spend.insert(
            "planner".into(),
            RoleSpend { calls: 1, input_tokens: 10, ..Default::default() },
        );
        telemetry.spend.insert(
            "thinking".into(),
            RoleSpend { calls: 2, input_tokens: 5, ..Default::default() },
        );
        assert_eq!(telemetry.total().calls, 3);
        assert_eq!(telemetry.total().input_tokens, 15);
        let json = serde_json::to_value(&telemetry).unwrap();
        assert_eq!(json["log"][0]["kind"], "thinking");
        assert!(json["thinkingCalls"].is_number());
    }
}
