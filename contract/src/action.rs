//! The Navigator's actions: what the engine carries out, what a step records, what the sync
//! server accepts in a step's `actions`. [`SHAPES`] says the same union as data (each
//! variant's fields, their kinds and limits), so other statements of it can be held to it
//! (the sync server's `openapi.yaml`, which the server checks bodies against); a test here
//! holds it to serde's own reading of [`Action`].

use serde::Serialize;

/// A browser tab as `chrome.tabs` numbers it.
pub type TabId = i32;

/// One action, tagged by `action` — the discriminated union the Navigator's schema uses.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::TaggedDeserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    GoToUrl {
        url: String,
    },
    WebSearch {
        query: String,
    },
    Back,
    Forward,
    Reload,
    /// Click element `id` from the page state.
    Click {
        id: u32,
    },
    /// Click at viewport coordinates (for vision models reading a screenshot).
    ClickAt {
        x: f64,
        y: f64,
    },
    /// Double-click element `id` (to edit a cell, open an item, pick a word).
    DoubleClick {
        id: u32,
    },
    /// Right-click element `id`, for the menu the page shows on it.
    RightClick {
        id: u32,
    },
    /// Type into element `id`, replacing its content unless `clear` is false. Date, time,
    /// colour, slider and number inputs take `text` in their own value format (or one a
    /// person would obviously mean the same by) and are always replaced.
    Type {
        id: u32,
        text: String,
        #[serde(default = "yes")]
        clear: bool,
    },
    /// Keys such as `Enter`, `Control+A` or `Tab Tab Enter` (space-separated presses).
    SendKeys {
        keys: String,
    },
    /// Scroll the page, or container `id`, by `screens` (negative scrolls up).
    Scroll {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u32>,
        #[serde(default = "one")]
        screens: f64,
    },
    ScrollToText {
        text: String,
    },
    Hover {
        id: u32,
    },
    /// Press on element `id`, move, and release: onto element `to`, or onto the text
    /// `to_text` shows (a column's heading, "Drop files here"), moved on from there by
    /// (`dx`, `dy`) CSS pixels; with neither, by (`dx`, `dy`) from where it is.
    Drag {
        id: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to_text: Option<String>,
        #[serde(default, skip_serializing_if = "is_zero")]
        dx: f64,
        #[serde(default, skip_serializing_if = "is_zero")]
        dy: f64,
    },
    /// Highlight `text` as a person selects it with the mouse: anywhere on the page, or
    /// inside element `id` (a paragraph, or a field's value).
    SelectText {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u32>,
    },
    /// Move slider `id` (a range input or a custom slider) to `value`; the outcome says
    /// what the page shows after.
    SetSlider {
        id: u32,
        value: f64,
    },
    /// Copy to the clipboard: what is selected, or all of element `id`'s text or value.
    Copy {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u32>,
    },
    /// Paste the clipboard into field `id`, at the end of what it holds.
    Paste {
        id: u32,
    },
    /// List the options of a native `<select>` or an ARIA combobox/listbox.
    ListOptions {
        id: u32,
    },
    /// Choose option `option` (its text or value) in a `<select>` or ARIA combobox. In a
    /// list that allows several choices this adds `option` to those already chosen, or takes
    /// it away with `deselect`.
    SelectOption {
        id: u32,
        option: String,
        #[serde(default, skip_serializing_if = "is_false")]
        deselect: bool,
    },
    OpenTab {
        url: String,
    },
    SwitchTab {
        tab_id: TabId,
    },
    CloseTab {
        tab_id: TabId,
    },
    Wait {
        #[serde(default = "one")]
        seconds: f64,
    },
    /// The page's readable text, for reading and extraction.
    Extract {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_chars: Option<u32>,
    },
    Done {
        text: String,
        #[serde(default = "yes")]
        success: bool,
    },
}

fn yes() -> bool {
    true
}

fn one() -> f64 {
    1.0
}

