//! The agent engine: everything the background worker decides, as plain Rust.
//!
//! The engine talks to the outside world only through small traits — [`cdp::Cdp`] for the
//! browser, [`Clock`] for time — so it builds and is tested natively with `cargo test`. The
//! wasm shell in `background/worker` implements those traits over `chrome.*`; nothing here
//! may name `chrome`, `web_sys` or IndexedDB.

pub mod actions;
pub mod cdp;
pub mod observe;
pub mod page_agent;
pub mod page_info;
pub mod page_state;

/// Monotonic time in milliseconds. The worker reads `performance.now()` and sleeps with
/// `setTimeout`; tests advance a counter.
#[allow(async_fn_in_trait)]
pub trait Clock {
    fn now_ms(&self) -> f64;
    async fn sleep(&self, ms: f64);
}
