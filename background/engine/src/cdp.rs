//! The Chrome DevTools Protocol as the engine sees it: a [`Cdp`] transport, the tabs it has
//! attached to (with their page-agent worlds), and errors sorted into what a person can act
//! on.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;

use protocol::TabId;
use serde_json::{Value, json};

use crate::firewall::Firewall;

/// A way to send CDP commands to a tab. The worker implements it over `chrome.debugger`;
/// tests implement it with a scripted fake.
// Single-threaded by design (the worker is one JS thread), so no `Send` bounds.
#[allow(async_fn_in_trait)]
pub trait Cdp {
    async fn attach(&self, tab: TabId) -> Result<(), CdpError>;
    async fn detach(&self, tab: TabId) -> Result<(), CdpError>;
    /// Sends `method` to `tab`, or to one of its child targets (an out-of-process iframe)
    /// when `session` names the flattened session CDP gave it.
    async fn send(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError>;
}

/// Why a CDP call failed, in terms the agent and the person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdpError {
    /// Chrome refuses to debug this page (`chrome://`, the Web Store, another extension).
    NotDebuggable { detail: String },
    /// DevTools or another extension already debugs the tab.
    AlreadyAttached,
    /// The person dismissed the "started debugging this browser" bar.
    CanceledByUser,
    /// The tab no longer exists.
    TabClosed,
    /// We were attached, but Chrome detached us (navigation to a protected page, tab crash).
    Detached { reason: String },
    /// The page's JavaScript threw.
    PageException { description: String },
    /// Anything else the protocol reported.
    Protocol { detail: String },
}

impl CdpError {
    /// Sorts an error message from `chrome.debugger` into a [`CdpError`].
    pub fn from_chrome_message(message: &str) -> CdpError {
        let lower = message.to_ascii_lowercase();
        if lower.contains("another debugger is already attached") {
            CdpError::AlreadyAttached
        } else if lower.contains("no tab with given id") || lower.contains("no tab with id") {
            CdpError::TabClosed
        } else if lower.contains("cannot access")
            || lower.contains("cannot attach")
            || lower.contains("cannot be scripted")
        {
            CdpError::NotDebuggable { detail: message.to_owned() }
        } else if lower.contains("debugger is not attached") {
            CdpError::Detached { reason: message.to_owned() }
        } else {
            CdpError::Protocol { detail: message.to_owned() }
        }
    }

    /// Sorts the `reason` of a `chrome.debugger.onDetach` event.
    pub fn from_detach_reason(reason: &str) -> CdpError {
        match reason {
            "canceled_by_user" => CdpError::CanceledByUser,
            "target_closed" => CdpError::TabClosed,
            other => CdpError::Detached { reason: other.to_owned() },
        }
    }

    /// The execution context we evaluated in is gone (the page navigated).
    pub fn is_stale_context(&self) -> bool {
        matches!(self, CdpError::Protocol { detail } if detail.contains("Cannot find context"))
    }
}

impl fmt::Display for CdpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdpError::NotDebuggable { detail } => write!(
                f,
                "This tab can't be controlled: Chrome does not let extensions drive browser pages \
                 such as chrome:// or the Web Store ({detail}). Switch to a normal web page."
            ),
            CdpError::AlreadyAttached => f.write_str(
                "Another debugger (DevTools or an extension) is attached to this tab. \
                 Close it and try again.",
            ),
            CdpError::CanceledByUser => f.write_str(
                "Debugging was cancelled from Chrome's banner, so the agent can no longer \
                 control this tab. Start the task again to re-attach.",
            ),
            CdpError::TabClosed => f.write_str("The tab was closed."),
            CdpError::Detached { reason } => {
                write!(f, "Chrome detached the agent from the tab ({reason}).")
            }
            CdpError::PageException { description } => {
                write!(f, "The page's script failed: {description}")
            }
            CdpError::Protocol { detail } => write!(f, "Browser protocol error: {detail}"),
        }
    }
}

impl std::error::Error for CdpError {}

/// What the engine knows about one attached tab.
#[derive(Debug, Default)]
struct TabSession {
    /// The execution context of our isolated world in the current document, once injected.
    page_agent_context: Option<i64>,
    activity: Activity,
    /// Out-of-process iframes, by the flattened session CDP attached them with.
    children: HashMap<String, ChildFrame>,
    /// Which child frame gave out each element id (ids of the main frame are absent).
    owners: HashMap<u32, String>,
    /// Navigations the firewall stopped since the last action took them: (URL, why).
    blocked: Vec<(String, String)>,
}

