//! Record: what the shell sees in a tab while the user works ([`RawEvent`]s), folded into the
//! steps of a [`Recording`] (a pre-action screenshot and one action each).
//!
//! The shell only reports; every decision about what makes a step is here, so it is tested
//! natively:
//! * typing into one field is one `type` step with the field's final value, whatever the
//!   number of input events; a secret field's text is kept only as [`SECRET_MASK`];
//! * choosing several times in a row in one list is one `select` step with the last choice;
//! * only Enter, Escape and Tab are kept among key presses (the rest is typing);
//! * consecutive scrolls of one target are one scroll, dropped under [`MIN_SCROLL_SCREENS`];
//! * a navigation the user did not start (the browser says so, or, when it does not, one
//!   within [`CAUSED_WITHIN_MS`] of a click, key or select) is that action's effect, not a
//!   step;
//! * a `details` note goes onto the next step (the last one when nothing follows);
//! * an `extract` (Ctrl+I) is a step of its own, with the screenshot taken when it was asked;
//! * a double-click is one step, not the two clicks the browser reports before it; a paste
//!   is the step, not the input it causes.

use serde::Serialize;

use crate::schema::ActionKind;

/// What stands in for a secret's text wherever a recording is kept (the executor's mask).
pub const SECRET_MASK: &str = "[secret]";

/// Scrolls smaller than this (in screens, summed over a burst) do not change what a person
/// can reach, so they are not steps.
pub const MIN_SCROLL_SCREENS: f64 = 0.25;

/// A click this soon after a drag is the drag's release, not a step.
pub const DRAG_CLICK_MS: f64 = 300.0;

/// A navigation this soon after a click, key press or select is taken to be its effect.
pub const CAUSED_WITHIN_MS: f64 = 3000.0;

/// An element as the recorder describes it: enough for a model to understand the step and
/// for replay to find the element again without coordinates.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TargetDescriptor {
    pub tag: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The accessible name (the page state's element text).
    pub name: String,
    /// The element's own visible text, when it differs from its name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The text of its `<label>`, for fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// The `name` attribute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_attr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// A CSS selector the recorder judged stable (ids, `data-testid`, names; no positions
    /// when it could avoid them). Empty when it found none.
    pub selector: String,
    /// The element's id in the page state of the step's pre-action snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_id: Option<u32>,
    /// x, y, width, height in viewport CSS pixels.
    #[serde(rename = "box")]
    pub bbox: [f64; 4],
    /// The page agent's verdict that the field holds a secret (card number, code…).
    pub secret: bool,
}

impl TargetDescriptor {
    /// The engine's rule for secret fields (as the browser's `is_secret`): a password, or a
    /// field the page agent marked secret.
    pub fn is_secret(&self) -> bool {
        self.secret || self.input_type.as_deref() == Some("password")
    }

    /// How a person would name it, for prompts and the editor.
    pub fn describe(&self) -> String {
        let name = [Some(&self.name), self.label.as_ref(), self.placeholder.as_ref()]
            .into_iter()
            .flatten()
            .find(|n| !n.trim().is_empty())
            .map(|n| prompt_files::truncate(n.trim(), 60));
        let kind = self.role.clone().unwrap_or_else(|| self.tag.clone());
        match name {
            Some(name) => format!("{kind} {name:?}"),
            None if !self.selector.is_empty() => format!("{kind} at {}", self.selector),
            None => kind,
        }
    }

    /// Two descriptors name the same element (for coalescing typing, and for the clicks a
    /// double-click is made of).
    fn same_field(&self, other: &TargetDescriptor) -> bool {
        if !self.selector.is_empty() || !other.selector.is_empty() {
            return self.selector == other.selector;
        }
        self.state_id.is_some() && self.state_id == other.state_id
    }
}

/// Where and when something was done: the tab, its page, and the screen just before.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Moment {
    pub at_ms: f64,
    pub tab_id: i32,
    pub url: String,
    pub title: String,
    /// SHA-256 of the screenshot taken just before the event reached the page (a step's
    /// pre-action screen; the next step's is this one's post-action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The page state text at that moment, for models without vision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_state: Option<String>,
}

