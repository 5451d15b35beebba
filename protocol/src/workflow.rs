//! Workflows on the wire: reflecting a recording into a workflow and replaying one, and
//! the progress the worker broadcasts for both (the Workflows page and the side panel show
//! it). Workflows, recordings and their versions themselves are read and written by the
//! pages in IndexedDB; only what needs the worker's models or tabs goes over the port.

use std::collections::BTreeMap;

use serde::Serialize;

/// What a replay control request asks of the replay under way (or paused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayControl {
    Pause,
    Resume,
    Cancel,
}

/// Where a reflection stands.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum ReflectStage {
    /// Pass A on step `step` (0-based) of `of`.
    Step { step: u32, of: u32 },
    /// Pass B over every step.
    Task,
    /// Saved as version 1 of `workflow_id`.
    Done { workflow_id: String },
    /// Stopped; `why` says in a sentence which step and why, `details` what the model's
    /// answer got wrong. Retrying keeps pass-A results.
    Failed {
        why: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ReflectProgress {
    pub recording_id: String,
    #[serde(flatten)]
    pub stage: ReflectStage,
}

/// A replay as the pages show it.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ReplayProgress {
    /// The replay's run id (its `AgentRun` on the annotation page).
    pub run_id: String,
    pub workflow_id: String,
    pub version: u32,
    pub workflow_name: String,
    pub tab_id: crate::TabId,
    /// The subtask under way (0-based) and how many there are.
    pub subtask: u32,
    pub subtasks: u32,
    /// Steps captured so far.
    pub step: u32,
    pub model_calls: u32,
    /// Model calls the fast path made unnecessary.
    pub calls_saved: u32,
    /// Off when the person turned it off for this replay: every step asks the model.
    #[serde(default = "crate::yes")]
    pub fast_path: bool,
    /// Running, paused, cancelled, done or failed (as those words on the wire).
    pub status: crate::jobs::JobStatus,
    /// Why it failed or paused, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Extract variable → value.
    pub extracts: BTreeMap<String, String>,
    /// The model's question, while the replay waits for the user's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

impl ReplayProgress {
    pub fn is_live(&self) -> bool {
        self.status.is_live()
    }
}

/// A workflow's latest version as the side panel lists it, with what its replay form asks.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct WorkflowSummary {
    pub id: String,
    pub version: u32,
    pub name: String,
    pub params: Vec<ParamSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ParamSummary {
    pub name: String,
    pub description: String,
    /// Prefilled in the form; empty for a secret.
    pub example: String,
    pub secret: bool,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{PanelRequest, WorkerEvent};

    #[test]
    fn workflow_requests_and_events_read_like_the_rust_types() {
        let wire = json!({"type": "start_replay", "id": 3, "workflow_id": "wf", "version": 2,
            "tab_id": 7, "params": {"query": "coffee"}});
        let request: PanelRequest = serde_json::from_value(wire).unwrap();
        assert_eq!(request.id(), 3);
        assert!(matches!(&request, PanelRequest::StartReplay { fast_path: true, .. }));
        let control: PanelRequest = serde_json::from_value(
            json!({"type": "replay_control", "id": 4, "run_id": "r", "action": "pause"}),
        )
        .unwrap();
        assert_eq!(
            control,
            PanelRequest::ReplayControl { id: 4, run_id: "r".into(), action: ReplayControl::Pause }
        );
        let event = WorkerEvent::Reflection {
            progress: ReflectProgress {
                recording_id: "rec".into(),
                stage: ReflectStage::Step { step: 1, of: 4 },
            },
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "reflection", "progress": {"recording_id": "rec", "stage": "step",
                "step": 1, "of": 4}})
        );
    }
}

/// What the Workflows page reads of the worker's events, each written as its `WorkerEvent`
/// namesake; every other event is `Other`, so the page compiles no reader for the rest of
/// the protocol. `wire_tests` holds the two alike.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkflowsEvent {
    Hello {
        version: String,
    },
    Failed {
        id: u32,
        message: String,
    },
    Done {
        id: u32,
    },
    Reflection {
        progress: ReflectProgress,
    },
    Replay {
        #[serde(default)]
        id: Option<u32>,
        replay: Option<Box<ReplayProgress>>,
    },
    Tabs {
        id: u32,
        tabs: Vec<crate::TabInfo>,
    },
    #[serde(other)]
    Other,
}

/// What the Workflows page asks of the worker, each written as its `PanelRequest` namesake,
/// so the page compiles a writer for these requests only; `wire_tests` holds the two alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkflowsRequest {
    ListTabs {
        id: u32,
    },
    StartReplay {
        id: u32,
        workflow_id: String,
        version: u32,
        tab_id: crate::TabId,
        params: BTreeMap<String, String>,
        fast_path: bool,
    },
    CurrentReplay {
        id: u32,
    },
    ReplayControl {
        id: u32,
        run_id: String,
        action: ReplayControl,
    },
    ReplayMessage {
        id: u32,
        run_id: String,
        text: String,
    },
    NameRecording {
        id: u32,
        recording_id: String,
        name: String,
    },
    ReflectRecording {
        id: u32,
        recording_id: String,
    },
    WorkflowSaved {
        id: u32,
        workflow_id: String,
    },
}

impl WorkflowsRequest {
    /// The id its answer will carry.
    pub fn id(&self) -> u32 {
        match self {
            WorkflowsRequest::ListTabs { id }
            | WorkflowsRequest::StartReplay { id, .. }
            | WorkflowsRequest::CurrentReplay { id }
            | WorkflowsRequest::ReplayControl { id, .. }
            | WorkflowsRequest::ReplayMessage { id, .. }
            | WorkflowsRequest::NameRecording { id, .. }
            | WorkflowsRequest::ReflectRecording { id, .. }
            | WorkflowsRequest::WorkflowSaved { id, .. } => *id,
        }
    }
}
