//! The agent engine: everything the background worker decides, as plain Rust.
//!
//! The engine talks to the outside world only through small traits — [`cdp::Cdp`] for the
//! browser, [`Clock`] for time — so it builds and is tested natively with `cargo test`. The
//! wasm shell in `background/worker` implements those traits over `chrome.*`; nothing here
//! may name `chrome`, `web_sys` or IndexedDB.

pub mod actions;
pub mod agents;
pub mod browser;
pub mod cdp;
pub mod detector;
pub mod draft_thoughts;
pub mod executor;
pub mod firewall;
pub mod jobs;
pub mod mcp;
pub mod memory;
pub mod observe;
pub mod page_agent;
pub mod page_info;
pub mod page_state;
pub mod pipeline;
pub mod providers;
pub mod repair;
pub mod screenshot;
pub mod session;
pub mod studio_run;
pub mod workflow;

// Prompt files and their checks live in a leaf crate the pages share; the engine's paths
// stay as they were.
pub use prompt_files::{prompts, structured, template, untrusted};
// So are the run records the pages read.
pub use run_records as run;

pub(crate) use prompt_files::truncate;

/// `work`'s output, or `None` once `clock` has slept `ms`: the bound on a wait for
/// something Chrome may never deliver (a frame of a hidden tab).
pub async fn within<T>(
    clock: &impl Clock,
    ms: f64,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    use std::future::Future;
    use std::task::Poll;
    let mut work = std::pin::pin!(work);
    let mut timeout = std::pin::pin!(clock.sleep(ms));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        timeout.as_mut().poll(cx).map(|()| None)
    })
    .await
}

/// Monotonic time in milliseconds. The worker reads `performance.now()` and sleeps with
/// `setTimeout`; tests advance a counter.
#[allow(async_fn_in_trait)]
pub trait Clock {
    fn now_ms(&self) -> f64;
    async fn sleep(&self, ms: f64);
}

#[cfg(test)]
pub(crate) mod testing {
    //! Fakes of the engine's traits shared by its tests.

    use std::cell::{Cell, RefCell};

    use std::collections::{BTreeMap, VecDeque};

    use serde_json::json;

    use crate::Clock;
    use crate::actions::{TabError, TabInfo, Tabs};
    use crate::providers::{Http, HttpFailure, HttpRequest, HttpResponse};
    use protocol::TabId;
    use protocol::settings::{
        AgentOptions, ModelConfig, ProviderKind, RoleModels, Secret, Settings,
    };

    /// Settings with one OpenAI-style model for every role, no periodic reviews and one
    /// denied host.
    pub fn settings() -> Settings {
        let model = ModelConfig {
            provider: ProviderKind::OpenAi,
            base_url: "http://llm.test/v1".into(),
            api_key: Secret::new("sk-test-secret-key"),
            model: "gpt-test".into(),
            timeout_ms: 5000,
            max_retries: 0,
        };
        Settings {
            models: RoleModels::all(model),
            agent: AgentOptions { thinking_interval: 0, ..AgentOptions::default() },
            allow: vec![],
            deny: vec!["blocked.test".into()],
            variants: BTreeMap::new(),
            prompt_overrides: BTreeMap::new(),
            prices: lean::StrMap::from([("gpt-test".to_owned(), (1.0, 2.0))]),
            mcp_servers: vec![],
            allow_mcp_clients: false,
        }
    }

    /// A clock that only moves when slept on, or by one tick per reading when `ticking`.
    #[derive(Default)]
    pub struct FakeClock {
        pub now: Cell<f64>,
        pub ticking: bool,
    }

    impl Clock for FakeClock {
        fn now_ms(&self) -> f64 {
            if self.ticking {
                self.now.set(self.now.get() + 1.0);
            }
            self.now.get()
        }
        async fn sleep(&self, ms: f64) {
            self.now.set(self.now.get() + ms);
        }
    }

    /// A model speaking OpenAI's wire format: each reply in turn (a status and, for a 200,
    /// the message's content, 100 prompt and 10 completion tokens; else the body as is), and
    /// every request kept.
    #[derive(Default)]
    pub struct Scripted {
        replies: RefCell<VecDeque<(u16, String)>>,
        pub seen: RefCell<Vec<HttpRequest>>,
    }

    impl Scripted {
        /// Answers `contents` in order, each a 200.
        pub fn new<S: Into<String>>(contents: impl IntoIterator<Item = S>) -> Scripted {
            Scripted::with_statuses(contents.into_iter().map(|c| (200, c)))
        }

        pub fn with_statuses<S: Into<String>>(
            replies: impl IntoIterator<Item = (u16, S)>,
        ) -> Scripted {
            let replies = replies.into_iter().map(|(status, text)| (status, text.into()));
            Scripted { replies: RefCell::new(replies.collect()), seen: RefCell::default() }
        }
    }

    impl Http for Scripted {
        async fn post(&self, request: &HttpRequest, _: u32) -> Result<HttpResponse, HttpFailure> {
            self.seen.borrow_mut().push(request.clone());
            let (status, text) = self.replies.borrow_mut().pop_front().expect("a scripted reply");
            let body = if status == 200 {
                json!({"choices": [{"message": {"content": text}}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
                .to_string()
            } else {
                text
            };
            Ok(HttpResponse { status, headers: vec![], body })
        }
    }

    /// A browser with one tab that cannot open or close others.
    pub struct OneTab;

    impl Tabs for OneTab {
        async fn list(&self) -> Result<Vec<TabInfo>, TabError> {
            Ok(vec![])
        }
        async fn open(&self, _: &str) -> Result<TabId, TabError> {
            Err(TabError::Failed("no".into()))
        }
        async fn activate(&self, _: TabId) -> Result<(), TabError> {
            Err(TabError::Failed("no".into()))
        }
        async fn close(&self, _: TabId) -> Result<(), TabError> {
            Err(TabError::Failed("no".into()))
        }
    }
}