/// One thing the shell saw, in order.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct RawEvent {
    #[serde(flatten)]
    pub moment: Moment,
    #[serde(flatten)]
    pub input: RawInput,
}

/// A key pressed, into `target` when it had the focus.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct KeyPress {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescriptor>,
}

/// An option chosen in a list (a multiple select reports all it holds).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Choice {
    pub target: TargetDescriptor,
    pub option: String,
}

/// Vertical movement in screens (negative is up); `target` is a scrolled container.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Scrolled {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescriptor>,
    pub screens: f64,
}

/// Ctrl+I → Extract: what to read off the page, and the values it may take.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ExtractQuery {
    pub query: String,
    #[serde(default)]
    pub candidates: Vec<String>,
}

/// Pressed on `target`, moved, released over `to` (what was there, when the recorder could
/// name it), `dx`/`dy` CSS pixels from where it started.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Dragged {
    pub target: TargetDescriptor,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Box<TargetDescriptor>>,
    pub dx: f64,
    pub dy: f64,
}

/// Copied `text` (the selection; in a step, [`SECRET_MASK`] for a secret field's), from
/// `target` when it is a field or element.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Copied {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDescriptor>,
    pub text: String,
}

/// Pasted `text` into `target` (in a step, [`SECRET_MASK`] for a secret field).
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Pasted {
    pub target: TargetDescriptor,
    pub text: String,
}

/// What the shell saw. The inputs a step keeps as they are carry the step's own payloads.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RawInput {
    Click {
        target: TargetDescriptor,
    },
    /// The field's whole value after an input event.
    Input {
        target: TargetDescriptor,
        value: String,
    },
    Key(KeyPress),
    Select(Choice),
    Scroll(Scrolled),
    Navigate {
        /// Named `to` on the wire: the event's own `url` (the page it happened on) is a
        /// field beside these, flattened, and one key cannot carry both.
        #[serde(rename = "to")]
        url: String,
        /// The browser's word on who started it, when the shell has one (a URL typed or a
        /// bookmark: true; a link, a form or a script: false). Without it, timing decides.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<bool>,
    },
    TabSwitch {
        to_tab: i32,
    },
    Extract(ExtractQuery),
    /// Ctrl+I → Details: a note for the next step.
    Details {
        text: String,
    },
    DoubleClick {
        target: TargetDescriptor,
    },
    /// The context menu asked for (the right button, or the menu key).
    RightClick {
        target: TargetDescriptor,
    },
    Drag(Dragged),
    Copy(Copied),
    Paste(Pasted),
}

/// A step's action as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordedAction {
    Click {
        target: TargetDescriptor,
    },
    Type {
        target: TargetDescriptor,
        /// The field's final text, or [`SECRET_MASK`].
        text: String,
    },
    Key(KeyPress),
    Select(Choice),
    Scroll(Scrolled),
    Navigate {
        url: String,
    },
    SwitchTab {
        tab_id: i32,
    },
    Extract(ExtractQuery),
    DoubleClick {
        target: TargetDescriptor,
    },
    RightClick {
        target: TargetDescriptor,
    },
    Drag(Dragged),
    Copy(Copied),
    Paste(Pasted),
}

impl RecordedAction {
    /// The workflow step's kind this recorded action becomes.
    pub fn kind(&self) -> ActionKind {
        match self {
            RecordedAction::Click { .. } => ActionKind::Click,
            RecordedAction::Type { .. } => ActionKind::Type,
            RecordedAction::Key { .. } => ActionKind::Key,
            RecordedAction::Select { .. } => ActionKind::Select,
            RecordedAction::Scroll { .. } => ActionKind::Scroll,
            RecordedAction::Navigate { .. } => ActionKind::Navigate,
            RecordedAction::SwitchTab { .. } => ActionKind::SwitchTab,
            RecordedAction::Extract { .. } => ActionKind::Extract,
            RecordedAction::DoubleClick { .. } => ActionKind::DoubleClick,
            RecordedAction::RightClick { .. } => ActionKind::RightClick,
            RecordedAction::Drag { .. } => ActionKind::Drag,
            RecordedAction::Copy { .. } => ActionKind::Copy,
            RecordedAction::Paste { .. } => ActionKind::Paste,
        }
    }

