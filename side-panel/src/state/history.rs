//! The History view: the conversations the worker has stored, newest first. A row can be
//! reopened (the chat then shows it, and a message continues it) or deleted after a
//! confirm. Deleting removes the chat history only; the captured runs stay for annotators.

use protocol::agent::SessionSummary;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    /// The list last received; kept on screen while a fresh one loads.
    pub sessions: Option<Vec<SessionSummary>>,
    /// The `list_sessions` awaiting its answer.
    pub loading: Option<u32>,
    /// The row whose delete button asks for a confirm.
    pub confirming: Option<String>,
    /// The `delete_session` under way, and its session.
    pub deleting: Option<(u32, String)>,
    /// The `open_session` under way, and its session.
    pub opening: Option<(u32, String)>,
    /// Why the last request failed.
    pub error: Option<String>,
}

impl History {
    pub fn load(&mut self, id: u32) {
        self.loading = Some(id);
        self.error = None;
    }

    pub fn is_busy(&self) -> bool {
        self.deleting.is_some() || self.opening.is_some()
    }

    /// A list arrived. For a delete, returns the deleted session.
    pub fn listed(&mut self, id: u32, sessions: Vec<SessionSummary>) -> Option<String> {
        let deleted = match &self.deleting {
            Some((asked, session)) if *asked == id => Some(session.clone()),
            _ if self.loading == Some(id) => None,
            _ => return None,
        };
        if self.loading == Some(id) {
            self.loading = None;
        }
        if deleted.is_some() {
            self.deleting = None;
        }
        self.sessions = Some(sessions);
        deleted
    }

    /// Whether `id` is a request of this view; if so, its failure is shown.
    pub fn failed(&mut self, id: u32, message: &str) -> bool {
        if self.loading == Some(id) {
            self.loading = None;
            self.error = Some(format!("Could not list the conversations: {message}"));
        } else if self.deleting.as_ref().is_some_and(|(asked, _)| *asked == id) {
            self.deleting = None;
            self.error = Some(format!("Not deleted: {message}"));
        } else if self.opening.as_ref().is_some_and(|(asked, _)| *asked == id) {
            self.opening = None;
            self.error = Some(format!("Could not open it: {message}"));
        } else {
            return false;
        }
        true
    }

    /// The `open_session` `id` was answered.
    pub fn opened(&mut self, id: u32) -> bool {
        if self.opening.as_ref().is_some_and(|(asked, _)| *asked == id) {
            self.opening = None;
            return true;
        }
        false
    }

    /// The port closed: nothing in flight will be answered.
    pub fn interrupted(&mut self, message: &str) {
        if self.loading.take().is_some() || self.deleting.take().is_some() {
            self.error = Some(message.to_owned());
        }
        if self.opening.take().is_some() {
            self.error = Some(message.to_owned());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn session(id: &str, status: protocol::agent::SessionStatus) -> SessionSummary {
        SessionSummary {
            session_id: id.into(),
            title: format!("Task of {id}"),
            task: format!("Task of {id}"),
            status,
            panel_tab: None,
            updated_at: "2025-01-02T03:04:05.000Z".into(),
            runs: 1,
        }
    }

    #[test]
    fn a_stale_list_is_ignored_and_a_deletes_list_names_the_deleted_session() {
        let mut history = History::default();
        history.load(4);
        assert_eq!(
            history.listed(3, vec![session("old", protocol::agent::SessionStatus::Done)]),
            None
        );
        assert_eq!(history.sessions, None, "not the list asked for");
        assert_eq!(
            history.listed(
                4,
                vec![
                    session("a", protocol::agent::SessionStatus::Done),
                    session("b", protocol::agent::SessionStatus::Done)
                ]
            ),
            None
        );
        assert_eq!(history.sessions.as_ref().map(Vec::len), Some(2));
        assert_eq!(history.loading, None);

        history.deleting = Some((5, "b".into()));
        assert!(history.is_busy());
        assert_eq!(
            history.listed(5, vec![session("a", protocol::agent::SessionStatus::Done)]),
            Some("b".into())
        );
        assert_eq!(history.sessions.as_ref().map(Vec::len), Some(1));
        assert!(!history.is_busy());
    }

    #[test]
    fn failures_say_what_did_not_happen() {
        let mut history = History { deleting: Some((2, "s".into())), ..History::default() };
        assert!(!history.failed(9, "other"));
        assert!(history.failed(2, "It is running."));
        assert_eq!(history.error.as_deref(), Some("Not deleted: It is running."));
        history.opening = Some((3, "s".into()));
        history.interrupted("Lost.");
        assert_eq!(history.opening, None);
        assert_eq!(history.error.as_deref(), Some("Lost."));
    }
}
