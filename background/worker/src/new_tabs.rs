//! Tabs a guarded tab opens, held before their first request.
//!
//! `chrome.debugger` learns of a new tab only once it exists, and by then its first request
//! (a `target=_blank` link, a form, `window.open`, a redirect) may have left: CDP's
//! auto-attach does not reach new tabs from a tab's session. So while a job acts in tabs, a
//! `declarativeNetRequest` session rule blocks page loads in every tab it does not name as
//! free. Tabs open when the guard starts are free, and so is every later one not opened by
//! an attached tab (the person's own). A tab an attached tab opens stays held until it is
//! attached with the firewall's `Fetch` in place; then it is freed, and the page it first
//! tried to load is asked for again, through the firewall.
//!
//! A held tab's first load is replayed as a GET: a form that posts into a new tab must be
//! sent again from a tab the agent works in.

use lean::{SortedMap, SortedSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use protocol::TabId;
use serde_json::json;

use crate::{Worker, chrome};

/// How long after its creation a tab's blocked first load is taken for the hold's doing
/// (and loaded again) rather than another extension's or the firewall's.
const FIRST_LOAD_MS: f64 = 10_000.0;

#[derive(Default)]
pub struct NewTabs {
    /// Whether the hold rule is in force.
    on: Cell<bool>,
    /// Tabs whose page loads go through: the rule's exceptions.
    free: RefCell<SortedSet<TabId>>,
    /// Tabs created while the rule is in force whose first load may have been held.
    fresh: RefCell<SortedMap<TabId, Fresh>>,
}

#[derive(Default)]
struct Fresh {
    created_ms: f64,
    /// Opened by an attached tab: loaded again only through the firewall, once attached.
    guarded: bool,
    /// Attached (guarded) or freed (the person's own): a held load may be replayed now.
    ready: bool,
    /// The page its first load asked for, if the rule blocked it.
    blocked: Option<String>,
}

impl NewTabs {
    /// Starts holding the page loads of tabs opened from now on.
    pub async fn start(&self) {
        if self.on.replace(true) {
            return;
        }
        *self.free.borrow_mut() = chrome::tab_ids().await.into_iter().collect();
        self.apply().await;
    }

    /// Lets every tab load freely again.
    pub async fn stop(&self) {
        if !self.on.replace(false) {
            return;
        }
        self.free.borrow_mut().clear();
        self.fresh.borrow_mut().clear();
        if let Err(error) = chrome::release_page_loads().await {
            chrome::log(&format!("could not lift the hold on new tabs: {error}"));
        }
    }

    async fn apply(&self) {
        if !self.on.get() {
            return;
        }
        let free: Vec<TabId> = self.free.borrow().iter().copied().collect();
        if let Err(error) = chrome::hold_page_loads(&free).await {
            chrome::log(&format!("could not hold new tabs' page loads: {error}"));
        }
    }

    /// Chrome created `tab`, opened from `opener` if any.
    pub async fn on_created(worker: &Rc<Worker>, tab: TabId, opener: Option<TabId>) {
        let this = &worker.new_tabs;
        if !this.on.get() {
            return;
        }
        let guarded = opener.is_some_and(|o| worker.sessions.is_attached(o));
        let fresh = Fresh { created_ms: chrome::now_ms(), guarded, ..Fresh::default() };
        this.fresh.borrow_mut().insert(tab, fresh);
        if guarded {
            // Attaching puts the firewall's Fetch on the tab (the guard is on) before it is
            // freed; a tab that cannot be attached stays held.
            if let Err(error) = worker.sessions.attach_now(tab).await {
                chrome::log(&format!("a tab opened by tab {opener:?} stays held: {error}"));
                return;
            }
        }
        this.free.borrow_mut().insert(tab);
        this.apply().await;
        if let Some(state) = this.fresh.borrow_mut().get_mut(&tab) {
            state.ready = true;
        }
        NewTabs::replay(worker, tab).await;
    }

    /// The rule (or something else) stopped a page load in `tab`'s main frame.
    pub async fn on_blocked(worker: &Rc<Worker>, tab: TabId, url: String) {
        let this = &worker.new_tabs;
        if let Some(state) = this.fresh.borrow_mut().get_mut(&tab)
            && state.blocked.is_none()
            && chrome::now_ms() - state.created_ms < FIRST_LOAD_MS
        {
            state.blocked = Some(url);
        }
        NewTabs::replay(worker, tab).await;
    }

    /// Asks again, once, for the page `tab` first tried to load, when it is free to.
    async fn replay(worker: &Rc<Worker>, tab: TabId) {
        let (url, guarded) = {
            let mut fresh = worker.new_tabs.fresh.borrow_mut();
            let Some(state) = fresh.get(&tab) else { return };
            let (Some(url), true) = (&state.blocked, state.ready) else { return };
            let replay = (url.clone(), state.guarded);
            fresh.remove(&tab);
            replay
        };
        let replayed = match guarded {
            // From the page itself, so it stays its opener's (`window.opener`), and through
            // the tab's Fetch, so the firewall decides on every hop. Checked here first too:
            // a job that ended meanwhile took its guard with it, and what it opened then
            // loads nothing.
            true => match worker.sessions.guard_admits(&url) {
                Some(Ok(())) => {
                    let call = json!({"expression": format!("location.replace({})", json!(url))});
                    let sent = worker.sessions.send(tab, "Runtime.evaluate", call).await;
                    sent.map(drop).map_err(|e| e.to_string())
                }
                Some(Err(refusal)) => Err(refusal),
                None => Err("the job that opened it has ended".to_owned()),
            },
            false => chrome::load_in_tab(tab, &url).await,
        };
        if let Err(error) = replayed {
            chrome::log(&format!("could not load {url} again in tab {tab}: {error}"));
        }
    }

    /// `tab` closed: it needs no exception any more.
    pub fn forget(&self, tab: TabId) {
        self.fresh.borrow_mut().remove(&tab);
        self.free.borrow_mut().remove(&tab);
    }
}
