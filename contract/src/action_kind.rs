//! The one vocabulary of what a step did, from recording to workflow to replay to capture.
//!
//! The seed's step format (`000_…` §1: `click | type | scroll | wait | select | navigate`)
//! is its core; the other kinds name what the agent and the recorder do beyond it. The
//! Navigator's [`Action`] keeps its own tags (they are the model's schema) and maps onto this
//! with [`Action::kind`]; the recorder's actions, workflow steps and captured steps store a
//! kind from here. Names other tools or older versions wrote are read as the kind they mean;
//! a name nobody knows (an imported run from elsewhere) is kept as it was written.

use crate::action::Action;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ActionKind {
    Click,
    Type,
    /// Key presses (`Enter`, `Control+A`), to the focused element.
    Key,
    /// An option chosen in a list.
    Select,
    Scroll,
    /// A page load the step asked for: a URL, back, forward, reload, a search.
    Navigate,
    Wait,
    Hover,
    DoubleClick,
    RightClick,
    Drag,
    SelectText,
    SetSlider,
    Copy,
    Paste,
    SwitchTab,
    CloseTab,
    ListOptions,
    Extract,
    Done,
    /// The step asked the person instead of acting.
    AskUser,
    /// The step acted on nothing (the model's answer had no action).
    #[default]
    None,
    /// A name this vocabulary does not know, kept as written.
    Other(String),
}

impl ActionKind {
    /// Every named kind, in the order an editor lists them (the seed's six first).
    pub const NAMED: [ActionKind; 22] = [
        ActionKind::Click,
        ActionKind::Type,
        ActionKind::Scroll,
        ActionKind::Wait,
        ActionKind::Select,
        ActionKind::Navigate,
        ActionKind::Key,
        ActionKind::Hover,
        ActionKind::DoubleClick,
        ActionKind::RightClick,
        ActionKind::Drag,
        ActionKind::SelectText,
        ActionKind::SetSlider,
        ActionKind::Copy,
        ActionKind::Paste,
        ActionKind::SwitchTab,
        ActionKind::CloseTab,
        ActionKind::ListOptions,
        ActionKind::Extract,
        ActionKind::Done,
        ActionKind::AskUser,
        ActionKind::None,
    ];

    /// The kinds a recording can hold and a workflow can replay.
    pub const REPLAYABLE: [ActionKind; 13] = [
        ActionKind::Click,
        ActionKind::Type,
        ActionKind::Key,
        ActionKind::Select,
        ActionKind::Scroll,
        ActionKind::Navigate,
        ActionKind::SwitchTab,
        ActionKind::Extract,
        ActionKind::DoubleClick,
        ActionKind::RightClick,
        ActionKind::Drag,
        ActionKind::Copy,
        ActionKind::Paste,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            ActionKind::Click => "click",
            ActionKind::Type => "type",
            ActionKind::Key => "key",
            ActionKind::Select => "select",
            ActionKind::Scroll => "scroll",
            ActionKind::Navigate => "navigate",
            ActionKind::Wait => "wait",
            ActionKind::Hover => "hover",
            ActionKind::DoubleClick => "double_click",
            ActionKind::RightClick => "right_click",
            ActionKind::Drag => "drag",
            ActionKind::SelectText => "select_text",
            ActionKind::SetSlider => "set_slider",
            ActionKind::Copy => "copy",
            ActionKind::Paste => "paste",
            ActionKind::SwitchTab => "switch_tab",
            ActionKind::CloseTab => "close_tab",
            ActionKind::ListOptions => "list_options",
            ActionKind::Extract => "extract",
            ActionKind::Done => "done",
            ActionKind::AskUser => "ask_user",
            ActionKind::None => "none",
            ActionKind::Other(name) => name,
        }
    }

    /// The kind `name` means. Besides this vocabulary's own names it reads the Navigator's
    /// tags, which replays stored as kinds before there was one vocabulary.
    pub fn parse(name: &str) -> ActionKind {
        let name = name.trim();
        if let Some(kind) = ActionKind::NAMED.into_iter().find(|k| k.as_str() == name) {
            return kind;
        }
        match name {
            "send_keys" => ActionKind::Key,
            "select_option" => ActionKind::Select,
            "click_at" => ActionKind::Click,
            "scroll_to_text" => ActionKind::Scroll,
            "go_to_url" | "open_tab" | "back" | "forward" | "reload" | "web_search" => {
                ActionKind::Navigate
            }
            "" => ActionKind::None,
            other => ActionKind::Other(other.to_owned()),
        }
    }

    pub fn is_replayable(&self) -> bool {
        ActionKind::REPLAYABLE.contains(self)
    }
}

