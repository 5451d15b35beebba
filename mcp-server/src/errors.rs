//! The JSON-RPC errors a client sees: the worker's refusals, with its sentence as the
//! message, and the host being out of reach.
//!
//! Each carries `data: {"reason": "<code>"}`, so a client can tell them apart without
//! reading the sentence; the numbers are in JSON-RPC's range for server errors, apart from
//! the ones JSON-RPC and MCP define.

use mcp_tools::bridge::ErrorCode as Refusal;
use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::json;

/// What `alphascout-mcp stdio` answers while no host runs.
pub const UNREACHABLE: &str = "AlphaScout is not reachable: start Chromium with AlphaScout and \
                               switch on Settings → Allow MCP clients";

/// The host is not running (browser closed, extension missing, MCP clients off).
pub const UNREACHABLE_CODE: i32 = -32000;

/// The number and reason a refusal goes to the client with.
pub fn code_of(refusal: Refusal) -> (i32, &'static str) {
    match refusal {
        Refusal::InvalidParams => (ErrorCode::INVALID_PARAMS.0, "invalid_params"),
        Refusal::Disabled => (-32001, "disabled"),
        // MCP's own "not found".
        Refusal::NotFound => (ErrorCode::RESOURCE_NOT_FOUND.0, "not_found"),
        Refusal::Denied => (-32003, "denied"),
        Refusal::Busy => (-32004, "busy"),
        Refusal::Internal => (ErrorCode::INTERNAL_ERROR.0, "internal"),
    }
}

/// The worker's refusal as the client's JSON-RPC error.
pub fn refusal(refusal: Refusal, message: String) -> ErrorData {
    let (code, reason) = code_of(refusal);
    ErrorData::new(ErrorCode(code), message, Some(json!({"reason": reason})))
}

/// [`UNREACHABLE`] as a JSON-RPC error.
pub fn unreachable() -> ErrorData {
    ErrorData::new(ErrorCode(UNREACHABLE_CODE), UNREACHABLE, Some(json!({"reason": "unreachable"})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_the_workers_sentence_and_says_its_reason() {
        let error = refusal(Refusal::Busy, "Another job runs in tab 3.".into());
        assert_eq!(error.message, "Another job runs in tab 3.");
        assert_eq!(error.code.0, -32004);
        assert_eq!(error.data, Some(json!({"reason": "busy"})));
    }

    #[test]
    fn every_refusal_has_its_own_code_outside_the_ones_mcp_reserves() {
        let all = [
            Refusal::InvalidParams,
            Refusal::Disabled,
            Refusal::NotFound,
            Refusal::Denied,
            Refusal::Busy,
            Refusal::Internal,
        ];
        let mut codes: Vec<i32> = all.iter().map(|r| code_of(*r).0).collect();
        codes.push(UNREACHABLE_CODE);
        let count = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), count);
        // -32020..-32022 are MCP's header and version errors.
        assert!(codes.iter().all(|c| !(-32022..=-32020).contains(c)));
    }
}
