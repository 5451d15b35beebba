//! What the extension's Yew pages (the side panel, the annotation page, the Prompt Studio and
//! the Workflows page) share, written once: reading a form control from its event, keeping a
//! local state in step with an input, the `Reducible` impl of a state whose reducer is an
//! `apply(&mut self, action)`, and a recording's name as it is typed and saved. It knows no page. Its helpers are not generic, so each is
//! compiled once per bundle however many components use it.

mod recording_name;

pub use recording_name::RecordingName;

use web_sys::HtmlInputElement;
use yew::prelude::*;

/// The value of the input, textarea or select the event came from. (`value` is read by name,
/// so the input element's binding serves all three.)
pub fn value(event: &Event) -> String {
    event.target_unchecked_into::<HtmlInputElement>().value()
}

/// Whether the checkbox the event came from is checked.
pub fn checked(event: &Event) -> bool {
    event.target_unchecked_into::<HtmlInputElement>().checked()
}

/// An `oninput` that keeps `text` what the input holds, on every keystroke.
pub fn keep_text(text: &UseStateHandle<String>) -> Callback<InputEvent> {
    let text = text.clone();
    Callback::from(move |e: InputEvent| text.set(value(&e)))
}

/// An `onchange` that keeps `flag` what the checkbox says.
pub fn keep_checked(flag: &UseStateHandle<bool>) -> Callback<Event> {
    let flag = flag.clone();
    Callback::from(move |e: Event| flag.set(checked(&e)))
}

/// `impl Reducible` for a page's state whose reducer is `fn apply(&mut self, action)`: each
/// action changes a copy, so Yew sees a new state.
#[macro_export]
macro_rules! reducible_by_apply {
    ($state:ty, $action:ty) => {
        impl ::yew::Reducible for $state {
            type Action = $action;

            fn reduce(self: ::std::rc::Rc<Self>, action: $action) -> ::std::rc::Rc<Self> {
                let mut next = ::std::rc::Rc::unwrap_or_clone(self);
                next.apply(action);
                ::std::rc::Rc::new(next)
            }
        }
    };
}
