//! A JPEG of the tab's viewport on demand, optionally with numbered set-of-mark boxes over
//! the listed elements, for vision models.

use protocol::TabId;
use serde_json::{Value, json};

use crate::cdp::{Cdp, CdpError, Sessions};
use crate::page_agent;
use crate::page_state::Element;

/// Captures the viewport as JPEG (base64). With `marks`, each element's id is drawn over it
/// for this one capture, then removed.
pub async fn capture<C: Cdp>(
    sessions: &Sessions<C>,
    tab: TabId,
    marks: Option<&[Element]>,
    quality: u8,
) -> Result<String, CdpError> {
    if let Some(elements) = marks {
        let boxes: Vec<Value> = elements
            .iter()
            .filter(|e| !e.offscreen)
            .map(|e| json!([e.id, e.bbox[0], e.bbox[1], e.bbox[2], e.bbox[3]]))
            .collect();
        page_agent::evaluate(
            sessions,
            tab,
            &format!("alphascout.showMarks({})", Value::from(boxes)),
        )
        .await?;
    }
    let shot = sessions
        .send(tab, "Page.captureScreenshot", json!({"format": "jpeg", "quality": quality}))
        .await;
    if marks.is_some() {
        // Leave the page as it was, even when the capture failed.
        page_agent::evaluate(sessions, tab, "alphascout.hideMarks()").await?;
    }
    shot?
        .get("data")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| CdpError::Protocol { detail: "the screenshot came back empty".into() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use futures::executor::block_on;

    #[test]
    fn marks_are_drawn_for_the_capture_and_removed_after() {
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {}})))
            .answer("Page.captureScreenshot", Ok(json!({"data": "/9j/AAA"})));
        let sessions = Sessions::new(&fake);
        let button = Element {
            id: 4,
            tag: "button".into(),
            bbox: [1.0, 2.0, 30.0, 20.0],
            ..Default::default()
        };
        let data = block_on(capture(&sessions, 1, Some(&[button]), 70)).unwrap();
        assert_eq!(data, "/9j/AAA");
        let calls = fake.calls.borrow();
        let shot = calls.iter().position(|c| c.starts_with("Page.captureScreenshot")).unwrap();
        let evaluations: Vec<usize> = calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.starts_with("Runtime.evaluate"))
            .map(|(i, _)| i)
            .collect();
        assert!(evaluations.iter().any(|i| *i < shot) && evaluations.iter().any(|i| *i > shot));
    }
}
