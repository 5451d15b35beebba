//! Unsaved edits kept in IndexedDB as they are typed, so leaving the run, reloading the tab
//! or a crash loses nothing: the next time the run opens, they come back as unsaved edits.
//! This module decides what a stored draft holds and how it comes back; the effect layer
//! only stores and reads it (`annotation` store, key `draft:<runId>`).

use lean::SortedMap;

use annotation_core::record::{Run, Step};
use serde::Serialize;

/// A run's unsaved edits as stored.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredDraft {
    pub run_id: String,
    /// The edited steps, whole, each with its own index.
    pub steps: Vec<Step>,
    /// The edited run header (tags, subtasks), if edited.
    #[serde(default)]
    pub run: Option<Run>,
    /// The run's version and server version the edits were made on: if either moved since,
    /// someone saved (or sync brought) a newer copy underneath the draft.
    pub base_version: u32,
    #[serde(default)]
    pub base_server_version: Option<i64>,
    /// When it was last written (set by the effect layer).
    #[serde(default)]
    pub saved_at: String,
}

/// What came back from a stored draft, for the banner that says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub saved_at: String,
    /// Step numbers (1-based) with restored edits.
    pub steps: Vec<u32>,
    /// Whether the run was saved (here or elsewhere) after the draft was made.
    pub stale: bool,
}

/// The storage key of `run_id`'s draft.
pub fn key(run_id: &str) -> String {
    format!("draft:{run_id}")
}

/// The draft to store for these edits, or `None` when there is nothing unsaved.
pub fn to_store(
    run: &Run,
    drafts: &SortedMap<usize, Step>,
    run_draft: &Option<Run>,
) -> Option<StoredDraft> {
    if drafts.is_empty() && run_draft.is_none() {
        return None;
    }
    Some(StoredDraft {
        run_id: run.id.clone(),
        steps: drafts.values().cloned().collect(),
        run: run_draft.clone(),
        base_version: run.version,
        base_server_version: run.server_version,
        saved_at: String::new(),
    })
}

/// Puts a stored draft back over the saved steps: each edited step by its index (a step
/// that no longer exists is dropped), and the header. Returns the drafts by position.
pub fn restore(
    run: &Run,
    steps: &[Step],
    stored: StoredDraft,
) -> (SortedMap<usize, Step>, Option<Run>, Option<Restored>) {
    if stored.run_id != run.id {
        return (SortedMap::new(), None, None);
    }
    // Who last edited a step and when is stamped by the save itself: a draft that differs
    // only there was saved already.
    let content = |step: &Step| Step {
        last_edited_by: String::new(),
        last_edited_at: String::new(),
        server_version: None,
        ..step.clone()
    };
    let mut drafts = SortedMap::new();
    for step in stored.steps {
        if let Some(position) = steps.iter().position(|s| s.index == step.index)
            && content(&steps[position]) != content(&step)
        {
            drafts.insert(position, step);
        }
    }
    let run_draft = stored.run.filter(|r| r != run).map(|mut r| {
        // Sync state belongs to the stored copy, never to a draft.
        r.server_version = run.server_version;
        r.version = run.version;
        r
    });
    if drafts.is_empty() && run_draft.is_none() {
        return (drafts, None, None);
    }
    let restored = Restored {
        saved_at: stored.saved_at,
        steps: drafts.values().map(|s| s.index + 1).collect(),
        stale: stored.base_version != run.version
            || stored.base_server_version != run.server_version,
    };
    (drafts, run_draft, Some(restored))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps() -> Vec<Step> {
        (0..3).map(|index| Step { run_id: "r".into(), index, ..Step::default() }).collect()
    }

    #[test]
    fn a_draft_comes_back_by_step_index_and_says_when_the_run_moved_since() {
        let run = Run { id: "r".into(), version: 2, ..Run::default() };
        let saved = steps();
        let mut edited = saved[1].clone();
        edited.thoughts.thought1 = "I typed this before the tab closed.".into();
        let drafts = SortedMap::from([(1, edited.clone())]);
        let stored = to_store(&run, &drafts, &None).expect("something to store");
        assert_eq!(stored.base_version, 2);

        let (back, header, restored) = restore(&run, &saved, stored.clone());
        assert_eq!(back, drafts);
        assert_eq!(header, None);
        let restored = restored.expect("said so");
        assert_eq!((restored.steps.clone(), restored.stale), (vec![2], false));

        let newer = Run { version: 3, ..run.clone() };
        assert!(restore(&newer, &saved, stored.clone()).2.unwrap().stale);
        // A step gone from the run is dropped; a draft equal to the saved step is no draft.
        assert!(restore(&run, &saved[..1], stored.clone()).2.is_none());
        let mut caught_up = saved.clone();
        caught_up[1] = edited;
        caught_up[1].last_edited_by = "ann".into();
        assert!(restore(&run, &caught_up, stored).0.is_empty());
        assert_eq!(to_store(&run, &SortedMap::new(), &None), None);
    }
}
