//! The loop and stagnation detector: the same action on the same element again and again,
//! the same page with nothing changing, or a rising error rate. When it fires the
//! ThinkingAgent arbitrates (the anchor has no such check and loops until max steps).

use std::collections::VecDeque;

use serde::Serialize;

const WINDOW: usize = 6;
/// Identical actions in a row that count as a loop.
const REPEATS: usize = 3;
/// Observations of an unchanged page (same URL, same content) that count as stagnation.
const STILL_PAGES: usize = 4;
/// Failed actions among the last [`WINDOW`] that count as a rising error rate.
const FAILURES: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize, Default)]
pub struct LoopDetector {
    /// (action as JSON, succeeded), newest last.
    actions: VecDeque<(String, bool)>,
    /// (URL, page hash), newest last.
    pages: VecDeque<(String, String)>,
}

impl LoopDetector {
    pub fn record_action(&mut self, signature: &str, ok: bool) {
        self.actions.push_back((signature.to_owned(), ok));
        if self.actions.len() > WINDOW {
            self.actions.pop_front();
        }
    }

    pub fn record_page(&mut self, url: &str, hash: &str) {
        self.pages.push_back((url.to_owned(), hash.to_owned()));
        if self.pages.len() > WINDOW {
            self.pages.pop_front();
        }
    }

    /// Why the agent looks stuck, if it does.
    pub fn check(&self) -> Option<String> {
        let recent: Vec<&(String, bool)> = self.actions.iter().rev().take(REPEATS).collect();
        if recent.len() == REPEATS && recent.iter().all(|(a, _)| *a == recent[0].0) {
            return Some(format!(
                "the same action was repeated {REPEATS} times in a row: {}",
                recent[0].0
            ));
        }
        let still: Vec<&(String, String)> = self.pages.iter().rev().take(STILL_PAGES).collect();
        if still.len() == STILL_PAGES && still.iter().all(|p| *p == still[0]) {
            return Some(format!(
                "the page ({}) has not changed for {STILL_PAGES} steps",
                still[0].0
            ));
        }
        let failed = self.actions.iter().filter(|(_, ok)| !ok).count();
        if failed >= FAILURES {
            return Some(format!("{failed} of the last {} actions failed", self.actions.len()));
        }
        None
    }

    /// Forget the window, so one arbitration is not followed by another for the same cause.
    pub fn reset(&mut self) {
        self.actions.clear();
        self.pages.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_click_three_times_is_a_loop() {
        let mut detector = LoopDetector::default();
        for _ in 0..2 {
            detector.record_action(r#"{"action":"click","id":4}"#, true);
        }
        assert_eq!(detector.check(), None);
        detector.record_action(r#"{"action":"click","id":4}"#, true);
        assert!(detector.check().unwrap().contains("repeated 3 times"));
        detector.reset();
        assert_eq!(detector.check(), None);
    }

    #[test]
    fn an_unchanged_page_is_stagnation_but_a_changing_one_is_not() {
        let mut detector = LoopDetector::default();
        for i in 0..4 {
            detector.record_page("http://x/a", &format!("h{i}"));
        }
        assert_eq!(detector.check(), None);
        for _ in 0..4 {
            detector.record_page("http://x/a", "same");
        }
        assert!(detector.check().unwrap().contains("has not changed for 4 steps"));
    }

    #[test]
    fn a_rising_error_rate_fires() {
        let mut detector = LoopDetector::default();
        for i in 0..6 {
            detector.record_action(&format!("a{i}"), i < 2);
        }
        assert!(detector.check().unwrap().contains("4 of the last 6 actions failed"));
    }
}
