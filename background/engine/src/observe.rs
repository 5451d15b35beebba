//! One observation of a tab per step: snapshot the page through the page agent, render it,
//! and compare it with the previous step's.

use std::cell::RefCell;
use std::collections::HashMap;

use protocol::TabId;
use serde::Serialize;
use serde_json::json;

use crate::Clock;
use crate::actions::Tabs;
use crate::cdp::{Cdp, CdpError, Sessions};
use crate::page_agent;
use crate::page_state::{DomComparison, FrameRef, Snapshot, origin_of};

/// How much the page agent looks at.
#[derive(Debug, Clone, Copy)]
pub struct ObserveOptions {
    /// Extra pixels above and below the viewport to list elements from.
    pub margin_px: f64,
    /// Characters of visible text kept per element.
    pub max_text: u32,
    /// Characters of page text (paragraphs, rows, headings) in the rendered state.
    pub text_budget: usize,
}

impl Default for ObserveOptions {
    fn default() -> Self {
        ObserveOptions { margin_px: 0.0, max_text: 80, text_budget: DEFAULT_TEXT_BUDGET }
    }
}

/// The page text a state carries unless settings say otherwise: a screen of a dense
/// document fits.
pub const DEFAULT_TEXT_BUDGET: usize = 6_000;

/// Where the time of one observation went, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ObserveTimings {
    /// The page agent's own pass over the DOM.
    pub in_page: f64,
    /// The CDP round trip around it, including the pass and returning the result.
    pub snapshot: f64,
    pub render: f64,
    pub total: f64,
}

pub struct Observation {
    pub snapshot: Snapshot,
    pub text: String,
    /// `None` on the first observation of a tab.
    pub comparison: Option<DomComparison>,
    pub timings: ObserveTimings,
}

fn snapshot_call(
    options: &ObserveOptions,
    next_id: u32,
    previous: &[u32],
    frame: Option<&FrameRef>,
) -> String {
    let mut args = json!({"margin": options.margin_px, "maxText": options.max_text,
                          "nextId": next_id, "previous": previous});
    if let Some(frame) = frame {
        args["origin"] = json!(frame.origin);
        args["clip"] = json!(frame.clip);
        args["frame"] = json!(frame.frame);
    }
    format!("alphascout.snapshot({args})")
}

fn parse(value: serde_json::Value) -> Result<Snapshot, CdpError> {
    serde_json::from_value(value)
        .map_err(|e| CdpError::Protocol { detail: format!("unreadable page state: {e}") })
}

/// The page-agent id of the `<iframe>` element that holds frame `frame_id`, found through
/// the DOM domain and a reference into the page agent's world.
async fn iframe_of<C: Cdp>(sessions: &Sessions<C>, tab: TabId, frame_id: &str) -> Option<u32> {
    let owner = sessions.send(tab, "DOM.getFrameOwner", json!({"frameId": frame_id})).await.ok()?;
    let node = owner.get("backendNodeId")?.clone();
    let context = page_agent::context(sessions, tab).await.ok()?;
    let resolve = json!({"backendNodeId": node, "executionContextId": context});
    let object = sessions.send(tab, "DOM.resolveNode", resolve).await.ok()?;
    let object_id = object.pointer("/object/objectId")?.clone();
    let call = json!({"objectId": object_id, "returnByValue": true,
        "functionDeclaration": "function () { return globalThis.alphascout.idFor(this); }"});
    let id = sessions.send(tab, "Runtime.callFunctionOn", call).await.ok()?;
    id.pointer("/result/value")?.as_u64().map(|id| id as u32)
}

/// The origin a cross-site frame's elements are tagged with: its document's, else its
/// `src`'s; `None` when that is the page's own.
fn frame_origin(document: &str, src: &str, page: &str) -> Option<String> {
    let origin = Some(origin_of(document)).filter(|o| !o.is_empty()).unwrap_or(origin_of(src));
    (!origin.is_empty() && origin != origin_of(page)).then(|| origin.to_owned())
}