/// An out-of-process (cross-site) iframe of a tab.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChildFrame {
    /// The target id, which is also the frame id of the iframe's frame.
    pub target_id: String,
    pub url: String,
    /// Our isolated world in the frame's document, once injected.
    pub page_agent_context: Option<i64>,
    /// The page-agent id of the `<iframe>` element that holds it, once matched.
    pub iframe_id: Option<u32>,
}

/// What a tab is doing, as its CDP events tell: the basis of event-driven waits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activity {
    pub main_frame: Option<String>,
    /// The main frame asked to navigate and has not finished loading since.
    pub navigation_pending: bool,
    /// Between `frameStartedLoading` and `frameStoppedLoading` of the main frame.
    pub loading: bool,
    /// Main-frame navigation requests seen so far.
    pub navigation_requests: u32,
    /// Documents committed in the main frame so far.
    pub documents: u32,
    /// Route changes within the main frame's document (a single-page app's `pushState`),
    /// not counting jumps to a `#fragment`.
    pub routes: u32,
    /// Network requests started and not yet finished or failed.
    pub inflight: HashSet<String>,
    pub last_network_ms: f64,
}

impl Activity {
    fn is_main(&self, params: &Value) -> bool {
        let frame = params.get("frameId").and_then(Value::as_str);
        frame.is_some() && frame == self.main_frame.as_deref()
    }

    /// Applies one CDP event; returns true when the main frame got a new document.
    fn apply(&mut self, method: &str, params: &Value, now_ms: f64) -> bool {
        let request = || params.get("requestId").and_then(Value::as_str).map(str::to_owned);
        match method {
            "Page.frameRequestedNavigation" | "Page.frameStartedNavigating"
                if self.is_main(params) =>
            {
                self.navigation_pending = true;
                self.navigation_requests += 1;
            }
            "Page.frameStartedLoading" if self.is_main(params) => self.loading = true,
            "Page.frameStoppedLoading" if self.is_main(params) => {
                self.loading = false;
                self.navigation_pending = false;
            }
            "Page.frameNavigated" if params.pointer("/frame/parentId").is_none() => {
                self.main_frame =
                    params.pointer("/frame/id").and_then(Value::as_str).map(str::to_owned);
                self.documents += 1;
                return true;
            }
            "Page.navigatedWithinDocument"
                if self.is_main(params) && params["navigationType"] != "fragment" =>
            {
                self.routes += 1;
            }
            "Network.requestWillBeSent" => {
                self.inflight.extend(request());
                self.last_network_ms = now_ms;
            }
            "Network.loadingFinished" | "Network.loadingFailed" => {
                if let Some(id) = request() {
                    self.inflight.remove(&id);
                }
                self.last_network_ms = now_ms;
            }
            _ => {}
        }
        false
    }
}

/// The CDP events [`Sessions::on_event`] acts on; the shell may drop all others unread.
pub const WATCHED_EVENTS: &[&str] = &[
    "Page.frameRequestedNavigation",
    "Page.frameStartedNavigating",
    "Page.frameStartedLoading",
    "Page.frameStoppedLoading",
    "Page.frameNavigated",
    "Page.navigatedWithinDocument",
    "Network.requestWillBeSent",
    "Network.loadingFinished",
    "Network.loadingFailed",
    "Target.attachedToTarget",
    "Target.detachedFromTarget",
    // A recording's page reporting what the person did (the worker's recorder).
    "Runtime.bindingCalled",
    // Answered by `Sessions::on_request_paused`, not `on_event`.
    "Fetch.requestPaused",
];

/// Attach to a target's cross-site frames (and its workers) as they are created, each held
/// until [`Sessions::on_attached`] has set it up, so a frame's first request already waits
/// for the firewall.
fn auto_attach() -> Value {
    json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
}

/// What the firewall pauses, before it is requested (redirects included): documents (a
/// tab's page or a frame's) and link pings; with `page_requests`, every request.
fn guarded_requests(firewall: &Firewall) -> Value {
    let paused =
        |kind: &str| json!({"urlPattern": "*", "resourceType": kind, "requestStage": "Request"});
    match firewall.page_requests {
        true => json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
        false => json!({"patterns": [paused("Document"), paused("Ping")]}),
    }
}