    pub fn target(&self) -> Option<&TargetDescriptor> {
        match self {
            RecordedAction::Click { target }
            | RecordedAction::Type { target, .. }
            | RecordedAction::Select(Choice { target, .. })
            | RecordedAction::DoubleClick { target }
            | RecordedAction::RightClick { target }
            | RecordedAction::Drag(Dragged { target, .. })
            | RecordedAction::Paste(Pasted { target, .. }) => Some(target),
            RecordedAction::Key(KeyPress { target, .. })
            | RecordedAction::Scroll(Scrolled { target, .. })
            | RecordedAction::Copy(Copied { target, .. }) => target.as_ref(),
            _ => None,
        }
    }

    /// The value a workflow may parametrise: typed text, key, option, URL, query.
    pub fn value(&self) -> Option<String> {
        match self {
            RecordedAction::Type { text, .. } => Some(text.clone()),
            RecordedAction::Key(KeyPress { key, .. }) => Some(key.clone()),
            RecordedAction::Select(Choice { option, .. }) => Some(option.clone()),
            RecordedAction::Navigate { url } => Some(url.clone()),
            RecordedAction::SwitchTab { tab_id } => Some(tab_id.to_string()),
            RecordedAction::Extract(ExtractQuery { query, .. }) => Some(query.clone()),
            RecordedAction::Copy(Copied { text, .. })
            | RecordedAction::Paste(Pasted { text, .. }) => Some(text.clone()),
            RecordedAction::Click { .. }
            | RecordedAction::Scroll { .. }
            | RecordedAction::DoubleClick { .. }
            | RecordedAction::RightClick { .. }
            | RecordedAction::Drag { .. } => None,
        }
    }

    /// A scroll's distance in screens, which a workflow step keeps as a number.
    pub fn screens(&self) -> Option<f64> {
        match self {
            RecordedAction::Scroll(Scrolled { screens, .. }) => Some(*screens),
            _ => None,
        }
    }

    /// One line for a person or a model: `type "numb" into input "Search"`.
    pub fn describe(&self) -> String {
        match self {
            RecordedAction::Click { target } => format!("click {}", target.describe()),
            RecordedAction::Type { target, text } => {
                format!("type {text:?} into {}", target.describe())
            }
            RecordedAction::Key(KeyPress { key, .. }) => format!("press {key}"),
            RecordedAction::Select(Choice { target, option }) => {
                format!("select {option:?} in {}", target.describe())
            }
            RecordedAction::Scroll(Scrolled { target, screens }) => {
                let way = if *screens < 0.0 { "up" } else { "down" };
                let what = target.as_ref().map_or("the page".to_owned(), |t| t.describe());
                format!("scroll {what} {way} {:.1} screens", screens.abs())
            }
            RecordedAction::Navigate { url } => format!("go to {url}"),
            RecordedAction::SwitchTab { tab_id } => format!("switch to tab {tab_id}"),
            RecordedAction::Extract(ExtractQuery { query, candidates })
                if candidates.is_empty() =>
            {
                format!("extract {query:?}")
            }
            RecordedAction::Extract(ExtractQuery { query, candidates }) => {
                format!("extract {query:?} (one of: {})", candidates.join(", "))
            }
            RecordedAction::DoubleClick { target } => format!("double-click {}", target.describe()),
            RecordedAction::RightClick { target } => format!("right-click {}", target.describe()),
            RecordedAction::Drag(Dragged { target, to: Some(to), .. }) => {
                format!("drag {} onto {}", target.describe(), to.describe())
            }
            RecordedAction::Drag(Dragged { target, dx, dy, .. }) => {
                format!("drag {} by ({dx:.0}, {dy:.0}) px", target.describe())
            }
            RecordedAction::Copy(Copied { text, .. }) => format!("copy {text:?}"),
            RecordedAction::Paste(Pasted { target, text }) => {
                format!("paste {text:?} into {}", target.describe())
            }
        }
    }
}

