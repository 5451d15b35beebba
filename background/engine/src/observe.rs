//! One observation of a tab per step: snapshot the page through the page agent, render it,
//! and compare it with the previous step's.

use std::cell::RefCell;
use std::collections::HashMap;

use protocol::TabId;
use serde::Serialize;
use serde_json::json;

use crate::Clock;
use crate::cdp::{Cdp, CdpError, Sessions};
use crate::page_agent;
use crate::page_state::{DomComparison, Snapshot};

/// How much the page agent looks at.
#[derive(Debug, Clone, Copy)]
pub struct ObserveOptions {
    /// Extra pixels above and below the viewport to list elements from.
    pub margin_px: f64,
    /// Characters of visible text kept per element.
    pub max_text: u32,
}

impl Default for ObserveOptions {
    fn default() -> Self {
        ObserveOptions { margin_px: 0.0, max_text: 80 }
    }
}

/// Where the time of one observation went, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ObserveTimings {
    /// The page agent's own pass over the DOM.
    pub in_page: f64,
    /// The CDP round trip around it, including the pass and returning the result.
    pub snapshot: f64,
    pub render: f64,
    pub total: f64,
}

pub struct Observation {
    pub snapshot: Snapshot,
    pub text: String,
    /// `None` on the first observation of a tab.
    pub comparison: Option<DomComparison>,
    pub timings: ObserveTimings,
}

/// Remembers each tab's last snapshot, so the next one can mark what is new, and so ids
/// keep rising across documents in the same tab.
#[derive(Default)]
pub struct Observer {
    last: RefCell<HashMap<TabId, Snapshot>>,
}

impl Observer {
    pub async fn observe<C: Cdp>(
        &self,
        sessions: &Sessions<C>,
        clock: &impl Clock,
        tab: TabId,
        options: ObserveOptions,
    ) -> Result<Observation, CdpError> {
        let started = clock.now_ms();
        let (previous_ids, next_id) = match self.last.borrow().get(&tab) {
            Some(last) => (last.elements.iter().map(|e| e.id).collect(), last.next_id),
            None => (Vec::new(), 1),
        };
        let call = format!(
            "alphascout.snapshot({})",
            json!({"margin": options.margin_px, "maxText": options.max_text,
                   "nextId": next_id, "previous": previous_ids})
        );
        let value = page_agent::evaluate(sessions, tab, &call).await?;
        let snapshot: Snapshot = serde_json::from_value(value)
            .map_err(|e| CdpError::Protocol { detail: format!("unreadable page state: {e}") })?;
        let measured = clock.now_ms();
        let previous = self.last.borrow_mut().insert(tab, snapshot.clone());
        let text = snapshot.render(previous.as_ref());
        let comparison = previous.as_ref().map(|p| snapshot.compare(p));
        let done = clock.now_ms();
        let timings = ObserveTimings {
            in_page: snapshot.in_page_ms,
            snapshot: measured - started,
            render: done - measured,
            total: done - started,
        };
        Ok(Observation { snapshot, text, comparison, timings })
    }

    /// Forgets a closed tab.
    pub fn forget(&self, tab: TabId) {
        self.last.borrow_mut().remove(&tab);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use futures::executor::block_on;
    use std::cell::Cell;

    struct Ticks(Cell<f64>);
    impl Clock for Ticks {
        fn now_ms(&self) -> f64 {
            self.0.set(self.0.get() + 1.0);
            self.0.get()
        }
        async fn sleep(&self, ms: f64) {
            self.0.set(self.0.get() + ms);
        }
    }

    fn state(elements: serde_json::Value, next_id: u32) -> Result<serde_json::Value, CdpError> {
        Ok(json!({"result": {"value": {"url": "http://h/", "title": "T", "viewport": [800, 600],
            "elements": elements, "nextId": next_id}}}))
    }

    #[test]
    fn the_second_observation_marks_new_elements_and_compares() {
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {}}))) // injecting the agent
            .answer(
                "Runtime.evaluate",
                state(json!([{"id": 1, "tag": "button", "text": "Open"}]), 2),
            )
            .answer(
                "Runtime.evaluate",
                state(
                    json!([{"id": 1, "tag": "button", "text": "Open"},
                             {"id": 2, "tag": "li", "text": "Menu item"}]),
                    3,
                ),
            );
        let sessions = Sessions::new(&fake);
        let observer = Observer::default();
        let clock = Ticks(Cell::new(0.0));
        let first = block_on(observer.observe(&sessions, &clock, 1, Default::default())).unwrap();
        assert!(first.comparison.is_none());
        assert!(first.text.contains("\n[1]<button>Open\n"));
        let second = block_on(observer.observe(&sessions, &clock, 1, Default::default())).unwrap();
        assert!(second.text.contains("\n+[2]<li>Menu item\n"), "{}", second.text);
        assert_eq!(second.comparison.unwrap().added_elements, ["[2] li \"Menu item\""]);
        assert!(second.timings.total > 0.0);
    }
}