/// Remembers each tab's last snapshot, so the next one can mark what is new, and so ids
/// keep rising across documents in the same tab.
#[derive(Default)]
pub struct Observer {
    last: RefCell<HashMap<TabId, Snapshot>>,
}

impl Observer {
    pub async fn observe<C: Cdp>(
        &self,
        sessions: &Sessions<C>,
        clock: &impl Clock,
        tabs: &impl Tabs,
        tab: TabId,
        options: ObserveOptions,
    ) -> Result<Observation, CdpError> {
        let started = clock.now_ms();
        let (previous_ids, next_id) = match self.last.borrow().get(&tab) {
            Some(last) => (last.elements.iter().map(|e| e.id).collect(), last.next_id),
            None => (Vec::new(), 1),
        };
        let previous_in = |session: Option<&str>| -> Vec<u32> {
            let owned = |id: &u32| sessions.owner_of(tab, *id).as_deref() == session;
            previous_ids.iter().copied().filter(owned).collect()
        };
        let call = snapshot_call(&options, next_id, &previous_in(None), None);
        let value = page_agent::evaluate(sessions, tab, &call).await?;
        let mut snapshot = parse(value)?;
        // Cross-site frames live in other processes: each has its own page agent, reached
        // through its child session, and continues the id sequence where the last ended.
        for (session, child) in sessions.children(tab) {
            if snapshot.frames.is_empty() {
                break;
            }
            let known = child.iframe_id.filter(|id| snapshot.frames.iter().any(|f| f.id == *id));
            let iframe = match known {
                Some(id) => id,
                None => match iframe_of(sessions, tab, &child.target_id).await {
                    Some(id) => {
                        sessions.update_child(tab, &session, |c| c.iframe_id = Some(id));
                        id
                    }
                    None => continue,
                },
            };
            let Some(frame) = snapshot.frames.iter().find(|f| f.id == iframe).cloned() else {
                continue;
            };
            let call = snapshot_call(
                &options,
                snapshot.next_id,
                &previous_in(Some(&session)),
                Some(&frame),
            );
            // A frame still loading has no document to read yet; it shows up next step.
            let Ok(value) =
                page_agent::evaluate_in_frame(sessions, tab, Some(&session), &call).await
            else {
                continue;
            };
            let Ok(mut inner) = parse(value) else { continue };
            let origin = frame_origin(&inner.url, &frame.src, &snapshot.url);
            for element in &mut inner.elements {
                sessions.set_owner(tab, element.id, &session);
                element.origin.clone_from(&origin);
            }
            snapshot.next_id = snapshot.next_id.max(inner.next_id);
            snapshot.covered += inner.covered;
            snapshot.gone.extend(inner.gone);
            snapshot.in_page_ms += inner.in_page_ms;
            let offset = snapshot.elements.len() as u32;
            snapshot.text.extend(inner.text.into_iter().map(|mut t| {
                t.at += offset;
                t
            }));
            snapshot.elements.extend(inner.elements);
        }
        snapshot.tab_id = tab;
        snapshot.tabs = tabs.list().await.unwrap_or_default();
        let measured = clock.now_ms();
        let previous = self.last.borrow_mut().insert(tab, snapshot.clone());
        let text = snapshot.render(previous.as_ref(), options.text_budget);
        let comparison = previous.as_ref().map(|p| snapshot.compare(p));
        let done = clock.now_ms();
        let timings = ObserveTimings {
            in_page: snapshot.in_page_ms,
            snapshot: measured - started,
            render: done - measured,
            total: done - started,
        };
        Ok(Observation { snapshot, text, comparison, timings })
    }

    /// The elements of `tab`'s latest observation.
    pub fn last_elements(&self, tab: TabId) -> Option<Vec<crate::page_state::Element>> {
        self.last.borrow().get(&tab).map(|s| s.elements.clone())
    }