/// One step: the screen just before the action, and the action.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedStep {
    pub index: u32,
    #[serde(flatten)]
    pub moment: Moment,
    pub action: RecordedAction,
    /// The user's Ctrl+I notes for this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

/// A whole recording.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recording {
    pub id: String,
    pub name: String,
    pub created_at: String,
    pub start_url: String,
    /// SHA-256 of the screenshot taken when recording started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_screenshot: Option<String>,
    /// The screen after the last step, when the shell took one at stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_screenshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_page_state: Option<String>,
    pub steps: Vec<RecordedStep>,
}

impl Recording {
    /// The screenshot after step `index`: the next step's pre-action one, else the end's.
    pub fn post_screenshot(&self, index: usize) -> Option<&str> {
        match self.steps.get(index + 1) {
            Some(next) => next.moment.screenshot.as_deref(),
            None => self.end_screenshot.as_deref(),
        }
    }

    pub fn post_page_state(&self, index: usize) -> Option<&str> {
        match self.steps.get(index + 1) {
            Some(next) => next.moment.page_state.as_deref(),
            None => self.end_page_state.as_deref(),
        }
    }

    /// JSONL: a header line (`{"recording": {...}}` without steps), then one step per line.
    /// Screenshots appear by SHA-256 only; the shell writes the blobs beside it.
    pub fn to_jsonl(&self) -> String {
        let header = Recording { steps: Vec::new(), ..self.clone() };
        let mut out = serde_json::json!({ "recording": header }).to_string();
        out.push('\n');
        for step in &self.steps {
            out.push_str(&serde_json::to_string(step).expect("steps serialize"));
            out.push('\n');
        }
        out
    }

    /// Reads [`Recording::to_jsonl`]'s format; the error names the line.
    pub fn from_jsonl(text: &str) -> Result<Recording, String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, first) = lines.next().ok_or("the file is empty")?;
        #[derive(tagged_de::FieldsDeserialize)]
        struct Header {
            recording: Recording,
        }
        let mut recording =
            serde_json::from_str::<Header>(first).map_err(|e| format!("line 1: {e}"))?.recording;
        for (n, line) in lines {
            let step = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
            recording.steps.push(step);
        }
        Ok(recording)
    }
}