/// The tabs the engine is attached to, so each is attached once and detached on request.
pub struct Sessions<C> {
    cdp: C,
    tabs: RefCell<HashMap<TabId, TabSession>>,
    /// While a task runs: where its tabs may go. Every document request in them waits for
    /// this check, so a refused page is never requested, whatever started the navigation.
    guard: RefCell<Option<Firewall>>,
}

impl<C: Cdp> Sessions<C> {
    pub fn new(cdp: C) -> Self {
        Sessions { cdp, tabs: RefCell::default(), guard: RefCell::default() }
    }

    pub fn is_attached(&self, tab: TabId) -> bool {
        self.tabs.borrow().contains_key(&tab)
    }

    /// Attaches to `tab` if it is not yet: with the firewall's guard, while one is on.
    pub async fn attach_now(&self, tab: TabId) -> Result<(), CdpError> {
        match self.is_attached(tab) {
            true => Ok(()),
            false => self.attach(tab).await,
        }
    }

    /// Sends `method` to `tab`, attaching first if needed.
    pub async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError> {
        self.send_in(tab, None, method, params).await
    }

    /// Sends `method` to `tab`'s main frame, or to child frame `session`.
    pub async fn send_in(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        if !self.is_attached(tab) {
            self.attach(tab).await?;
        }
        self.cdp.send(tab, session, method, params).await
    }

