//! The agent engine: everything the background worker decides, as plain Rust.
//!
//! The engine talks to the outside world only through small traits — today [`cdp::Cdp`] for
//! the browser — so it builds and is tested natively with `cargo test`. The wasm shell in
//! `background/worker` implements those traits over `chrome.*`; nothing here may name
//! `chrome`, `web_sys` or IndexedDB.

pub mod cdp;
pub mod page_agent;
pub mod page_info;
