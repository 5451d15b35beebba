//! The page-side helpers in `content-script/page-agent.js`, injected on first need into an
//! isolated world of the tab's main frame, and called from Rust.
//!
//! An isolated world shares the DOM with the page but not its JavaScript globals, so page
//! scripts can neither see the helpers nor monkey-patch what they call.

use protocol::TabId;
use serde_json::{Value, json};

use crate::cdp::{Cdp, CdpError, Sessions};

/// The page agent's source, compiled into the worker: the state and the basic actions,
/// then the helpers of the actions beyond clicking and typing (`alphascoutHands`). Both
/// without their comments (`build.rs`).
pub const SOURCE: &str = concat!(
    include_str!(concat!(env!("OUT_DIR"), "/page-agent.js")),
    include_str!(concat!(env!("OUT_DIR"), "/page-hands.js"))
);

/// The recorder's source (`content-script/recorder.js`), for the worker to install beside
/// the page agent while a person records.
pub const RECORDER_SOURCE: &str = include_str!(concat!(env!("OUT_DIR"), "/recorder.js"));

/// The world name visible in DevTools' context picker.
pub const WORLD_NAME: &str = "alphascout";

/// Evaluates `expression` in the page agent's world (injecting it first if this document
/// has not got it yet) and returns the value as JSON.
pub async fn evaluate<C: Cdp>(
    sessions: &Sessions<C>,
    tab: TabId,
    expression: &str,
) -> Result<Value, CdpError> {
    evaluate_in_frame(sessions, tab, None, expression).await
}

/// [`evaluate`] in the tab's main frame (`session` = `None`) or in the out-of-process iframe
/// behind child `session`, which has a page agent of its own.
pub async fn evaluate_in_frame<C: Cdp>(
    sessions: &Sessions<C>,
    tab: TabId,
    session: Option<&str>,
    expression: &str,
) -> Result<Value, CdpError> {
    let context = match sessions.page_agent_context(tab, session) {
        Some(context) => context,
        None => inject(sessions, tab, session).await?,
    };
    match evaluate_in(sessions, tab, session, context, expression).await {
        // The document changed since we injected: inject into the new one, once.
        Err(error) if error.is_stale_context() => {
            let context = inject(sessions, tab, session).await?;
            evaluate_in(sessions, tab, session, context, expression).await
        }
        other => other,
    }
}

/// The execution context id of the page agent's world in the main frame, injecting if
/// needed (for `DOM.resolveNode` into that world).
pub async fn context<C: Cdp>(sessions: &Sessions<C>, tab: TabId) -> Result<i64, CdpError> {
    match sessions.page_agent_context(tab, None) {
        Some(context) => Ok(context),
        None => inject(sessions, tab, None).await,
    }
}

async fn inject<C: Cdp>(
    sessions: &Sessions<C>,
    tab: TabId,
    session: Option<&str>,
) -> Result<i64, CdpError> {
    let tree = sessions.send_in(tab, session, "Page.getFrameTree", json!({})).await?;
    let frame_id = tree
        .pointer("/frameTree/frame/id")
        .and_then(Value::as_str)
        .ok_or_else(|| CdpError::Protocol { detail: "the tab has no main frame".into() })?;
    let world = json!({"frameId": frame_id, "worldName": WORLD_NAME});
    let world = sessions.send_in(tab, session, "Page.createIsolatedWorld", world).await?;
    let context = world
        .get("executionContextId")
        .and_then(Value::as_i64)
        .ok_or_else(|| CdpError::Protocol { detail: "no isolated world was created".into() })?;
    evaluate_in(sessions, tab, session, context, SOURCE).await?;
    sessions.set_page_agent_context(tab, session, Some(context));
    Ok(context)
}

async fn evaluate_in<C: Cdp>(
    sessions: &Sessions<C>,
    tab: TabId,
    session: Option<&str>,
    context: i64,
    expression: &str,
) -> Result<Value, CdpError> {
    let params = json!({
        "expression": expression,
        "contextId": context,
        "returnByValue": true,
        "awaitPromise": true,
    });
    let reply = sessions.send_in(tab, session, "Runtime.evaluate", params).await?;
    if let Some(details) = reply.get("exceptionDetails") {
        let description = details
            .pointer("/exception/description")
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("the page threw an exception");
        return Err(CdpError::PageException { description: description.to_owned() });
    }
    Ok(reply.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use futures::executor::block_on;

    #[test]
    fn injects_once_per_document_then_evaluates_in_that_world() {
        let fake =
            FakeCdp::page().answer("Runtime.evaluate", Ok(json!({"result": {"value": "x"}})));
        let sessions = Sessions::new(&fake);
        assert_eq!(block_on(evaluate(&sessions, 1, "a")).unwrap(), "x");
        assert_eq!(block_on(evaluate(&sessions, 1, "b")).unwrap(), "x");
        let calls = fake.calls.borrow();
        assert_eq!(calls.iter().filter(|c| c.starts_with("Page.createIsolatedWorld")).count(), 1);
        assert_eq!(calls.iter().filter(|c| c.starts_with("Runtime.evaluate")).count(), 3);
    }

    #[test]
    fn reinjects_when_the_page_navigated_away_from_the_old_world() {
        let gone = CdpError::Protocol { detail: "Cannot find context with specified id".into() };
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {}})))
            .answer("Runtime.evaluate", Err(gone))
            .answer("Runtime.evaluate", Ok(json!({"result": {}})))
            .answer("Runtime.evaluate", Ok(json!({"result": {"value": 2}})));
        let sessions = Sessions::new(&fake);
        assert_eq!(block_on(evaluate(&sessions, 1, "n")).unwrap(), 2);
        let worlds = fake.calls.borrow().iter().filter(|c| c.contains("IsolatedWorld")).count();
        assert_eq!(worlds, 2, "one world for each document");
    }

    #[test]
    fn a_page_exception_is_reported_with_its_description() {
        let fake = FakeCdp::page().answer(
            "Runtime.evaluate",
            Ok(json!({"result": {}, "exceptionDetails": {"text": "Uncaught",
                "exception": {"description": "TypeError: boom"}}})),
        );
        let sessions = Sessions::new(&fake);
        let error = block_on(evaluate(&sessions, 1, "x")).unwrap_err();
        assert_eq!(error, CdpError::PageException { description: "TypeError: boom".into() });
    }
}
