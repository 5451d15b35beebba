use annotation_core::roles::{Role, User};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub user: User,
    pub on_change: Callback<User>,
    /// With a sync server the token decides who you are, so it is shown, not chosen.
    pub from_server: bool,
}

/// Who is annotating, and in which role. Locally this decides which buttons show; with a
/// sync server the server's token decides what is allowed.
#[function_component(UserBar)]
pub fn user_bar(props: &Props) -> Html {
    let on_name = {
        let (user, on_change) = (props.user.clone(), props.on_change.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            let name = input.value().trim().to_owned();
            if !name.is_empty() {
                on_change.emit(User { name, role: user.role });
            }
        })
    };
    let on_role = {
        let (user, on_change) = (props.user.clone(), props.on_change.clone());
        Callback::from(move |e: Event| {
            let select: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(role) = Role::parse(&select.value()) {
                on_change.emit(User { name: user.name.clone(), role });
            }
        })
    };
    if props.from_server {
        return html! {
            <div class="user-bar" title="Your sync token decides who you are">
                <span data-testid="user-name">{ &props.user.name }</span>
                <span class="muted" data-testid="user-role">{ props.user.role.label() }</span>
            </div>
        };
    }
    html! {
        <div class="user-bar">
            <label>{ "You" }
                <input data-testid="user-name" value={props.user.name.clone()} onchange={on_name} size="10" />
            </label>
            <label>{ "as" }
                <select data-testid="user-role" onchange={on_role}>
                    { for Role::ALL.iter().map(|role| html! {
                        <option value={role.as_str()} selected={*role == props.user.role}>{ role.label() }</option>
                    }) }
                </select>
            </label>
        </div>
    }
}
