//! The Record button, its status line and the Ctrl+I offer (seed 004 §Record). The worker
//! records; this decides what the panel asks and shows, and is tested natively.

use page_kit::RecordingName;
use protocol::PanelRequest;
use protocol::recording::{RecordingNote, RecordingStatus};

use super::PanelState;

/// What the panel knows of the recording.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordingView {
    /// As the worker last reported it (a stopped one stays, for the "saved" line).
    pub status: Option<RecordingStatus>,
    /// A request about the recording awaiting its answer.
    pub pending: Option<u32>,
    /// Why the last request failed.
    pub error: Option<String>,
    /// The Ctrl+I offer, while open.
    pub offer: Option<Offer>,
    /// A note that closed the offer is on its way: reports sent before the worker had it
    /// must not open the offer again.
    closing: Option<u32>,
    /// Asked at Stop: what the recording does, prefilled with its first page's title.
    pub naming: Option<RecordingName>,
}

/// What is typed in the offer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Offer {
    pub query: String,
    pub candidates: String,
    pub details: String,
    /// Why Extract could not be saved as typed.
    pub problem: Option<String>,
}

impl Offer {
    /// A field's text, trimmed; when it is empty, `None` and the problem says what to type.
    fn required(&mut self, field: fn(&Offer) -> &String, problem: &str) -> Option<String> {
        let text = field(self).trim().to_owned();
        if text.is_empty() {
            self.problem = Some(problem.to_owned());
            return None;
        }
        Some(text)
    }
}

pub enum RecordAction {
    /// Record, or Stop while recording.
    Toggle,
    /// Ctrl+I in the panel.
    OpenOffer,
    Query(String),
    Candidates(String),
    Details(String),
    SaveExtract,
    SaveDetails,
    CancelOffer,
    /// The name typed at Stop.
    Name(String),
    SaveName,
    /// Keeps the name it has (the reflection may name it for its task later).
    SkipName,
}

impl RecordingView {
    pub fn is_recording(&self) -> bool {
        self.status.as_ref().is_some_and(|s| !s.is_stopped())
    }

    /// The status line: what is recorded, or what was saved.
    pub fn line(&self) -> Option<String> {
        let status = self.status.as_ref()?;
        let events = match status.events {
            1 => "1 event".to_owned(),
            n => format!("{n} events"),
        };
        let steps = |n: u32| if n == 1 { "1 step".to_owned() } else { format!("{n} steps") };
        Some(match status.steps {
            Some(n) if status.name.is_empty() => {
                format!("Recording saved: {} ({events}).", steps(n))
            }
            Some(n) => format!("Recording saved as “{}”: {} ({events}).", status.name, steps(n)),
            None if status.offer_open => format!("Recording paused for Ctrl+I · {events}"),
            None => format!("Recording tab {} · {events}", status.tab_id),
        })
    }

    pub(super) fn on_status(&mut self, id: Option<u32>, status: Option<RecordingStatus>) {
        if id.is_some() && id == self.pending {
            self.pending = None;
            self.error = None;
            // Our Stop: ask what the recording does while the person still remembers.
            if let Some(stopped) = status.as_ref().filter(|s| s.is_stopped()) {
                self.naming =
                    Some(RecordingName::new(stopped.recording_id.clone(), stopped.name.clone()));
            }
        }
        if id.is_some() && id == self.closing {
            self.closing = None;
        }
        let open = status.as_ref().is_some_and(|s| s.offer_open && !s.is_stopped());
        if open && self.offer.is_none() && self.closing.is_none() {
            self.offer = Some(Offer::default());
        }
        if !open && self.closing.is_none() && status.as_ref().is_none_or(|s| s.is_stopped()) {
            self.offer = None;
        }
        self.status = status;
    }

    /// The answer to a request of ours that has no other answer; false when not ours.
    pub(super) fn done(&mut self, id: u32) -> bool {
        if self.naming.as_ref().is_some_and(|n| n.saved_by(id)) {
            self.naming = None;
            return true;
        }
        false
    }

    /// A failure answering one of ours; false when the request was not ours.
    pub(super) fn failed(&mut self, id: u32, message: &str) -> bool {
        if let Some(naming) = self.naming.as_mut().filter(|n| n.saved_by(id)) {
            naming.failed(message.to_owned());
            return true;
        }
        if Some(id) != self.pending && Some(id) != self.closing {
            return false;
        }
        self.pending = self.pending.filter(|p| *p != id);
        self.closing = self.closing.filter(|c| *c != id);
        self.error = Some(message.to_owned());
        true
    }

    pub(super) fn interrupted(&mut self) {
        if let Some(naming) = self.naming.as_mut().filter(|n| n.saving.is_some()) {
            naming.failed("The connection to the agent was interrupted. Try again.".into());
        }
        if self.pending.take().is_some() || self.closing.take().is_some() {
            self.error = Some("The connection to the agent was interrupted. Try again.".into());
        }
    }
}

