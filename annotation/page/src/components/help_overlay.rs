use yew::prelude::*;

/// Every keyboard shortcut, as `crate::components::run_view::shortcut` reads them.
pub const SHORTCUTS: [(&str, &str); 18] = [
    ("Alt+↓ or Alt+J", "Next step"),
    ("Alt+↑ or Alt+K", "Previous step"),
    ("Alt+N", "Next step that needs work (not complete, or with an open issue)"),
    ("Alt+L", "Next flagged step (an open issue)"),
    ("Ctrl+Enter", "Save & mark complete, then the next step that needs work"),
    ("Ctrl+Shift+Enter", "Submit the run for review, then open the next run in the list"),
    ("Alt+R", "Next run in the list, as filtered and sorted (on the list: its first run)"),
    ("Alt+F", "Save & flag for review"),
    ("Alt+T / Alt+V", "Issue type / severity of the next flag: the next choice"),
    ("Alt+W", "Apply the first spelling fix"),
    ("Alt+I / Alt+C", "Open Issues / Checks"),
    ("Ctrl+S", "Save"),
    ("Alt+A", "Approve the run (review mode)"),
    ("Alt+1 / 2 / 3", "Edit thought 1, 2 or 3"),
    ("Alt+Z", "Zoom the screenshot"),
    ("Alt+D", "Add a subtask divider before this step"),
    ("?", "This help (outside text fields)"),
    ("Esc", "Close this help or the zoomed screenshot"),
];

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_close: Callback<()>,
}

#[function_component(HelpOverlay)]
pub fn help_overlay(props: &Props) -> Html {
    html! {
        <div class="overlay" data-testid="help-overlay" onclick={props.on_close.reform(|_| ())}>
            <div class="dialog" role="dialog" aria-label="Keyboard shortcuts" onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2>{ "Keyboard shortcuts" }</h2>
                <table>
                    { for SHORTCUTS.iter().map(|(keys, what)| html! {
                        <tr><td><kbd>{ *keys }</kbd></td><td>{ *what }</td></tr>
                    }) }
                </table>
                <button onclick={props.on_close.reform(|_| ())}>{ "Close" }</button>
            </div>
        </div>
    }
}
