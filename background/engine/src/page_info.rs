//! Small facts about a page. The first user of the page agent; the page-state extractor
//! builds on the same path.

use protocol::TabId;
use serde_json::Value;

use crate::cdp::{Cdp, CdpError, Sessions};
use crate::page_agent;

/// The tab's `document.title`, read in the page agent's world so the page cannot fake it
/// by redefining globals.
pub async fn title<C: Cdp>(sessions: &Sessions<C>, tab: TabId) -> Result<String, CdpError> {
    match page_agent::evaluate(sessions, tab, "alphascout.describe().title").await? {
        Value::String(title) => Ok(title),
        other => Err(CdpError::Protocol { detail: format!("document.title was {other}") }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use futures::executor::block_on;
    use serde_json::json;

    #[test]
    fn reads_the_title_by_value() {
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {"value": "Fixture Shop"}})));
        let sessions = Sessions::new(&fake);
        assert_eq!(block_on(title(&sessions, 5)).unwrap(), "Fixture Shop");
    }

    #[test]
    fn a_non_string_title_is_a_protocol_error() {
        let fake = FakeCdp::page().answer("Runtime.evaluate", Ok(json!({"result": {"value": 3}})));
        let sessions = Sessions::new(&fake);
        assert!(matches!(block_on(title(&sessions, 5)), Err(CdpError::Protocol { .. })));
    }
}
