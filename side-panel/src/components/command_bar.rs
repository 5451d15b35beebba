use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct CommandBarProps {
    pub enabled: bool,
    /// Why the last command was not understood.
    pub error: Option<String>,
    /// Called with the line typed when Enter is pressed.
    pub on_command: Callback<String>,
}

/// A one-line command box (`/state`); the chat input grows out of it.
#[function_component(CommandBar)]
pub fn command_bar(props: &CommandBarProps) -> Html {
    let onkeydown = {
        let on_command = props.on_command.clone();
        Callback::from(move |event: KeyboardEvent| {
            if event.key() == "Enter" {
                event.prevent_default();
                let input: HtmlInputElement = event.target_unchecked_into();
                on_command.emit(input.value());
                input.set_value("");
            }
        })
    };
    html! {
        <section class="command-bar">
            <input
                type="text"
                data-testid="command-input"
                aria-label="Command"
                placeholder="/state"
                disabled={!props.enabled}
                {onkeydown}
            />
            if let Some(error) = &props.error {
                <p class="error" data-testid="command-error" role="alert">{ error }</p>
            }
        </section>
    }
}
