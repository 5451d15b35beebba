//! Timestamps in the shared contract's one form (`run_contract::time`, which the engine's
//! `run::iso8601` writes too): ISO 8601 UTC with milliseconds, `2026-11-22T06:37:49.123Z`,
//! so they sort as text in SQL.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Now, as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn now() -> String {
    format_ms(now_ms())
}

pub use run_contract::time::{format_ms, normalize, parse_ms};