/// Folds the shell's events, in order, into steps (the rules are in the module doc).
pub fn fold_events(events: &[RawEvent]) -> Vec<RecordedStep> {
    let mut steps: Vec<RecordedStep> = Vec::new();
    let mut details: Vec<String> = Vec::new();
    // Whether the last step is still open to more of the same (typing in one field, a
    // burst of scrolls): any other event closes it.
    let mut open = false;
    let mut last_cause_ms: Option<f64> = None;
    for event in events {
        // The first click a double-click swallowed: its screen is the one before the gesture.
        let mut swallowed: Option<RecordedStep> = None;
        let action = match &event.input {
            RawInput::Details { text } => {
                if !text.trim().is_empty() {
                    details.push(text.trim().to_owned());
                }
                continue;
            }
            RawInput::Input { target, value } => {
                let text = if target.is_secret() { SECRET_MASK.to_owned() } else { value.clone() };
                if open
                    && let Some(RecordedAction::Type { target: typed, text: kept }) =
                        steps.last_mut().map(|s| &mut s.action)
                    && typed.same_field(target)
                {
                    *kept = text;
                    continue;
                }
                RecordedAction::Type { target: target.clone(), text }
            }
            RawInput::Scroll(scroll @ Scrolled { target, screens }) => {
                if open
                    && let Some(RecordedAction::Scroll(Scrolled {
                        target: scrolled,
                        screens: total,
                    })) = steps.last_mut().map(|s| &mut s.action)
                    && scrolled.as_ref().map(|t| &t.selector)
                        == target.as_ref().map(|t| &t.selector)
                {
                    *total += screens;
                    continue;
                }
                RecordedAction::Scroll(scroll.clone())
            }
            // A pointer drag ends with a click where it was released: the drag's, not a step.
            RawInput::Click { .. }
                if matches!(steps.last(), Some(RecordedStep { action: RecordedAction::Drag { .. }, moment, .. })
                    if event.moment.at_ms - moment.at_ms <= DRAG_CLICK_MS) =>
            {
                continue;
            }
            RawInput::Click { target } => RecordedAction::Click { target: target.clone() },
            RawInput::Key(press) => {
                if !matches!(press.key.as_str(), "Enter" | "Escape" | "Tab") {
                    continue;
                }
                RecordedAction::Key(press.clone())
            }
            RawInput::Select(choice @ Choice { target, option }) => {
                // Choosing again in the same list, as typing again in the same field, leaves
                // one step with what it ended on (a multiple select reports all it holds).
                if open
                    && let Some(RecordedAction::Select(Choice { target: chosen, option: kept })) =
                        steps.last_mut().map(|s| &mut s.action)
                    && chosen.same_field(target)
                {
                    *kept = option.clone();
                    continue;
                }
                RecordedAction::Select(choice.clone())
            }
            RawInput::Navigate { url, typed } => {
                let caused = match typed {
                    Some(typed) => !typed,
                    None => {
                        last_cause_ms.is_some_and(|at| event.moment.at_ms - at <= CAUSED_WITHIN_MS)
                    }
                };
                if caused {
                    continue;
                }
                RecordedAction::Navigate { url: url.clone() }
            }
            RawInput::TabSwitch { to_tab } => RecordedAction::SwitchTab { tab_id: *to_tab },
            RawInput::Extract(extract) => RecordedAction::Extract(extract.clone()),
            RawInput::DoubleClick { target } => {
                // The browser reports the double-click's two clicks first: they are part of it.
                for _ in 0..2 {
                    if let Some(RecordedStep {
                        action: RecordedAction::Click { target: clicked },
                        ..
                    }) = steps.last()
                        && clicked.same_field(target)
                    {
                        swallowed = steps.pop();
                    }
                }
                RecordedAction::DoubleClick { target: target.clone() }
            }
            RawInput::RightClick { target } => {
                RecordedAction::RightClick { target: target.clone() }
            }
            RawInput::Drag(drag) => RecordedAction::Drag(drag.clone()),
            RawInput::Copy(Copied { target, text }) => {
                let secret = target.as_ref().is_some_and(TargetDescriptor::is_secret);
                let text = if secret { SECRET_MASK.to_owned() } else { text.clone() };
                RecordedAction::Copy(Copied { target: target.clone(), text })
            }
            RawInput::Paste(Pasted { target, text }) => {
                let text = if target.is_secret() { SECRET_MASK.to_owned() } else { text.clone() };
                RecordedAction::Paste(Pasted { target: target.clone(), text })
            }
        };
        close_scroll(&mut steps, open);
        open = matches!(
            action,
            RecordedAction::Type { .. }
                | RecordedAction::Scroll { .. }
                | RecordedAction::Select { .. }
        );
        // What the user did can load a page; a scroll between does not change that.
        last_cause_ms = match action {
            RecordedAction::Click { .. }
            | RecordedAction::Key { .. }
            | RecordedAction::Select { .. }
            | RecordedAction::Type { .. }
            | RecordedAction::DoubleClick { .. }
            | RecordedAction::RightClick { .. }
            | RecordedAction::Drag { .. }
            | RecordedAction::Paste { .. } => Some(event.moment.at_ms),
            RecordedAction::Scroll { .. } => last_cause_ms,
            _ => None,
        };
        steps.push(RecordedStep {
            index: 0,
            moment: event.moment.clone(),
            action,
            details: (!details.is_empty()).then(|| details.join("\n")),
        });
        details.clear();
        if let (Some(first), Some(step)) = (swallowed, steps.last_mut()) {
            step.moment.at_ms = first.moment.at_ms;
            step.moment.screenshot = first.moment.screenshot;
            step.moment.page_state = first.moment.page_state;
            step.details = first.details.or(step.details.take());
        }
    }
    close_scroll(&mut steps, true);
    if !details.is_empty()
        && let Some(last) = steps.last_mut()
    {
        let note = details.join("\n");
        last.details = Some(match last.details.take() {
            Some(before) => format!("{before}\n{note}"),
            None => note,
        });
    }
    for (index, step) in steps.iter_mut().enumerate() {
        step.index = index as u32;
    }
    steps
}