    /// Attaches and turns on the events that waits are driven by, and the child sessions
    /// through which cross-site iframes are reached.
    async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
        match self.cdp.attach(tab).await {
            // After Chrome restarts the worker, the extension may still hold the tab from
            // before: detaching succeeds only for our own attachment, so a tab that DevTools
            // holds still reports "already attached".
            Err(CdpError::AlreadyAttached) => {
                self.cdp.detach(tab).await.map_err(|_| CdpError::AlreadyAttached)?;
                self.cdp.attach(tab).await?;
            }
            other => other?,
        }
        self.tabs.borrow_mut().insert(tab, TabSession::default());
        let setup = async {
            self.cdp.send(tab, None, "Page.enable", json!({})).await?;
            // No buffers: we count requests, we never read bodies.
            let network = json!({"maxTotalBufferSize": 0, "maxResourceBufferSize": 0});
            self.cdp.send(tab, None, "Network.enable", network).await?;
            self.cdp.send(tab, None, "Target.setAutoAttach", auto_attach()).await?;
            let patterns = self.guard.borrow().as_ref().map(guarded_requests);
            if let Some(patterns) = patterns {
                self.cdp.send(tab, None, "Fetch.enable", patterns).await?;
            }
            self.cdp.send(tab, None, "Page.getFrameTree", json!({})).await
        };
        match setup.await {
            Ok(tree) => {
                let main = tree.pointer("/frameTree/frame/id").and_then(Value::as_str);
                if let Some(session) = self.tabs.borrow_mut().get_mut(&tab) {
                    session.activity.main_frame = main.map(str::to_owned);
                }
                Ok(())
            }
            Err(error) => {
                self.tabs.borrow_mut().remove(&tab);
                let _ = self.cdp.detach(tab).await;
                Err(error)
            }
        }
    }

    /// A CDP event from `tab` (the shell forwards those in [`WATCHED_EVENTS`]).
    pub fn on_event(&self, tab: TabId, method: &str, params: &Value, now_ms: f64) {
        let mut tabs = self.tabs.borrow_mut();
        let Some(session) = tabs.get_mut(&tab) else { return };
        match method {
            "Target.attachedToTarget"
                if params.pointer("/targetInfo/type") == Some(&"iframe".into()) =>
            {
                let text = |pointer: &str| {
                    params.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned()
                };
                let child = ChildFrame {
                    target_id: text("/targetInfo/targetId"),
                    url: text("/targetInfo/url"),
                    ..Default::default()
                };
                session.children.insert(text("/sessionId"), child);
            }
            "Target.detachedFromTarget" => {
                if let Some(gone) = params.get("sessionId").and_then(Value::as_str) {
                    session.children.remove(gone);
                    session.owners.retain(|_, owner| owner != gone);
                }
            }
            _ => {
                if session.activity.apply(method, params, now_ms) {
                    // A new document: our isolated world went with the old one, and so did
                    // the frames it held.
                    session.page_agent_context = None;
                    session.owners.clear();
                }
            }
        }
    }

    /// The tab's out-of-process iframes, by session.
    pub fn children(&self, tab: TabId) -> Vec<(String, ChildFrame)> {
        let tabs = self.tabs.borrow();
        let mut children: Vec<(String, ChildFrame)> = tabs
            .get(&tab)
            .map(|s| s.children.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        lean::sort_by(&mut children, |a, b| a.0.cmp(&b.0));
        children
    }

    pub(crate) fn update_child(
        &self,
        tab: TabId,
        session: &str,
        update: impl FnOnce(&mut ChildFrame),
    ) {
        if let Some(child) =
            self.tabs.borrow_mut().get_mut(&tab).and_then(|t| t.children.get_mut(session))
        {
            update(child);
        }
    }

    /// The child session that gave out element `id`, or `None` for the main frame.
    pub fn owner_of(&self, tab: TabId, id: u32) -> Option<String> {
        self.tabs.borrow().get(&tab).and_then(|t| t.owners.get(&id).cloned())
    }

    pub(crate) fn set_owner(&self, tab: TabId, id: u32, session: &str) {
        if let Some(t) = self.tabs.borrow_mut().get_mut(&tab) {
            t.owners.insert(id, session.to_owned());
        }
    }

    /// What `tab` is doing now, if attached.
    pub fn activity(&self, tab: TabId) -> Option<Activity> {
        self.tabs.borrow().get(&tab).map(|s| s.activity.clone())
    }

    /// Detaches from `tab` if attached.
    pub async fn release(&self, tab: TabId) -> Result<(), CdpError> {
        if self.tabs.borrow_mut().remove(&tab).is_some() {
            self.cdp.detach(tab).await?;
        }
        Ok(())
    }

    /// Guards the attached tabs (and those attached later) with `firewall` while a task
    /// runs; `None` lets them go anywhere again, as the person's own browsing may.
    pub async fn guard(&self, firewall: Option<Firewall>) {
        let patterns = firewall.as_ref().map(guarded_requests);
        *self.guard.borrow_mut() = firewall;
        // Each tab, and each cross-site frame in it (its own session).
        let targets: Vec<(TabId, Option<String>)> = self
            .tabs
            .borrow()
            .iter()
            .flat_map(|(tab, s)| {
                std::iter::once((*tab, None))
                    .chain(s.children.keys().map(|child| (*tab, Some(child.clone()))))
            })
            .collect();
        for (tab, session) in targets {
            let session = session.as_deref();
            let _ = match &patterns {
                Some(patterns) => {
                    self.cdp.send(tab, session, "Fetch.enable", patterns.clone()).await
                }
                None => self.cdp.send(tab, session, "Fetch.disable", json!({})).await,
            };
        }
    }

    /// Whether the guard in force admits `url` as a page to load; `None` when no guard is
    /// on (a job's tab must then load nothing on its behalf).
    pub fn guard_admits(&self, url: &str) -> Option<Result<(), String>> {
        self.guard.borrow().as_ref().map(|firewall| firewall.check(url))
    }

    /// A target attached under `tab` (a cross-site frame, a worker), held before it runs:
    /// a frame's requests are guarded as the tab's are and its own frames attached the same
    /// way, then it may run. While guarded, a frame whose guard could not be set is left
    /// held (it shows nothing) rather than let loose.
    pub async fn on_attached(&self, tab: TabId, params: &Value) {
        let Some(session) = params.get("sessionId").and_then(Value::as_str) else { return };
        if params.pointer("/targetInfo/type").and_then(Value::as_str) == Some("iframe") {
            let patterns = self.guard.borrow().as_ref().map(guarded_requests);
            if let Some(patterns) = patterns
                && self.cdp.send(tab, Some(session), "Fetch.enable", patterns).await.is_err()
            {
                return;
            }
            let _ = self.cdp.send(tab, Some(session), "Target.setAutoAttach", auto_attach()).await;
        }
        if params.get("waitingForDebugger") == Some(&Value::Bool(true)) {
            let resume = json!({});
            let _ =
                self.cdp.send(tab, Some(session), "Runtime.runIfWaitingForDebugger", resume).await;
        }
    }

    /// A request paused in `tab`: let it go, or stop it before it leaves. A document goes
    /// where the firewall admits it (a refusal is noted for the action that caused it); a
    /// link's ping never goes; a page's own request goes unless its host is denied. Every
    /// paused request is answered, also one that comes after the guard was lifted.
    pub async fn on_request_paused(&self, tab: TabId, session: Option<&str>, params: &Value) {
        let Some(id) = params.get("requestId").and_then(Value::as_str) else { return };
        let url = params.pointer("/request/url").and_then(Value::as_str).unwrap_or_default();
        let kind = params.get("resourceType").and_then(Value::as_str).unwrap_or("Document");
        let refusal = self.guard.borrow().as_ref().and_then(|f| match kind {
            "Document" => f.check(url).err().map(|why| (why, true)),
            "Ping" => Some(("a link's ping is never sent from a task's tab".to_owned(), false)),
            _ => f.check_page_request(url).err().map(|why| (why, false)),
        });
        let answer = match refusal {
            Some((why, navigation)) => {
                if navigation && let Some(open) = self.tabs.borrow_mut().get_mut(&tab) {
                    open.blocked.push((url.to_owned(), why));
                }
                ("Fetch.failRequest", json!({"requestId": id, "errorReason": "BlockedByClient"}))
            }
            None => ("Fetch.continueRequest", json!({"requestId": id})),
        };
        // A frame's request is answered in the frame's own session.
        let _ = self.cdp.send(tab, session, answer.0, answer.1).await;
    }

    /// The navigations the firewall stopped in `tab` since the last call.
    pub fn take_blocked(&self, tab: TabId) -> Vec<(String, String)> {
        self.tabs
            .borrow_mut()
            .get_mut(&tab)
            .map(|s| std::mem::take(&mut s.blocked))
            .unwrap_or_default()
    }

    /// Detaches from every tab, so Chrome's "is debugging this browser" bar goes away.
    pub async fn release_all(&self) {
        let tabs: Vec<TabId> = self.tabs.borrow().keys().copied().collect();
        for tab in tabs {
            let _ = self.release(tab).await;
        }
    }

    /// Chrome detached us (the shell saw `onDetach`): the next call must attach again.
    pub fn forget(&self, tab: TabId) {
        self.tabs.borrow_mut().remove(&tab);
    }

    pub(crate) fn page_agent_context(&self, tab: TabId, session: Option<&str>) -> Option<i64> {
        let tabs = self.tabs.borrow();
        let tab = tabs.get(&tab)?;
        match session {
            None => tab.page_agent_context,
            Some(session) => tab.children.get(session)?.page_agent_context,
        }
    }

    pub(crate) fn set_page_agent_context(
        &self,
        tab: TabId,
        session: Option<&str>,
        context: Option<i64>,
    ) {
        match session {
            None => {
                if let Some(t) = self.tabs.borrow_mut().get_mut(&tab) {
                    t.page_agent_context = context;
                }
            }
            Some(session) => self.update_child(tab, session, |c| c.page_agent_context = context),
        }
    }
}

