use yew::prelude::*;

/// Every keyboard shortcut, as `crate::components::run_view::shortcut` reads them.
pub const SHORTCUTS: [(&str, &str); 11] = [
    ("Alt+↓ or Alt+J", "Next step"),
    ("Alt+↑ or Alt+K", "Previous step"),
    ("Ctrl+Enter", "Save & mark complete"),
    ("Alt+F", "Save & flag for review"),
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
