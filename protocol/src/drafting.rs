//! The annotation page's AI draft of a step's three thoughts (seed `000_…` §7.G), asked of the
//! worker, which holds the settings and keys and makes the model call. The page sends what
//! the step shows; the worker answers with a draft or with why there is none.

use serde::Serialize;

/// One captured step as the draft prompt reads it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct DraftInput {
    /// The run the trace is filed under, and the step's index in it.
    pub run_id: String,
    pub step_index: u32,
    pub task: String,
    pub step_count: u32,
    pub url: String,
    pub title: String,
    /// The step's action in words ("click on 'Search'").
    pub action: String,
    /// `ok`, `failed` or `cancelled`, and what the action reported.
    pub outcome: String,
    /// The previous step's action in words; empty on the first step.
    #[serde(default)]
    pub previous_action: String,
    /// The page state the model saw at the step, when a trace kept it; else empty.
    #[serde(default)]
    pub page_state: String,
    /// The step's screenshot, base64 JPEG, when it has one.
    #[serde(default)]
    pub screenshot: Option<String>,
}

/// The three drafted thoughts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct DraftedThoughts {
    pub thought1: String,
    pub thought2: String,
    pub thought3: String,
}

/// The annotation page's half of the port's wire: the one request it sends, as
/// `PanelRequest::DraftThoughts` is written, so the page compiles no other request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DraftRequest {
    DraftThoughts { id: u32, input: Box<DraftInput> },
}

/// What the annotation page reads of the worker's events: a draft's answer, as
/// `WorkerEvent::ThoughtsDrafted` is written; every other event is `Other`.
#[derive(Debug, Clone, PartialEq, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DraftEvent {
    ThoughtsDrafted {
        id: u32,
        run_id: String,
        step_index: u32,
        result: Result<DraftedThoughts, String>,
    },
    #[serde(other)]
    Other,
}

#[cfg(test)]
mod wire_tests {
    use super::*;
    use crate::{PanelRequest, WorkerEvent};

    #[test]
    fn the_pages_narrow_pair_reads_and_writes_the_ports_wire() {
        let input =
            Box::new(DraftInput { run_id: "r".into(), step_index: 2, ..DraftInput::default() });
        let narrow =
            serde_json::to_value(DraftRequest::DraftThoughts { id: 7, input: input.clone() })
                .unwrap();
        // As the worker reads it: the full enum has no writer for this variant.
        let read: PanelRequest = serde_json::from_value(narrow).unwrap();
        assert_eq!(read, PanelRequest::DraftThoughts { id: 7, input });

        let drafted = DraftedThoughts { thought1: "a".into(), ..DraftedThoughts::default() };
        let event = WorkerEvent::ThoughtsDrafted {
            id: 7,
            run_id: "r".into(),
            step_index: 2,
            result: Ok(drafted.clone()),
        };
        let read: DraftEvent =
            serde_json::from_value(serde_json::to_value(event).unwrap()).unwrap();
        assert_eq!(
            read,
            DraftEvent::ThoughtsDrafted {
                id: 7,
                run_id: "r".into(),
                step_index: 2,
                result: Ok(drafted)
            }
        );
        let other: DraftEvent =
            serde_json::from_value(serde_json::to_value(WorkerEvent::Done { id: 3 }).unwrap())
                .unwrap();
        assert_eq!(other, DraftEvent::Other);
    }
}