impl PanelState {
    pub(super) fn record(&mut self, action: RecordAction) {
        match action {
            RecordAction::Toggle => self.toggle_recording(),
            RecordAction::OpenOffer => {
                if self.recording.is_recording() && self.recording.offer.is_none() {
                    self.recording.offer = Some(Offer::default());
                    self.request(|id| PanelRequest::RecordingNote {
                        id,
                        note: RecordingNote::Open,
                    });
                }
            }
            RecordAction::Query(text) => self.edit_offer(|o| o.query = text),
            RecordAction::Candidates(text) => self.edit_offer(|o| o.candidates = text),
            RecordAction::Details(text) => self.edit_offer(|o| o.details = text),
            RecordAction::SaveExtract => {
                let Some(offer) = self.recording.offer.as_mut() else { return };
                let problem = "Say what to extract, for example “the price”.";
                let Some(query) = offer.required(|o| &o.query, problem) else { return };
                let candidates = RecordingNote::split_candidates(&offer.candidates);
                self.close_offer(RecordingNote::Extract { query, candidates });
            }
            RecordAction::SaveDetails => {
                let Some(offer) = self.recording.offer.as_mut() else { return };
                let problem = "Type the note to attach to the next step.";
                let Some(text) = offer.required(|o| &o.details, problem) else { return };
                self.close_offer(RecordingNote::Details { text });
            }
            RecordAction::CancelOffer => {
                if self.recording.offer.is_some() {
                    self.close_offer(RecordingNote::Cancel);
                }
            }
            RecordAction::Name(text) => {
                if let Some(naming) = self.recording.naming.as_mut() {
                    naming.edit(text);
                }
            }
            RecordAction::SaveName => {
                let Some(naming) = self.recording.naming.as_mut() else { return };
                let Some((recording_id, name)) = naming.to_save() else { return };
                let id = self.request(|id| PanelRequest::NameRecording { id, recording_id, name });
                self.recording.naming.as_mut().expect("checked").sending(id);
            }
            RecordAction::SkipName => self.recording.naming = None,
        }
    }

    fn toggle_recording(&mut self) {
        if self.recording.pending.is_some() {
            return;
        }
        if !self.connected() {
            self.recording.error = Some("Connecting to the agent; try again in a moment.".into());
            return;
        }
        self.recording.error = None;
        self.recording.naming = None;
        let id = if self.recording.is_recording() {
            self.recording.offer = None;
            self.request(|id| PanelRequest::StopRecording { id })
        } else {
            let Some(tab_id) = self.tab else {
                self.recording.error = Some("No tab to record.".into());
                return;
            };
            self.request(|id| PanelRequest::StartRecording { id, tab_id })
        };
        self.recording.pending = Some(id);
    }

    fn edit_offer(&mut self, edit: impl FnOnce(&mut Offer)) {
        if let Some(offer) = self.recording.offer.as_mut() {
            edit(offer);
            offer.problem = None;
        }
    }