fn is_false(value: &bool) -> bool {
    !value
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl Action {
    /// The variant's place in [`SHAPES`]. The match is exhaustive, so a new variant does not
    /// compile until it has a place; the tests then want its shape and an example.
    pub fn ordinal(&self) -> usize {
        match self {
            Action::GoToUrl { .. } => 0,
            Action::WebSearch { .. } => 1,
            Action::Back => 2,
            Action::Forward => 3,
            Action::Reload => 4,
            Action::Click { .. } => 5,
            Action::ClickAt { .. } => 6,
            Action::DoubleClick { .. } => 7,
            Action::RightClick { .. } => 8,
            Action::Type { .. } => 9,
            Action::SendKeys { .. } => 10,
            Action::Scroll { .. } => 11,
            Action::ScrollToText { .. } => 12,
            Action::Hover { .. } => 13,
            Action::Drag { .. } => 14,
            Action::SelectText { .. } => 15,
            Action::SetSlider { .. } => 16,
            Action::Copy { .. } => 17,
            Action::Paste { .. } => 18,
            Action::ListOptions { .. } => 19,
            Action::SelectOption { .. } => 20,
            Action::OpenTab { .. } => 21,
            Action::SwitchTab { .. } => 22,
            Action::CloseTab { .. } => 23,
            Action::Wait { .. } => 24,
            Action::Extract { .. } => 25,
            Action::Done { .. } => 26,
        }
    }

    /// The page element the action works on, if it names one.
    pub fn element(&self) -> Option<u32> {
        match self {
            Action::Click { id }
            | Action::DoubleClick { id }
            | Action::RightClick { id }
            | Action::Type { id, .. }
            | Action::Hover { id }
            | Action::Drag { id, .. }
            | Action::SetSlider { id, .. }
            | Action::Paste { id }
            | Action::ListOptions { id }
            | Action::SelectOption { id, .. } => Some(*id),
            Action::Scroll { id, .. } | Action::SelectText { id, .. } | Action::Copy { id } => *id,
            _ => None,
        }
    }

    /// The `action` tag serde writes (a test holds the two together).
    pub fn tag(&self) -> &'static str {
        SHAPES[self.ordinal()].tag
    }

    /// One of each variant, in [`SHAPES`] order, with every optional field set: for the tests
    /// of each side that carries the union.
    pub fn examples() -> Vec<Action> {
        vec![
            Action::GoToUrl { url: "https://example.com/".into() },
            Action::WebSearch { query: "kettles".into() },
            Action::Back,
            Action::Forward,
            Action::Reload,
            Action::Click { id: 3 },
            Action::ClickAt { x: 10.5, y: 20.0 },
            Action::DoubleClick { id: 8 },
            Action::RightClick { id: 9 },
            Action::Type { id: 4, text: "hello".into(), clear: false },
            Action::SendKeys { keys: "Enter".into() },
            Action::Scroll { id: Some(2), screens: -1.5 },
            Action::ScrollToText { text: "Prices".into() },
            Action::Hover { id: 5 },
            Action::Drag { id: 10, to: Some(11), to_text: Some("Done".into()), dx: 0.5, dy: -40.0 },
            Action::SelectText { text: "quick brown".into(), id: Some(12) },
            Action::SetSlider { id: 13, value: 7.5 },
            Action::Copy { id: Some(14) },
            Action::Paste { id: 15 },
            Action::ListOptions { id: 6 },
            Action::SelectOption { id: 7, option: "Red".into(), deselect: true },
            Action::OpenTab { url: "https://example.org/".into() },
            Action::SwitchTab { tab_id: 12 },
            Action::CloseTab { tab_id: -1 },
            Action::Wait { seconds: 2.0 },
            Action::Extract { max_chars: Some(4000) },
            Action::Done { text: "Found it.".into(), success: false },
        ]
    }
}

/// What a field of an action holds on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string of at most this many characters (Unicode scalar values).
    Text {
        max_chars: usize,
    },
    /// An integer that fits a `u32` (element ids, counts).
    U32,
    /// An integer that fits an `i32` (tab ids).
    I32,
    /// Any number.
    Number,
    /// A number of at least 0.
    NonNegative,
    Bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldShape {
    pub name: &'static str,
    pub kind: FieldKind,
    /// Optional fields have a default when left out.
    pub required: bool,
}

