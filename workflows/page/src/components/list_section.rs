//! A titled list of what the page holds, with what to do when it holds nothing.

use yew::prelude::*;

/// The section `class` (test id `testid`) titled `title`: `rows` (`<li>`s) in a list, and
/// `empty_hint` instead when `empty`.
pub fn list_section(
    class: &'static str,
    testid: &'static str,
    title: &'static str,
    empty: bool,
    empty_hint: &'static str,
    rows: Html,
) -> Html {
    html! {
        <section {class} data-testid={testid}>
            <h2>{ title }</h2>
            if empty {
                <p class="hint">{ empty_hint }</p>
            }
            <ul>{ rows }</ul>
        </section>
    }
}