#[cfg(test)]
pub(crate) mod fake {
    //! A scripted CDP for engine tests: answers by method name, in order (the last answer
    //! repeats), and records every call.

    use super::*;
    use serde_json::json;
    use std::collections::VecDeque;

    #[derive(Default)]
    pub struct FakeCdp {
        pub answers: RefCell<HashMap<String, VecDeque<Result<Value, CdpError>>>>,
        pub attach_error: Option<CdpError>,
        pub calls: RefCell<Vec<String>>,
        /// Each command's parameters, in the order of `calls` (attach and detach left out).
        pub params: RefCell<Vec<(String, Value)>>,
    }

    impl FakeCdp {
        /// A tab with a main frame in which isolated worlds can be created.
        pub fn page() -> Self {
            FakeCdp::default()
                .answer("Page.getFrameTree", Ok(json!({"frameTree": {"frame": {"id": "F1"}}})))
                .answer("Page.createIsolatedWorld", Ok(json!({"executionContextId": 7})))
        }

        pub fn answer(self, method: &str, answer: Result<Value, CdpError>) -> Self {
            self.answers.borrow_mut().entry(method.to_owned()).or_default().push_back(answer);
            self
        }
    }

    impl Cdp for &FakeCdp {
        async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
            self.calls.borrow_mut().push(format!("attach {tab}"));
            self.attach_error.clone().map_or(Ok(()), Err)
        }
        async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
            self.calls.borrow_mut().push(format!("detach {tab}"));
            Ok(())
        }
        async fn send(
            &self,
            tab: TabId,
            session: Option<&str>,
            method: &str,
            params: Value,
        ) -> Result<Value, CdpError> {
            self.params.borrow_mut().push((method.to_owned(), params));
            let call = match session {
                Some(session) => format!("{method} {tab}/{session}"),
                None => format!("{method} {tab}"),
            };
            self.calls.borrow_mut().push(call);
            let mut answers = self.answers.borrow_mut();
            let queue = answers.entry(method.to_owned()).or_default();
            let answer = if queue.len() > 1 { queue.pop_front() } else { queue.front().cloned() };
            answer.unwrap_or(Ok(Value::Null))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeCdp;
    use super::*;
    use futures::executor::block_on;
    use serde_json::json;

    #[test]
    fn chrome_messages_are_sorted_into_actionable_errors() {
        let cases = [
            ("Cannot access a chrome:// URL", "can't be controlled"),
            ("Another debugger is already attached to the tab with id: 4.", "Another debugger"),
            ("No tab with given id 12.", "closed"),
            ("Cannot attach to this target.", "can't be controlled"),
        ];
        for (chrome, expected) in cases {
            let message = CdpError::from_chrome_message(chrome).to_string();
            assert!(message.contains(expected), "{chrome:?} became {message:?}");
        }
        assert_eq!(CdpError::from_detach_reason("canceled_by_user"), CdpError::CanceledByUser);
    }

    #[test]
    fn a_tab_is_attached_once_and_again_after_chrome_detaches_it() {
        let fake = FakeCdp::default();
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Runtime.evaluate", json!({}))).unwrap();
        block_on(sessions.send(1, "Runtime.evaluate", json!({}))).unwrap();
        sessions.forget(1);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        block_on(sessions.release(1)).unwrap();
        block_on(sessions.release(1)).unwrap();
        block_on(sessions.release_all());
        let calls = fake.calls.borrow();
        let attach = [
            "attach 1",
            "Page.enable 1",
            "Network.enable 1",
            "Target.setAutoAttach 1",
            "Page.getFrameTree 1",
        ];
        assert_eq!(calls[..5], attach);
        assert_eq!(calls[5..7], ["Runtime.evaluate 1", "Runtime.evaluate 1"]);
        assert_eq!(calls[7..12], attach);
        assert_eq!(calls[12..], ["Page.enable 1", "detach 1"]);
    }

    #[test]
    fn while_guarded_a_refused_document_is_stopped_before_it_is_requested() {
        let fake = FakeCdp::default();
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let settings = protocol::settings::Settings {
            deny: vec!["evil.test".into()],
            ..crate::testing::settings()
        };
        block_on(sessions.guard(Some(Firewall::new(&settings))));
        let paused = |id: &str, url: &str| json!({"requestId": id, "request": {"url": url}});
        block_on(sessions.on_request_paused(1, None, &paused("r1", "https://shop.test/")));
        block_on(sessions.on_request_paused(1, None, &paused("r2", "HTTPS://EVIL.TEST./login")));
        block_on(sessions.guard(None));
        // A request paused just before the guard was lifted still gets its answer.
        block_on(sessions.on_request_paused(1, None, &paused("r3", "https://evil.test/")));
        let calls = fake.calls.borrow();
        assert_eq!(
            calls[6..],
            [
                "Fetch.enable 1",
                "Fetch.continueRequest 1",
                "Fetch.failRequest 1",
                "Fetch.disable 1",
                "Fetch.continueRequest 1"
            ]
        );
        let blocked = sessions.take_blocked(1);
        assert_eq!(blocked.len(), 1);
        assert_eq!(blocked[0].0, "HTTPS://EVIL.TEST./login");
        assert!(blocked[0].1.contains("deny list"), "{blocked:?}");
        assert!(sessions.take_blocked(1).is_empty(), "told once");
        // A tab attached while a task runs is guarded from the start.
        drop(calls);
        block_on(sessions.guard(Some(Firewall::new(&settings))));
        block_on(sessions.send(2, "Page.enable", json!({}))).unwrap();
        assert!(fake.calls.borrow().contains(&"Fetch.enable 2".to_owned()));
    }

    #[test]
    fn while_guarded_pings_never_go_and_page_requests_to_denied_hosts_only_when_asked() {
        let paused = |id: &str, kind: &str, url: &str| json!({"requestId": id, "resourceType": kind, "request": {"url": url}});
        let answers = |fake: &FakeCdp| -> Vec<String> {
            fake.calls.borrow().iter().filter(|c| c.starts_with("Fetch.")).cloned().collect()
        };
        let enabled = |fake: &FakeCdp| -> Value {
            fake.params.borrow().iter().find(|(m, _)| m == "Fetch.enable").unwrap().1.clone()
        };
        for page_requests in [false, true] {
            let fake = FakeCdp::default();
            let sessions = Sessions::new(&fake);
            block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
            let mut settings = protocol::settings::Settings {
                allow: vec!["shop.test".into()],
                deny: vec!["evil.test".into()],
                ..crate::testing::settings()
            };
            settings.agent.block_page_requests = page_requests;
            block_on(sessions.guard(Some(Firewall::new(&settings))));
            let patterns = enabled(&fake).to_string();
            assert_eq!(patterns.contains("Ping"), !page_requests, "{patterns}");
            assert_eq!(patterns.contains("Document"), !page_requests, "{patterns}");
            let mut requests = vec![
                ("r1", "Ping", "https://shop.test/track"),
                ("r2", "Ping", "https://evil.test/track"),
                ("r3", "Document", "https://cdn.test/"),
            ];
            let mut expected = vec!["Fetch.failRequest 1"; 3];
            if page_requests {
                // Chrome pauses these only when every request is guarded.
                requests.push(("r4", "Script", "https://evil.test/x.js"));
                // An allow list names sites to visit, not the hosts their pages load from.
                requests.push(("r5", "Image", "https://cdn.test/x.png"));
                expected.extend(["Fetch.failRequest 1", "Fetch.continueRequest 1"]);
            }
            for (id, kind, url) in requests {
                block_on(sessions.on_request_paused(1, None, &paused(id, kind, url)));
            }
            assert_eq!(answers(&fake)[1..], expected, "page requests blocked: {page_requests}");
            let blocked = sessions.take_blocked(1);
            assert_eq!(blocked.len(), 1, "only the navigation is told to the agent: {blocked:?}");
        }
    }

    #[test]
    fn a_cross_site_frame_is_guarded_before_it_runs_and_answered_in_its_own_session() {
        let fake = FakeCdp::default();
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let frame = json!({"sessionId": "S2", "waitingForDebugger": true,
                           "targetInfo": {"type": "iframe", "targetId": "T2", "url": ""}});
        // Before a task: the frame is attached and let go at once.
        sessions.on_event(1, "Target.attachedToTarget", &frame, 1.0);
        block_on(sessions.on_attached(1, &frame));
        let settings = protocol::settings::Settings {
            deny: vec!["evil.test".into()],
            ..crate::testing::settings()
        };
        // A task starts: the frame already there is guarded too.
        block_on(sessions.guard(Some(Firewall::new(&settings))));
        // A frame created during the task (here inside the first) is guarded before it runs.
        let nested = json!({"sessionId": "S3", "waitingForDebugger": true,
                            "targetInfo": {"type": "iframe", "targetId": "T3", "url": ""}});
        sessions.on_event(1, "Target.attachedToTarget", &nested, 2.0);
        block_on(sessions.on_attached(1, &nested));
        let worker = json!({"sessionId": "W1", "waitingForDebugger": true,
                            "targetInfo": {"type": "worker", "targetId": "T4", "url": ""}});
        block_on(sessions.on_attached(1, &worker));
        let request = json!({"requestId": "r1", "resourceType": "Document",
                             "request": {"url": "https://evil.test/"}});
        block_on(sessions.on_request_paused(1, Some("S3"), &request));
        let calls = fake.calls.borrow();
        assert_eq!(
            calls[6..],
            [
                "Target.setAutoAttach 1/S2",
                "Runtime.runIfWaitingForDebugger 1/S2",
                "Fetch.enable 1",
                "Fetch.enable 1/S2",
                "Fetch.enable 1/S3",
                "Target.setAutoAttach 1/S3",
                "Runtime.runIfWaitingForDebugger 1/S3",
                "Runtime.runIfWaitingForDebugger 1/W1",
                "Fetch.failRequest 1/S3",
            ]
        );
        let auto = fake.params.borrow().iter().find(|(m, _)| m == "Target.setAutoAttach").cloned();
        assert_eq!(auto.unwrap().1["waitForDebuggerOnStart"], true);
        assert_eq!(sessions.take_blocked(1).len(), 1, "the frame's refused page is told");
    }

    #[test]
    fn while_guarded_a_frame_whose_guard_failed_stays_held() {
        let fake = FakeCdp::default()
            .answer("Fetch.enable", Err(CdpError::Protocol { detail: "no such session".into() }));
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let settings = crate::testing::settings();
        block_on(sessions.guard(Some(Firewall::new(&settings))));
        let frame = json!({"sessionId": "S2", "waitingForDebugger": true,
                           "targetInfo": {"type": "iframe", "targetId": "T2", "url": ""}});
        block_on(sessions.on_attached(1, &frame));
        assert!(!fake.calls.borrow().iter().any(|c| c.starts_with("Runtime.runIfWaiting")));
    }

    #[test]
    fn events_track_navigation_loading_and_requests_of_the_main_frame() {
        let fake = FakeCdp::page();
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let main = json!({"frameId": "F1"});
        let child = json!({"frameId": "child"});
        sessions.on_event(1, "Page.frameRequestedNavigation", &child, 1.0);
        assert!(!sessions.activity(1).unwrap().navigation_pending, "a child frame is not the tab");
        sessions.on_event(1, "Page.frameRequestedNavigation", &main, 2.0);
        sessions.on_event(1, "Page.frameStartedLoading", &main, 3.0);
        sessions.on_event(1, "Network.requestWillBeSent", &json!({"requestId": "r1"}), 4.0);
        let busy = sessions.activity(1).unwrap();
        assert!(busy.navigation_pending && busy.loading && busy.inflight.contains("r1"));
        sessions.set_page_agent_context(1, None, Some(9));
        sessions.on_event(1, "Page.frameNavigated", &json!({"frame": {"id": "F1"}}), 5.0);
        assert_eq!(sessions.page_agent_context(1, None), None, "the world went with the document");
        sessions.on_event(1, "Network.loadingFinished", &json!({"requestId": "r1"}), 6.0);
        sessions.on_event(1, "Page.frameStoppedLoading", &main, 7.0);
        let idle = sessions.activity(1).unwrap();
        assert!(!idle.navigation_pending && !idle.loading && idle.inflight.is_empty());
        assert_eq!((idle.navigation_requests, idle.documents), (1, 1));

        let route = |kind: &str| json!({"frameId": "F1", "navigationType": kind});
        sessions.on_event(1, "Page.navigatedWithinDocument", &route("historyApi"), 8.0);
        sessions.on_event(1, "Page.navigatedWithinDocument", &route("fragment"), 9.0);
        let framed = json!({"frameId": "child", "navigationType": "historyApi"});
        sessions.on_event(1, "Page.navigatedWithinDocument", &framed, 10.0);
        assert_eq!(sessions.activity(1).unwrap().routes, 1, "the main frame's route only");
    }

    #[test]
    fn cross_site_frames_are_tracked_by_their_child_session() {
        let fake = FakeCdp::page();
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let attached = json!({"sessionId": "S2", "targetInfo": {"type": "iframe",
            "targetId": "T2", "url": "http://localhost:9/frame.html"}});
        sessions.on_event(1, "Target.attachedToTarget", &attached, 1.0);
        let worker = json!({"sessionId": "S3", "targetInfo": {"type": "worker"}});
        sessions.on_event(1, "Target.attachedToTarget", &worker, 1.0);
        let children = sessions.children(1);
        assert_eq!(children.len(), 1, "only iframes count");
        assert_eq!((children[0].0.as_str(), children[0].1.target_id.as_str()), ("S2", "T2"));
        sessions.set_owner(1, 40, "S2");
        assert_eq!(sessions.owner_of(1, 40).as_deref(), Some("S2"));
        sessions.on_event(1, "Target.detachedFromTarget", &json!({"sessionId": "S2"}), 2.0);
        assert!(sessions.children(1).is_empty());
        assert_eq!(sessions.owner_of(1, 40), None);
    }

    #[test]
    fn a_failed_attach_is_not_remembered_as_attached() {
        let fake = FakeCdp { attach_error: Some(CdpError::AlreadyAttached), ..Default::default() };
        let sessions = Sessions::new(&fake);
        assert_eq!(block_on(sessions.send(1, "x", json!({}))), Err(CdpError::AlreadyAttached));
        assert!(!sessions.is_attached(1));
    }
}