    fn close_offer(&mut self, note: RecordingNote) {
        self.recording.offer = None;
        let id = self.request(|id| PanelRequest::RecordingNote { id, note });
        self.recording.closing = Some(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PanelAction, WorkerLink};
    use protocol::WorkerEvent;

    fn connected() -> PanelState {
        PanelState {
            tab: Some(7),
            worker: WorkerLink::Connected { version: "1".into() },
            ..PanelState::default()
        }
    }

    fn status(events: u32, offer_open: bool, steps: Option<u32>) -> RecordingStatus {
        RecordingStatus {
            recording_id: "rec-1".into(),
            tab_id: 7,
            started_at: "2026-11-24T20:00:00.000Z".into(),
            events,
            screenshots: 1,
            settled: true,
            offer_open,
            steps,
            error: None,
            name: if steps.is_some() { "Shop home".into() } else { String::new() },
        }
    }

    fn act(state: PanelState, action: PanelAction) -> PanelState {
        state.reduce_owned(action)
    }

    fn report(state: PanelState, id: Option<u32>, s: Option<RecordingStatus>) -> PanelState {
        act(state, PanelAction::Worker(WorkerEvent::Recording { id, status: s }))
    }

    #[test]
    fn record_starts_the_panels_tab_and_stop_ends_it() {
        let state = act(connected(), PanelAction::Record(RecordAction::Toggle));
        let start = state.outbox.last().cloned().unwrap();
        assert_eq!(start, PanelRequest::StartRecording { id: 0, tab_id: 7 });
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        assert_eq!(state.outbox.len(), 1, "one request at a time");
        let state = report(state, Some(0), Some(status(0, false, None)));
        assert!(state.recording.is_recording());
        assert_eq!(state.recording.line().unwrap(), "Recording tab 7 · 0 events");
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        assert_eq!(state.outbox.last(), Some(&PanelRequest::StopRecording { id: 1 }));
        let state = report(state, Some(1), Some(status(9, false, Some(5))));
        assert!(!state.recording.is_recording());
        assert_eq!(
            state.recording.line().unwrap(),
            "Recording saved as “Shop home”: 5 steps (9 events)."
        );
    }

    #[test]
    fn stop_asks_for_a_name_prefilled_with_the_first_page_and_saves_it() {
        let state = report(connected(), None, Some(status(2, false, None)));
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        let state = report(state, Some(0), Some(status(2, false, Some(1))));
        let naming = state.recording.naming.clone().expect("asked at Stop");
        assert_eq!(naming.text, "Shop home");
        let state = act(state, PanelAction::Record(RecordAction::Name("  ".into())));
        let state = act(state, PanelAction::Record(RecordAction::SaveName));
        assert!(state.recording.naming.as_ref().unwrap().problem.is_some(), "a name is needed");
        assert_eq!(state.outbox.len(), 1, "nothing sent");
        let state = act(state, PanelAction::Record(RecordAction::Name("Order socks ".into())));
        let state = act(state, PanelAction::Record(RecordAction::SaveName));
        assert_eq!(
            state.outbox.last(),
            Some(&PanelRequest::NameRecording {
                id: 1,
                recording_id: "rec-1".into(),
                name: "Order socks".into(),
            })
        );
        let state =
            act(state, PanelAction::Worker(WorkerEvent::Failed { id: 1, message: "No".into() }));
        assert_eq!(state.recording.naming.as_ref().unwrap().problem.as_deref(), Some("No"));
        let state = act(state, PanelAction::Record(RecordAction::SaveName));
        let state = act(state, PanelAction::Worker(WorkerEvent::Done { id: 2 }));
        assert!(state.recording.naming.is_none(), "saved");
        // Another page's stop report does not ask this panel.
        let state = report(state, None, Some(status(2, false, Some(1))));
        assert!(state.recording.naming.is_none());
        // Skip keeps the name it has.
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        let state = report(state, Some(3), Some(status(0, false, None)));
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        let state = report(state, Some(4), Some(status(1, false, Some(1))));
        let state = act(state, PanelAction::Record(RecordAction::SkipName));
        assert!(state.recording.naming.is_none());
        assert_eq!(state.outbox.len(), 5, "skipping sends nothing");
    }

    #[test]
    fn ctrl_i_in_the_page_opens_the_offer_and_extract_sends_query_and_candidates() {
        let state = report(connected(), None, Some(status(3, true, None)));
        assert!(state.recording.offer.is_some(), "the page's Ctrl+I opens it");
        let state = act(state, PanelAction::Record(RecordAction::SaveExtract));
        assert!(state.recording.offer.as_ref().unwrap().problem.is_some(), "a query is needed");
        assert!(state.outbox.is_empty());
        let state = act(state, PanelAction::Record(RecordAction::Query(" the price ".into())));
        let state =
            act(state, PanelAction::Record(RecordAction::Candidates("€24.50, €32.00".into())));
        let state = act(state, PanelAction::Record(RecordAction::SaveExtract));
        assert_eq!(
            state.outbox.last(),
            Some(&PanelRequest::RecordingNote {
                id: 0,
                note: RecordingNote::Extract {
                    query: "the price".into(),
                    candidates: vec!["€24.50".into(), "€32.00".into()],
                },
            })
        );
        assert!(state.recording.offer.is_none());
        // A report sent before the worker had the note does not reopen it.
        let state = report(state, None, Some(status(3, true, None)));
        assert!(state.recording.offer.is_none());
        let state = report(state, Some(0), Some(status(4, false, None)));
        assert!(state.recording.offer.is_none());
    }

    #[test]
    fn ctrl_i_in_the_panel_pauses_capture_and_details_or_cancel_resume_it() {
        let state = report(connected(), None, Some(status(1, false, None)));
        let state = act(state, PanelAction::Record(RecordAction::OpenOffer));
        assert_eq!(
            state.outbox.last(),
            Some(&PanelRequest::RecordingNote { id: 0, note: RecordingNote::Open })
        );
        let state = act(state, PanelAction::Record(RecordAction::Details("the blue one".into())));
        let state = act(state, PanelAction::Record(RecordAction::SaveDetails));
        assert_eq!(
            state.outbox.last(),
            Some(&PanelRequest::RecordingNote {
                id: 1,
                note: RecordingNote::Details { text: "the blue one".into() },
            })
        );
        let state = act(state, PanelAction::Record(RecordAction::OpenOffer));
        let state = act(state, PanelAction::Record(RecordAction::CancelOffer));
        assert_eq!(
            state.outbox.last(),
            Some(&PanelRequest::RecordingNote { id: 3, note: RecordingNote::Cancel })
        );
    }

    #[test]
    fn a_failed_start_says_why_and_the_button_works_again() {
        let state = act(connected(), PanelAction::Record(RecordAction::Toggle));
        let state = act(
            state,
            PanelAction::Worker(WorkerEvent::Failed { id: 0, message: "This tab can't".into() }),
        );
        assert_eq!(state.recording.error.as_deref(), Some("This tab can't"));
        let state = act(state, PanelAction::Record(RecordAction::Toggle));
        assert_eq!(state.outbox.len(), 2);
    }
}
