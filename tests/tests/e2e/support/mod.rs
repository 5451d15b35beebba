//! Code the e2e test files share that the `e2e` library should not carry.

pub mod sync_server;
