//! The actions beyond a click and typing: double- and right-clicks, drags, selecting text,
//! setting a slider, copy and paste. Each is real input over CDP (the pointer and key events
//! a hand makes, so the page hears `dblclick`, `contextmenu`, HTML5 drag events, pointer
//! moves, `selectionchange`, `copy` and `paste`), and each reports what it changed as a click
//! does. The page-side half (where a phrase or a slider's track is) is `page-hands.js`.

use protocol::TabId;
use serde_json::{Value, json};

use super::{ActionOutcome, Hands, KeyPress, MOVE_ANSWER_MS, Tabs};
use crate::Clock;
use crate::cdp::{Cdp, CdpError};

/// How a press on an element is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Press {
    Left,
    Double,
    Right,
}

impl Press {
    fn button(self) -> (&'static str, u32) {
        match self {
            Press::Right => ("right", 2),
            Press::Left | Press::Double => ("left", 1),
        }
    }

    fn clicks(self) -> u32 {
        if self == Press::Double { 2 } else { 1 }
    }

    pub(super) fn did(self, id: u32) -> String {
        match self {
            Press::Left => format!("Clicked [{id}]"),
            Press::Double => format!("Double-clicked [{id}]"),
            Press::Right => format!("Right-clicked [{id}]"),
        }
    }
}

/// A drag's pointer moves after the first few pixels: enough for a page to follow it as a
/// hand moving, each a frame apart.
const DRAG_STEPS: u32 = 8;
const FRAME_MS: f64 = 16.0;
/// Chrome and most drag libraries start a drag only past a few pixels of movement.
const DRAG_THRESHOLD_PX: f64 = 6.0;
/// At most this many arrow presses to finish setting a slider the drag left short.
const SLIDER_KEYS: usize = 40;

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// Whitespace and case aside, the same text.
fn same_text(a: &str, b: &str) -> bool {
    let norm = |s: &str| text_case::lowercase(&s.split_whitespace().collect::<Vec<_>>().join(" "));
    norm(a) == norm(b)
}

/// The element the model named no longer exists: not carried out, and not its fault.
fn gone(id: u32) -> ActionOutcome {
    ActionOutcome::stale(format!(
        "Element [{id}] is gone: the page changed since the state you saw."
    ))
}

/// A number as a person writes it: `7`, not `7.0`.
pub(super) fn plain_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}

