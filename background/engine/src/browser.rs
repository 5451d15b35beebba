//! The executor's [`Browser`] over CDP: observation, actions and screenshots from the
//! modules below, for one worker's sessions.

use base64::Engine;
use protocol::TabId;
use sha2::{Digest, Sha256};

use crate::Clock;
use crate::actions::{Action, ActionOutcome, Hands, Tabs, WaitLimits};
use crate::cdp::{Cdp, CdpError, Sessions};
use crate::executor::{Browser, BrowserError, PageView};
use crate::firewall::Firewall;
use crate::observe::{ObserveOptions, Observer};
use crate::page_agent;
use crate::screenshot;

/// JPEG quality of the captured step screenshots: readable text at a fraction of PNG size.
const SCREENSHOT_QUALITY: u8 = 60;

/// How long a step waits for its screenshot.
pub const SCREENSHOT_WAIT_MS: f64 = 4000.0;

pub struct CdpBrowser<'a, C, K, T> {
    /// How much of the page the state carries (the text budget comes from settings).
    pub observe: ObserveOptions,
    pub sessions: &'a Sessions<C>,
    pub observer: &'a Observer,
    pub clock: &'a K,
    pub tabs: &'a T,
    pub search_url: &'a str,
    /// Where the agent may go (the run's allow and deny lists).
    pub firewall: Firewall,
}

/// A failed look at the page as the executor takes it. A closed tab is said in the job
/// table's words, so the job ends with the same sentence whether its own step or the
/// table's tab listener notices first.
fn browser_error(error: CdpError) -> BrowserError {
    let fatal = matches!(
        error,
        CdpError::TabClosed | CdpError::NotDebuggable { .. } | CdpError::AlreadyAttached
    );
    let message = match error {
        CdpError::TabClosed => crate::jobs::TAB_CLOSED.to_owned(),
        other => other.to_string(),
    };
    BrowserError { fatal, message }
}

/// Room for the comparison's lists in the Navigator's prompt.
const COMPARISON_CHARS: usize = 3000;

impl<C: Cdp, K: Clock, T: Tabs> CdpBrowser<'_, C, K, T> {
    /// [`Browser::perform`] with waits of its own: a replay that knows what comes next
    /// need not wait for what would not.
    pub async fn perform_within(
        &self,
        tab: TabId,
        action: &Action,
        limits: WaitLimits,
    ) -> ActionOutcome {
        let hands = Hands {
            sessions: self.sessions,
            clock: self.clock,
            tabs: self.tabs,
            search_url: self.search_url,
            limits,
            firewall: &self.firewall,
        };
        let mut outcome = hands.perform(tab, action).await;
        // What the action set off is the action's outcome: a navigation the firewall
        // stopped means it did not do what was meant.
        for (url, why) in self.sessions.take_blocked(tab) {
            outcome.ok = false;
            outcome.message.push_str(&format!(
                "; it led to {url}, which was stopped before the request left: {why}"
            ));
        }
        outcome
    }
}

impl<C: Cdp, K: Clock, T: Tabs> Browser for CdpBrowser<'_, C, K, T> {
    async fn observe(&self, tab: TabId) -> Result<PageView, BrowserError> {
        let observed = self
            .observer
            .observe(self.sessions, self.clock, self.tabs, tab, self.observe)
            .await
            .map_err(browser_error)?;
        // The hash leaves out ids (they rise with every look) so "unchanged" means the
        // page shows the same things.
        let mut hasher = Sha256::new();
        hasher.update(observed.snapshot.url.as_bytes());
        for element in &observed.snapshot.elements {
            hasher.update(element.label().split_once(']').map_or("", |(_, rest)| rest).as_bytes());
        }
        // Page text counts too: a feedback line that changes is progress, not stagnation.
        for line in &observed.snapshot.text {
            hasher.update(line.line.as_bytes());
        }
        hasher.update(observed.snapshot.scroll[1].to_string().as_bytes());
        let hash = hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
        Ok(PageView {
            url: observed.snapshot.url.clone(),
            title: observed.snapshot.title.clone(),
            comparison: observed.comparison.map(|c| c.lists(COMPARISON_CHARS)).unwrap_or_default(),
            text: observed.text,
            hash,
        })
    }

    /// A screenshot, or none after [`SCREENSHOT_WAIT_MS`]: Chrome paints no frames for a tab
    /// hidden behind another (a job working in a background tab), and a capture then waits
    /// for a frame that does not come. The step is kept without one rather than stalling.
    async fn screenshot(&self, tab: TabId, marks: bool) -> Option<Vec<u8>> {
        // A hidden tab has no frame to capture: say so at once rather than wait it out.
        let visibility = page_agent::evaluate(self.sessions, tab, "document.visibilityState").await;
        if visibility.is_ok_and(|v| v == "hidden") {
            return None;
        }
        let elements = if marks { self.observer.last_elements(tab) } else { None };
        let capture =
            screenshot::capture(self.sessions, tab, elements.as_deref(), SCREENSHOT_QUALITY);
        let data = crate::within(self.clock, SCREENSHOT_WAIT_MS, capture).await?.ok()?;
        base64::engine::general_purpose::STANDARD.decode(data).ok()
    }

    async fn perform(&self, tab: TabId, action: &Action) -> ActionOutcome {
        self.perform_within(tab, action, WaitLimits::default()).await
    }

    fn describe(&self, tab: TabId, id: u32) -> String {
        self.observer
            .last_elements(tab)
            .and_then(|elements| elements.into_iter().find(|e| e.id == id))
            .map_or_else(|| format!("element {id}"), |e| e.label())
    }

    fn is_secret(&self, tab: TabId, id: u32) -> bool {
        self.observer.last_elements(tab).is_some_and(|elements| {
            elements
                .iter()
                .any(|e| e.id == id && (e.secret || e.input_type.as_deref() == Some("password")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_tab_ends_the_job_in_the_job_tables_words() {
        let closed = browser_error(CdpError::TabClosed);
        assert!(closed.fatal);
        assert_eq!(closed.message, crate::jobs::TAB_CLOSED);
        let attached = browser_error(CdpError::AlreadyAttached);
        assert!(attached.fatal);
        assert_eq!(attached.message, CdpError::AlreadyAttached.to_string());
        let thrown = browser_error(CdpError::PageException { description: "x".into() });
        assert!(!thrown.fatal);
    }
}
