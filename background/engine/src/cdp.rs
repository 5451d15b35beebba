//! The Chrome DevTools Protocol as the engine sees it: a [`Cdp`] transport, the tabs it has
//! attached to (with their page-agent worlds), and errors sorted into what a person can act
//! on.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use protocol::TabId;
use serde_json::Value;

/// A way to send CDP commands to a tab. The worker implements it over `chrome.debugger`;
/// tests implement it with a scripted fake.
// Single-threaded by design (the worker is one JS thread), so no `Send` bounds.
#[allow(async_fn_in_trait)]
pub trait Cdp {
    async fn attach(&self, tab: TabId) -> Result<(), CdpError>;
    async fn detach(&self, tab: TabId) -> Result<(), CdpError>;
    async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError>;
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
}

/// The tabs the engine is attached to, so each is attached once and detached on request.
pub struct Sessions<C> {
    cdp: C,
    tabs: RefCell<HashMap<TabId, TabSession>>,
}

impl<C: Cdp> Sessions<C> {
    pub fn new(cdp: C) -> Self {
        Sessions { cdp, tabs: RefCell::default() }
    }

    pub fn is_attached(&self, tab: TabId) -> bool {
        self.tabs.borrow().contains_key(&tab)
    }

    /// Sends `method` to `tab`, attaching first if needed.
    pub async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError> {
        if !self.is_attached(tab) {
            self.cdp.attach(tab).await?;
            self.tabs.borrow_mut().insert(tab, TabSession::default());
        }
        self.cdp.send(tab, method, params).await
    }

    /// Detaches from `tab` if attached.
    pub async fn release(&self, tab: TabId) -> Result<(), CdpError> {
        if self.tabs.borrow_mut().remove(&tab).is_some() {
            self.cdp.detach(tab).await?;
        }
        Ok(())
    }

    /// Chrome detached us (the shell saw `onDetach`): the next call must attach again.
    pub fn forget(&self, tab: TabId) {
        self.tabs.borrow_mut().remove(&tab);
    }

    pub(crate) fn page_agent_context(&self, tab: TabId) -> Option<i64> {
        self.tabs.borrow().get(&tab).and_then(|t| t.page_agent_context)
    }

    pub(crate) fn set_page_agent_context(&self, tab: TabId, context: Option<i64>) {
        if let Some(session) = self.tabs.borrow_mut().get_mut(&tab) {
            session.page_agent_context = context;
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
        async fn send(&self, tab: TabId, method: &str, _: Value) -> Result<Value, CdpError> {
            self.calls.borrow_mut().push(format!("{method} {tab}"));
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
        assert_eq!(
            *fake.calls.borrow(),
            [
                "attach 1",
                "Runtime.evaluate 1",
                "Runtime.evaluate 1",
                "attach 1",
                "Page.enable 1",
                "detach 1"
            ]
        );
    }

    #[test]
    fn a_failed_attach_is_not_remembered_as_attached() {
        let fake = FakeCdp { attach_error: Some(CdpError::AlreadyAttached), ..Default::default() };
        let sessions = Sessions::new(&fake);
        assert_eq!(block_on(sessions.send(1, "x", json!({}))), Err(CdpError::AlreadyAttached));
        assert!(!sessions.is_attached(1));
    }
}
