//! Recording a user's own task (seed 004 §Record): what the panel asks and what the worker
//! reports while a tab is being recorded. The steps themselves are the engine's
//! `workflow::recording` types, stored in IndexedDB; only the status crosses the port.

use serde::Serialize;

use crate::TabId;

/// What the person chose in the Ctrl+I offer (or that it was opened).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordingNote {
    /// Ctrl+I pressed in the panel: capture pauses until Extract, Details or Cancel.
    Open,
    /// Something to read off the page here: a query and, optionally, what it may be.
    Extract {
        query: String,
        #[serde(default)]
        candidates: Vec<String>,
    },
    /// A free-form note for the next step.
    Details { text: String },
    /// Closes the offer; recording resumes.
    Cancel,
}

impl RecordingNote {
    /// Candidate values as a person types them: one per line or separated by commas.
    pub fn split_candidates(text: &str) -> Vec<String> {
        text.split([',', '\n'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// The longest name a recording takes, in characters.
pub const MAX_RECORDING_NAME: usize = 200;

/// A recording's name as a person typed it, trimmed, or why it cannot be one.
pub fn recording_name(typed: &str) -> Result<String, String> {
    let name = typed.trim();
    match name.chars().count() {
        0 => Err("Say what the recording does, for example “Order a pizza”.".into()),
        n if n > MAX_RECORDING_NAME => {
            Err(format!("Keep the name within {MAX_RECORDING_NAME} characters."))
        }
        _ => Ok(name.to_owned()),
    }
}

/// Where the recording stands; broadcast to every page on each change.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct RecordingStatus {
    pub recording_id: String,
    pub tab_id: TabId,
    /// ISO 8601.
    pub started_at: String,
    /// Events captured so far (typing counts each input; the stored steps fold them).
    pub events: u32,
    /// Screenshots taken so far (one at the start, then one each time the page settled).
    #[serde(default)]
    pub screenshots: u32,
    /// Everything reported so far is stored and the screen after it captured.
    #[serde(default)]
    pub settled: bool,
    /// The Ctrl+I offer is open: page events are not captured until it closes.
    pub offer_open: bool,
    /// Set once stopped: how many steps the recording has.
    #[serde(default)]
    pub steps: Option<u32>,
    /// The last thing that went wrong, for a person (capture goes on when it can).
    #[serde(default)]
    pub error: Option<String>,
    /// Once stopped: the recording's name (its first page's title until a person names it).
    #[serde(default)]
    pub name: String,
}

impl RecordingStatus {
    pub fn is_stopped(&self) -> bool {
        self.steps.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_trimmed_and_never_empty_or_too_long() {
        assert_eq!(recording_name("  Order a pizza ").unwrap(), "Order a pizza");
        assert!(recording_name("   ").is_err());
        assert!(recording_name(&"x".repeat(MAX_RECORDING_NAME + 1)).is_err());
    }

    #[test]
    fn candidates_split_on_commas_and_lines() {
        assert_eq!(
            RecordingNote::split_candidates("€24.50, €32.00\n\n €89.00 ,"),
            ["€24.50", "€32.00", "€89.00"]
        );
        assert!(RecordingNote::split_candidates(" , ").is_empty());
    }

    #[test]
    fn notes_read_as_tagged_json() {
        let note: RecordingNote =
            serde_json::from_str(r#"{"kind":"extract","query":"the price"}"#).unwrap();
        assert_eq!(note, RecordingNote::Extract { query: "the price".into(), candidates: vec![] });
    }
}