/// One variant of [`Action`] as JSON: its tag and the fields beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantShape {
    pub tag: &'static str,
    pub fields: &'static [FieldShape],
}

const fn required(name: &'static str, kind: FieldKind) -> FieldShape {
    FieldShape { name, kind, required: true }
}

const fn optional(name: &'static str, kind: FieldKind) -> FieldShape {
    FieldShape { name, kind, required: false }
}

const fn text(max_chars: usize) -> FieldKind {
    FieldKind::Text { max_chars }
}

/// [`Action`]'s variants in declaration order. The text limits are the contract's: what
/// the sync server stores (`openapi.yaml` says the same, and a test there checks it).
pub const SHAPES: &[VariantShape] = {
    use FieldKind::*;
    &[
        VariantShape { tag: "go_to_url", fields: &[required("url", text(8192))] },
        VariantShape { tag: "web_search", fields: &[required("query", text(2000))] },
        VariantShape { tag: "back", fields: &[] },
        VariantShape { tag: "forward", fields: &[] },
        VariantShape { tag: "reload", fields: &[] },
        VariantShape { tag: "click", fields: &[required("id", U32)] },
        VariantShape { tag: "click_at", fields: &[required("x", Number), required("y", Number)] },
        VariantShape { tag: "double_click", fields: &[required("id", U32)] },
        VariantShape { tag: "right_click", fields: &[required("id", U32)] },
        VariantShape {
            tag: "type",
            fields: &[required("id", U32), required("text", text(20_000)), optional("clear", Bool)],
        },
        VariantShape { tag: "send_keys", fields: &[required("keys", text(200))] },
        VariantShape { tag: "scroll", fields: &[optional("id", U32), optional("screens", Number)] },
        VariantShape { tag: "scroll_to_text", fields: &[required("text", text(2000))] },
        VariantShape { tag: "hover", fields: &[required("id", U32)] },
        VariantShape {
            tag: "drag",
            fields: &[
                required("id", U32),
                optional("to", U32),
                optional("to_text", text(2000)),
                optional("dx", Number),
                optional("dy", Number),
            ],
        },
        VariantShape {
            tag: "select_text",
            fields: &[required("text", text(2000)), optional("id", U32)],
        },
        VariantShape {
            tag: "set_slider",
            fields: &[required("id", U32), required("value", Number)],
        },
        VariantShape { tag: "copy", fields: &[optional("id", U32)] },
        VariantShape { tag: "paste", fields: &[required("id", U32)] },
        VariantShape { tag: "list_options", fields: &[required("id", U32)] },
        VariantShape {
            tag: "select_option",
            fields: &[
                required("id", U32),
                required("option", text(2000)),
                optional("deselect", Bool),
            ],
        },
        VariantShape { tag: "open_tab", fields: &[required("url", text(8192))] },
        VariantShape { tag: "switch_tab", fields: &[required("tab_id", I32)] },
        VariantShape { tag: "close_tab", fields: &[required("tab_id", I32)] },
        VariantShape { tag: "wait", fields: &[optional("seconds", NonNegative)] },
        VariantShape { tag: "extract", fields: &[optional("max_chars", U32)] },
        VariantShape {
            tag: "done",
            fields: &[required("text", text(50_000)), optional("success", Bool)],
        },
    ]
};

/// The shape of the variant tagged `tag`.
pub fn shape(tag: &str) -> Option<&'static VariantShape> {
    SHAPES.iter().find(|s| s.tag == tag)
}

impl FieldKind {
    /// Whether `value` is one of these on the wire.
    pub fn fits(self, value: &serde_json::Value) -> bool {
        match self {
            FieldKind::Text { max_chars } => {
                value.as_str().is_some_and(|s| s.chars().count() <= max_chars)
            }
            FieldKind::U32 => value.as_u64().is_some_and(|n| u32::try_from(n).is_ok()),
            FieldKind::I32 => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
            FieldKind::Number => value.is_number(),
            FieldKind::NonNegative => value.as_f64().is_some_and(|n| n >= 0.0),
            FieldKind::Bool => value.is_boolean(),
        }
    }
}