impl<C: Cdp, K: Clock, T: Tabs> Hands<'_, C, K, T> {
    /// One mouse event with the button held as `buttons` says (0: none, 1: left, 2: right).
    pub(super) async fn mouse_event(
        &self,
        tab: TabId,
        kind: &str,
        (x, y): (f64, f64),
        button: &str,
        buttons: u32,
        clicks: u32,
    ) -> Result<(), CdpError> {
        let event = json!({"type": kind, "x": x, "y": y, "button": button,
                           "buttons": buttons, "clickCount": clicks});
        self.sessions.send(tab, "Input.dispatchMouseEvent", event).await.map(drop)
    }

    /// A pointer move, not waited for beyond a few frames: a hidden tab draws no frames, and
    /// the next press flushes the move in order anyway.
    async fn move_to(&self, tab: TabId, at: (f64, f64), buttons: u32) -> Result<(), CdpError> {
        let moved = self.mouse_event(tab, "mouseMoved", at, "left", buttons, 0);
        match crate::within(self.clock, MOVE_ANSWER_MS, moved).await {
            Some(result) => result,
            None => Ok(()),
        }
    }

    /// Moves to (x, y) and presses there as `press` says: once, twice (the second press
    /// with a click count of 2, which makes the `dblclick`), or with the right button.
    pub(super) async fn press_at(
        &self,
        tab: TabId,
        at: (f64, f64),
        press: Press,
    ) -> Result<(), CdpError> {
        self.move_to(tab, at, 0).await?;
        let (button, held) = press.button();
        for count in 1..=press.clicks() {
            self.mouse_event(tab, "mousePressed", at, button, held, count).await?;
            self.mouse_event(tab, "mouseReleased", at, button, 0, count).await?;
        }
        Ok(())
    }

    /// Where element `id`'s frame starts in the tab's viewport (zero in the main frame).
    pub(super) async fn origin_of(&self, tab: TabId, id: u32) -> Result<(f64, f64), CdpError> {
        match self.sessions.owner_of(tab, id) {
            Some(session) => self.frame_origin(tab, &session).await,
            None => Ok((0.0, 0.0)),
        }
    }

    /// Presses at `from`, moves past the drag threshold, then on to `to` a frame at a time,
    /// and releases there: what a hand does, so pointer-driven lists and HTML5 drag and drop
    /// both see a drag.
    async fn drag_between(
        &self,
        tab: TabId,
        from: (f64, f64),
        to: (f64, f64),
    ) -> Result<(), CdpError> {
        self.move_to(tab, from, 0).await?;
        self.mouse_event(tab, "mousePressed", from, "left", 1, 1).await?;
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        let length = dx.hypot(dy).max(1.0);
        let nudge =
            (from.0 + dx / length * DRAG_THRESHOLD_PX, from.1 + dy / length * DRAG_THRESHOLD_PX);
        self.move_to(tab, nudge, 1).await?;
        for step in 1..=DRAG_STEPS {
            self.clock.sleep(FRAME_MS).await;
            let share = f64::from(step) / f64::from(DRAG_STEPS);
            self.move_to(tab, (from.0 + dx * share, from.1 + dy * share), 1).await?;
        }
        // Held still over the target for a frame: drop zones mark themselves on `dragover`.
        self.clock.sleep(FRAME_MS).await;
        self.move_to(tab, to, 1).await?;
        self.mouse_event(tab, "mouseReleased", to, "left", 0, 1).await
    }

    pub(super) async fn drag(
        &self,
        tab: TabId,
        id: u32,
        onto: Option<u32>,
        onto_text: Option<&str>,
        (dx, dy): (f64, f64),
    ) -> Result<ActionOutcome, CdpError> {
        if onto.is_none() && onto_text.is_none() && dx == 0.0 && dy == 0.0 {
            return Ok(ActionOutcome::fail(format!(
                "Say where to drop [{id}]: `to` another element's id, `to_text` the words shown \
                 where it goes, or `dx`/`dy` in pixels."
            )));
        }
        let (x, y, mutations, link) = match self.point(tab, id).await? {
            Ok(point) => point,
            Err(outcome) => return Ok(outcome),
        };
        // A link dropped where nothing takes it is opened, like a click.
        if let Some(link) = link
            && let Err(refusal) = self.firewall.check(&link)
        {
            return Ok(ActionOutcome::fail(format!(
                "Not dragged: [{id}] is a link, and dropping it can open it. {refusal}"
            )));
        }
        let (to, did) = match (onto, onto_text) {
            (Some(target), _) => match self.point(tab, target).await? {
                Ok((tx, ty, ..)) => ((tx + dx, ty + dy), format!("Dragged [{id}] onto [{target}]")),
                Err(outcome) => return Ok(outcome),
            },
            (None, Some(text)) => {
                let call = format!("alphascoutHands.textPoint({}, {id})", Value::from(text));
                let found = self.agent(tab, &call).await?;
                let (Some(tx), Some(ty)) = (found["x"].as_f64(), found["y"].as_f64()) else {
                    return Ok(ActionOutcome::fail(format!(
                        "No visible text {text:?} to drop [{id}] on. Use the words exactly as \
                         the page shows them, or `to` an element's id."
                    )));
                };
                ((tx + dx, ty + dy), format!("Dragged [{id}] onto {text:?}"))
            }
            (None, None) => ((x + dx, y + dy), format!("Dragged [{id}] by ({dx:.0}, {dy:.0}) px")),
        };
        let before = self.activity(tab);
        self.drag_between(tab, (x, y), to).await?;
        let settled = self.settle(tab, &before).await;
        Ok(self.describe_settled(tab, did, settled, Some(mutations)).await)
    }

    /// Asks the page agent of `id`'s frame (or the main frame's) for `call`.
    async fn ask(&self, tab: TabId, id: Option<u32>, call: &str) -> Result<Value, CdpError> {
        match id {
            Some(id) => self.agent_for(tab, id, call).await,
            None => self.agent(tab, call).await,
        }
    }

    pub(super) async fn select_text(
        &self,
        tab: TabId,
        text: &str,
        id: Option<u32>,
    ) -> Result<ActionOutcome, CdpError> {
        let args = format!("{}, {}", Value::from(text), id.unwrap_or(0));
        let span = self.ask(tab, id, &format!("alphascoutHands.textSpan({args})")).await?;
        let place = id.map_or("on this page".to_owned(), |id| format!("in [{id}]"));
        if span.get("gone").is_some() {
            return Ok(gone(id.unwrap_or_default()));
        }
        if span.get("missing").is_some() {
            return Ok(ActionOutcome::fail(format!(
                "No visible text {text:?} {place}. Copy the words exactly as the page shows them."
            )));
        }
        let before = self.activity(tab);
        let mut selected = String::new();
        // With the mouse where a press and release cannot click anything: the page sees a
        // person's selection, mouse events and all.
        if span["fits"] == true {
            let (ox, oy) = match id {
                Some(id) => self.origin_of(tab, id).await?,
                None => (0.0, 0.0),
            };
            let at = |key: &str| {
                (
                    span[key][0].as_f64().unwrap_or_default() + ox,
                    span[key][1].as_f64().unwrap_or_default() + oy,
                )
            };
            self.move_to(tab, at("start"), 0).await?;
            self.mouse_event(tab, "mousePressed", at("start"), "left", 1, 1).await?;
            self.move_to(tab, at("end"), 1).await?;
            self.mouse_event(tab, "mouseReleased", at("end"), "left", 0, 1).await?;
            let read = self.ask(tab, id, "alphascoutHands.selection()").await?;
            selected = read.as_str().unwrap_or_default().to_owned();
        }
        // In a field, on a link or button, or where the mouse caught more or less.
        if !same_text(&selected, text) {
            let chosen = self.ask(tab, id, &format!("alphascoutHands.selectText({args})")).await?;
            selected = chosen["selected"].as_str().unwrap_or_default().to_owned();
        }
        if !same_text(&selected, text) {
            return Ok(ActionOutcome::fail(format!(
                "Tried to select {text:?} {place}, but the selection is {:?}.",
                clip(&selected, 200)
            )));
        }
        let settled = self.settle(tab, &before).await;
        let did = format!("Selected {:?}", clip(&selected, 200));
        Ok(self.describe_settled(tab, did, settled, None).await)
    }

    pub(super) async fn set_slider(
        &self,
        tab: TabId,
        id: u32,
        value: f64,
    ) -> Result<ActionOutcome, CdpError> {
        let info = self.agent_for(tab, id, &format!("alphascoutHands.slider({id})")).await?;
        if info.get("gone").is_some() {
            return Ok(gone(id));
        }
        // A range input takes its value as typed, with its own events.
        if info.get("native").is_some() {
            return self.type_text(tab, id, &plain_number(value), true).await;
        }
        if info.get("notSlider").is_some() {
            return Ok(ActionOutcome::fail(format!(
                "[{id}] is not a slider (no range input or role=slider in or around it). \
                 Drag its handle with `drag` and `dx` instead."
            )));
        }
        let (min, max) =
            (info["min"].as_f64().unwrap_or(0.0), info["max"].as_f64().unwrap_or(100.0));
        if !(min..=max).contains(&value) || max <= min {
            return Ok(ActionOutcome::fail(format!(
                "Slider [{id}] goes from {} to {}; {} is outside it.",
                plain_number(min),
                plain_number(max),
                plain_number(value)
            )));
        }
        let (ox, oy) = self.origin_of(tab, id).await?;
        let num = |v: &Value, i: usize| v[i].as_f64().unwrap_or_default();
        let thumb = (num(&info["thumb"], 0) + ox, num(&info["thumb"], 1) + oy);
        let track = &info["track"];
        let (left, top) = (num(track, 0) + ox, num(track, 1) + oy);
        let (width, height) = (num(track, 2), num(track, 3));
        let share = (value - min) / (max - min);
        let vertical = info["vertical"] == true;
        let target = if vertical {
            (thumb.0, top + height - share * height)
        } else {
            (left + share * width, thumb.1)
        };
        let before = self.activity(tab);
        self.drag_between(tab, thumb, target).await?;
        let mut now = self.slider_value(tab, id).await?;
        // Where the drag lands between two steps, the arrow keys finish the job, one step
        // each, as a person nudges a slider.
        if let Some(first) = now.0
            && first != value
        {
            self.agent_for(tab, id, &format!("alphascoutHands.focusSlider({id})")).await?;
            let (up, down) =
                if vertical { ("ArrowUp", "ArrowDown") } else { ("ArrowRight", "ArrowLeft") };
            let key = KeyPress::parse(if first < value { up } else { down })
                .expect("arrow keys are named keys");
            let rising = first < value;
            for _ in 0..SLIDER_KEYS {
                self.press(tab, &key).await?;
                let next = self.slider_value(tab, id).await?;
                let passed = next.0.is_none_or(|n| if rising { n >= value } else { n <= value });
                let stuck = next.0 == now.0;
                now = next;
                if passed || stuck {
                    break;
                }
            }
        }
        let settled = self.settle(tab, &before).await;
        let shows = match (&now.0, now.1.is_empty()) {
            (_, false) => format!("{:?}", now.1),
            (Some(n), true) => plain_number(*n),
            (None, true) => "no value of its own (check the page)".into(),
        };
        let outcome = self
            .describe_settled(tab, format!("Moved slider [{id}]; it shows {shows}"), settled, None)
            .await;
        match now.0 {
            Some(n) if n != value => Ok(ActionOutcome::fail(format!(
                "{}; not {} (the nearest it takes).",
                outcome.message,
                plain_number(value)
            ))),
            _ => Ok(outcome),
        }
    }

    /// A custom slider's value now: `aria-valuenow` and `aria-valuetext`.
    async fn slider_value(&self, tab: TabId, id: u32) -> Result<(Option<f64>, String), CdpError> {
        let info = self.agent_for(tab, id, &format!("alphascoutHands.slider({id})")).await?;
        Ok((info["now"].as_f64(), info["text"].as_str().unwrap_or_default().to_owned()))
    }

    pub(super) async fn copy(
        &self,
        tab: TabId,
        id: Option<u32>,
    ) -> Result<ActionOutcome, CdpError> {
        let selected = match id {
            Some(id) => {
                let chosen =
                    self.agent_for(tab, id, &format!("alphascoutHands.selectAll({id})")).await?;
                if chosen.get("gone").is_some() {
                    return Ok(gone(id));
                }
                chosen["selected"].as_str().unwrap_or_default().to_owned()
            }
            None => {
                let read = self.agent(tab, "alphascoutHands.selection()").await?;
                read.as_str().unwrap_or_default().to_owned()
            }
        };
        if selected.trim().is_empty() {
            return Ok(ActionOutcome::fail(
                "Nothing is selected to copy: select_text first, or give copy an element id.",
            ));
        }
        let before = self.activity(tab);
        self.press(tab, &KeyPress::parse("Control+C").expect("a letter with Control")).await?;
        let settled = self.settle(tab, &before).await;
        let did = format!("Copied {:?}", clip(&selected, 200));
        Ok(self.describe_settled(tab, did, settled, None).await)
    }

    pub(super) async fn paste(&self, tab: TabId, id: u32) -> Result<ActionOutcome, CdpError> {
        let focused = self.agent_for(tab, id, &format!("alphascoutHands.focusAtEnd({id})")).await?;
        if focused.get("gone").is_some() {
            return Ok(gone(id));
        }
        if focused.get("notField").is_some() {
            return Ok(ActionOutcome::fail(format!(
                "[{id}] is not a field: paste goes into a text box or an editable area."
            )));
        }
        if focused.get("readonly").is_some() {
            return Ok(ActionOutcome::fail(format!("[{id}] is read-only or disabled.")));
        }
        let was = self.agent_for(tab, id, &format!("alphascout.value({id})")).await?;
        let before = self.activity(tab);
        self.press(tab, &KeyPress::parse("Control+V").expect("a letter with Control")).await?;
        let settled = self.settle(tab, &before).await;
        let now = self.agent_for(tab, id, &format!("alphascout.value({id})")).await?;
        if now["value"] == was["value"] {
            return Ok(ActionOutcome::fail(format!(
                "Pasted into [{id}], but it did not change: the clipboard is empty or the page \
                 refused the paste. Copy something first."
            )));
        }
        let reads = now["value"].as_str().unwrap_or_default();
        let did = format!("Pasted into [{id}]; it now reads {:?}", clip(reads, 200));
        Ok(self.describe_settled(tab, did, settled, None).await)
    }
}