    /// Forgets a closed tab.
    pub fn forget(&self, tab: TabId) {
        self.last.borrow_mut().remove(&tab);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use crate::testing::{FakeClock, OneTab};
    use futures::executor::block_on;

    fn state(elements: serde_json::Value, next_id: u32) -> Result<serde_json::Value, CdpError> {
        Ok(json!({"result": {"value": {"url": "http://h/", "title": "T", "viewport": [800, 600],
            "elements": elements, "nextId": next_id}}}))
    }

    #[test]
    fn the_second_observation_marks_new_elements_and_compares() {
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {}}))) // injecting the agent
            .answer(
                "Runtime.evaluate",
                state(json!([{"id": 1, "tag": "button", "text": "Open"}]), 2),
            )
            .answer(
                "Runtime.evaluate",
                state(
                    json!([{"id": 1, "tag": "button", "text": "Open"},
                             {"id": 2, "tag": "li", "text": "Menu item"}]),
                    3,
                ),
            );
        let sessions = Sessions::new(&fake);
        let observer = Observer::default();
        let clock = FakeClock { ticking: true, ..Default::default() };
        let first =
            block_on(observer.observe(&sessions, &clock, &OneTab, 1, Default::default())).unwrap();
        assert!(first.comparison.is_none());
        assert!(first.text.contains("\n[1]<button>Open\n"));
        let second =
            block_on(observer.observe(&sessions, &clock, &OneTab, 1, Default::default())).unwrap();
        assert!(second.text.contains("\n+[2]<li>Menu item\n"), "{}", second.text);
        assert_eq!(second.comparison.unwrap().added_elements, ["[2] li \"Menu item\""]);
        assert!(second.timings.total > 0.0);
    }

    #[test]
    fn elements_of_another_sites_frame_carry_its_origin() {
        let top = json!({"url": "http://127.0.0.1:4000/page.html", "title": "T",
            "viewport": [800, 600], "nextId": 6,
            "elements": [{"id": 1, "tag": "button", "text": "Top"}],
            "frames": [{"id": 5, "frame": 1, "src": "http://localhost:4001/ad.html"}]});
        let framed = json!({"url": "http://localhost:4001/ad.html", "title": "Ad",
            "viewport": [300, 100], "nextId": 7,
            "elements": [{"id": 6, "tag": "button", "text": "Confirm payment"}]});
        let fake = FakeCdp::page()
            .answer("Runtime.evaluate", Ok(json!({"result": {}}))) // the page's agent
            .answer("Runtime.evaluate", Ok(json!({"result": {"value": top}})))
            .answer("Runtime.evaluate", Ok(json!({"result": {}}))) // the frame's agent
            .answer("Runtime.evaluate", Ok(json!({"result": {"value": framed}})));
        let sessions = Sessions::new(&fake);
        block_on(sessions.send(1, "Page.enable", json!({}))).unwrap();
        let attached = json!({"sessionId": "S2", "targetInfo": {"type": "iframe",
            "targetId": "T2", "url": "http://localhost:4001/ad.html"}});
        sessions.on_event(1, "Target.attachedToTarget", &attached, 1.0);
        sessions.update_child(1, "S2", |child| child.iframe_id = Some(5));
        let clock = FakeClock::default();
        let seen = block_on(Observer::default().observe(
            &sessions,
            &clock,
            &OneTab,
            1,
            Default::default(),
        ))
        .unwrap();
        assert!(seen.text.contains("\n[1]<button>Top\n"), "{}", seen.text);
        assert!(
            seen.text.contains("\n[6]<button origin=http://localhost:4001>Confirm payment\n"),
            "{}",
            seen.text
        );
        assert_eq!(frame_origin("http://h:1/a", "", "http://h:1/b"), None, "the page's own");
        assert_eq!(
            frame_origin("about:blank", "http://x:2/f", "http://h:1/"),
            Some("http://x:2".into())
        );
    }
}
