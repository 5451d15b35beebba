//! A recording's name as it is typed and saved: asked at Stop in the side panel, edited on a
//! recording's row in the Workflows page. Both save it with `PanelRequest::NameRecording` and
//! check it with `protocol::recording::recording_name`.

use protocol::recording::recording_name;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordingName {
    pub recording_id: String,
    pub text: String,
    /// The request saving it, while on its way.
    pub saving: Option<u32>,
    pub problem: Option<String>,
}

impl RecordingName {
    pub fn new(recording_id: String, text: String) -> RecordingName {
        RecordingName { recording_id, text, ..RecordingName::default() }
    }

    /// What is typed now; the last problem goes with the old text.
    pub fn edit(&mut self, text: String) {
        self.text = text;
        self.problem = None;
    }

    /// The recording and the name to save, or `None` while a save is on its way or when the
    /// text is no name (the problem then says why). Call [`RecordingName::sending`] with the
    /// request's id.
    pub fn to_save(&mut self) -> Option<(String, String)> {
        if self.saving.is_some() {
            return None;
        }
        match recording_name(&self.text) {
            Ok(name) => Some((self.recording_id.clone(), name)),
            Err(problem) => {
                self.problem = Some(problem);
                None
            }
        }
    }

    pub fn sending(&mut self, id: u32) {
        self.saving = Some(id);
    }

    /// Whether `id` is the request saving it.
    pub fn saved_by(&self, id: u32) -> bool {
        self.saving == Some(id)
    }

    /// The save failed: why, and the name can be saved again.
    pub fn failed(&mut self, message: String) {
        self.saving = None;
        self.problem = Some(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_checked_saved_once_and_a_failure_lets_it_be_saved_again() {
        let mut name = RecordingName::new("rec-1".into(), "  ".into());
        assert_eq!(name.to_save(), None);
        assert!(name.problem.as_deref().unwrap().starts_with("Say what the recording does"));
        name.edit(" Shop home ".into());
        assert_eq!(name.problem, None, "typing clears the problem");
        assert_eq!(name.to_save(), Some(("rec-1".into(), "Shop home".into())));
        name.sending(7);
        assert!(name.saved_by(7) && !name.saved_by(8));
        assert_eq!(name.to_save(), None, "not twice while on its way");
        name.failed("No".into());
        assert_eq!((name.saving, name.problem.as_deref()), (None, Some("No")));
        assert!(name.to_save().is_some());
    }
}