/// Drops a finished burst of scrolling that moved too little to matter.
fn close_scroll(steps: &mut Vec<RecordedStep>, open: bool) {
    if open
        && let Some(RecordedStep {
            action: RecordedAction::Scroll(Scrolled { screens, .. }),
            details,
            ..
        }) = steps.last()
        && screens.abs() < MIN_SCROLL_SCREENS
        && details.is_none()
    {
        steps.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(selector: &str) -> TargetDescriptor {
        TargetDescriptor {
            tag: "input".into(),
            name: selector.trim_start_matches('#').into(),
            selector: selector.into(),
            ..TargetDescriptor::default()
        }
    }

    fn at(ms: f64, shot: &str, input: RawInput) -> RawEvent {
        let moment = Moment {
            at_ms: ms,
            tab_id: 1,
            url: "https://music.test/".into(),
            title: "Music".into(),
            screenshot: Some(shot.into()),
            page_state: None,
        };
        RawEvent { moment, input }
    }

    fn typing(ms: f64, selector: &str, value: &str) -> RawEvent {
        at(ms, &format!("s{ms}"), RawInput::Input { target: field(selector), value: value.into() })
    }

    #[test]
    fn choosing_again_in_the_same_list_is_one_step_and_another_list_is_another() {
        let select = |ms: f64, selector: &str, option: &str| {
            at(
                ms,
                &format!("s{ms}"),
                RawInput::Select(Choice { target: field(selector), option: option.into() }),
            )
        };
        let steps = fold_events(&[
            select(0.0, "#size", "S"),
            select(500.0, "#size", "M"),
            select(900.0, "#size", "L"),
            select(1500.0, "#colour", "Red"),
            at(2000.0, "s2000", RawInput::Click { target: field("#go") }),
            select(2500.0, "#size", "XL"),
        ]);
        let chosen: Vec<String> = steps.iter().map(|s| s.action.describe()).collect();
        assert_eq!(
            chosen,
            [
                "select \"L\" in input \"size\"",
                "select \"Red\" in input \"colour\"",
                "click input \"go\"",
                "select \"XL\" in input \"size\""
            ]
        );
        // The step's screen is the one before the first choice.
        assert_eq!(steps[0].moment.screenshot.as_deref(), Some("s0"));
    }

    #[test]
    fn a_double_click_is_one_step_and_gestures_keep_what_replay_needs() {
        let cell = field("#age");
        let mut secret = field("#pin");
        secret.secret = true;
        let events = [
            at(0.0, "s0", RawInput::Click { target: cell.clone() }),
            at(90.0, "s1", RawInput::Click { target: cell.clone() }),
            at(95.0, "s2", RawInput::DoubleClick { target: cell.clone() }),
            at(900.0, "s3", RawInput::RightClick { target: field("#file") }),
            at(
                1500.0,
                "s4",
                RawInput::Drag(Dragged {
                    target: field("#card"),
                    to: Some(Box::new(field("#done"))),
                    dx: 240.0,
                    dy: -10.0,
                }),
            ),
            at(
                2000.0,
                "s5",
                RawInput::Copy(Copied { target: Some(field("#order")), text: "ORD-1".into() }),
            ),
            at(
                2500.0,
                "s6",
                RawInput::Paste(Pasted { target: field("#confirm"), text: "ORD-1".into() }),
            ),
            at(3000.0, "s7", RawInput::Paste(Pasted { target: secret, text: "1234".into() })),
        ];
        let steps = fold_events(&events);
        let kinds: Vec<ActionKind> = steps.iter().map(|s| s.action.kind()).collect();
        assert_eq!(
            kinds,
            [
                ActionKind::DoubleClick,
                ActionKind::RightClick,
                ActionKind::Drag,
                ActionKind::Copy,
                ActionKind::Paste,
                ActionKind::Paste
            ]
        );
        // The double-click's screen is the one before its first click.
        assert_eq!(steps[0].moment.screenshot.as_deref(), Some("s0"));
        assert_eq!(steps[2].action.describe(), "drag input \"card\" onto input \"done\"");
        assert_eq!(steps[4].action.value().as_deref(), Some("ORD-1"));
        assert_eq!(steps[5].action.value().as_deref(), Some(SECRET_MASK), "a secret is never kept");
        // Each reads back from its stored form.
        for step in &steps {
            let stored = serde_json::to_value(step).unwrap();
            assert_eq!(&serde_json::from_value::<RecordedStep>(stored).unwrap(), step);
        }
    }

    #[test]
    fn typing_in_one_field_is_one_step_with_the_final_value_and_the_first_screenshot() {
        let events = [
            at(0.0, "s0", RawInput::Click { target: field("#q") }),
            typing(10.0, "#q", "n"),
            typing(20.0, "#q", "nu"),
            typing(30.0, "#q", "numb"),
            at(40.0, "s40", RawInput::Key(KeyPress { key: "Enter".into(), target: None })),
            at(45.0, "s45", RawInput::Key(KeyPress { key: "a".into(), target: None })),
            typing(50.0, "#other", "x"),
            typing(60.0, "#q", "numb 2"),
        ];
        let steps = fold_events(&events);
        let kinds: Vec<String> = steps.iter().map(|s| s.action.describe()).collect();
        assert_eq!(
            kinds,
            [
                "click input \"q\"",
                "type \"numb\" into input \"q\"",
                "press Enter",
                "type \"x\" into input \"other\"",
                "type \"numb 2\" into input \"q\"",
            ]
        );
        assert_eq!(steps[1].moment.screenshot.as_deref(), Some("s10"), "the pre-action screenshot");
        assert_eq!(steps.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn secret_fields_are_masked_by_the_engines_rule() {
        let password = TargetDescriptor { input_type: Some("password".into()), ..field("#pw") };
        let card = TargetDescriptor { secret: true, ..field("#card") };
        let events = [
            at(0.0, "a", RawInput::Input { target: password, value: "hunter2".into() }),
            at(1.0, "b", RawInput::Input { target: card, value: "4111 1111".into() }),
        ];
        let steps = fold_events(&events);
        let json = serde_json::to_string(&steps).unwrap();
        assert!(!json.contains("hunter2") && !json.contains("4111"), "{json}");
        assert_eq!(steps.len(), 2);
        assert!(steps.iter().all(|s| s.action.value().as_deref() == Some(SECRET_MASK)));
    }

    #[test]
    fn scroll_bursts_merge_and_small_ones_are_dropped() {
        let scroll =
            |ms, screens| at(ms, "x", RawInput::Scroll(Scrolled { target: None, screens }));
        let events = [
            scroll(0.0, 0.1),
            scroll(1.0, 0.05),
            at(2.0, "c", RawInput::Click { target: field("#a") }),
            scroll(3.0, 0.5),
            scroll(4.0, 0.75),
        ];
        let steps = fold_events(&events);
        assert_eq!(steps.len(), 2);
        assert_eq!(
            steps[1].action,
            RecordedAction::Scroll(Scrolled { target: None, screens: 1.25 })
        );
    }

    #[test]
    fn details_go_to_the_next_step_and_navigations_an_action_caused_are_dropped() {
        let events = [
            at(0.0, "a", RawInput::Details { text: "the green button".into() }),
            at(10.0, "b", RawInput::Click { target: field("#go") }),
            at(
                500.0,
                "c",
                RawInput::Navigate { url: "https://music.test/search".into(), typed: None },
            ),
            at(
                9000.0,
                "d",
                RawInput::Navigate { url: "https://music.test/typed".into(), typed: None },
            ),
            at(
                9100.0,
                "d2",
                RawInput::Navigate { url: "https://music.test/link".into(), typed: Some(false) },
            ),
            at(
                9500.0,
                "e",
                RawInput::Extract(ExtractQuery {
                    query: "the album".into(),
                    candidates: vec!["A".into()],
                }),
            ),
            at(9600.0, "f", RawInput::Details { text: "trailing".into() }),
            at(
                9700.0,
                "g",
                RawInput::Navigate { url: "https://b.test/".into(), typed: Some(true) },
            ),
        ];
        let mut steps = fold_events(&events);
        let typed = steps.pop().unwrap();
        assert_eq!(typed.action.describe(), "go to https://b.test/", "typed, though soon after");
        assert_eq!(typed.details.as_deref(), Some("trailing"));
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].details.as_deref(), Some("the green button"));
        assert_eq!(steps[1].action.kind(), ActionKind::Navigate);
        assert_eq!(steps[2].action.describe(), "extract \"the album\" (one of: A)");
        assert_eq!(steps[2].moment.screenshot.as_deref(), Some("e"));
        assert_eq!(steps[2].details, None, "the note went to the step after it");
    }

    #[test]
    fn a_navigation_event_reads_back_with_both_its_urls() {
        let event = at(
            5.0,
            "n",
            RawInput::Navigate { url: "https://music.test/next".into(), typed: Some(true) },
        );
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["to"], "https://music.test/next");
        assert_eq!(json["url"], "https://music.test/");
        assert_eq!(serde_json::from_value::<RawEvent>(json).unwrap(), event);
    }

    /// The shell's events and the stored steps share their payloads, and each keeps its
    /// own tag (`kind` for an event, `type` for a step) with the fields beside it.
    #[test]
    fn shared_payloads_keep_each_wire_flat() {
        let drag = Dragged { target: field("#card"), to: None, dx: 12.0, dy: -3.0 };
        let event = at(2.0, "d", RawInput::Drag(drag.clone()));
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!((json["kind"].as_str(), json["dx"].as_f64()), (Some("drag"), Some(12.0)));
        assert_eq!(json["target"]["selector"], "#card");
        assert!(json.get("to").is_none(), "{json}");
        assert_eq!((json["atMs"].as_f64(), json["tabId"].as_i64()), (Some(2.0), Some(1)));
        assert_eq!(serde_json::from_value::<RawEvent>(json).unwrap(), event);
        let step = &fold_events(&[event])[0];
        let json = serde_json::to_value(step).unwrap();
        assert_eq!(json["action"]["type"], "drag");
        assert_eq!((json["atMs"].as_f64(), json["screenshot"].as_str()), (Some(2.0), Some("d")));

        let key = RecordedAction::Key(KeyPress { key: "Enter".into(), target: None });
        let json = serde_json::to_value(&key).unwrap();
        assert_eq!(json, serde_json::json!({"type": "key", "key": "Enter"}));
        assert_eq!(serde_json::from_value::<RecordedAction>(json).unwrap(), key);
        let copied = serde_json::json!({"type": "copy", "text": "[secret]"});
        let copied = serde_json::from_value::<RecordedAction>(copied).unwrap();
        assert_eq!(copied, RecordedAction::Copy(Copied { target: None, text: SECRET_MASK.into() }));
    }

    #[test]
    fn a_note_with_no_step_after_it_goes_to_the_last_step() {
        let events = [
            at(0.0, "a", RawInput::Click { target: field("#go") }),
            at(1.0, "b", RawInput::Details { text: "the last one".into() }),
        ];
        assert_eq!(fold_events(&events)[0].details.as_deref(), Some("the last one"));
    }

    #[test]
    fn jsonl_is_a_header_then_one_step_per_line_and_reads_back() {
        let events =
            [at(0.0, "a", RawInput::Click { target: field("#q") }), typing(1.0, "#q", "numb")];
        let recording = Recording {
            id: "rec-1".into(),
            name: "play a song".into(),
            created_at: "2026-11-24T00:00:00.000Z".into(),
            start_url: "https://music.test/".into(),
            start_screenshot: Some("0".repeat(64)),
            end_screenshot: None,
            end_page_state: None,
            steps: fold_events(&events),
        };
        let jsonl = recording.to_jsonl();
        let lines: Vec<&str> = jsonl.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("{\"recording\""));
        let step: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(step["action"]["type"], "type");
        assert_eq!(step["atMs"], 1.0);
        assert_eq!(Recording::from_jsonl(&jsonl).unwrap(), recording);
        assert!(Recording::from_jsonl("{}\n").unwrap_err().starts_with("line 1"));
    }
}