/// `value` as an action of the union, by [`SHAPES`]: its known fields only, or `None` when
/// its tag is unknown, a required field is missing or a field does not fit. For a reader
/// that only passes actions on (the fine-tuning export): reading them into [`Action`] would
/// link serde's reader for every variant into a page.
pub fn conforming(value: &serde_json::Value) -> Option<serde_json::Value> {
    let map = value.as_object()?;
    let shape = shape(map.get("action")?.as_str()?)?;
    let mut kept = serde_json::Map::new();
    kept.insert("action".into(), shape.tag.into());
    for field in shape.fields {
        match map.get(field.name) {
            // An optional field written as null is left out, as serde reads it.
            Some(serde_json::Value::Null) if !field.required => {}
            Some(v) if field.kind.fits(v) => {
                kept.insert(field.name.into(), v.clone());
            }
            Some(_) => return None,
            None if field.required => return None,
            None => {}
        }
    }
    Some(serde_json::Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn the_examples_cover_every_variant_in_order() {
        let places: Vec<usize> = Action::examples().iter().map(Action::ordinal).collect();
        assert_eq!(places, (0..SHAPES.len()).collect::<Vec<_>>());
    }

    #[test]
    fn shapes_say_what_serde_reads_and_writes() {
        for action in Action::examples() {
            let json = serde_json::to_value(&action).unwrap();
            let map = json.as_object().unwrap();
            assert_eq!(map["action"], action.tag());
            let shape = shape(action.tag()).unwrap();
            for (key, value) in map.iter().filter(|(k, _)| *k != "action") {
                let field = shape.fields.iter().find(|f| f.name == key);
                let field =
                    field.unwrap_or_else(|| panic!("{}: {key} is not in SHAPES", shape.tag));
                assert!(field.kind.fits(value), "{}.{key} = {value}", shape.tag);
            }
            for field in shape.fields {
                // Every field is written when set, so the examples show each one.
                assert!(map.contains_key(field.name), "{}.{} not written", shape.tag, field.name);
                let mut without = map.clone();
                without.remove(field.name);
                let read = serde_json::from_value::<Action>(Value::Object(without.clone()));
                assert_eq!(read.is_err(), field.required, "{}.{} left out", shape.tag, field.name);
                // The shapes alone read it the same way.
                let conformed = conforming(&Value::Object(without));
                assert_eq!(conformed.is_none(), field.required, "{}.{}", shape.tag, field.name);
                let mut wrong = map.clone();
                wrong.insert(field.name.into(), json!([]));
                assert_eq!(conforming(&Value::Object(wrong)), None, "{}.{}", shape.tag, field.name);
            }
            assert_eq!(conforming(&json).as_ref(), Some(&json));
            assert_eq!(serde_json::from_value::<Action>(json).unwrap(), action);
        }
        assert!(serde_json::from_value::<Action>(json!({"action": "teleport"})).is_err());
        assert_eq!(conforming(&json!({"action": "teleport"})), None);
        let extra = json!({"action": "click", "id": 3, "why": "x"});
        assert_eq!(conforming(&extra), Some(json!({"action": "click", "id": 3})));
    }

    #[test]
    fn defaults_are_what_a_model_means_by_leaving_a_field_out() {
        let read = |v: Value| serde_json::from_value::<Action>(v).unwrap();
        assert_eq!(
            read(json!({"action": "type", "id": 1, "text": "x"})),
            Action::Type { id: 1, text: "x".into(), clear: true }
        );
        assert_eq!(read(json!({"action": "scroll"})), Action::Scroll { id: None, screens: 1.0 });
        assert_eq!(
            read(json!({"action": "done", "text": "t"})),
            Action::Done { text: "t".into(), success: true }
        );
    }
}