impl Serialize for ActionKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ActionKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(ActionKind::parse(&name))
    }
}

impl From<&str> for ActionKind {
    fn from(name: &str) -> Self {
        ActionKind::parse(name)
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Action {
    /// The step kind this action is, in the one vocabulary.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Click { .. } | Action::ClickAt { .. } => ActionKind::Click,
            Action::Type { .. } => ActionKind::Type,
            Action::SendKeys { .. } => ActionKind::Key,
            Action::Scroll { .. } | Action::ScrollToText { .. } => ActionKind::Scroll,
            Action::SelectOption { .. } => ActionKind::Select,
            Action::GoToUrl { .. }
            | Action::OpenTab { .. }
            | Action::WebSearch { .. }
            | Action::Back
            | Action::Forward
            | Action::Reload => ActionKind::Navigate,
            Action::Wait { .. } => ActionKind::Wait,
            Action::Hover { .. } => ActionKind::Hover,
            Action::DoubleClick { .. } => ActionKind::DoubleClick,
            Action::RightClick { .. } => ActionKind::RightClick,
            Action::Drag { .. } => ActionKind::Drag,
            Action::SelectText { .. } => ActionKind::SelectText,
            Action::SetSlider { .. } => ActionKind::SetSlider,
            Action::Copy { .. } => ActionKind::Copy,
            Action::Paste { .. } => ActionKind::Paste,
            Action::ListOptions { .. } => ActionKind::ListOptions,
            Action::SwitchTab { .. } => ActionKind::SwitchTab,
            Action::CloseTab { .. } => ActionKind::CloseTab,
            Action::Extract { .. } => ActionKind::Extract,
            Action::Done { .. } => ActionKind::Done,
        }
    }

    /// What a person reads beside the kind in a step's record: the text typed, the option,
    /// the URL or search, the keys, the scroll in screens, the answer.
    pub fn step_value(&self) -> Option<String> {
        Some(match self {
            Action::Type { text, .. } => text.clone(),
            Action::Scroll { screens, .. } => screens.to_string(),
            Action::ScrollToText { text } => text.clone(),
            Action::Wait { seconds } => seconds.to_string(),
            Action::SelectOption { option, .. } => option.clone(),
            Action::GoToUrl { url } | Action::OpenTab { url } => url.clone(),
            Action::WebSearch { query } => query.clone(),
            Action::Back => "back".into(),
            Action::Forward => "forward".into(),
            Action::Reload => "reload".into(),
            Action::SendKeys { keys } => keys.clone(),
            Action::Done { text, .. } => text.clone(),
            Action::SwitchTab { tab_id } | Action::CloseTab { tab_id } => tab_id.to_string(),
            Action::SelectText { text, .. } => text.clone(),
            Action::SetSlider { value, .. } => value.to_string(),
            Action::Drag { dx, dy, .. } if *dx != 0.0 || *dy != 0.0 => {
                format!("by ({dx}, {dy}) px")
            }
            Action::Click { .. }
            | Action::ClickAt { .. }
            | Action::Hover { .. }
            | Action::DoubleClick { .. }
            | Action::RightClick { .. }
            | Action::Drag { .. }
            | Action::Copy { .. }
            | Action::Paste { .. }
            | Action::ListOptions { .. }
            | Action::Extract { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_kind() {
        for kind in ActionKind::NAMED {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(serde_json::from_str::<ActionKind>(&json).unwrap(), kind);
        }
    }

    #[test]
    fn every_action_has_a_kind_and_a_replay_tag_means_the_same() {
        for action in Action::examples() {
            // What replays stored before (the Navigator's tag) reads as the same kind.
            assert_eq!(ActionKind::parse(action.tag()), action.kind(), "{}", action.tag());
        }
    }

    #[test]
    fn an_unknown_name_is_kept_as_written() {
        let kind: ActionKind = serde_json::from_str("\"upload_file\"").unwrap();
        assert_eq!(kind, ActionKind::Other("upload_file".into()));
        assert_eq!(serde_json::to_string(&kind).unwrap(), "\"upload_file\"");
        assert!(!kind.is_replayable());
        assert_eq!(ActionKind::parse(""), ActionKind::None);
    }
}
