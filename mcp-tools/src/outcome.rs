//! What a job's tool call returns: `run_task`, `answer`, `replay_workflow`, a pipeline run
//! and `job_status` all answer with one [`JobOutcome`], as structured content and as the
//! same said in a sentence.

use serde::Serialize;
use serde_json::Value;

use crate::bridge::{Content, FromExtension};

/// Where a job stands, as a client reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Running,
    /// Paused without a question (the person paused it, or a restart did).
    Paused,
    /// It asked a question: `answer` resumes it.
    Asking,
    Done,
    Failed,
    Stopped,
}

impl Status {
    /// Whether a waiting call returns now.
    pub fn settled(self) -> bool {
        !matches!(self, Status::Running)
    }
}

/// A job's state as a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct JobOutcome {
    pub job_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub status: Status,
    /// The final answer (a task's), or the output (a replay's extracts, a pipeline's), as
    /// text when it is text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Why it failed or paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl JobOutcome {
    pub fn new(job_id: impl Into<String>, status: Status) -> JobOutcome {
        JobOutcome {
            job_id: job_id.into(),
            run_id: None,
            session_id: None,
            status,
            answer: None,
            question: None,
            why: None,
        }
    }

    /// The same in a sentence, for a client that reads only text.
    pub fn sentence(&self) -> String {
        let job = &self.job_id;
        let answer = || match &self.answer {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => String::new(),
        };
        let why = || self.why.as_deref().map(|w| format!(": {w}")).unwrap_or_default();
        match self.status {
            Status::Running => format!("Job {job} is running."),
            Status::Paused => format!("Job {job} is paused{}.", why().trim_end_matches('.')),
            Status::Asking => format!(
                "Job {job} asks: {} Reply with the answer tool and job_id {job}.",
                self.question.as_deref().unwrap_or("(no question text)")
            ),
            Status::Done if self.answer.is_some() => format!("Job {job} is done. {}", answer()),
            Status::Done => format!("Job {job} is done."),
            Status::Failed => format!("Job {job} failed{}", end(why())),
            Status::Stopped => format!("Job {job} was stopped."),
        }
    }

    /// The tool's result for request `id`; a failed job is a result marked as an error.
    pub fn result(&self, id: u64) -> FromExtension {
        FromExtension::Result {
            id,
            content: vec![Content::Text { text: self.sentence() }],
            structured: serde_json::to_value(self).ok(),
            is_error: self.status == Status::Failed,
        }
    }
}

/// `why` (": …" or nothing) ending in a full stop.
fn end(why: String) -> String {
    if why.ends_with('.') { why } else { format!("{why}.") }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_done_task_says_its_answer_in_text_and_in_structure() {
        let mut outcome = JobOutcome::new("s1", Status::Done);
        outcome.run_id = Some("r1".into());
        outcome.session_id = Some("s1".into());
        outcome.answer = Some(json!("The kettle costs £25."));
        let FromExtension::Result { id, content, structured, is_error } = outcome.result(9) else {
            panic!("a result")
        };
        assert_eq!((id, is_error), (9, false));
        assert_eq!(
            content,
            vec![Content::Text { text: "Job s1 is done. The kettle costs £25.".into() }]
        );
        assert_eq!(
            structured.unwrap(),
            json!({"job_id": "s1", "run_id": "r1", "session_id": "s1", "status": "done",
                "answer": "The kettle costs £25."})
        );
    }

    #[test]
    fn a_question_tells_the_client_how_to_answer() {
        let mut outcome = JobOutcome::new("s1", Status::Asking);
        outcome.question = Some("Which colour?".into());
        assert_eq!(
            outcome.sentence(),
            "Job s1 asks: Which colour? Reply with the answer tool and job_id s1."
        );
        assert_eq!(serde_json::to_value(&outcome).unwrap()["status"], "asking");
    }

    #[test]
    fn a_failure_is_an_error_result_that_says_why() {
        let mut outcome = JobOutcome::new("s1", Status::Failed);
        assert_eq!(outcome.sentence(), "Job s1 failed.");
        outcome.why = Some("The tab was closed".into());
        assert_eq!(outcome.sentence(), "Job s1 failed: The tab was closed.");
        assert!(matches!(outcome.result(1), FromExtension::Result { is_error: true, .. }));
        let mut output = JobOutcome::new("r", Status::Done);
        output.answer = Some(json!({"price": 25}));
        assert_eq!(output.sentence(), "Job r is done. {\"price\":25}");
    }
}
